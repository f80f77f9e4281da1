// The end of a remote run: its export (templates/remote-run.ts exportCommand),
// started with the agent's container and told to read the clone once the
// lease's container, and every process of the agent's namespace with it, is
// gone; what it prints read as hostile (lib/remote/transfer.ts) into the
// run's own git directory, which the import local runs use then takes in.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { containerStateCommand, EXPORT_BEAT, EXPORT_GO, exportCommand, type ExportInput, remoteNames } from '../../templates/remote-run.js';
import { capture, type Spawned, start } from '../exec.js';
import { CommandFailedError } from '../errors.js';
import { alert } from '../util/style.js';
import { beatMs, type Lease } from './lease.js';
import { maxPack, readExport } from './transfer.js';

/** The export's time limit: STASHBASE_REMOTE_EXPORT_TIMEOUT seconds, else ten minutes. */
function exportTimeoutMs(env: NodeJS.ProcessEnv): number {
  const v = Number(env.STASHBASE_REMOTE_EXPORT_TIMEOUT);
  return (Number.isSafeInteger(v) && v > 0 ? v : 600) * 1000;
}

/** How long the end of the run waits for the lease's container to be gone before it gives up bringing anything back. */
export const LEASE_END_MS = 30_000;

/**
 * Whether the lease's container is gone, and every process of the agent's namespace with it: its docker client ended
 * with the lease's own status (it waits for the container's end and removal), or else the engine says there is no
 * such container any more; asked until LEASE_END_MS.
 */
export async function leaseGone(l: Lease, docker: string, session: string): Promise<boolean> {
  const deadline = Date.now() + LEASE_END_MS;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), LEASE_END_MS)));
  const code = await Promise.race([l.ended, late]);
  clearTimeout(timer);
  l.release();
  if (code === 0) return true;
  const name = remoteNames(session).lease;
  while (Date.now() < deadline) {
    const r = await capture(containerStateCommand(docker, name), undefined, 10_000).then(() => 'there' as const, (e: unknown) => (e instanceof CommandFailedError && /no such (container|object)/i.test(e.stderr) ? 'gone' as const : 'unknown' as const));
    if (r === 'gone') return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

export interface HeldExport {
  e: Spawned;
  /** Its docker client's exit status once it ended (before it was told to go: its container gone, the engine refused it, or it was removed); else null. */
  gone(): number | null;
  /** Its standard error's last 4 KiB, read from its start. */
  err(): string;
  /** Tells it to read the clone and print. */
  go(): void;
  /** Its input ended: it ends without reading anything. */
  cancel(): void;
}

/**
 * The export's container, started now: it waits for its word on its input,
 * renewed as the lease is (templates/remote-run.ts exportCommand). Its
 * standard error and its end are followed from the start.
 */
export function holdExport(x: ExportInput): HeldExport {
  const e = start(exportCommand(x), ['pipe', 'pipe', 'pipe'], true);
  let gone: number | null = null;
  let err = '';
  e.exit.then((code) => (gone = code), () => (gone = -1));
  e.child.stdin?.on('error', () => {});
  e.child.stderr?.on('data', (b: Buffer) => {
    err = (err + b.toString('utf8')).slice(-4096);
  });
  const beat = setInterval(() => e.child.stdin?.write(EXPORT_BEAT), beatMs(x.seconds));
  beat.unref();
  return {
    e,
    gone: () => gone,
    err: () => err,
    go: () => {
      clearInterval(beat);
      e.child.stdin?.end(EXPORT_GO);
    },
    cancel: () => {
      clearInterval(beat);
      e.child.stdin?.end();
      e.child.stdout?.destroy();
      e.child.stderr?.destroy();
      e.child.unref();
    },
  };
}

/** The export told to go; its output into the run's git directory: the pack among its packs, the branch's tip as its ref. Says why when it cannot. */
export async function bringBack(b: { export: ExportInput; held: HeldExport; dir: string; objectFormat: 'sha1' | 'sha256'; env: NodeJS.ProcessEnv }): Promise<void> {
  const e = b.held.e;
  // Found in review: a held export whose container went before its word (the engine refused it, an engine restart, a
  // cleanup from elsewhere) printed nothing and its end was never heard: said now, with its last words.
  const gone = b.held.gone();
  if (gone !== null) {
    b.held.cancel();
    return alert(`the remote run's commits were not brought back (the export's container ended before the run did: ${b.held.err().trim().split('\n').pop() || `its docker client exited ${gone}`}); nothing of it was imported (the workspace keeps them)`);
  }
  b.held.go();
  // Bounded in time too: past it, its container goes, and its output is read no further.
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void capture({ file: b.export.docker, args: ['rm', '--force', remoteNames(b.export.session).export] }).catch(() => undefined);
    e.child.kill('SIGKILL');
    e.child.stdout?.destroy();
  }, exportTimeoutMs(b.env));
  const packFile = join(b.dir, 'objects', 'pack', 'pack-remote.pack');
  const got = await readExport(e.child.stdout!, { packFile, objectFormat: b.objectFormat, maxBytes: maxPack(b.env) });
  if ('problem' in got) e.child.kill('SIGKILL');
  const code = await e.exit.catch(() => 1);
  clearTimeout(timer);
  if (timedOut) {
    rmSync(packFile, { force: true });
    return alert(`the remote run's commits were not brought back (the export took longer than ${exportTimeoutMs(b.env) / 1000} s); nothing of it was imported (the workspace keeps them)`);
  }
  const notBack = (why: string) => {
    rmSync(packFile, { force: true });
    alert(`the remote run's commits were not brought back (${why}); nothing of it was imported (the workspace keeps them)`);
  };
  // Its own failure first, in its words (what it cut short is no second problem); then what it sent, unless stashbase stopped it.
  if (code !== 0 && !('problem' in got && got.stopped === true)) return notBack(`the export failed: ${b.held.err().trim().split('\n').pop() || `exit ${code}`}`);
  if ('problem' in got) return notBack(got.problem);
  if (got.tip === null) return alert(`the remote run's branch ${b.export.branch} is gone from its clone: nothing was brought back`);
  const ref = join(b.dir, 'refs', 'heads', ...b.export.branch.split('/'));
  mkdirSync(join(ref, '..'), { recursive: true });
  writeFileSync(ref, `${got.tip}\n`);
}

