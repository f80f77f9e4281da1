// Executes a prepared native plan: the run directory, stand-ins for missing
// protected paths, the proxy, bwrap, and the bridge into its network namespace.
import { procStatFields } from './terminal-group.js';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { Server } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { BWRAP_FDS } from '../../templates/bwrap.js';
import { holdSources, type HeldSources } from '../paths/bind-sources.js';
import { relayControlFd } from '../../templates/native-plan.js';
import { SandboxUnavailableError } from '../errors.js';
import { forwardSignals, start } from '../exec.js';
import type { NativePrepared } from './prepare.js';
import type { Trace } from '../run/trace.js';

function agentPid(initPid: number): number | null {
  try {
    const kids = readFileSync(`/proc/${initPid}/task/${initPid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    return kids.length ? Number(kids[0]) : null;
  } catch {
    return null;
  }
}

/** bwrap exited before the gate spoke: nothing of the agent ran. */
class BwrapExited extends SandboxUnavailableError {}
/** bwrap failed its own setup (a mount it copies vanished under it, say): tried again. */
class SetupFailed extends BwrapExited {}

/** The exit status of bwrap's own failures (its die()): only these are tried again. */
const BWRAP_FAILED = 1;

/**
 * bwrap exited (`code`, null: it could not be started) before the gate spoke.
 * Tried again only when it failed as bwrap fails and `retryable` (no signal of
 * yours came, nothing of the sandbox reached the proxy); otherwise the run fails closed.
 */
function setupFailure(code: number | null, retryable: boolean): BwrapExited {
  const why = `bwrap ${code === null ? 'failed' : `exited (${code})`} before setting up the sandbox; nothing was run`;
  return code === BWRAP_FAILED && retryable ? new SetupFailed(why) : new BwrapExited(why);
}

function readInfo(stream: NodeJS.ReadableStream, timeoutMs: number): Promise<{ 'child-pid': number }> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new SandboxUnavailableError('bwrap did not report its sandbox within 10 s; nothing was run')), timeoutMs);
    stream.setEncoding?.('utf8');
    stream.on('data', (d: string) => {
      buf += d;
      try {
        const info = JSON.parse(buf) as { 'child-pid': number };
        clearTimeout(timer);
        resolve(info);
      } catch {
        // not complete yet
      }
    });
    // An end without a report: bwrap's exit (the caller waits for it too) says how it failed.
  });
}

interface Relay {
  /** Gives the relay the sandbox's pid: it joins that pid's namespaces. */
  join(pid: number): void;
  /** It runs inside the namespaces. */
  joined: Promise<void>;
  /** Its listening socket on the namespace's loopback, now ours. */
  listening: Promise<unknown>;
  /** Ends a relay that is still there and closes the channel. */
  close(): void;
}

type RelayMessage = { relay?: unknown; pid?: unknown; why?: unknown };

/**
 * The relay forked beside bwrap (templates/bridge-relay.ts), on Node's IPC
 * channel with it: its words, then its listening socket. Only those are read:
 * anything else on the channel is ignored, and the channel closes once the
 * socket is here (the relay then exits).
 */
function relayChannel(child: ChildProcess, sandboxExit: Promise<number>): Relay {
  let pid: number | null = null;
  const said = new Map<string, (handle: unknown) => void>();
  let failure: string | null = null;
  const failed: Array<(why: string) => void> = [];
  const fail = (why: string) => {
    if (failure !== null) return;
    failure = why;
    for (const f of failed) f(why);
  };
  child.on('message', (m: RelayMessage, handle: unknown) => {
    if (typeof m !== 'object' || m === null) return;
    if (m.relay === 'pid' && typeof m.pid === 'number' && pid === null) pid = m.pid;
    else if (m.relay === 'error') fail(typeof m.why === 'string' ? m.why : 'unknown error');
    else if (typeof m.relay === 'string') said.get(m.relay)?.(handle);
  });
  child.on('disconnect', () => fail('it exited'));
  // The child's 'error' (a send to a relay already gone) rejects the exit: that is a failure too, never unhandled.
  void sandboxExit.then(
    () => fail('the sandbox exited first'),
    () => fail('the sandbox failed'),
  );
  const seen = (word: string) =>
    new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => fail(`no "${word}" within 10 s`), 10_000);
      const done = (f: () => void) => {
        clearTimeout(timer);
        said.delete(word);
        f();
      };
      const refuse = (why: string) => done(() => reject(new SandboxUnavailableError(`the network relay into the sandbox failed (${why}); nothing was run`)));
      said.set(word, (handle) => done(() => resolve(handle)));
      if (failure !== null) refuse(failure);
      else failed.push(refuse);
    });
  const joined = seen('joined') as Promise<void>;
  const listening = seen('listening').then((handle) => {
    if (!handle) throw new SandboxUnavailableError('the network relay into the sandbox failed (no socket came with its word); nothing was run');
    return handle;
  });
  joined.catch(() => {});
  listening.catch(() => {});
  return {
    join: (p) => {
      if (child.connected) child.send({ pid: p }, (e) => e && fail(`it went away (${e.message})`));
    },
    joined,
    listening,
    close: () => {
      // Only while the channel is open is the relay surely alive (it holds the
      // other end), and its pid still its own, never another process's.
      if (!child.connected) return;
      if (pid !== null) killQuietly(pid);
      child.disconnect();
    },
  };
}

function listenOn(server: Server, handle: unknown): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (e) => reject(new SandboxUnavailableError(`the proxy cannot listen in the sandbox's namespace (${e.message}); nothing was run`)));
    server.listen(handle as { fd: number }, 4096, () => resolve());
  });
}

