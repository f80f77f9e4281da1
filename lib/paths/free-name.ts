// A name for stashbase to rename something to, beside it, where nothing is:
// never onto what is there (a rename onto a folder fails, and one onto a file
// replaces it), whoever made it. Asked once the sandbox has ended, so nothing
// of the agent's makes one meanwhile.
import { createHash } from 'node:crypto';
import { lstatSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Numbered names tried past the first, before one of the time and this process. */
const NUMBERED = 8;
/** A name's longest, in bytes, on the file systems stashbase meets. */
const NAME_MAX = 255;
/** Room kept for what a name gets after its own part: "-" and the time and process, and the suffix. */
const ROOM = 24;

/**
 * The name's own part, shortened where it and the suffix would pass NAME_MAX
 * (review, round 34: a file of a 230-byte name was left in place, "every
 * name taken", when none could be made): its first bytes, on a whole
 * character, and a hash of the whole.
 */
function ownPart(name: string, suffix: string): string {
  if (Buffer.byteLength(name) + Buffer.byteLength(suffix) + ROOM <= NAME_MAX) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 12);
  const keep = NAME_MAX - Buffer.byteLength(suffix) - ROOM - hash.length - 1;
  let out = '';
  for (const ch of name) {
    if (Buffer.byteLength(out + ch) > keep) break;
    out += ch;
  }
  return `${out}-${hash}`;
}

/**
 * `path` + `suffix`, else `path`-2 … -9 + `suffix`, else one of the time and
 * this process (a long name shortened first); or why none can be had.
 */
export function freeName(path: string, suffix: string): { to: string } | { failed: string } {
  const base = join(dirname(path), ownPart(basename(path), suffix));
  const names = [base + suffix];
  for (let i = 2; i < 2 + NUMBERED; i++) names.push(`${base}-${i}${suffix}`);
  names.push(`${base}-${Date.now().toString(36)}${process.pid.toString(36)}${suffix}`);
  for (const name of names) {
    try {
      if (lstatSync(name, { throwIfNoEntry: false }) === undefined) return { to: name };
    } catch (e) {
      return { failed: (e as NodeJS.ErrnoException).code ?? 'error' };
    }
  }
  return { failed: `every name for it ending in ${suffix || 'its own'} is taken` };
}
