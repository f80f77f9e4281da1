// Dependency decisions as audit events. The check cannot write the run's
// audit log ($STASHBASE_HOME is hidden in the sandbox), so it hands them on:
// to the host process that ran it, through a descriptor (the Docker path),
// or to the run's proxy at REPORT_PATH (a native run). Outside a run there is
// neither, and nothing is recorded.
import { writeSync } from 'node:fs';
import http from 'node:http';
import type { Answer, HookAgent } from './hook-answer.js';
import { HOOK_TOKEN_VAR, HOOK_URL_VAR, REPORT_FD_VAR, REPORT_PATH } from './hook-env.js';
import { ECOSYSTEMS, type Decision, type Ecosystem, type Verdict } from '../deps/types.js';

export interface DependencyEvent {
  type: 'dependency';
  agent: HookAgent | null;
  ecosystem: Ecosystem;
  /** The package name, or the spec as written for what is not a registry name. */
  package: string;
  spec: string;
  version?: string;
  decision: Verdict;
  /** What the agent was told: deny, ask, or nothing (none). */
  answer: Answer;
  reasons: string[];
}

export function dependencyEvents(decisions: Decision[], answer: Answer, agent: HookAgent | null): DependencyEvent[] {
  return decisions.map((d) => ({
    type: 'dependency', agent, ecosystem: d.ecosystem, package: d.name ?? d.spec, spec: d.spec,
    ...(d.version !== undefined ? { version: d.version } : {}), decision: d.verdict, answer, reasons: d.reasons,
  }));
}

const VERDICTS: readonly string[] = ['block', 'warn', 'unchecked', 'ok'];
const ANSWERS: readonly string[] = ['deny', 'ask', 'none'];
const str = (v: unknown, max = 4096): v is string => typeof v === 'string' && v.length <= max;

/** A dependency event as received from elsewhere, checked field by field (null when it is not one). */
export function parseDependencyEvent(v: unknown): DependencyEvent | null {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.some((k) => !['type', 'agent', 'ecosystem', 'package', 'spec', 'version', 'decision', 'answer', 'reasons'].includes(k))) return null;
  if (o.type !== 'dependency' || !(o.agent === null || o.agent === 'claude' || o.agent === 'codex')) return null;
  if (!ECOSYSTEMS.includes(o.ecosystem as Ecosystem) || !str(o.package, 512) || !str(o.spec, 1024)) return null;
  if (o.version !== undefined && !str(o.version, 256)) return null;
  if (!VERDICTS.includes(o.decision as string) || !ANSWERS.includes(o.answer as string)) return null;
  if (!Array.isArray(o.reasons) || o.reasons.length > 32 || !o.reasons.every((r) => str(r))) return null;
  // Built field by field: nothing of the object that came in is handed on.
  const e = { type: 'dependency', agent: o.agent, ecosystem: o.ecosystem, package: o.package, spec: o.spec, ...(o.version !== undefined ? { version: o.version } : {}), decision: o.decision, answer: o.answer, reasons: [...o.reasons] };
  return e as DependencyEvent;
}

/** Hands the events on where the environment says; never fails the check. */
export async function reportEvents(events: DependencyEvent[], env: NodeJS.ProcessEnv): Promise<void> {
  if (events.length === 0) return;
  const fd = env[REPORT_FD_VAR];
  if (fd !== undefined && /^\d+$/.test(fd)) {
    try {
      writeSync(Number(fd), events.map((e) => JSON.stringify(e) + '\n').join(''));
    } catch {
      // the host process stopped listening
    }
    return;
  }
  const base = env[HOOK_URL_VAR];
  const token = env[HOOK_TOKEN_VAR];
  if (!base || !token) return;
  let url: URL;
  try {
    // Beneath the hook prefix the base ends with (an absolute path given to URL would replace it).
    url = new URL(`${base.replace(/\/+$/, '')}${REPORT_PATH}`);
  } catch {
    return;
  }
  if (url.protocol !== 'http:') return;
  // Straight to the proxy, never through it: it is the proxy's own endpoint.
  await new Promise<void>((resolve) => {
    const body = JSON.stringify({ events });
    const req = http.request(url, { method: 'POST', agent: false, timeout: 2000, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve());
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve());
    });
    req.end(body);
  });
}