/**
 * Waits for the gate's first word (templates/gate.ts): it runs inside, so
 * bwrap has made the sandbox. bwrap's exit before it is bwrap's own failure:
 * nothing of the agent ran (the agent starts only on our answer).
 */
function gateOpened(stream: NodeJS.ReadableStream, exit: Promise<number>, failure: (code: number | null) => Error): Promise<void> {
  return new Promise((resolve, reject) => {
    let done = false;
    stream.on('error', () => {});
    stream.once('data', () => {
      if (done) return;
      done = true;
      stream.pause();
      resolve();
    });
    const failed = (code: number | null) => {
      if (done) return;
      done = true;
      reject(failure(code));
    };
    exit.then(failed, () => failed(null));
  });
}

/** Writes the one byte "1" the other side waits for, then closes our end (nothing more is ever said there). */
function sayOnce(stream: NodeJS.WritableStream | undefined): void {
  if (!stream) return;
  const s = stream as NodeJS.WritableStream & { destroy(): void };
  s.on('error', () => {});
  s.end('1', () => s.destroy());
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
}

/** Maps only the user's own uid and gid into bwrap's user namespace, as bwrap itself would. */
function writeIdMaps(pid: number): void {
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  writeFileSync(`/proc/${pid}/setgroups`, 'deny');
  writeFileSync(`/proc/${pid}/uid_map`, `${uid} ${uid} 1\n`);
  writeFileSync(`/proc/${pid}/gid_map`, `${gid} ${gid} 1\n`);
}

export interface NativeRunOptions {
  /** The run's proxy: already listening on the host's loopback (host network), or not yet (bridged: it listens on the relay's socket here). */
  proxy: Server;
  trace?: Trace;
  /** Called once the agent is released (the proxy warms up while the agent starts). */
  onStarted?: () => void;
}

/** The run's signals, heard for all its tries: one that came before the agent started ends the run. */
interface Signals {
  /** A signal came before the agent started. */
  signalled: boolean;
  /** The agent started (the gate's word was given). */
  opened: boolean;
  /** Where the current try sends a signal; null between tries. */
  deliver: ((sig: NodeJS.Signals) => void) | null;
}

