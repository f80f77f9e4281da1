// A remote run's lease (templates/remote-run.ts leaseCommand): its container
// kills the agent's processes when its input ends (stashbase died, or its
// connection to the engine closed) or when no heartbeat came for the lease's
// length (a connection that hangs without closing). stashbase beats every
// LEASE_BEAT_MS; the bound on a run that lost its stashbase is the lease's length.
import { leaseCommand } from '../../templates/remote-run.js';
import { start } from '../exec.js';

/** The lease's length unless STASHBASE_REMOTE_LEASE (seconds) says otherwise. */
export const LEASE_SECONDS = 30;
const LEASE_BEAT_MS = 5_000;

export function leaseSeconds(env: NodeJS.ProcessEnv): number {
  const v = Number(env.STASHBASE_REMOTE_LEASE);
  return Number.isSafeInteger(v) && v >= 2 && v <= 86_400 ? v : LEASE_SECONDS;
}

export interface Lease {
  /** Ends the heartbeat; the container goes with the agent's (it lives in its process namespace). */
  stop(): void;
  /** Its last words (why it expired), bounded. */
  said(): string;
}

/** Started once the agent's container runs; in a session of its own (Ctrl+C is the agent's). */
export function holdLease(docker: string, session: string, image: string, seconds: number): Lease {
  const s = start(leaseCommand(docker, session, process.pid, image, seconds), ['pipe', 'ignore', 'pipe'], true);
  s.exit.catch(() => 0);
  let err = '';
  s.child.stderr?.on('data', (b: Buffer) => {
    err = (err + b.toString('utf8')).slice(-2048);
  });
  s.child.stdin?.on('error', () => {});
  const beat = () => s.child.stdin?.write('.');
  beat();
  const timer = setInterval(beat, Math.min(LEASE_BEAT_MS, (seconds * 1000) / 3));
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      s.child.stdin?.destroy();
      s.child.stderr?.destroy();
      s.child.unref();
    },
    said: () => err.trim(),
  };
}
