// The files of a repository outside a run's tree that may share their data
// with a name the run could write (hard links): a write through that name
// changes them too, and the name can be gone by the end of the run, leaving
// them one name and nothing to tell them from your own (found in review: a
// node_modules file written through its other name in the run's folder, that
// name then removed). Noted as the run starts, by a walk that goes on while the
// agent runs: nothing it does changes what lies outside its tree, except
// through such a name; so a file the walk meets already changed counts too
// (its count of names before is unknown).
import { type Dir, lstatSync, opendirSync } from 'node:fs';
import { sep } from 'node:path';

/** Past these the walk stops, and every file outside the tree changed during the run counts (as if the walk had not been made). */
const MAX_ENTRIES = 2_000_000;
const MAX_NOTED = 100_000;
/** Entries read between two turns of the event loop. */
const SLICE = 2_000;

export interface SharedOutside {
  /** Whether the walk saw every entry: otherwise `paths` says nothing. */
  complete: boolean;
  /** Files with more than one name at the start, or already changed when the walk met them. */
  paths: Set<string>;
}

/**
 * Starts the walk of `root` (a real path) but `tree` (a real path below it)
 * and `root`'s own `.git/objects` (git's objects: no tool runs them); its
 * answer is asked once the run ended. Links are not followed.
 */
export function noteSharedOutside(root: string, tree: string, since: number): Promise<SharedOutside> {
  const paths = new Set<string>();
  const skip = new Set([tree, `${root}${sep}.git${sep}objects`]);
  let entries = 0;
  // In slices of entries, synchronous (an asynchronous lstat per file costs ten times as much), the event loop let go
  // between them (the run's proxy shares it).
  const walk = async (): Promise<boolean> => {
    const stack = [root];
    let slice = 0;
    while (stack.length > 0) {
      const dir = stack.pop() as string;
      let handle: Dir;
      try {
        handle = opendirSync(dir, { bufferSize: 256 });
      } catch {
        continue; // gone, or not readable: the end-of-run walk says so of its own
      }
      try {
        for (let e = handle.readSync(); e !== null; e = handle.readSync()) {
          if (++entries > MAX_ENTRIES) return false;
          if (++slice >= SLICE) {
            slice = 0;
            await new Promise((r) => setImmediate(r));
          }
          const full = dir + sep + e.name;
          if (e.isDirectory()) {
            if (!skip.has(full)) stack.push(full);
            continue;
          }
          const st = lstatSync(full, { throwIfNoEntry: false });
          if (st === undefined) continue;
          if (st.nlink > 1 || st.ctimeMs >= since) {
            paths.add(full);
            if (paths.size > MAX_NOTED) return false;
          }
        }
      } catch {
        return false; // a folder that cannot be read to its end: the note is incomplete
      } finally {
        handle.closeSync();
      }
    }
    return true;
  };
  return walk().then((complete) => ({ complete, paths }), () => ({ complete: false, paths }));
}
