// The end of a remote run: its export (templates/remote-run.ts exportCommand),
// started with the agent's container and told to read the clone once the
// lease's container, and every process of the agent's namespace with it, is
// gone; what it prints read as hostile (lib/remote/transfer.ts) into the
// run's own git directory, which the import local runs use then takes in.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EXPORT_GO, exportCommand, type ExportInput, remoteNames } from '../../templates/remote-run.js';
import { capture, type Spawned, start } from '../exec.js';
import { alert } from '../util/style.js';
import type { Lease } from './lease.js';
import { maxPack, readExport } from './transfer.js';

/** The export's time limit: STASHBASE_REMOTE_EXPORT_TIMEOUT seconds, else ten minutes. */
function exportTimeoutMs(env: NodeJS.ProcessEnv): number {
  const v = Number(env.STASHBASE_REMOTE_EXPORT_TIMEOUT);
  return (Number.isSafeInteger(v) && v > 0 ? v : 600) * 1000;
}

/** How long the end of the run waits for the lease's container to be gone before it gives up bringing anything back. */
export const LEASE_END_MS = 30_000;

export async function leaseGone(l: Lease): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), LEASE_END_MS)));
  const gone = await Promise.race([l.ended.then(() => true as const), late]);
  clearTimeout(timer);
  return gone;
}

export interface HeldExport {
  e: Spawned;
  /** Its input ended: it ends without reading anything. */
  cancel(): void;
}

/** The export's container, started now: it waits for "go" on its input (templates/remote-run.ts exportCommand). */
export function holdExport(x: ExportInput): HeldExport {
  const e = start(exportCommand(x), ['pipe', 'pipe', 'pipe'], true);
  e.exit.catch(() => 0);
  e.child.stdin?.on('error', () => {});
  return {
    e,
    cancel: () => {
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
  e.child.stdin?.end(`${EXPORT_GO}\n`);
  // Bounded in time too: past it, its container goes.
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void capture({ file: b.export.docker, args: ['rm', '--force', remoteNames(b.export.session).export] }).catch(() => undefined);
    e.child.kill('SIGKILL');
  }, exportTimeoutMs(b.env));
  let err = '';
  e.child.stderr?.on('data', (x: Buffer) => {
    err = (err + x.toString('utf8')).slice(-4096);
  });
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
  if (code !== 0 && !('problem' in got && got.stopped === true)) return notBack(`the export failed: ${err.trim().split('\n').pop() || `exit ${code}`}`);
  if ('problem' in got) return notBack(got.problem);
  if (got.tip === null) return alert(`the remote run's branch ${b.export.branch} is gone from its clone: nothing was brought back`);
  const ref = join(b.dir, 'refs', 'heads', ...b.export.branch.split('/'));
  mkdirSync(join(ref, '..'), { recursive: true });
  writeFileSync(ref, `${got.tip}\n`);
}

