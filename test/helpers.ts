// Shared test helpers: temporary homes, running the real CLI, and the rule
// that integration tests skip loudly on a laptop but fail in CI.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = join(REPO, 'bin', 'stashbase.cjs');
export const REQUIRED = process.env.CI === 'true' || process.env.STASHBASE_REQUIRE_INTEGRATION === '1';

const probed = new Map<string, string | null>();

/** Null when the tool works, else why not (its stderr). Asked once per process, with retries: CI's load once failed a single probe. */
function problem(tool: string, args: string[]): string | null {
  const key = [tool, ...args].join(' ');
  if (!probed.has(key)) {
    let why: string | null = null;
    for (let i = 0; i < 3; i++) {
      const r = spawnSync(tool, args, { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
      why = r.status === 0 ? null : `${r.error?.message ?? ''}${r.stderr ?? ''}`.trim() || `exit ${r.status ?? r.signal}`;
      if (why === null) break;
      spawnSync('sleep', ['0.2']);
    }
    probed.set(key, why);
  }
  return probed.get(key) as string | null;
}

/**
 * Options for an integration test needing real tools: none when they work; on a
 * developer machine without them, a skip with one loud line; in CI, a failure.
 */
export function needs(...tools: Array<'bwrap' | 'native' | 'git' | 'docker' | 'go' | 'gcc' | 'keyring' | 'zsh' | 'fish'>): { skip?: string } {
  // The keyring: GNOME Keyring's daemon, secret-tool to ask it, and a D-Bus session to reach it in.
  const probe: Record<string, [string, string[]]> = {
    bwrap: ['bwrap', ['--ro-bind', '/', '/', '--unshare-pid', '--unshare-net', 'true']], git: ['git', ['--version']], docker: ['docker', ['info']], go: ['go', ['version']], gcc: ['gcc', ['--version']],
    keyring: ['sh', ['-c', 'command -v secret-tool && command -v dbus-run-session && gnome-keyring-daemon --version']],
    zsh: ['zsh', ['--version']], fish: ['fish', ['--version']],
    // The native backend of this platform: bubblewrap on Linux, Seatbelt on a Mac (scripts/macos-probes.sh runs these there).
    native: process.platform === 'darwin' ? ['/usr/bin/sandbox-exec', ['-p', '(version 1)(allow default)', '/usr/bin/true']] : ['bwrap', ['--ro-bind', '/', '/', '--unshare-pid', '--unshare-net', 'true']],
  };
  const missing = tools
    .map((t) => [t, problem(...(probe[t] as [string, string[]]))] as const)
    .filter(([, why]) => why !== null);
  if (missing.length === 0) return {};
  const msg = `integration test needs ${missing.map(([t, why]) => `${t} (${why!.split('\n').slice(-3).join(' ')})`).join(', ')} (run scripts/setup-host.sh)`;
  if (REQUIRED) throw new Error(`${msg}: required in CI`);
  process.stderr.write(`\n*** SKIPPING: ${msg} ***\n\n`);
  return { skip: msg };
}

/** Where scripts/install-test-agents.sh puts the real Claude Code and Codex. */
export const TEST_AGENTS_BIN = join(process.env.STASHBASE_TEST_AGENTS ?? '/var/cache/stashbase-test-agents', 'node_modules', '.bin');

/** For the compatibility tests: the real agents installed; in CI a missing one fails. */
export function needsAgents(): { skip?: string } {
  const ok = ['claude', 'codex'].every((a) => spawnSync(join(TEST_AGENTS_BIN, a), ['--version'], { stdio: 'ignore' }).status === 0);
  return requirement(ok, `the real agents are not installed in ${TEST_AGENTS_BIN} (run scripts/install-test-agents.sh)`);
}

/** A test's requirement: met, or skipped with the reason here, or (in CI) a failure. */
export function requirement(ok: boolean, msg: string): { skip?: string } {
  if (ok) return {};
  if (REQUIRED) throw new Error(`${msg}: required in CI`);
  process.stderr.write(`\n*** SKIPPING: ${msg} ***\n\n`);
  return { skip: msg };
}

/** For tests that need root (network interfaces, running the agent as another user): CI runs as root, so there a missing root fails. */
export function needsRoot(why: string): { skip?: string } {
  return requirement(process.getuid?.() === 0, `integration test needs root: ${why}`);
}

export interface Sandbox {
  dir: string;
  home: string;
  sbHome: string;
  env: NodeJS.ProcessEnv;
  cleanup(): void;
}

/**
 * A folder for temporary homes outside /tmp and /var/tmp (the sandbox sees
 * private ones of those): the checkout's .test-homes, or, for a checkout in a
 * temp folder (a CI clone), one in your own ~/.cache.
 */
export function outsideTempBase(): string {
  const inTemp = ['/tmp', '/var/tmp', tmpdir()].some((d) => REPO === d || REPO.startsWith(d + '/'));
  const base = inTemp ? join(homedir(), '.cache', 'stashbase-test-homes') : join(REPO, '.test-homes');
  mkdirSync(base, { recursive: true });
  return base;
}

/** A temporary HOME and STASHBASE_HOME (in `base`, by default the temp folder), and an environment without the host's tokens. */
export function tempHome(base = tmpdir()): Sandbox {
  const dir = realpathSync(mkdtempSync(join(base, 'sbtest-')));
  const home = join(dir, 'home');
  const sbHome = join(home, '.stashbase');
  mkdirSync(home, { recursive: true });
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, STASHBASE_HOME: sbHome, LANG: 'C.UTF-8' };
  return { dir, home, sbHome, env, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function writeFile(path: string, text: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}

export interface CliResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

export function cli(args: string[], opts: { env: NodeJS.ProcessEnv; cwd?: string; input?: string; timeoutMs?: number }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: opts.env, cwd: opts.cwd ?? REPO, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** The parent of a process, from /proc. */
export function parentOf(pid: number): number {
  return Number(/PPid:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
}

/** Whether `pid` is a descendant of `ancestor` (at most 8 generations up). */
export function descendsFrom(pid: number, ancestor: number): boolean {
  for (let p = pid, i = 0; p > 1 && i < 8; i++) {
    p = Number(/PPid:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
    if (p === ancestor) return true;
  }
  return false;
}

/** The processes whose command line passes `match` (a process gone while it is read, or its parents, is left out). */
export function processesWhere(match: (pid: number, cmdline: string) => boolean): number[] {
  return readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map(Number).filter((pid) => {
    try {
      return match(pid, readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
    } catch {
      return false;
    }
  });
}

/** Listens on a free loopback port and returns it. */
export async function listen(server: { listen(port: number, host: string, cb: () => void): unknown; address(): unknown }): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
}

/**
 * A loopback port that refuses connections for as long as it is held: bound by
 * a perl process that never listens. A port freed after a listen could be
 * taken by a server of a test running beside this one before it is used.
 */
export async function refusingPort(): Promise<{ port: number; release: () => void }> {
  const script = 'use Socket; socket(my $s, PF_INET, SOCK_STREAM, 0) or die $!; bind($s, sockaddr_in(0, INADDR_LOOPBACK)) or die $!; ' +
    'my ($port) = sockaddr_in(getsockname($s)); $| = 1; print "$port\\n"; sysread(STDIN, my $x, 1);';
  const holder = spawn('perl', ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    holder.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
    holder.once('exit', (code) => reject(new Error(`the port holder exited ${code}`)));
  });
  return { port, release: () => holder.kill() };
}

/** What a folder of stashbase's sessions' stores holds, in every store (one per profile and tree): the entries' names. */
export function sessionStoreEntries(sbHome: string, agent: 'claude' | 'codex', ...rel: string[]): string[] {
  const base = join(sbHome, 'agent-state');
  let keys: string[] = [];
  try {
    keys = readdirSync(base);
  } catch {
    return [];
  }
  return keys.flatMap((k) => {
    try {
      return readdirSync(join(base, k, agent, ...rel));
    } catch {
      return [];
    }
  });
}

/** A path in stashbase's store of the agents' sessions (one folder per profile and tree, lib/views/agent-views.ts): the first that exists, or null. */
export function inSessionStore(sbHome: string, agent: 'claude' | 'codex', ...rel: string[]): string | null {
  const base = join(sbHome, 'agent-state');
  let keys: string[] = [];
  try {
    keys = readdirSync(base);
  } catch {
    return null;
  }
  for (const k of keys) {
    const p = join(base, k, agent, ...rel);
    if (existsSync(p)) return p;
  }
  return null;
}

/**
 * Runs `fn` while no other test file runs `agent docker cleanup --isolated-paths --yes`, which removes every
 * isolated-path volume on the engine (a test that made one of its own saw it go: files run two at a time). A lock
 * directory; one left by a killed run is taken over after three minutes.
 */
export async function withIsolatedVolumes<T>(fn: () => Promise<T>): Promise<T> {
  const lock = join(tmpdir(), 'stashbase-test-isolated-volumes.lock');
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) rmSync(lock, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * A POST on a connected socket whose body goes in `body`'s pieces 30 ms apart, its head made by `head` from the
 * Content-Length (which says 100 bytes more when the agent goes before its end: `close`); resolves with what came
 * back, once the socket is closed (`close`) or after 600 ms of listening.
 */
export function postInPieces(s: import('node:stream').Duplex, head: (length: number) => string, body: string[], close: boolean): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    s.setEncoding('latin1').on('data', (d: string) => (out += d));
    s.on('error', () => resolve(out));
    void (async () => {
      const length = body.reduce((n, b) => n + b.length, 0);
      s.write(head(close ? length + 100 : length));
      for (const b of body) {
        s.write(b);
        await new Promise((r) => setTimeout(r, 30));
      }
      if (close) {
        s.destroy();
        return resolve(out);
      }
      setTimeout(() => {
        s.destroy();
        resolve(out);
      }, 600);
    })();
  });
}
