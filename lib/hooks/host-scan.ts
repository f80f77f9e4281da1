// The host side of the secret_scan hook. A sandbox's hook posts its scan's
// arguments to the run's proxy; the proxy hands the parsed JSON body here and
// sends back what this returns, encoded by encodeScanAnswer. The scan runs as
// `stashbase scan …` again, confined (templates/confine.ts): the agent chose
// the working tree's content, symlinks and .git file, so the scanner must not
// be able to read anything but the tree, its git directories and the system.
// It sees them as the sandbox does (read-only), so every path the hook sends
// is a sandbox path and needs no translation.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCapped } from '../exec.js';
import { findTool } from '../util/find-tool.js';
import type { Profile } from '../profile/types.js';
import { secretValue } from '../secrets/sources.js';
import type { Command } from '../../templates/command.js';
import { buildConfineCommand, type ConfineBind } from '../../templates/confine.js';
import { existingEtc, systemPaths } from './confine-facts.js';
import { buildConfineSeatbeltCommand, buildConfineSeatbeltProfile } from '../../templates/confine-seatbelt.js';
import { type CliFiles, thisCli } from './cli-files.js';
import { parseScanRequest, plainPath, type ScanRequest } from './scan-request.js';
import { scrubBuffer, scrubPairs } from '../proxy/scrub.js';
import { SAFE_ENV } from '../../templates/git.js';
import type { Hidden } from '../paths/hidden.js';
import { MIN_BOUND_LENGTH } from '../scan/detectors.js';

export interface ScanAnswer {
  /** The scan's exit code: 0 clean, 1 found (or could not run), 2 refused; the hook exits with it. */
  exit: number;
  stdout: string;
  stderr: string;
  /** What the scan said that the agent is not given (ownWords): for your audit log, never the agent. */
  withheld?: string;
}

/** The scan's own summary line, all of its standard error the agent is given. */
const SUMMARY = /^stashbase scan: (?:\d+ possible secrets? found|no secrets found) \([^\n]*\)$/;

/**
 * The agent is given the scan's summary and nothing else it said on standard error (review, round 36: git's errors
 * quote the file they could not use, and the agent pointed the run's git directory, through its alternates or
 * packed-refs, at files the scan's confinement shows and a Docker agent cannot read: /etc/passwd, node's
 * installation). Anything else is replaced by one line of stashbase's, and kept for your audit log.
 */
function ownWords(stderr: string, exit: number): { stderr: string; withheld?: string } {
  const lines = stderr.split('\n').filter((l) => l !== '');
  const kept = lines.filter((l) => SUMMARY.test(l));
  if (kept.length === lines.length) return { stderr };
  return {
    stderr: `${kept.map((l) => `${l}\n`).join('')}stashbase secret scan: the scan could not run cleanly (exit ${exit}); what it said is in the run's audit log, not here\n`,
    withheld: lines.filter((l) => !SUMMARY.test(l)).join('\n'),
  };
}

/** A host path (`host`) and where the sandbox sees it (`sandbox`). */
export interface ScanMount {
  host: string;
  sandbox: string;
}

export interface HostScanContext {
  /** The run's working tree as the sandbox sees it: the hook's directory must be inside. */
  workTree: string;
  /**
   * What the sandbox sees of the working tree and its git directories, as the
   * run mounted them when it started (never looked up again from the tree the
   * agent controls): the working tree at its own path on both backends; on
   * the native backend the .git view (the run's copy of HEAD, index, config …
   * at the repository's .git, with the real objects, refs and logs bound into
   * it); a worktree run's git directories. Shown to the scan read-only, at the
   * sandbox paths. Real host paths.
   */
  mounts: ScanMount[];
  /**
   * What the agent's sandbox hides in them (review, round 34: the scan was
   * shown the whole tree, and an index file named as one the agent may not
   * read had git print its first bytes).
   */
  hidden?: Hidden[];
  /** The run's profile: it must allow the secret_scan hook; its bound secrets are searched for. */
  profile: Profile;
  /** The host environment the run started from: where the bound secrets' real values are. */
  env: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  cli?: CliFiles;
  timeoutMs?: number;
}

