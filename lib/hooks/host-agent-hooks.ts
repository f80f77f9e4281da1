// The host side of the agent hooks of a Docker run: what the run's proxy
// calls when the sandbox's stand-in (templates/stand-in.ts) posts to
// HOOK_PATH. The request is read strictly, only `agent hooks deps check`
// with its known flags is run, and it runs as its own stashbase process with
// the run's proxy as its HTTPS_PROXY, so the run's egress rules apply to the
// registries it asks. Its decisions come back on descriptor 3 as audit events
// for the run's log. A check inside a native run reports its decisions to
// REPORT_PATH instead (parseHookReport).
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { Command } from '../../templates/command.js';
import { buildConfineCommand } from '../../templates/confine.js';
import { buildConfineSeatbeltCommand, buildConfineSeatbeltProfile } from '../../templates/confine-seatbelt.js';
import { findTool } from '../util/find-tool.js';
import { type CliFiles, thisCli } from './cli-files.js';
import { existingEtc, systemPaths } from './confine-facts.js';
import { hostCheckCommand } from '../../templates/host-hook.js';
import { PROXY_VARS } from '../env-names.js';
import { collect } from '../exec.js';
import { type DependencyCheckSettings, SETTINGS_VAR, settingsToEnv } from '../deps/settings.js';
import { ECOSYSTEMS } from '../deps/types.js';
import { HOOK_TOKEN_VAR, HOOK_URL_VAR, REPORT_FD_VAR } from './hook-env.js';
import { HOOK_AGENTS } from './hook-answer.js';
import type { Hidden } from '../paths/hidden.js';
import { type DependencyEvent, parseDependencyEvent } from './report.js';
import { jsonOf } from '../readback/json.js';

export const MAX_BODY_BYTES = 1024 * 1024;
const MAX_ARGS = 40;

export interface HookRequest {
  args: string[];
  stdin: string;
}

export interface HookResult {
  exit: number;
  stdout: string;
  stderr: string;
  /** Set when the request was refused before anything ran (the arguments are not allowed). */
  refused?: true;
}

export class HookRequestError extends Error {}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function decode(s: unknown, what: string): string {
  if (typeof s !== 'string' || !BASE64.test(s)) throw new HookRequestError(`${what} is not base64`);
  try {
    return utf8.decode(Buffer.from(s, 'base64'));
  } catch {
    throw new HookRequestError(`${what} is not UTF-8`);
  }
}

