// Views around a run: built in the run directory before the sandbox starts,
// settled when it ends (or, after a SIGKILL, by the next run's reaper from
// the records left in the session).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { materializeView } from './materialize.js';
import { settleView } from './settle.js';
import type { ViewSpec } from './spec.js';

/** Builds each view; returns the folders built (their records sit beside them). */
export function buildViews(views: Array<{ spec: ViewSpec; dir: string }>): string[] {
  for (const v of views) mkdirSync(dirname(v.dir), { recursive: true, mode: 0o700 });
  const built: string[] = [];
  for (const v of views) {
    materializeView(v.spec, v.dir);
    built.push(v.dir);
  }
  return built;
}

/** Settles each view; returns what to tell the user. A view that cannot be settled is said so, never thrown. */
export function settleViews(dirs: string[]): string[] {
  const notes: string[] = [];
  for (const dir of dirs) {
    try {
      notes.push(...settleView(`${dir}.json`));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue; // never built (the run stopped before)
      notes.push(`could not carry back what the sandbox wrote in ${dir} (${(e as Error).message})`);
    }
  }
  return notes;
}