/** Tries a setup bwrap itself failed twice more: the mounts it copies can change under it (a container started or removed while it walks them). */
export async function runBwrap(prep: NativePrepared, opts: NativeRunOptions): Promise<number> {
  // One handler for every try (found in review: per try, a signal between tries was lost, and the next try ran the agent).
  const signals: Signals = { signalled: false, opened: false, deliver: null };
  const unforward = forwardSignals((sig) => {
    if (!signals.opened) signals.signalled = true;
    signals.deliver?.(sig);
  });
  try {
    for (let attempt = 1; ; attempt++) {
      if (signals.signalled) throw new BwrapExited('stopped by a signal before the sandbox was set up; nothing was run');
      try {
        return await runBwrapOnce(prep, opts, signals);
      } catch (e) {
        if (!(e instanceof SetupFailed) || attempt === 3 || signals.signalled) throw e;
        process.stderr.write(`stashbase: ${e.message}; trying again (${attempt + 1} of 3)\n`);
      }
    }
  } finally {
    unforward();
  }
}

/** A process's start time (/proc/PID/stat's 22nd field), or null when it is gone: with its pid, it names that process alone. */
function startTime(pid: number): string | null {
  return procStatFields(pid)?.[19] ?? null;
}

async function runBwrapOnce(prep: NativePrepared, opts: NativeRunOptions, signals: Signals): Promise<number> {
  const step = prep.plan.steps.find((s) => s.kind === 'command' && s.id === 'sandbox');
  if (!step || step.kind !== 'command') throw new Error('native plan has no sandbox step');
  const seccompFd = openSync(join(prep.runDir, 'seccomp.bpf'), 'r');
  // One spawn for bwrap and the relay beside it (templates/bridge-relay.ts):
  // bwrap's mounts (the longest part of its start) run while the relay starts
  // and the proxy begins listening; it waits for us before the agent starts.
  const userns = prep.bwrap?.userns === true;
  const stdio: Array<'inherit' | 'pipe' | 'ipc' | 'ignore' | number> = ['inherit', 'inherit', 'inherit', seccompFd, 'pipe', 'pipe', ...(userns ? ['pipe' as const] : [])];
  if (prep.relay) stdio[relayControlFd(userns)] = 'ipc';
  stdio[BWRAP_FDS.gate] = 'pipe';
  // The binds from the tree come from descriptors opened and checked now (templates/bwrap.ts heldRoots).
  let held: HeldSources;
  try {
    held = holdSources(step.command.fds ?? []);
  } catch (e) {
    closeSync(seccompFd);
    throw e;
  }
  for (const h of held.fds) stdio[h.child] = h.fd;
  for (let fd = 0; fd < stdio.length; fd++) stdio[fd] ??= 'ignore';
  let sandbox: ReturnType<typeof start>;
  try {
    sandbox = start(step.command, stdio);
  } finally {
    closeSync(seccompFd);
    held.close();
  }
  opts.trace?.mark('spawn');
  const relay: Relay | null = prep.relay ? relayChannel(sandbox.child, sandbox.exit) : null;
  const infoStream = sandbox.child.stdio[4] as NodeJS.ReadableStream;
  const blockStream = (sandbox.child.stdio as unknown as Array<NodeJS.WritableStream>)[5] as NodeJS.WritableStream;
  // A bwrap that fails at once resets these pipes: its exit status says why, not an unhandled ECONNRESET.
  for (const fd of [4, 5, 6]) (sandbox.child.stdio[fd] as unknown as { on?: (e: string, f: () => void) => void } | null)?.on?.('error', () => {});
  let initPid: number | null = null;
  // The sandbox's init, named by its pid and start time: once bwrap is gone, its pid may be another process's.
  let initStart: string | null = null;
  const initAlive = () => initPid !== null && initStart !== null && startTime(initPid) === initStart;
  let listened = false;
  // A signal forwarded before the agent started (SIGTERM, SIGHUP of a closed terminal) ends the run, as does a
  // connection to the proxy before it: never tried again.
  let reached = false;
  const onConnection = () => (reached = true);
  const failure = (code: number | null) => setupFailure(code, !signals.signalled && !reached);
  opts.proxy.on('connection', onConnection);
  signals.deliver = (sig: NodeJS.Signals) => {
    const target = initAlive() ? agentPid(initPid!) : null;
    if (target) process.kill(target, sig);
    else sandbox.child.kill(sig);
  };
  try {
    const settled = Promise.race([readInfo(infoStream, 10_000), sandbox.exit.then((code) => ({ exited: code }))]);
    const info = await settled;
    // bwrap reports its sandbox before the agent may start: an exit before that is bwrap's own failure.
    if ('exited' in info) throw failure(info.exited);
    initPid = info['child-pid'];
    initStart = startTime(initPid);
    opts.trace?.mark('bwrap');
    const usernsStream = (sandbox.child.stdio as unknown as Array<NodeJS.WritableStream>)[6];
    if (prep.bwrap?.userns) writeIdMaps(initPid);
    // The relay joins bwrap's first user namespace (which owns the network
    // namespace) while bwrap still waits in it; it listens once loopback is up.
    relay?.join(initPid);
    if (prep.bwrap?.userns) {
      if (relay) await relay.joined;
      // bwrap never closes this descriptor: the agent would hold a live socket to us. Ours closes once the byte is out.
      sayOnce(usernsStream);
    }
    if (relay) {
      await listenOn(opts.proxy, await relay.listening);
      listened = true;
      relay.close();
    }
    opts.trace?.mark('relay');
    blockStream.write('1');
    // bwrap's mounts, made meanwhile, are done once the gate's first word comes (an exit before it is bwrap's own failure).
    const gate = (sandbox.child.stdio as unknown as Array<NodeJS.ReadWriteStream>)[BWRAP_FDS.gate] as NodeJS.ReadWriteStream;
    await gateOpened(gate, sandbox.exit, failure);
    signals.opened = true;
    // The gate's word (templates/gate.ts): an end of file there, as when stashbase dies before this, runs nothing.
    sayOnce(gate);
    if (opts.onStarted) setImmediate(opts.onStarted);
    return await sandbox.exit;
  } catch (e) {
    let thrown = e;
    // A step of ours that failed because bwrap's setup did (the relay finds its
    // pid gone): bwrap exits by itself soon after. One waiting for us does not.
    if (!signals.opened && initPid !== null && !(e instanceof BwrapExited)) {
      const code = await Promise.race([sandbox.exit.catch(() => null), delay(1000, undefined, { ref: false })]);
      if (code !== undefined) thrown = failure(code);
    }
    // The sandbox's init first: bwrap's child outlives its parent until bwrap ties it to its own end, after its
    // mounts (found in review: a SIGTERM during setup left it running), and an end-of-file on the block descriptor
    // would release it. Named by its start time too: its pid may be another process's by now.
    if (initAlive()) killQuietly(initPid!);
    sandbox.child.kill('SIGKILL');
    await sandbox.exit.catch(() => 0);
    infoStream.removeAllListeners('data');
    // Every descriptor of ours to it: an open one keeps this process waiting on a sandbox that never answers.
    for (const fd of [4, 5, 6, BWRAP_FDS.gate]) (sandbox.child.stdio[fd] as unknown as { destroy?: () => void } | null)?.destroy?.();
    // Tried again, the proxy listens on the next relay's socket: this one's listener alone is closed (Node's own
    // close; the proxy's would end its connection checks for the rest of the run). Nothing connected to it.
    if (listened && thrown instanceof SetupFailed) await new Promise<void>((resolve) => Server.prototype.close.call(opts.proxy, () => resolve()));
    throw thrown;
  } finally {
    signals.deliver = null;
    opts.proxy.removeListener('connection', onConnection);
    relay?.close();
  }
}

