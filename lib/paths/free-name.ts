// A name for stashbase to rename something to, beside it, where nothing is:
// never onto what is there (a rename onto a folder fails, and one onto a file
// replaces it), whoever made it. Asked once the sandbox has ended, so nothing
// of the agent's makes one meanwhile.
import { lstatSync } from 'node:fs';

/** Numbered names tried past the first, before one of the time and this process. */
const NUMBERED = 8;

/** `path` + `suffix`, else `path`-2 … -9 + `suffix`, else one of the time and this process; null when each is taken. */
export function freeName(path: string, suffix: string): string | null {
  const names = [path + suffix];
  for (let i = 2; i < 2 + NUMBERED; i++) names.push(`${path}-${i}${suffix}`);
  names.push(`${path}-${Date.now().toString(36)}${process.pid.toString(36)}${suffix}`);
  for (const name of names) {
    try {
      if (lstatSync(name, { throwIfNoEntry: false }) === undefined) return name;
    } catch {
      // ENOTDIR, ENAMETOOLONG, a loop: no name to rename to.
    }
  }
  return null;
}
