// The only module that spawns processes. Everything else builds Command values.
import type { ChildProcess, StdioOptions } from 'node:child_process';
import { createRequire } from 'node:module';
import { StringDecoder } from 'node:string_decoder';
import { printable } from './util/printable.js';
import { type Command, formatCommand } from '../templates/command.js';
import { CommandFailedError } from './errors.js';
import { trustedPath, untrustedFile } from './util/find-tool.js';
import { terminalHungUp } from './util/terminal.js';

// child_process is loaded on first use: a dry run never spawns and should not pay for it.
let cp: typeof import('node:child_process') | undefined;
const childProcess = () => (cp ??= createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process'));

/**
 * A child's environment, built from own keys only into an object with no
 * prototype: Node copies it with for…in, which would also take any key that
 * reached Object.prototype.
 */
export function childEnv(cmd: Command, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env = Object.create(null) as NodeJS.ProcessEnv;
  const unset = new Set(cmd.unsetEnv ?? []);
  if (!cmd.onlyEnv) for (const name of Object.keys(base)) if (!unset.has(name)) env[name] = base[name];
  for (const name of Object.keys(cmd.env ?? {})) env[name] = (cmd.env as Record<string, string>)[name];
  return env;
}

/**
 * The environment of a process this module starts: childEnv, its search
 * paths without relative folders or folders under the working directory.
 * Each runs on your side (the agent's own environment, relative folders and
 * all, is given to it apart), and such a folder is the agent's to write: a
 * command named bare, a library the loader finds (an empty LD_LIBRARY_PATH
 * entry is the current folder), a module perl, node, python or ruby loads, or
 * git's own programs would be the agent's (found in review).
 */
function hostEnv(cmd: Command, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env = childEnv(cmd, base);
  for (const name of SEARCH_PATHS) if (env[name] !== undefined) env[name] = trustedPath(env[name]!);
  // An empty PATH is the current folder to the command's search (second review: every folder of PATH the agent's
  // left none, and a bare name ran ./stty): the system's folders then, if they are not the agent's either; else none.
  if (env.PATH === '') env.PATH = trustedPath('/usr/bin:/bin') || '/nonexistent';
  // Files the loader preloads, and git's folder of programs: not when the agent may write where they are.
  for (const name of ['LD_PRELOAD', 'LD_AUDIT']) if (env[name] !== undefined) env[name] = env[name]!.split(/[:\s]+/).filter((f) => f !== '' && !untrustedFile(f)).join(':');
  if (env.GIT_EXEC_PATH !== undefined && trustedPath(env.GIT_EXEC_PATH) !== env.GIT_EXEC_PATH) delete env.GIT_EXEC_PATH;
  return env;
}

/** Lists of folders a process on your side searches: PATH, the loader's, and the module paths of the languages installed tools use. */
const SEARCH_PATHS = ['PATH', 'LD_LIBRARY_PATH', 'PERL5LIB', 'PERLLIB', 'NODE_PATH', 'PYTHONPATH', 'RUBYLIB'];

export interface CaptureResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/** Synchronous probe for readiness checks; never throws for a missing file. */
export function probe(cmd: Command, timeoutMs = 5000, maxBuffer = 1024 * 1024, input?: string): CaptureResult {
  // Past 256 MiB the text would near V8's longest string, which spawnSync throws on instead of failing the child (review).
  const r = childProcess().spawnSync(cmd.file, cmd.args, { cwd: cmd.cwd, env: hostEnv(cmd), encoding: 'utf8', timeout: timeoutMs, maxBuffer: Math.min(maxBuffer, 256 << 20), stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], input });
  if (r.error) return { code: null, signal: null, stdout: '', stderr: String(r.error.message) };
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Runs a command to completion synchronously with your terminal for its
 * questions (stdin and stderr inherited) and its standard output captured,
 * bounded in size and time; `error` is the spawn's code (ENOENT, ETIMEDOUT,
 * ENOBUFS) when it did not run to its end.
 */
export function askCommand(cmd: Command, base: NodeJS.ProcessEnv, timeoutMs: number, maxBuffer: number): { code: number | null; signal: string | null; stdout: string; error?: string } {
  const r = childProcess().spawnSync(cmd.file, cmd.args, { cwd: cmd.cwd, env: hostEnv(cmd, base), encoding: 'utf8', timeout: timeoutMs, maxBuffer, stdio: ['inherit', 'pipe', 'inherit'] });
  if (r.error) return { code: null, signal: null, stdout: '', error: (r.error as NodeJS.ErrnoException).code ?? r.error.message };
  return { code: r.status, signal: r.signal, stdout: r.stdout };
}

