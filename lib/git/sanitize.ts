// Before stashbase reads anything of the run's git directory (lib/git/import.ts):
// every entry walked without following a link; links, FIFOs, sockets and
// devices removed, setuid and setgid bits cleared, each named; folders opened
// to their owner again (one closed would stop the import, or the removal). The walk has a
// bound far above any real repository's; reaching it is not a partial check:
// the import is refused whole.
import { chmodSync, type Dirent, lstatSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** Entries walked at most (a real repository's git directory holds far fewer: loose objects are packed). */
export const MAX_GIT_ENTRIES = 1_000_000;

export interface Sanitized {
  /** What was removed or changed, relative to the directory. */
  fixed: string[];
  /** The bound was reached: what lies beyond is unknown. */
  incomplete: boolean;
}

/** What a directory entry that is neither a file nor a folder is, as the walks name it. */
export const kind = (e: Dirent) => (e.isSymbolicLink() ? 'a symbolic link' : e.isFIFO() ? 'a FIFO' : e.isSocket() ? 'a socket' : e.isBlockDevice() || e.isCharacterDevice() ? 'a device' : 'not a file or folder');

export function sanitizeGitDir(root: string, max = MAX_GIT_ENTRIES): Sanitized {
  const fixed: string[] = [];
  let seen = 0;
  const walk = (dir: string, rel: string): boolean => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      // A folder the agent closed to its owner: opened again, so that it is walked (and can be removed).
      try {
        chmodSync(dir, 0o700);
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        fixed.push(`${rel} (unreadable)`);
        return false;
      }
    }
    for (const e of entries) {
      if (++seen > max) return false;
      const path = join(dir, e.name);
      const name = rel === '' ? e.name : `${rel}/${e.name}`;
      if (!e.isFile() && !e.isDirectory()) {
        rmSync(path, { force: true, recursive: false });
        fixed.push(`${name} (${kind(e)}): removed`);
        continue;
      }
      const st = lstatSync(path);
      if (st.mode & 0o6000) {
        chmodSync(path, st.mode & 0o1777);
        fixed.push(`${name} (setuid or setgid): the bit cleared`);
      }
      // A folder closed to its owner would stop the import's own work in it, or the removal of the run's folder.
      if (e.isDirectory() && (st.mode & 0o700) !== 0o700) chmodSync(path, (st.mode & 0o1777) | 0o700);
      if (e.isDirectory() && !walk(path, name)) return false;
    }
    return true;
  };
  const top = lstatSync(root, { throwIfNoEntry: false });
  if (!top?.isDirectory()) return { fixed: [`the run's git directory itself (${top ? 'not a folder' : 'missing'})`], incomplete: true };
  return { fixed, incomplete: !walk(root, '') };
}