/** The stand-in's body: exactly {"args_b64": [...], "stdin_b64": "..."}; throws HookRequestError on anything else. */
export function parseHookRequest(body: string): HookRequest {
  if (Buffer.byteLength(body) > MAX_BODY_BYTES) throw new HookRequestError(`the request is larger than ${MAX_BODY_BYTES} bytes`);
  let v: unknown;
  try {
    v = jsonOf(body);
  } catch {
    throw new HookRequestError('the request is not JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new HookRequestError('the request is not a JSON object');
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort().join(',');
  if (keys !== 'args_b64,stdin_b64') throw new HookRequestError('the request must have exactly args_b64 and stdin_b64');
  if (!Array.isArray(o.args_b64) || o.args_b64.length > MAX_ARGS) throw new HookRequestError(`args_b64 must be a list of at most ${MAX_ARGS}`);
  return { args: o.args_b64.map((a, i) => decode(a, `args_b64[${i}]`)), stdin: decode(o.stdin_b64, 'stdin_b64') };
}

/** The one-line answer the stand-in matches: keys in this order, values base64. */
export function encodeHookResponse(r: HookResult): string {
  const exit = Number.isInteger(r.exit) && r.exit >= 0 && r.exit <= 255 ? r.exit : 2;
  return `{"exit":${exit},"stdout_b64":"${Buffer.from(r.stdout).toString('base64')}","stderr_b64":"${Buffer.from(r.stderr).toString('base64')}"}`;
}

const PACKAGE_ARG = /^[^-\s\0-\x1f\x7f][^\s\0-\x1f\x7f]{0,255}$/;

/** Why these arguments may not run on the host, or null: `agent hooks deps check` [--agent A] [--json] [--ecosystem E PKG…]. */
export function hookArgsProblem(args: string[]): string | null {
  if (args.slice(0, 4).join(' ') !== 'agent hooks deps check') return 'only "stashbase agent hooks deps check" runs on the host from the sandbox';
  const seen = new Set<string>();
  let packages = 0;
  for (let i = 4; i < args.length; i++) {
    const a = args[i] as string;
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    const flag = eq === -1 ? a : a.slice(0, eq);
    if (flag === '--agent' || flag === '--ecosystem') {
      const value = eq === -1 ? args[++i] : a.slice(eq + 1);
      const allowed: readonly string[] = flag === '--agent' ? HOOK_AGENTS : ECOSYSTEMS;
      if (value === undefined || !allowed.includes(value)) return `${flag} takes ${allowed.join(', ')}`;
    } else if (a === '--json') {
      // no value
    } else if (a.startsWith('-')) return `${JSON.stringify(a)} is not allowed from the sandbox`;
    else if (!PACKAGE_ARG.test(a)) return `${JSON.stringify(a)} is not a package name`;
    else packages++;
    if (a.startsWith('-')) {
      if (seen.has(flag)) return `${flag} given more than once`;
      seen.add(flag);
    }
  }
  if (packages > 32) return 'at most 32 packages at once';
  if (packages > 0 && !seen.has('--ecosystem')) return 'package names need --ecosystem';
  return null;
}

export interface RunAgentHookInput extends HookRequest {
  /** The run's working directory on the host (the check reads its package.json and .npmrc there). */
  cwd: string;
  /** The run's proxy for the check: HTTPS_PROXY/HTTP_PROXY (with the run's credential), NO_PROXY, and the CA file when the proxy intercepts TLS (NODE_EXTRA_CA_CERTS). */
  proxyEnv: Record<string, string>;
  /** The profile's [hooks.dependency_check]. */
  settings: DependencyCheckSettings;
  /** Where the registries and OSV are, as the sandbox's package managers are told (lib/deps/registry-vars.ts). */
  registryEnv?: Record<string, string>;
  /** How to start stashbase (default: this process's node and CLI script); with it, no confinement (tests of the request handling). */
  stashbase?: string[];
  timeoutMs?: number;
  /** Files the check may read besides the working tree and the CLI (the CA file of an intercepting proxy). */
  readable?: string[];
  /** The proxy's loopback port, for Seatbelt (macOS): the only place the check may connect to. */
  proxyPort?: number;
  /** What the agent's sandbox hides in the working tree (deny_read, isolated paths): hidden from the check too (round 34). */
  hidden?: Hidden[];
  platform?: NodeJS.Platform;
}

export function ownCli(): string[] {
  return [process.execPath, realpathSync(process.argv[1] as string)];
}

/**
 * The check confined like the secret scan (templates/confine.ts): it reads
 * the system, the CLI, the working tree (package.json, the lockfile) and the
 * proxy's CA, nothing else of this machine; its only network is the host's,
 * and its proxy variables send it through the run's proxy.
 */
function confineCheck(cmd: Command, cli: CliFiles, i: RunAgentHookInput): Command | string {
  const command = [cmd.file, ...cmd.args];
  const env = { PATH: '/usr/bin:/bin', HOME: '/tmp', TMPDIR: '/tmp', LANG: 'C.UTF-8', ...cmd.env };
  const read = [...cli.roots, i.cwd, ...(i.readable ?? [])];
  const platform = i.platform ?? process.platform;
  if (platform === 'linux') {
    const bwrap = findTool('bwrap', process.env);
    if (!bwrap) return 'bubblewrap (bwrap) is not installed, and the check never runs unconfined';
    return buildConfineCommand({
      bwrap, system: systemPaths(), etc: existingEtc(), binds: read.map((p) => ({ src: p, dest: p })), hidden: i.hidden ?? [], cwd: i.cwd, command, env,
      inherited: Object.keys(process.env), network: true, pipes: cmd.pipes,
    });
  }
  if (platform === 'darwin') {
    const tmp = realpathSync(tmpdir());
    const profile = buildConfineSeatbeltProfile({ readOnly: read, hidden: i.hidden ?? [], tmp, proxyPort: i.proxyPort });
    return { ...buildConfineSeatbeltCommand('/usr/bin/sandbox-exec', profile, command, i.cwd, { ...env, HOME: tmp, TMPDIR: tmp }, Object.keys(process.env)), pipes: cmd.pipes };
  }
  return `agent hooks run on the host only confined (bubblewrap on Linux, Seatbelt on macOS), which ${platform} has not`;
}

/** Runs an allowed hook on the host; a refused one answers exit 2 with the reason, never throws for the request's content. */
export async function runAgentHook(i: RunAgentHookInput): Promise<HookResult & { events: DependencyEvent[] }> {
  const problem = hookArgsProblem(i.args);
  if (problem !== null) return { exit: 2, stdout: '', stderr: `stashbase (host): refused: ${problem}\n`, events: [], refused: true };
  const cli = thisCli();
  const plain = hostCheckCommand({
    stashbase: i.stashbase ?? [cli.node, cli.entry],
    args: i.args,
    cwd: i.cwd,
    env: { ...i.registryEnv, ...i.proxyEnv, [SETTINGS_VAR]: settingsToEnv(i.settings), [REPORT_FD_VAR]: '3' },
    // The host's own proxy settings must not bypass the run's; the check must not report through the proxy itself.
    unsetEnv: [...PROXY_VARS.filter((v) => !(v in i.proxyEnv)), HOOK_URL_VAR, HOOK_TOKEN_VAR],
  });
  const cmd = i.stashbase ? plain : confineCheck(plain, cli, i);
  if (typeof cmd === 'string') return { exit: 2, stdout: '', stderr: `stashbase (host): ${cmd}\n`, events: [] };
  const r = await collect(cmd, { input: i.stdin, timeoutMs: i.timeoutMs ?? 25_000, fd3: true });
  const events = r.fd3.split('\n').filter((l) => l.trim() !== '').map((l) => {
    try {
      return parseDependencyEvent(jsonOf(l));
    } catch {
      return null;
    }
  }).filter((e): e is DependencyEvent => e !== null);
  if (r.code === null) return { exit: 2, stdout: '', stderr: `stashbase (host): the dependency check ${r.signal ? 'took too long and was stopped' : `could not start: ${r.stderr}`}\n`, events };
  return { exit: r.code, stdout: r.stdout, stderr: r.stderr, events };
}

/** A native run's report ({"events": [...]}) for its audit log; throws HookRequestError on anything else. */
export function parseHookReport(body: string): DependencyEvent[] {
  if (Buffer.byteLength(body) > MAX_BODY_BYTES) throw new HookRequestError(`the report is larger than ${MAX_BODY_BYTES} bytes`);
  let v: unknown;
  try {
    v = jsonOf(body);
  } catch {
    throw new HookRequestError('the report is not JSON');
  }
  const events = (v as { events?: unknown } | null)?.events;
  if (v === null || typeof v !== 'object' || Object.keys(v).join() !== 'events' || !Array.isArray(events) || events.length > 64) {
    throw new HookRequestError('the report must be {"events": [...]} with at most 64 events');
  }
  return events.map((e, n) => {
    const ok = parseDependencyEvent(e);
    if (ok === null) throw new HookRequestError(`events[${n}] is not a dependency event`);
    return ok;
  });
}