/**
 * Runs a short command on a terminal of yours (its standard input: `stty`'s),
 * synchronously, its output ignored, with the environment every process here
 * gets (hostEnv: no tool from a folder the agent writes; found in review: a
 * `bin/stty` an earlier run left in the tree ran as you at the next sealed
 * run's start). Its exit status, or null when it did not run.
 */
export function onTerminal(cmd: Command, terminal: NodeJS.ReadStream | 'ignore'): number | null {
  const r = spawnOnTerminal(cmd, terminal);
  return r.error ? null : r.status;
}

/** A terminal's settings as `stty -g` writes them (hex digits and colons), stty found as onTerminal finds it; null if not read. */
export function terminalSettings(terminal: NodeJS.ReadStream): string | null {
  const r = spawnOnTerminal({ file: 'stty', args: ['-g'] }, terminal);
  const out = r.error || r.status !== 0 ? '' : r.stdout.trim();
  return /^[0-9a-fA-F:]{1,4096}$/.test(out) ? out : null;
}

function spawnOnTerminal(cmd: Command, terminal: NodeJS.ReadStream | 'ignore') {
  return childProcess().spawnSync(cmd.file, cmd.args, { cwd: cmd.cwd, env: hostEnv(cmd), timeout: 5000, encoding: 'utf8', maxBuffer: 64 * 1024, stdio: [terminal, 'pipe', 'ignore'] });
}

/**
 * Runs a command to completion with its output captured; rejects with
 * CommandFailedError unless it exits 0. With `timeoutMs`, a command still
 * running then is killed and the rejection says so (never a hang).
 */
export function capture(cmd: Command, input?: string, timeoutMs?: number, maxBytes = MAX_OUTPUT): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = childProcess().spawn(cmd.file, cmd.args, { cwd: cmd.cwd, env: hostEnv(cmd), stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let timedOut = false;
    const timer = timeoutMs === undefined ? null : setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    const out = new Bounded(maxBytes, () => child.kill('SIGKILL'));
    const err = new Bounded(MAX_ERROR_TEXT);
    child.stdout?.on('data', out.add);
    child.stderr?.on('data', err.add);
    if (input !== undefined) child.stdin?.end(input);
    child.on('error', (e) => reject(new CommandFailedError(formatCommand(cmd), 127, e.message)));
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      if (code === 0 && !out.over) resolve(out.text());
      else reject(new CommandFailedError(formatCommand(cmd), exitCodeOf(code, signal), out.over ? out.overText() : timedOut ? `timed out after ${(timeoutMs as number) / 1000} s` : err.text()));
    });
  });
}

/** What a child may print to stashbase by default (per stream it reads): past it, the child is killed and its run failed. */
export const MAX_OUTPUT = 64 << 20;
/** What is kept of a child's error text (the head; the rest dropped, the child left running). */
const MAX_ERROR_TEXT = 1 << 20;

/**
 * A child's output kept up to a bound: past it, `onOver` is called once (to
 * kill the child) and nothing more is kept. Many of the children stashbase
 * runs print what the agent made (commit subjects, file names, a file of the
 * home volume): unbounded, one could exhaust this process's memory, or pass
 * the longest string V8 makes and end it before the run's own checks.
 */
class Bounded {
  private readonly parts: Buffer[] = [];
  private n = 0;
  /** Output past the bound came and was dropped. */
  cut = false;
  /** The bound was passed where `onOver` was given (the child killed). */
  over = false;
  constructor(private readonly max: number, private readonly onOver?: () => void) {}
  readonly add = (b: Buffer): void => {
    const room = this.max - this.n;
    if (b.length > room) {
      this.cut = true;
      if (!this.over && this.onOver) {
        this.over = true;
        this.onOver();
      }
    }
    if (room <= 0) return;
    const part = b.length > room ? b.subarray(0, room) : b;
    this.parts.push(part);
    this.n += part.length;
  };
  text(): string {
    return Buffer.concat(this.parts).toString('utf8');
  }
  overText(): string {
    return `it printed more than ${this.max >> 20} MiB, and was stopped`;
  }
}

export interface Spawned {
  child: ChildProcess;
  /** Resolves with the exit code the CLI should report: the child's, or 128+N for signal N. */
  exit: Promise<number>;
}