const MAX_OUTPUT = 256 * 1024;
const refuse = (why: string): ScanAnswer => ({ exit: 2, stdout: '', stderr: `stashbase secret scan: refused: ${why}\n` });

/** The answer as the hook reads it: one line of JSON, control characters (but newline and tab) removed from the text. */
export function encodeScanAnswer(a: ScanAnswer): string {
  const clean = (s: string) => s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '');
  return JSON.stringify({ exit: a.exit, stdout: clean(a.stdout), stderr: clean(a.stderr) });
}

/** The child's whole environment: a fixed minimum and the index it is told about. No secret: those go on its standard input. */
function scanEnv(req: ScanRequest, tmp: string): Record<string, string> {
  const env: Record<string, string> = {
    PATH: '/usr/bin:/bin',
    HOME: tmp,
    TMPDIR: tmp,
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    // No lazy fetch, no protocol: what every git run on an agent's repository gets (templates/git.ts).
    ...SAFE_ENV,
  };
  if (req.indexFile) env.GIT_INDEX_FILE = req.indexFile;
  return env;
}

/**
 * The bound secrets' real values under their profile names. The scan reads
 * them from its standard input (--secrets-stdin): in an environment, any
 * process the repository's config could make git start would inherit them.
 * One too short to be searched for is not given: the scan would say so, and
 * so tell the agent its length (review, round 34).
 */
export function scanSecrets(ctx: Pick<HostScanContext, 'profile' | 'env'>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, s] of Object.entries(ctx.profile.secrets)) {
    const value = secretValue(s, ctx.env);
    if (value !== undefined && value.length >= MIN_BOUND_LENGTH) out[name] = value;
  }
  return out;
}

/** The answer with every form of every real value (raw, percent-encoded, base64) replaced by its name. */
function withoutSecrets(a: ScanAnswer, secrets: Record<string, string>): ScanAnswer {
  const pairs = scrubPairs(Object.entries(secrets).map(([name, real]) => ({ name, real, placeholder: `[${name}]`, hosts: [], inQuery: false, allowPlaintext: false })));
  const clean = (t: string) => scrubBuffer(Buffer.from(t, 'utf8'), pairs).toString('utf8');
  return { exit: a.exit, stdout: clean(a.stdout), stderr: clean(a.stderr) };
}

/** The confined command for a checked request; `tmp` is the scan's private temp folder. */
export function confinedScanCommand(req: ScanRequest, ctx: HostScanContext, tmp: string, cli: CliFiles): Command | string {
  const env = scanEnv(req, tmp);
  const command = [cli.node, cli.entry, 'scan', ...req.args, ...(Object.keys(scanSecrets(ctx)).length > 0 ? ['--secrets-stdin'] : [])];
  const binds: ConfineBind[] = [...cli.roots.map((r) => ({ src: r, dest: r })), ...ctx.mounts.map((m) => ({ src: m.host, dest: m.sandbox }))];
  const inherited = Object.keys(process.env);
  const platform = ctx.platform ?? process.platform;
  if (platform === 'linux') {
    const bwrap = findTool('bwrap', ctx.env);
    if (!bwrap) return 'bubblewrap (bwrap) is not installed, and the scan never runs unconfined';
    return buildConfineCommand({ bwrap, system: systemPaths(), etc: existingEtc(), binds, hidden: ctx.hidden ?? [], cwd: req.cwd, command, env: { ...env, HOME: '/tmp', TMPDIR: '/tmp' }, inherited });
  }
  if (platform === 'darwin') {
    // Seatbelt can allow paths, not move them: only a sandbox seen at the host's own paths (as macOS runs are).
    if (binds.some((b) => b.src !== b.dest)) return "the sandbox's view of the repository cannot be shown to a scan under Seatbelt";
    const profile = buildConfineSeatbeltProfile({ readOnly: binds.map((b) => b.src), hidden: ctx.hidden ?? [], tmp });
    return buildConfineSeatbeltCommand('/usr/bin/sandbox-exec', profile, command, req.cwd, env, inherited);
  }
  return `the secret_scan hook is not available on ${platform}: the scan runs only confined (bubblewrap on Linux, Seatbelt on macOS)`;
}

