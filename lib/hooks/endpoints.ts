// The hook endpoints a run's proxy serves, under HOOK_PREFIX, to the hooks
// inside its sandbox: the secret scan (POST /scan), the agent hooks of a
// Docker run (POST /agent-hooks) and a native run's dependency reports (POST
// /agent-hooks/report). Only what the profile's allow_hooks names exists;
// every request carries the run's hook token (Authorization: Bearer, compared
// in constant time); bodies are bounded; the work happens on the host,
// confined (lib/hooks/host-scan.ts, host-agent-hooks.ts), loaded on first use.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Profile } from '../profile/types.js';
import type { DependencyCheckSettings } from '../deps/settings.js';
import type { ScanMount } from './host-scan.js';
import type { Hidden } from '../paths/hidden.js';

import { HOOK_PREFIX } from './hook-env.js';
import { isJsonObject, jsonOf } from '../readback/json.js';

const MAX_BODY = 1024 * 1024;

export interface HookEndpointsInput {
  token: string;
  profile: Profile;
  /** The host environment the run started from (the bound secrets' real values, for the scan). */
  env: NodeJS.ProcessEnv;
  /** The working tree as the sandbox sees it, and the mounts of it and its git directories. */
  workTree: string;
  mounts: ScanMount[];
  /**
   * What the agent's sandbox hides of them (deny_read, Docker's isolated paths), hidden from the scan and the check too
   * (lib/paths/hidden.ts): asked at each request, once the run's stand-ins for missing ones exist (found in review).
   */
  hidden: () => Hidden[];
  /** Docker: the check runs here, through the run's proxy (these variables), confined. */
  agentHooks?: { cwd: string; proxyEnv: Record<string, string>; registryEnv: Record<string, string>; readable: string[]; proxyPort?: number; settings: DependencyCheckSettings };
  audit: (event: Record<string, unknown>) => void;
}

export type HookHandler = (req: IncomingMessage, res: ServerResponse) => void;

function answer(res: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  res.end(body);
}

function sameToken(header: string | undefined, token: string): boolean {
  const want = Buffer.from(`Bearer ${token}`);
  const got = Buffer.from((header ?? '').trim());
  let diff = got.length ^ want.length;
  for (let i = 0; i < want.length; i++) diff |= want[i]! ^ (got[i] ?? 0);
  return diff === 0;
}

/** A scan request is a few arguments and paths. */
const MAX_SCAN_BODY = 64 * 1024;
/** Requests a run may have at the endpoints at once (waiting or running): past it, 503. */
const MAX_IN_FLIGHT = 4;

/** The body, or null past `max` bytes: the rest is read and dropped, so that the 413 reaches the client. */
function readBody(req: IncomingMessage, max: number): Promise<string | null> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (d: Buffer) => {
      size += d.length;
      if (size > max) {
        if (parts.length > 0) parts.length = 0;
        resolve(null);
      } else parts.push(d);
    });
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', () => resolve(null));
  });
}

/** A request to a hook endpoint when the run offers none (the proxy answers it; nothing is forwarded). */
export function noHooks(res: ServerResponse): void {
  answer(res, 404, 'stashbase: this run offers no hook endpoints: its profile sets no allow_hooks\n');
}

/** The arguments a hook request named, as the audit keeps them: eight at most, each cut (the agent chose them). */
function argsOf(args: unknown): unknown {
  if (!Array.isArray(args)) return args === undefined ? undefined : typeof args;
  const kept = args.slice(0, 8).map((a) => (typeof a === 'string' ? (a.length > 200 ? `${a.slice(0, 200)}… (${a.length} characters)` : a) : typeof a));
  return args.length > 8 ? [...kept, `… (${args.length} arguments)`] : kept;
}

