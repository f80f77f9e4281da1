// Builds a view's folder in the run directory before the sandbox starts, and
// records what each carried-back name was at that moment (lib/views/settle.ts
// compares against it after the run, or after a killed run, from the record alone).
import { copyFileSync, lstatSync, mkdirSync, readFileSync, readlinkSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ViewSpec } from './spec.js';

export interface FileStamp {
  ino: number;
  size: number;
  mtimeMs: number;
}

export interface ViewRecord {
  spec: Omit<ViewSpec, 'quiet'> & { quiet: string | null };
  /** The view's folder in the run directory. */
  dir: string;
  /** stashbase made the host folder for the view (it was missing): removed again while empty. */
  madeAt: boolean;
  /** Each carried-back name on the host, and each carried-back or copied name in the view, as the run started (null: missing). */
  host: Record<string, FileStamp | null>;
  view: Record<string, FileStamp | null>;
  /** Where the host's content at the start is kept, for the names whose rule needs it. */
  saved: Record<string, string>;
  /**
   * Carried-back names that are symbolic links on your side (GNU stow makes
   * ~/.claude.json one): the link as it read and the file it led to. The view
   * holds that file's content; what comes back is written to that file,
   * through your link, and only while the link still leads there.
   */
  links?: Record<string, { link: string; real: string }>;
}

export const stamp = (path: string): FileStamp | null => {
  const st = lstatSync(path, { throwIfNoEntry: false, bigint: false });
  return st?.isFile() ? { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs } : st ? { ino: st.ino, size: -1, mtimeMs: st.mtimeMs } : null;
};

export const sameStamp = (a: FileStamp | null, b: FileStamp | null): boolean =>
  a === null || b === null ? a === b : a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;

export const hostPathOf = (spec: Pick<ViewSpec, 'at' | 'hostPaths'>, name: string): string => spec.hostPaths[name] ?? join(spec.at, name);

/** Copies a host file into the view; a link is copied as a link, unless `follow` (then its regular target's content, and the link is returned). */
function copyIn(src: string, dest: string, follow: boolean): { link: string; real: string } | null {
  const st = lstatSync(src, { throwIfNoEntry: false });
  if (!st) return null;
  if (st.isSymbolicLink()) {
    const link = readlinkSync(src);
    if (follow) {
      try {
        const real = realpathSync(src);
        if (statSync(real).isFile()) {
          copyFileSync(real, dest);
          return { link, real };
        }
      } catch {
        // a dangling link: copied as one
      }
    }
    symlinkSync(link, dest);
  } else if (st.isFile()) copyFileSync(src, dest);
  return null;
}

/** Creates the view's folder (and the host folder when missing); returns its record, also written to `<dir>.json`. */
export function materializeView(spec: ViewSpec, dir: string): ViewRecord {
  let madeAt = false;
  if (!lstatSync(spec.at, { throwIfNoEntry: false })) {
    mkdirSync(spec.at, { recursive: true, mode: 0o700 });
    madeAt = true;
  }
  mkdirSync(dir, { mode: 0o700 });
  for (const name of [...spec.live, ...spec.readOnly, ...spec.empty]) mkdirSync(join(dir, name), { mode: 0o700 });
  if (spec.liveFrom !== undefined) for (const name of spec.live) mkdirSync(join(spec.liveFrom, name), { recursive: true, mode: 0o700 });
  const links: Record<string, { link: string; real: string }> = Object.create(null);
  for (const name of spec.copies) {
    const link = copyIn(hostPathOf(spec, name), join(dir, name), name in spec.merge);
    if (link) links[name] = link;
  }
  const saved: Record<string, string> = {};
  const host: Record<string, FileStamp | null> = {};
  const view: Record<string, FileStamp | null> = {};
  for (const name of spec.copies) view[name] = stamp(join(dir, name));
  for (const name of Object.keys(spec.merge)) {
    const src = hostPathOf(spec, name);
    host[name] = stamp(links[name]?.real ?? src);
    view[name] = stamp(join(dir, name));
    const h = host[name];
    // Kept for the merge after the run (what the run changed is judged against it).
    if (h !== null && h.size >= 0) {
      const keep = `${dir}.saved-${encodeURIComponent(name)}`;
      writeFileSync(keep, readFileSync(join(dir, name)));
      saved[name] = keep;
    }
  }
  const record: ViewRecord = { spec: { ...spec, quiet: spec.quiet?.source ?? null }, dir, madeAt, host, view, saved, links };
  writeFileSync(`${dir}.json`, JSON.stringify(record));
  return record;
}
