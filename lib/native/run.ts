// Executes a prepared native plan: the run directory, stand-ins for missing
// protected paths, the proxy, bwrap, and the bridge into its network namespace.
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:net';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
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
    stream.on('end', () => {
      clearTimeout(timer);
      reject(new SandboxUnavailableError('bwrap exited before setting up the sandbox; nothing was run'));
    });
  });
}

interface Relay {
  /** Gives the relay the sandbox's pid: it joins that pid's namespaces. */
  join(pid: number): void;
  /** It runs inside the namespaces. */
  joined: Promise<void>;
  /** It listens on the namespace's loopback. */
  ready: Promise<void>;
  kill(): void;
}

/** The relay forked beside bwrap (templates/bridge-relay.ts), through its socket pair with us. */
function relayChannel(channel: Duplex, sandboxExit: Promise<number>): Relay {
  let out = '';
  let pid: number | null = null;
  const waiters: Array<() => void> = [];
  channel.setEncoding('utf8');
  channel.on('error', () => {}); // a relay that died is reported below
  const seen = (word: string) =>
    new Promise<void>((resolve, reject) => {
      const fail = (why: string) => reject(new SandboxUnavailableError(`the network relay into the sandbox failed (${why}); nothing was run`));
      const timer = setTimeout(() => fail(`no "${word}" within 10 s`), 10_000);
      const check = () => {
        const lines = out.split('\n');
        const error = lines.find((l) => l.startsWith('error '));
        if (error) {
          clearTimeout(timer);
          fail(error.slice(6));
        } else if (lines.includes(word)) {
          clearTimeout(timer);
          resolve();
        }
      };
      waiters.push(check);
      channel.on('end', () => {
        clearTimeout(timer);
        fail('it exited');
      });
      void sandboxExit.then(() => {
        clearTimeout(timer);
        fail('the sandbox exited first');
      });
      check();
    });
  channel.on('data', (d: string) => {
    out += d;
    const m = /^pid (\d+)$/m.exec(out);
    if (m) pid = Number(m[1]);
    for (const w of waiters) w();
  });
  const joined = seen('joined');
  const ready = seen('ready');
  joined.catch(() => {});
  ready.catch(() => {});
  return {
    join: (p) => channel.write(`${p}\n`),
    joined,
    ready,
    kill: () => {
      if (pid !== null) killQuietly(pid);
      channel.destroy();
    },
  };
}

function listenSocket(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (e) => reject(new SandboxUnavailableError(`the proxy cannot listen on ${path} (${e.message}); nothing was run`)));
    server.listen({ path, backlog: 4096 }, () => resolve());
  });
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

export async function runBwrap(prep: NativePrepared, opts: NativeRunOptions): Promise<number> {
  const step = prep.plan.steps.find((s) => s.kind === 'command' && s.id === 'sandbox');
  if (!step || step.kind !== 'command') throw new Error('native plan has no sandbox step');
  const seccompFd = openSync(join(prep.runDir, 'seccomp.bpf'), 'r');
  // One spawn for bwrap and the relay beside it (templates/bridge-relay.ts):
  // bwrap's mounts (the longest part of its start) run while the relay starts
  // and the proxy begins listening; it waits for us before the agent starts.
  const userns = prep.bwrap?.userns === true;
  const stdio: Array<'inherit' | 'pipe' | number> = ['inherit', 'inherit', 'inherit', seccompFd, 'pipe', 'pipe', ...(userns ? ['pipe' as const] : [])];
  if (prep.relay) stdio[relayControlFd(userns)] = 'pipe';
  const sandbox = start(step.command, stdio);
  closeSync(seccompFd);
  opts.trace?.mark('spawn');
  const relay: Relay | null = prep.relay ? relayChannel(sandbox.child.stdio[relayControlFd(userns)] as unknown as Duplex, sandbox.exit) : null;
  const listening = prep.relay ? listenSocket(opts.proxy, prep.relay.socket) : Promise.resolve();
  listening.catch(() => {});
  const infoStream = sandbox.child.stdio[4] as NodeJS.ReadableStream;
  const blockStream = (sandbox.child.stdio as unknown as Array<NodeJS.WritableStream>)[5] as NodeJS.WritableStream;
  // A bwrap that fails at once resets these pipes: its exit status says why, not an unhandled ECONNRESET.
  for (const fd of [4, 5, 6]) (sandbox.child.stdio[fd] as unknown as { on?: (e: string, f: () => void) => void } | null)?.on?.('error', () => {});
  let initPid: number | null = null;
  const forward = (sig: NodeJS.Signals) => {
    const target = initPid === null ? null : agentPid(initPid);
    if (target) process.kill(target, sig);
    else sandbox.child.kill(sig);
  };
  const unforward = forwardSignals(forward);
  try {
    const settled = Promise.race([readInfo(infoStream, 10_000), sandbox.exit.then((code) => ({ exited: code }))]);
    const info = await settled;
    // bwrap reports its sandbox before the agent may start: an exit before that is bwrap's own failure.
    if ('exited' in info) throw new SandboxUnavailableError(`bwrap exited (${info.exited}) before setting up the sandbox; nothing was run`);
    initPid = info['child-pid'];
    opts.trace?.mark('bwrap');
    const usernsStream = (sandbox.child.stdio as unknown as Array<NodeJS.WritableStream>)[6];
    if (prep.bwrap?.userns) writeIdMaps(initPid);
    // The relay joins bwrap's first user namespace (which owns the network
    // namespace) while bwrap still waits in it; it listens once loopback is up.
    relay?.join(initPid);
    if (prep.bwrap?.userns) {
      if (relay) await relay.joined;
      usernsStream?.write('1');
    }
    if (relay) await relay.ready;
    await listening;
    opts.trace?.mark('relay');
    blockStream.write('1');
    if (opts.onStarted) setImmediate(opts.onStarted);
    return await sandbox.exit;
  } catch (e) {
    // The sandbox's init first: bwrap's child outlives a killed parent until it
    // is released, and an end-of-file on the block descriptor would release it.
    if (initPid !== null) killQuietly(initPid);
    sandbox.child.kill('SIGKILL');
    await sandbox.exit.catch(() => 0);
    infoStream.removeAllListeners('data');
    (infoStream as unknown as { destroy(): void }).destroy();
    (blockStream as unknown as { destroy(): void }).destroy();
    throw e;
  } finally {
    unforward();
    relay?.kill();
  }
}