export function hookEndpoints(o: HookEndpointsInput): HookHandler {
  const allowed = new Set(o.profile.allowHooks);
  let inFlight = 0;
  return (req, res) => {
    const path = (req.url ?? '').slice(HOOK_PREFIX.length);
    const kind = path === '/scan' ? 'secret_scan' : path === '/agent-hooks' || path === '/agent-hooks/report' ? 'dependency_check' : null;
    const event = { type: 'hook', path, hook: kind };
    if (kind === null || !allowed.has(kind) || (path === '/agent-hooks' && !o.agentHooks)) {
      o.audit({ ...event, decision: 'deny', rule: 'no such hook endpoint in this run', status: 404 });
      const why = kind === null ? '' : !allowed.has(kind) ? ` (allow_hooks = ["${kind}"] is not in its profile)` : ' (on this backend the check runs inside the sandbox: stashbase agent hooks deps check is there)';
      return answer(res, 404, `stashbase: this run offers no ${path} endpoint${why}\n`);
    }
    if (!sameToken(req.headers.authorization, o.token)) {
      o.audit({ ...event, decision: 'deny', rule: 'wrong hook token', status: 403 });
      return answer(res, 403, 'stashbase: wrong hook token for this run\n');
    }
    if (req.method !== 'POST') return answer(res, 405, 'stashbase: POST only\n');
    if (inFlight >= MAX_IN_FLIGHT) {
      o.audit({ ...event, decision: 'deny', rule: 'too many hook requests at once', status: 503 });
      return answer(res, 503, `stashbase: ${MAX_IN_FLIGHT} hook requests of this run are already waiting or running\n`);
    }
    inFlight++;
    res.on('close', () => inFlight--);
    void readBody(req, path === '/scan' ? MAX_SCAN_BODY : MAX_BODY).then(async (body) => {
      if (body === null) {
        // Answered while the rest still arrives; then the connection goes, so that no endless body holds it.
        res.setHeader('Connection', 'close');
        res.on('finish', () => req.destroy());
        return answer(res, 413, 'stashbase: the request body is too large\n');
      }
      try {
        if (path === '/scan') {
          let parsed: unknown;
          try {
            parsed = jsonOf(body);
          } catch {
            return answer(res, 400, 'stashbase: the scan request is not JSON\n');
          }
          const { encodeScanAnswer, runConfinedScan } = await import('./host-scan.js');
          const a = await runConfinedScan(parsed, { workTree: o.workTree, mounts: o.mounts, hidden: o.hidden(), profile: o.profile, env: o.env });
          // A body that is no object (JSON null) has no arguments to name (found in review: it made this line throw, a 500).
          o.audit({ ...event, decision: a.exit === 0 ? 'clean' : a.exit === 1 ? 'found' : 'refused', exit: a.exit, args: argsOf(isJsonObject(parsed) ? parsed.args : undefined), ...(a.withheld !== undefined ? { withheld: a.withheld.slice(0, 4096) } : {}) });
          return answer(res, 200, encodeScanAnswer(a), 'application/json');
        }
        const hooks = await import('./host-agent-hooks.js');
        if (path === '/agent-hooks/report') {
          const reported = hooks.parseHookReport(body);
          o.audit({ ...event, decision: 'reported', events: reported.length });
          for (const e of reported) o.audit({ ...e, reportedBy: 'sandbox' });
          return answer(res, 200, '{}', 'application/json');
        }
        const request = hooks.parseHookRequest(body);
        const a = o.agentHooks!;
        const r = await hooks.runAgentHook({ ...request, cwd: a.cwd, proxyEnv: a.proxyEnv, registryEnv: a.registryEnv, settings: a.settings, readable: a.readable, proxyPort: a.proxyPort, hidden: o.hidden() });
        o.audit({ ...event, decision: r.refused ? 'refused' : 'ran', exit: r.exit, args: argsOf(request.args) });
        for (const e of r.events) o.audit(e as unknown as Record<string, unknown>);
        return answer(res, 200, hooks.encodeHookResponse(r), 'application/json');
      } catch (e) {
        const { HookRequestError } = await import('./host-agent-hooks.js');
        if (e instanceof HookRequestError) return answer(res, 400, `stashbase: ${(e as Error).message}\n`);
        o.audit({ ...event, decision: 'error', rule: (e as Error).message });
        return answer(res, 500, 'stashbase: the hook failed on the host\n');
      }
    });
  };
}
