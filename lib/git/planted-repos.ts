// After a run: every `.git` under the working tree, at any depth, in either
// form (a directory, or a pointer file "gitdir: …"), not only registered
// submodules. A repository planted in a subfolder runs its own config when
// you `cd` there with a git-aware prompt, or when an IDE scans nested
// repositories. A walk of the tree (symlinks not followed, no `.git` entered)
// finds them; one whose git files were written during the run and would run
// programs is unplugged like a submodule (lib/git/nested-repo-guard.ts).
import { type Dirent, lstatSync, readdirSync, realpathSync, renameSync } from 'node:fs';
import { sep } from 'node:path';

/** What a plant is renamed to: git and your tools pass it by, and a `mv` restores it. */
export const QUARANTINE = '.stashbase-quarantine';

/** Renames `path` to `path` + QUARANTINE; returns the error's code when it cannot. */
export function moveAside(path: string): string | null {
  try {
    renameSync(path, path + QUARANTINE);
    return null;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? 'error';
  }
}

/** The walk stops after this many entries (with a warning): a bound on the end of every run. */
export const MAX_WALK = 300_000;

/**
 * Every `.git` entry below `root` (not root's own), found without following
 * links or entering git directories; with `setId`, also every file whose
 * setuid or setgid bit is set (one lstat per file).
 */
export function dotGitsUnder(root: string, limit = MAX_WALK, setId = false): { found: string[]; setId: string[]; truncated: boolean } {
  const found: string[] = [];
  const setIds: string[] = [];
  const stack = [root];
  let seen = 0;
  while (stack.length > 0) {
    const dir = stack.pop() as string;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (++seen > limit) return { found, setId: setIds, truncated: true };
      const full = dir + sep + e.name;
      if (e.name === '.git') {
        if (dir !== root && (e.isDirectory() || e.isFile())) found.push(full);
      } else if (e.isDirectory()) stack.push(full);
      else if (setId && e.isFile() && ((lstatSync(full, { throwIfNoEntry: false })?.mode ?? 0) & 0o6000) !== 0) setIds.push(full);
    }
  }
  return { found: found.sort(), setId: setIds.sort(), truncated: false };
}

/** Whether `path` (resolved) lies inside `dir`. */
export function within(path: string, dir: string): boolean {
  try {
    const real = realpathSync(path);
    return real === dir || real.startsWith(dir + sep);
  } catch {
    return false;
  }
}