const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15, SIGUSR1: 10, SIGUSR2: 12, SIGPIPE: 13, SIGALRM: 14, SIGABRT: 6, SIGSEGV: 11, SIGBUS: 7 };

export function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  return 128 + (signal ? SIGNAL_NUMBERS[signal] ?? 1 : 1);
}

/**
 * Starts the agent (or another long-lived child) with the given stdio.
 * `ownSession`: in a session of its own, away from the terminal, whose Ctrl+C,
 * Ctrl+Z and hang-up then never reach it (they are the agent's).
 */
export function start(cmd: Command, stdio: StdioOptions = 'inherit', ownSession = false): Spawned {
  const child = childProcess().spawn(cmd.file, cmd.args, { cwd: cmd.cwd, env: hostEnv(cmd), stdio, detached: ownSession });
  const exit = new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(exitCodeOf(code, signal)));
  });
  return { child, exit };
}

const FORWARDED = ['SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'] as const;

/**
 * While an agent runs: signals sent to stashbase alone go to `deliver`; Ctrl+C
 * is left to the terminal, which delivers it to the agent itself (same process
 * group), and stashbase stays alive to tear down after it. Returns the undo.
 */
export function forwardSignals(deliver: (sig: NodeJS.Signals) => void): () => void {
  const onInt = () => {};
  const onHup = () => terminalHungUp();
  process.on('SIGINT', onInt);
  process.on('SIGHUP', onHup);
  for (const s of FORWARDED) process.on(s, deliver);
  return () => {
    process.off('SIGINT', onInt);
    process.off('SIGHUP', onHup);
    for (const s of FORWARDED) process.off(s, deliver);
  };
}

/** Runs a sandbox command on the user's terminal, forwarding signals; resolves with its exit code. */
export async function runForwarded(cmd: Command): Promise<number> {
  const child = start(cmd, 'inherit');
  const unforward = forwardSignals((sig) => child.child.kill(sig));
  try {
    return await child.exit;
  } finally {
    unforward();
  }
}

/** A line held back past this many characters is shown as it stands. */
const MAX_HELD_LINE = 64 * 1024;

/**
 * Another program's output shown line by line, each line escaped (one line
 * each) after `prefix`, so that none can look like stashbase's own or reach
 * your terminal raw (review, round 30: a path in git merge's output forged a
 * line; a remote engine's build stream retitled the terminal).
 */
export function linesShown(to: NodeJS.WritableStream, prefix: string): { write: (b: Buffer) => void; end: () => void } {
  const text = new StringDecoder('utf8');
  let held = '';
  const show = (line: string) => to.write(`${prefix}${printable(line, true)}\n`);
  const take = (more: string) => {
    held += more;
    let at: number;
    while ((at = held.indexOf('\n')) !== -1) {
      show(held.slice(0, at));
      held = held.slice(at + 1);
    }
    if (held.length > MAX_HELD_LINE) (show(held), (held = ''));
  };
  return {
    write: (b) => take(text.write(b)),
    end: () => {
      take(text.end());
      if (held !== '') show(held);
      held = '';
    },
  };
}

/**
 * Runs a command whose output names what others chose (git merge of the
 * agent's branch: its paths; a build on an engine: its words): output shown
 * line by line (linesShown, after "  | "), on your stdout and stderr or all on
 * stderr (`toStderr`: a build's, stdout staying for results); input from your
 * terminal unless `noInput`; `tap` sees every chunk. Resolves with its exit
 * code once its output is all shown.
 */
export async function runShown(cmd: Command, o: { noInput?: boolean; toStderr?: boolean; tap?: (b: Buffer) => void } = {}): Promise<number> {
  const s = start(cmd, [o.noInput ? 'ignore' : 'inherit', 'pipe', 'pipe']);
  const closed = new Promise<void>((resolve) => s.child.on('close', () => resolve()));
  for (const [from, to] of [[s.child.stdout, o.toStderr ? process.stderr : process.stdout], [s.child.stderr, process.stderr]] as const) {
    const shown = linesShown(to, '  | ');
    from?.on('data', (b: Buffer) => (o.tap?.(b), shown.write(b)));
    from?.on('end', shown.end);
  }
  const code = await s.exit;
  await closed;
  return code;
}

export interface CappedResult extends CaptureResult {
  timedOut: boolean;
  /** Output past `maxBytes` (per stream) was dropped. */
  cut: boolean;
}

