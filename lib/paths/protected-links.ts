// deny_write paths that are symbolic links (an .envrc pointing into a folder
// of env files): the sandboxes protect what a link leads to, since a mount
// lands on its target, and the link itself stays in a folder the agent may
// write, where it can be removed and a file of its own put in its place for
// your tools to run. So each is noted as the run starts and put back as it
// ends: what the agent left there is moved aside, and said.
import { lstatSync, readlinkSync, realpathSync, symlinkSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { moveAside } from '../git/planted-repos.js';
import { restoreHint } from '../util/style.js';

export interface ProtectedLink {
  path: string;
  target: string;
  /** Its folder's real path as the run starts: at the end nothing is touched unless it is still that (never where a link of the agent's leads). */
  folder: string;
}

/**
 * The links on the way to each of `paths`, with what each names: the path
 * itself, a folder above it (review, round 33: a linked folder above a file
 * your git runs was swapped, the file left alone), and every link on the way
 * to what one leads to (with `.envrc -> cfg/envrc` and `cfg -> shared`,
 * re-aiming `cfg` gave your direnv the agent's file while `.envrc` itself
 * read as before), a few steps deep. A path need not exist.
 */
export function noteLinks(paths: string[], within: string[] = []): ProtectedLink[] {
  const out: ProtectedLink[] = [];
  const seen = new Set<string>();
  // Those on the way only in the tree, where the agent writes (a link of the system's, or one you change meanwhile, is
  // not put back by a run); each path asked for wherever it is, as before.
  const inside = (p: string) => within.some((w) => p === w || p.startsWith(w + '/'));
  const note = (path: string, depth: number): void => {
    if (depth > 8) return;
    // (A folder seen had the folders above it looked at too.)
    for (let p = path; p !== dirname(p) && !seen.has(p); p = dirname(p)) {
      if (!(depth === 0 && p === path) && !inside(p)) continue;
      seen.add(p);
      let target: string;
      try {
        if (!lstatSync(p).isSymbolicLink()) continue;
        target = readlinkSync(p);
        out.push({ path: p, target, folder: realpathSync.native(dirname(p)) });
      } catch {
        continue; // not there: nothing to keep
      }
      note(resolve(dirname(p), target), depth + 1);
    }
  };
  for (const path of paths) note(path, 0);
  return out;
}

/** Each link as it was noted: one the agent removed or replaced is put back, and what stood there moved aside. Returns what to say. */
export function restoreLinks(links: ProtectedLink[]): string[] {
  const out: string[] = [];
  for (const { path: named, target, folder } of links) {
    let now: string | null = null;
    try {
      now = realpathSync.native(dirname(named));
    } catch {
      now = null;
    }
    if (now !== folder) {
      out.push(`the folder of ${named}, a symbolic link deny_write protects, is not where it was when the run started (${now === null ? 'gone' : `now ${now}`}): nothing was touched there; look at it before your tools read it`);
      continue;
    }
    // Acted on by the folder's real path: no link of the agent's on the way.
    const path = join(folder, basename(named));
    const st = lstatSync(path, { throwIfNoEntry: false });
    let same = false;
    try {
      same = st?.isSymbolicLink() === true && readlinkSync(path) === target;
    } catch {
      same = false;
    }
    if (same) continue;
    let aside = '';
    if (st) {
      const moved = moveAside(path);
      if (moved.to === undefined) {
        out.push(`the agent replaced ${path}, a symbolic link to ${target} that deny_write protects, and what it left could not be moved aside (${moved.failed}): remove it and put the link back (ln -s ${target} ${path}) before your tools read it`);
        continue;
      }
      aside = `; what it left there was renamed ${moved.to} (review it, then ${restoreHint(moved.to, path)} if you want it)`;
    }
    try {
      symlinkSync(target, path);
      out.push(`the agent ${st ? 'replaced' : 'removed'} ${path}, a symbolic link to ${target} that deny_write protects: the link is back${aside}`);
    } catch (e) {
      out.push(`the agent ${st ? 'replaced' : 'removed'} ${path}, a symbolic link to ${target} that deny_write protects, and it could not be put back (${(e as NodeJS.ErrnoException).code})${aside}: put it back with ln -s ${target} ${path}`);
    }
  }
  return out;
}
