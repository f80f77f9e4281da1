// A remote run's setup and lease (templates/remote-run.ts leaseCommand): one
// container that takes the run's tar on its input, sets up, then becomes the
// init of the process namespace the agent's container joins. It ends, and
// the kernel with it every process of the agent, when its input ends
// (stashbase died, or its connection to the engine closed) or when no
// heartbeat came for the lease's length (a connection that hangs without
// closing). stashbase beats every LEASE_BEAT_MS; the bound on a run that lost
// its stashbase is the lease's length.
import { leaseCommand, type LeaseInput } from '../../templates/remote-run.js';
import { SandboxUnavailableError } from '../errors.js';
import { start } from '../exec.js';
import { printable } from '../util/printable.js';

/** The lease's length unless STASHBASE_REMOTE_LEASE (seconds) says otherwise. */
export const LEASE_SECONDS = 30;
const LEASE_BEAT_MS = 5_000;
/** What the lease prints once it holds (relay/main.go). */
const GREETING = 'stashbase-relay lease\n';
/** How long the setup may take before the lease holds. */
const SETUP_LIMIT_MS = 10 * 60_000;

export function leaseSeconds(env: NodeJS.ProcessEnv): number {
  const v = Number(env.STASHBASE_REMOTE_LEASE);
  return Number.isSafeInteger(v) && v >= 2 && v <= 86_400 ? v : LEASE_SECONDS;
}

/** How often a wait of `seconds` is renewed: every 5 s, or thrice within it. */
export function beatMs(seconds: number): number {
  return Math.min(LEASE_BEAT_MS, (seconds * 1000) / 3);
}

export interface Lease {
  /** Ends it: its input closes, and with it the agent's process namespace. */
  stop(): void;
  /**
   * Resolves with its docker client's exit status: 0 once its container ended as a lease does and was removed (the
   * client waits for both), every process of the agent's namespace with it; anything else proves nothing (its
   * connection may have dropped): lib/remote/export.ts then asks the engine.
   */
  ended: Promise<number>;
  /** Stops reading its output (once it ended, or was given up on). */
  release(): void;
}

/**
 * Starts the setup-and-lease container, in a session of its own (Ctrl+C is
 * the agent's), writes `tar` to it, and resolves once it holds the lease;
 * rejects with its last words if it ends before.
 */
export async function holdLease(l: LeaseInput, tar: Buffer[]): Promise<Lease> {
  const s = start(leaseCommand(l), ['pipe', 'pipe', 'pipe'], true);
  s.exit.catch(() => 0);
  let err = '';
  let out = '';
  s.child.stderr?.on('data', (b: Buffer) => {
    err = (err + b.toString('utf8')).slice(-4096);
  });
  s.child.stdin?.on('error', () => {});
  const held = new Promise<void>((resolve, reject) => {
    s.child.stdout?.on('data', (b: Buffer) => {
      out = (out + b.toString('utf8')).slice(0, 256);
      if (out.startsWith(GREETING)) resolve();
      else if (out.length >= GREETING.length) reject(new SandboxUnavailableError(`the remote run's lease said ${JSON.stringify(out.slice(0, 80))}; nothing was run`));
    });
    // The docker client's last words, without its hint to read its help.
    const said = () => err.split('\n').filter((l) => l.trim() !== '' && !/^(?:See|Run) 'docker [a-z]+ --help'/.test(l)).pop()?.trim();
    s.child.on('close', (code) => reject(new SandboxUnavailableError(`the remote engine could not set up the run (${printable(said() || `exit ${code}`, true)}); nothing was run`)));
    s.child.on('error', (e) => reject(new SandboxUnavailableError(`the remote engine could not set up the run (${e.message}); nothing was run`)));
  });
  held.catch(() => {});
  // Written while its client reads; not once it is gone (review, round 34: an engine that refused the container had its
  // client exit unread, the input's drain never came, and the run waited forever, saying nothing).
  const stdin = s.child.stdin!;
  let gone = false;
  const over = () => {
    gone = true;
  };
  stdin.once('close', over);
  s.child.once('exit', over);
  for (const b of tar) {
    if (gone || stdin.destroyed) break;
    if (!stdin.write(b)) {
      await new Promise<void>((r) => {
        const done = () => {
          stdin.off('drain', done);
          stdin.off('close', done);
          s.child.off('exit', done);
          r();
        };
        stdin.once('drain', done);
        stdin.once('close', done);
        s.child.once('exit', done);
      });
    }
  }
  const beat = () => s.child.stdin?.write('.');
  const timer = setInterval(beat, beatMs(l.seconds));
  timer.unref();
  // Its output is read on after its input ends (found in review: closed, its docker client died of SIGPIPE on the
  // lease's last words, before the container ended, and its end proved nothing); let go of once it is over or given up on.
  const release = () => {
    s.child.stdout?.destroy();
    s.child.stderr?.destroy();
    s.child.unref();
  };
  const stop = () => {
    clearInterval(timer);
    s.child.stdin?.destroy();
  };
  // Nor waited for without end: an engine that never lets it hold ends the run here (the setup clones the repository
  // from the bundle: minutes at most).
  let limit: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    limit = setTimeout(() => reject(new SandboxUnavailableError(`the remote run's lease did not hold within ${SETUP_LIMIT_MS / 60_000} minutes of its start; nothing was run`)), SETUP_LIMIT_MS);
  });
  late.catch(() => {});
  try {
    await Promise.race([held, late]);
    clearTimeout(limit);
  } catch (e) {
    clearTimeout(limit);
    stop();
    release();
    throw e;
  }
  return { stop, release, ended: s.exit.then((code) => code, () => -1) };
}