/**
 * Runs a command to completion and resolves with what happened, never
 * rejecting for its exit: for a command whose environment holds what must not
 * be printed (its rendering, with `K=V`, appears in no message from here).
 * Killed after `timeoutMs`; each stream keeps its first `maxBytes`.
 */
export function runCapped(cmd: Command, o: { timeoutMs: number; maxBytes: number; input?: string }): Promise<CappedResult> {
  return new Promise((resolve) => {
    const child = childProcess().spawn(cmd.file, cmd.args, { cwd: cmd.cwd, env: hostEnv(cmd), stdio: [o.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (o.input !== undefined) {
      child.stdin?.on('error', () => {});
      child.stdin?.end(o.input);
    }
    const out = new Bounded(o.maxBytes);
    const err = new Bounded(o.maxBytes);
    let timedOut = false;
    child.stdout?.on('data', out.add);
    child.stderr?.on('data', err.add);
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, o.timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve({ code: null, signal: null, stdout: '', stderr: `cannot run ${cmd.file}: ${e.message}`, timedOut, cut: out.cut || err.cut });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: out.text(), stderr: err.text(), timedOut, cut: out.cut || err.cut });
    });
  });
}

export interface CollectOptions {
  /** Written to the child's standard input (closed after it). */
  input?: string;
  /** The child is killed (SIGKILL) after this long; its result then has signal SIGKILL. */
  timeoutMs: number;
  /** Also collect what the child writes to descriptor 3 (a side channel for reports). */
  fd3?: boolean;
  /** Kills the child (SIGKILL) when aborted; its result then has signal SIGKILL. */
  signal?: AbortSignal;
  /** The most kept of its output and of descriptor 3 (default MAX_OUTPUT): past it the child is killed (signal SIGKILL, `over`). */
  maxBytes?: number;
}

/** Runs a command to its end and collects its output whatever its exit: for checks that read a failure's text. */
export function collect(cmd: Command, o: CollectOptions): Promise<CaptureResult & { fd3: string; over: boolean }> {
  return new Promise((resolve) => {
    const stdio: StdioOptions = [o.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe', ...(o.fd3 ? (['pipe'] as const) : [])];
    const child = childProcess().spawn(cmd.file, cmd.args, { cwd: cmd.cwd, env: hostEnv(cmd), stdio });
    const kill = () => child.kill('SIGKILL');
    const bufs = [new Bounded(o.maxBytes ?? MAX_OUTPUT, kill), new Bounded(MAX_ERROR_TEXT), new Bounded(o.maxBytes ?? MAX_OUTPUT, kill)] as const;
    child.stdout?.on('data', bufs[0].add);
    child.stderr?.on('data', bufs[1].add);
    if (o.fd3) (child.stdio[3] as NodeJS.ReadableStream | undefined)?.on('data', bufs[2].add);
    child.stdin?.on('error', () => {}); // a child that exits without reading its input
    if (o.input !== undefined) child.stdin?.end(o.input);
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs);
    const abort = () => child.kill('SIGKILL');
    o.signal?.addEventListener('abort', abort);
    if (o.signal?.aborted) abort();
    child.on('error', (e) => {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', abort);
      resolve({ code: null, signal: null, stdout: '', stderr: e.message, fd3: '', over: false });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', abort);
      const over = bufs[0].over || bufs[2].over;
      resolve({ code, signal, stdout: bufs[0].text(), stderr: over ? (bufs[0].over ? bufs[0] : bufs[2]).overText() : bufs[1].text(), fd3: bufs[2].text(), over });
    });
  });
}

/**
 * Runs a command and hands each line of its output to `onLine` as it comes
 * (nothing is kept); `onLine` returning false stops it (killed). Killed after
 * `timeoutMs` or on `signal`. Never rejects.
 */
