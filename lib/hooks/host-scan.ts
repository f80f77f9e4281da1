// The host side of the secret_scan hook. A sandbox's hook posts its scan's
// arguments to the run's proxy; the proxy hands the parsed JSON body here and
// sends back what this returns, encoded by encodeScanAnswer. The scan runs as
// `stashbase scan …` again, confined (templates/confine.ts): the agent chose
// the working tree's content, symlinks and .git file, so the scanner must not
// be able to read anything but the tree, its git directories and the system.
import { lstatSync, mkdtempSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCapped } from '../exec.js';
import { findTool } from '../find-tool.js';
import type { Profile } from '../profile/types.js';
import type { Command } from '../../templates/command.js';
import { buildConfineCommand, CONFINE_ETC, CONFINE_SYSTEM, type SystemPath } from '../../templates/confine.js';
import { buildConfineSeatbeltCommand, buildConfineSeatbeltProfile } from '../../templates/confine-seatbelt.js';
import { type CliFiles, thisCli } from './cli-files.js';
import { type PathMapping, parseScanRequest, type ScanRequest } from './scan-request.js';

export interface ScanAnswer {
  /** The scan's exit code: 0 clean, 1 found (or could not run), 2 refused; the hook exits with it. */
  exit: number;
  stdout: string;
  stderr: string;
}

export interface HostScanContext {
  /** The run's working tree in the sandbox and on the host (the same path on the native and Docker backends). */
  workTree: PathMapping;
  /**
   * The git directories of the working tree as found when the run started
   * (its git dir and common dir; real paths), never looked up again from the
   * tree the agent controls. Bound read-only, at the same paths.
   */
  gitDirs: string[];
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

function systemPaths(): SystemPath[] {
  const out: SystemPath[] = [];
  for (const p of CONFINE_SYSTEM) {
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (st?.isSymbolicLink()) out.push({ path: p, symlink: readlinkSync(p) });
    else if (st?.isDirectory()) out.push({ path: p });
  }
  return out;
}

/** The child's whole environment: a fixed minimum, the index it is told about, and the bound secrets' values under their profile names. */
function scanEnv(req: ScanRequest, ctx: HostScanContext, tmp: string): { env: Record<string, string>; names: string[] } {
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
  };
  if (req.indexFile) env.GIT_INDEX_FILE = req.indexFile;
  const names: string[] = [];
  for (const [name, s] of Object.entries(ctx.profile.secrets)) {
    const value = ctx.env[s.source];
    if (value === undefined || value === '' || Object.hasOwn(env, name)) continue;
    env[name] = value;
    names.push(name);
  }
  return { env, names };
}

/** The confined command for a checked request; `tmp` is the scan's private temp folder. */
export function confinedScanCommand(req: ScanRequest, ctx: HostScanContext, tmp: string, cli: CliFiles): Command | string {
  const { env, names } = scanEnv(req, ctx, tmp);
  const command = [cli.node, cli.entry, 'scan', ...req.args, ...(names.length > 0 ? ['--secret-env', names.join(',')] : [])];
  const readOnly = [...cli.roots, ctx.workTree.host, ...ctx.gitDirs];
  const inherited = Object.keys(process.env);
  const platform = ctx.platform ?? process.platform;
  if (platform === 'linux') {
    const bwrap = findTool('bwrap', ctx.env);
    if (!bwrap) return 'bubblewrap (bwrap) is not installed, and the scan never runs unconfined';
    const etc = CONFINE_ETC.filter((p) => lstatSync(p, { throwIfNoEntry: false }) !== undefined);
    return buildConfineCommand({ bwrap, system: systemPaths(), etc, readOnly, cwd: req.cwd, command, env: { ...env, HOME: '/tmp', TMPDIR: '/tmp' }, inherited });
  }
  if (platform === 'darwin') {
    const profile = buildConfineSeatbeltProfile({ readOnly, tmp });
    return buildConfineSeatbeltCommand('/usr/bin/sandbox-exec', profile, command, req.cwd, env, inherited);
  }
  return `the secret_scan hook is not available on ${platform}: the scan runs only confined (bubblewrap on Linux, Seatbelt on macOS)`;
}

/** Checks the request, runs the scan confined, and answers; never throws for what the sandbox sent. */
export async function runConfinedScan(body: unknown, ctx: HostScanContext): Promise<ScanAnswer> {
  if (!ctx.profile.allowHooks.includes('secret_scan')) return refuse(`this run's profile does not allow it (allow_hooks = ["secret_scan"])`);
  const req = parseScanRequest(body, ctx.workTree, ctx.gitDirs);
  if (typeof req === 'string') return refuse(req);
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'stashbase-scan-')));
  try {
    const cmd = confinedScanCommand(req, ctx, tmp, ctx.cli ?? thisCli());
    if (typeof cmd === 'string') return { exit: 4, stdout: '', stderr: `stashbase secret scan: cannot scan: ${cmd}\n` };
    const r = await runCapped(cmd, { timeoutMs: ctx.timeoutMs ?? 120_000, maxBytes: MAX_OUTPUT });
    const note = r.timedOut ? 'stashbase secret scan: the scan took too long and was stopped\n' : r.cut ? 'stashbase secret scan: (output cut)\n' : '';
    const exit = r.timedOut || r.code === null ? 1 : r.code;
    return { exit, stdout: r.stdout, stderr: r.stderr + note };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
