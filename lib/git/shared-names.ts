// The files in a run's tree that have other names (hard links) as it starts:
// a write through one of them changes a file elsewhere in the repository,
// where the run could not write, and the name in the tree can be gone by the
// end of the run, leaving that file one name and nothing to tell it from your
// own (found in review: a file written through its other name in the run's
// folder, that name then removed). The run cannot make such names (a link
// across the sandbox's mounts fails), so those there at the start are all
// there will be. Noted before the agent starts, by their device and inode, in
// a walk of the tree alone (found in review: a walk of the rest of the
// repository, made while the agent ran, took your own edits it met already
// changed for the agent's). Installed code is passed by: what changed in
// installed code counts by its time wherever it lies (lib/git/nested-repo-guard.ts).
import { type Dir, lstatSync, opendirSync } from 'node:fs';
import { sep } from 'node:path';

/** Past these the note is incomplete, and every file outside the tree changed during the run counts (as if none were made). */
const MAX_ENTRIES = 300_000;
const MAX_NOTED = 1_000_000;

/** Folders of installed code, by name: their files' other names are installed code too (a package store's). */
const INSTALLED = /(?:^|\/)(?:node_modules|site-packages)$/;

export interface SharedNames {
  /** Why the walk did not see every entry of the tree (then `has` says nothing), or null. */
  incomplete: string | null;
  /** Whether a file (its lstat's device and inode) had a name in the tree as the run started, and another. */
  has(dev: number, ino: number): boolean;
}

/** Walks `tree` (a real path; links not followed) for the regular files with more than one name. */
export function noteSharedNames(tree: string): SharedNames {
  const inodes = new Map<number, Set<number>>();
  let noted = 0;
  let entries = 0;
  const me = process.getuid?.();
  const walk = (): string | null => {
    const stack = [tree];
    while (stack.length > 0) {
      const dir = stack.pop() as string;
      let handle: Dir;
      try {
        handle = opendirSync(dir, { bufferSize: 256 });
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR') continue; // gone meanwhile
        // Another user's folder closed to you (a database container's data) is closed to the run too: nothing in it is its.
        if ((code === 'EACCES' || code === 'EPERM') && lstatSync(dir, { throwIfNoEntry: false })?.uid !== me) continue;
        return `${dir} could not be read (${code ?? 'failed'})`;
      }
      try {
        for (let e = handle.readSync(); e !== null; e = handle.readSync()) {
          if (++entries > MAX_ENTRIES) return `it holds more than ${MAX_ENTRIES.toLocaleString('en')} entries`;
          // (A name that is not UTF-8 would be read as another; found in review: passed by, with all below it.)
          if (e.name.includes('\uFFFD')) return `${dir} holds a name that is not UTF-8`;
          const full = dir + sep + e.name;
          if (e.isDirectory()) {
            if (!INSTALLED.test(full)) stack.push(full);
            continue;
          }
          // Only a regular file's data is written through a name (a link's is its text; a FIFO holds none).
          if (!e.isFile()) continue;
          const st = lstatSync(full, { throwIfNoEntry: false });
          if (st === undefined || !st.isFile() || st.nlink < 2) continue;
          let set = inodes.get(st.dev);
          if (set === undefined) inodes.set(st.dev, (set = new Set()));
          set.add(st.ino);
          if (++noted > MAX_NOTED) return `more than ${MAX_NOTED.toLocaleString('en')} of its files have other names`;
        }
      } catch (e) {
        return `${dir} could not be read to its end (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
      } finally {
        handle.closeSync();
      }
    }
    return null;
  };
  const incomplete = walk();
  return { incomplete, has: (dev, ino) => inodes.get(dev)?.has(ino) === true };
}