/**
 * Why the index file named may not be read, or null: it must lie, on this
 * host, where the mount it is under leads (no link of the agent's out of it:
 * found in review, a link in the run's git directory to a file of this host's
 * system had git print its first bytes from the scan's view of the system).
 * One missing is git's to say.
 */
function indexFileProblem(indexFile: string, mounts: ScanMount[]): string | null {
  const m = [...mounts].sort((x, y) => y.sandbox.length - x.sandbox.length).find((x) => indexFile === x.sandbox || indexFile.startsWith(x.sandbox + '/'));
  if (m === undefined) return null;
  const host = m.host + indexFile.slice(m.sandbox.length);
  let real: string;
  try {
    real = realpathSync(host);
  } catch {
    return null;
  }
  const root = realpathSync(m.host);
  return real === root || real.startsWith(root + '/') ? null : `indexFile ${JSON.stringify(indexFile.slice(0, 200))} leads out of the run's git directories`;
}

// One confined scan at a time in this process: a sandbox that sends requests
// in a loop queues them, it does not fork a scan per request.
let queue: Promise<unknown> = Promise.resolve();

/** Checks the request, runs the scan confined, and answers; never throws for what the sandbox sent. Scans run one at a time. */
export function runConfinedScan(body: unknown, ctx: HostScanContext): Promise<ScanAnswer> {
  const turn = queue.then(() => scanOnce(body, ctx)).catch((e: Error): ScanAnswer => ({ exit: 4, stdout: '', stderr: `stashbase secret scan: cannot scan: ${e.message}\n` }));
  queue = turn.catch(() => {});
  return turn;
}

async function scanOnce(body: unknown, ctx: HostScanContext): Promise<ScanAnswer> {
  if (!ctx.profile.allowHooks.includes('secret_scan')) return refuse(`this run's profile does not allow it (allow_hooks = ["secret_scan"])`);
  const workTree = plainPath(ctx.workTree);
  if (workTree === null || ctx.mounts.some((m) => plainPath(m.sandbox) !== m.sandbox || plainPath(m.host) !== m.host)) {
    return { exit: 4, stdout: '', stderr: 'stashbase secret scan: cannot scan: the run gave no usable working tree\n' };
  }
  // An index file only in a git directory (round 34): the first mount is the tree itself, the rest its git directories;
  // and the tree's .git (a run with no git directory of its own), where what the sandbox hides stays hidden all the same.
  const req = parseScanRequest(body, workTree, [join(workTree, '.git'), ...ctx.mounts.slice(1).map((m) => m.sandbox)]);
  if (typeof req === 'string') return refuse(req);
  if (req.indexFile !== undefined) {
    const problem = indexFileProblem(req.indexFile, ctx.mounts);
    if (problem !== null) return refuse(problem);
  }
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'stashbase-scan-')));
  try {
    const cmd = confinedScanCommand(req, ctx, tmp, ctx.cli ?? thisCli());
    if (typeof cmd === 'string') return { exit: 4, stdout: '', stderr: `stashbase secret scan: cannot scan: ${cmd}\n` };
    const secrets = scanSecrets(ctx);
    const given = Object.keys(secrets).length > 0;
    const r = await runCapped(cmd, { timeoutMs: ctx.timeoutMs ?? 120_000, maxBytes: MAX_OUTPUT, ...(given ? { input: JSON.stringify(secrets) } : {}) });
    const note = r.timedOut ? 'stashbase secret scan: the scan took too long and was stopped\n' : r.cut ? 'stashbase secret scan: (output cut)\n' : '';
    const exit = r.timedOut || r.code === null ? 1 : r.code;
    // The scan prints findings masked; whatever else reached its output goes back without a real value in any form.
    const said = ownWords(r.stderr, exit);
    return { ...withoutSecrets({ exit, stdout: r.stdout, stderr: said.stderr + note }, secrets), ...(said.withheld !== undefined ? { withheld: withoutSecrets({ exit, stdout: '', stderr: said.withheld }, secrets).stderr } : {}) };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
