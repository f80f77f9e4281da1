// The entries of a git index file, read straight from its binary format
// (versions 2, 3 and 4; SHA-1 or SHA-256 ids), without running git over a
// checkout an agent has just written: its gitlinks (mode 160000: submodules),
// and the paths marked assume-unchanged or skip-worktree, which your git status
// and git diff then pass over. Null when the file is not an index this reader
// knows (a split index, another version): the caller then asks git, or refuses.
import { createRequire } from 'node:module';

const GITLINK = 0o160000;
const ASSUME_VALID = 0x8000;
const EXTENDED = 0x4000;
const SKIP_WORKTREE = 0x4000;

export interface IndexEntry {
  path: string;
  mode: number;
  /** assume-unchanged (update-index --assume-unchanged) or skip-worktree: changes to it are hidden from git status. */
  hidden: boolean;
}

export function gitlinksOfIndex(buf: Buffer, oidLength: 20 | 32 = 20): string[] | null {
  const entries = indexEntries(buf, oidLength);
  return entries === null ? null : entries.filter((e) => (e.mode & 0o170000) === GITLINK).map((e) => e.path);
}

/**
 * The paths whose changes the index hides from git status; null if unreadable.
 * The id length (SHA-1 or SHA-256) is the one whose hash the file ends with
 * (git's index.skipHash leaves zeros there: then the one that parses).
 */
export function hiddenPathsOfIndex(buf: Buffer): string[] | null {
  const { createHash } = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');
  const ends = (n: 20 | 32) => buf.length > n && (buf.subarray(-n).every((b) => b === 0) || createHash(n === 20 ? 'sha1' : 'sha256').update(buf.subarray(0, -n)).digest().equals(buf.subarray(-n)));
  const lengths = ([20, 32] as const).filter(ends);
  for (const n of lengths) {
    const entries = indexEntries(buf, n);
    if (entries !== null) return entries.filter((e) => e.hidden).map((e) => e.path);
  }
  return null;
}

export function indexEntries(buf: Buffer, oidLength: 20 | 32 = 20): IndexEntry[] | null {
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'DIRC') return null;
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return null;
  const count = buf.readUInt32BE(8);
  const out: IndexEntry[] = [];
  let off = 12;
  let previous = '';
  for (let i = 0; i < count; i++) {
    const start = off;
    const fixed = 40 + oidLength + 2; // stat data, id, flags
    if (off + fixed > buf.length) return null;
    const mode = buf.readUInt32BE(off + 24);
    const flags = buf.readUInt16BE(off + 40 + oidLength);
    off += fixed;
    let extended = 0;
    if (version >= 3 && flags & EXTENDED) {
      if (off + 2 > buf.length) return null;
      extended = buf.readUInt16BE(off);
      off += 2;
    }
    let path: string;
    if (version === 4) {
      // A varint of how many bytes to strip from the previous path, then the rest.
      let strip = 0;
      let byte: number;
      let n = 0;
      do {
        if (off >= buf.length) return null;
        byte = buf[off++] as number;
        strip = n === 0 ? byte & 0x7f : ((strip + 1) << 7) | (byte & 0x7f);
        n++;
      } while (byte & 0x80);
      const end = buf.indexOf(0, off);
      if (end < 0 || strip > previous.length) return null;
      path = previous.slice(0, previous.length - strip) + buf.toString('utf8', off, end);
      off = end + 1;
    } else {
      const end = buf.indexOf(0, off);
      if (end < 0) return null;
      path = buf.toString('utf8', off, end);
      // NUL padding to a multiple of 8 bytes from the entry's start, at least one.
      off = start + Math.ceil((end - start + 1) / 8) * 8;
    }
    previous = path;
    out.push({ path, mode, hidden: (flags & ASSUME_VALID) !== 0 || (extended & SKIP_WORKTREE) !== 0 });
  }
  // Extensions, then the checksum. A split index ("link") keeps most entries
  // in another file: this one is not the whole story.
  while (off + 8 <= buf.length - oidLength) {
    const signature = buf.toString('latin1', off, off + 4);
    if (signature === 'link') return null;
    off += 8 + buf.readUInt32BE(off + 4);
  }
  return out;
}
