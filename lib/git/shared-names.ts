// The files in a run's tree that have other names (hard links) as it starts:
// a write through one of them changes a file elsewhere in the repository,
// where the run could not write, and the name in the tree can be gone by the
// end of the run, leaving that file one name and nothing to tell it from your
// own (found in review: a node_modules file written through its other name in
// the run's folder, that name then removed). The run cannot make such names
// (a link across the sandbox's mounts fails), so those there at the start are
// all there will be. Noted before the agent starts, by their device and inode,
// in a walk of the tree alone (found in review: a walk of the rest of the
// repository, made while the agent ran, took your own edits it met already
// changed for the agent's).
import { type Dir, lstatSync, opendirSync } from 'node:fs';
import { sep } from 'node:path';

/** Past these the note is incomplete, and every file outside the tree changed during the run counts (as if none were made). */
const MAX_ENTRIES = 300_000;
const MAX_NOTED = 1_000_000;

export interface SharedNames {
  /** Whether the walk saw every entry of the tree: otherwise `has` says nothing. */
  complete: boolean;
  /** Whether a file (its lstat's device and inode) had a name in the tree as the run started, and another. */
  has(dev: number, ino: number): boolean;
}

/** Walks `tree` (a real path; links not followed) for the files with more than one name. */
export function noteSharedNames(tree: string): SharedNames {
  const inodes = new Map<number, Set<number>>();
  let noted = 0;
  let entries = 0;
  const slash = Buffer.from(sep);
  const walk = (): boolean => {
    // By their bytes: a name that is not UTF-8 is walked as it is.
    const stack: Buffer[] = [Buffer.from(tree === sep ? '' : tree)];
    while (stack.length > 0) {
      const dir = stack.pop() as Buffer;
      let handle: Dir;
      try {
        handle = opendirSync(dir.length === 0 ? slash : dir, { bufferSize: 256, encoding: 'buffer' as BufferEncoding });
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR') continue; // gone meanwhile
        return false; // what lies below is unknown
      }
      try {
        for (let e = handle.readSync(); e !== null; e = handle.readSync()) {
          if (++entries > MAX_ENTRIES) return false;
          const full = Buffer.concat([dir, slash, e.name as unknown as Buffer]);
          if (e.isDirectory()) {
            stack.push(full);
            continue;
          }
          if (e.isSymbolicLink()) continue; // its own data is only its text, which nothing writes through
          const st = lstatSync(full, { throwIfNoEntry: false });
          if (st === undefined || st.isDirectory() || st.nlink < 2) continue;
          let set = inodes.get(st.dev);
          if (set === undefined) inodes.set(st.dev, (set = new Set()));
          set.add(st.ino);
          if (++noted > MAX_NOTED) return false;
        }
      } catch {
        return false; // a folder that cannot be read to its end
      } finally {
        handle.closeSync();
      }
    }
    return true;
  };
  const complete = walk();
  return { complete, has: (dev, ino) => inodes.get(dev)?.has(ino) === true };
}