export function eachLine(cmd: Command, input: string, onLine: (line: string) => boolean, timeoutMs: number, signal?: AbortSignal): Promise<{ code: number | null; stderr: string; killed: boolean }> {
  return new Promise((resolve) => {
    const child = childProcess().spawn(cmd.file, cmd.args, { cwd: cmd.cwd, env: hostEnv(cmd), stdio: ['pipe', 'pipe', 'pipe'] });
    let killed = false;
    const kill = () => {
      killed = true;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(kill, timeoutMs);
    signal?.addEventListener('abort', kill);
    if (signal?.aborted) kill();
    const err: Buffer[] = [];
    child.stderr?.on('data', (d: Buffer) => err.length < 64 && err.push(d));
    child.stdin?.on('error', () => {});
    child.stdin?.end(input);
    let rest = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      if (killed) return;
      const lines = (rest + d).split('\n');
      rest = lines.pop() as string;
      for (const l of lines) if (!onLine(l)) return kill();
      // A line past 4 MiB is handed on in parts (each still a line's worth to judge).
      if (rest.length > 1 << 22) {
        if (!onLine(rest)) return kill();
        rest = '';
      }
    });
    child.on('error', () => {});
    child.on('close', (code) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', kill);
      if (!killed && rest !== '') onLine(rest);
      resolve({ code, stderr: Buffer.concat(err).toString('utf8'), killed });
    });
  });
}

export interface PipeResult {
  /** What the consumer was (null when `choose` wanted none). */
  consumer: Command | null;
  producer: { code: number | null; stderr: string };
  consumed: { code: number | null; stderr: string } | null;
  timedOut: boolean;
}

/**
 * Runs `producer` with `input` on its standard input and pipes its standard
 * output into a consumer that `choose` picks from the output's first
 * `headBytes` bytes (null: none, the output is drained). Both are killed after
 * `timeoutMs`. Never rejects: the result says what each did.
 */
export function pipeInto(producer: Command, input: string, headBytes: number, choose: (head: Buffer) => Command | null, timeoutMs: number, signal?: AbortSignal): Promise<PipeResult> {
  return new Promise((resolve) => {
    const spawnOf = (cmd: Command) => childProcess().spawn(cmd.file, cmd.args, { cwd: cmd.cwd, env: hostEnv(cmd), stdio: ['pipe', 'pipe', 'pipe'] });
    const a = spawnOf(producer);
    let b: ChildProcess | null = null;
    let consumer: Command | null = null;
    let head = Buffer.alloc(0);
    let decided = false;
    let timedOut = false;
    const errA: Buffer[] = [];
    const errB: Buffer[] = [];
    const closed = (c: ChildProcess) => new Promise<number | null>((r) => c.on('close', (code) => r(code)));
    const producerExit = closed(a);
    let consumerExit: Promise<number | null> = Promise.resolve(null);
    a.on('error', () => {});
    a.stderr?.on('data', (d: Buffer) => errA.length < 64 && errA.push(d));
    a.stdin?.on('error', () => {});
    a.stdin?.end(input);
    const kill = () => {
      timedOut = true;
      a.kill('SIGKILL');
      b?.kill('SIGKILL');
    };
    const timer = setTimeout(kill, timeoutMs);
    signal?.addEventListener('abort', kill);
    if (signal?.aborted) kill();
    const decide = () => {
      decided = true;
      consumer = choose(head);
      if (consumer === null) return;
      b = spawnOf(consumer);
      b.on('error', () => {});
      b.stdin?.on('error', () => {});
      b.stdout?.resume();
      b.stderr?.on('data', (d: Buffer) => errB.length < 64 && errB.push(d));
      consumerExit = closed(b);
      // A consumer that ended before the producer's output did (it refused what came): the producer is ended too,
      // never left blocked on a pipe nobody reads.
      void consumerExit.then(() => {
        if (a.exitCode === null && a.signalCode === null) a.kill('SIGKILL');
      });
      b.stdin?.write(head);
      a.stdout?.pipe(b.stdin as NodeJS.WritableStream);
    };
    a.stdout?.on('data', function first(d: Buffer) {
      head = Buffer.concat([head, d]);
      if (head.length < headBytes) return;
      a.stdout?.off('data', first);
      a.stdout?.pause();
      decide();
      if (consumer === null) a.stdout?.resume();
    });
    a.stdout?.on('end', () => {
      if (!decided) decide();
      if (b === null) return;
      (b as ChildProcess).stdin?.end();
    });
    // The producer's output has ended before its close: the consumer, if any, is known by then.
    void producerExit.then(async (codeA) => {
      const codeB = await consumerExit;
      clearTimeout(timer);
      signal?.removeEventListener('abort', kill);
      resolve({
        consumer,
        producer: { code: codeA, stderr: Buffer.concat(errA).toString('utf8') },
        consumed: consumer === null ? null : { code: codeB, stderr: Buffer.concat(errB).toString('utf8') },
        timedOut,
      });
    });
  });
}
