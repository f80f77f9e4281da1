// Helpers for the tests that run hooks inside real stashbase runs
// (test/integration/hooks-in-run*.test.ts): the two backends, a run's script
// as named steps whose output and exit code come back one by one, and the
// run's audit log as `agent audit --json` prints it.
import assert from 'node:assert/strict';
import { cli, type CliResult } from './helpers.js';

export type BackendName = 'native' | 'docker' | 'docker-sealed';

/** The flags that choose a backend for one run, whatever the profile says. */
export const BACKEND_FLAGS: Record<BackendName, string[]> = {
  native: ['--docker-sandbox', 'false'],
  docker: ['--docker-sandbox', 'true'],
  'docker-sealed': ['--docker-sandbox', 'true', '--docker-network', 'sealed'],
};

/** A shell script of named steps: each step's stdout and stderr together, then its exit code. */
export function steps(list: Array<[name: string, command: string]>): string {
  return list.map(([name, command]) => `echo '== ${name}'\n{\n${command}\n} 2>&1\necho "rc=$?"`).join('\n');
}

export interface Step {
  out: string;
  rc: number;
}

/** The steps of a run's stdout, by name; every step must have finished (a "rc=" line). */
export function parseSteps(stdout: string): Record<string, Step> {
  const out: Record<string, Step> = {};
  for (const part of stdout.split(/^== /m).slice(1)) {
    const nl = part.indexOf('\n');
    const name = part.slice(0, nl);
    const m = /^([\s\S]*?)rc=(\d+)\n$/.exec(part.slice(nl + 1));
    assert.ok(m, `step ${name} did not finish: ${JSON.stringify(part)}`);
    out[name] = { out: m[1] as string, rc: Number(m[2]) };
  }
  return out;
}

export interface RunResult extends CliResult {
  session: string;
  steps: Record<string, Step>;
}

/** One `agent run` of a script of steps on a backend; the session id comes from its announcement. */
export async function runSteps(o: { backend: BackendName; profile: string; env: NodeJS.ProcessEnv; cwd: string; script: string }): Promise<RunResult> {
  const r = await cli(['agent', 'run', '--profile', o.profile, ...BACKEND_FLAGS[o.backend], '--', 'sh', '-c', o.script], { env: o.env, cwd: o.cwd, timeoutMs: 180_000 });
  const m = /^Agent session: (ags_[a-z2-7]{16})$/m.exec(r.stderr);
  assert.ok(m, `no session announced (exit ${r.code}): ${r.stderr}`);
  return { ...r, session: m[1] as string, steps: parseSteps(r.stdout) };
}

export type AuditEvent = Record<string, unknown> & { type: string };

/** The run's audit log through `stashbase agent audit SESSION --json`. */
export async function auditOf(session: string, env: NodeJS.ProcessEnv): Promise<AuditEvent[]> {
  const r = await cli(['agent', 'audit', session, '--json'], { env });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as AuditEvent[];
}

/** A POSIX sh function the agent uses to call a hook endpoint as the hooks do: `post PATH BODY [TOKEN]` prints the status, then the body. */
export const POST_FN = `post() {
  printf '%s' "$2" > /tmp/sb-body
  curl -sS --noproxy '*' -o /tmp/sb-answer -w '%{http_code}\\n' -X POST -H "Authorization: Bearer \${3-$STASHBASE_HOOK_TOKEN}" \\
    -H 'Content-Type: application/json' --data-binary @/tmp/sb-body "$STASHBASE_HOOK_URL$1"
  cat /tmp/sb-answer; echo
}`;

/** The proxy's own address (no credentials) from the run's HTTP_PROXY, for a run that sets no STASHBASE_HOOK_URL. */
export const PROXY_BASE = `SB_PROXY=$(printf '%s' "$HTTP_PROXY" | sed -e 's#//[^@]*@#//#' -e 's#/$##')`;
