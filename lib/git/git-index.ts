// The entries of a git index file, read straight from its binary format
// (versions 2, 3 and 4; SHA-1 or SHA-256 ids), without running git over a
// checkout an agent has just written: its gitlinks (mode 160000: submodules),
// and the paths marked assume-unchanged or skip-worktree, which your git status
// and git diff then pass over. Null when the file is not an index this reader
// knows (a split index, another version): the caller then asks git, or refuses.
import { HFS_IGNORED, HFS_IGNORED_CLASS } from '../paths/mac-names.js';
import { createRequire } from 'node:module';

const GITLINK = 0o160000;
const ASSUME_VALID = 0x8000;
const EXTENDED = 0x4000;
const SKIP_WORKTREE = 0x4000;
/** git add -N: the entry is a placeholder; on a path your HEAD has, your next commit records it as deleted. */
export const INTENT_TO_ADD = 0x2000;

export interface IndexEntry {
  path: string;
  mode: number;
  /** assume-unchanged (update-index --assume-unchanged) or skip-worktree: changes to it are hidden from git status. */
  hidden: boolean;
  /** The extended flags (index version 3 and later): skip-worktree, intent-to-add, or bits git does not define. */
  extended: number;
}

export function gitlinksOfIndex(buf: Buffer, oidLength: 20 | 32 = 20): string[] | null {
  // Filtered before any path is decoded: a checkout of 10,000 files has a handful of gitlinks at most.
  const layout = indexLayout(buf, oidLength);
  return layout === null ? null : layout.entries.filter((e) => (e.mode & 0o170000) === GITLINK).map((e) => e.path);
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
  const layout = indexLayout(buf, oidLength);
  return layout === null ? null : layout.entries.map((e) => ({ path: e.path, mode: e.mode, hidden: e.hidden, extended: e.extended }));
}

/** An entry with where it sits in the file (its stat data first, then its id). */
export interface IndexEntryAt extends IndexEntry {
  /** The path's bytes as a Latin-1 string: one character per byte, for comparing and keying. */
  key: string;
  /** 0 for a merged entry, 1-3 for the sides of a conflict. */
  stage: number;
  /** Offset of the entry's first byte; its id starts 40 bytes in. */
  at: number;
}

export interface IndexLayout {
  version: number;
  entries: IndexEntryAt[];
  /** Where the entries end (extensions, then the checksum, follow). */
  entriesEnd: number;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

class Entry implements IndexEntryAt {
  constructor(readonly key: string, readonly mode: number, readonly stage: number, readonly at: number, readonly hidden: boolean, readonly extended: number) {}
  /** Decoded only when asked: most entries are compared by their bytes alone. */
  get path(): string {
    // Printable ASCII (nearly every path) is the same in both: no decoding.
    return PRINTABLE_ASCII.test(this.key) ? this.key : Buffer.from(this.key, 'latin1').toString('utf8');
  }
}

/** An entry's object id, in hex. */
export const entryOid = (buf: Buffer, e: IndexEntryAt, oidLength: 20 | 32): string => buf.toString('hex', e.at + 40, e.at + 40 + oidLength);

/**
 * The entries of an index file and where they sit; null when it is not one
 * this reader knows (a split index included). Paths are read as bytes
 * (Latin-1, one character per byte: a version 4 entry strips bytes, not
 * characters, from the path before it) and decoded as UTF-8 only for `path`.
 */
export function indexLayout(buf: Buffer, oidLength: 20 | 32 = 20): IndexLayout | null {
  if (buf.length < 12 + oidLength || buf.toString('latin1', 0, 4) !== 'DIRC') return null;
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return null;
  const count = buf.readUInt32BE(8);
  const out: IndexEntryAt[] = [];
  const limit = buf.length - oidLength;
  let off = 12;
  let previous = '';
  for (let i = 0; i < count; i++) {
    const start = off;
    const fixed = 40 + oidLength + 2; // stat data, id, flags
    if (off + fixed > limit) return null;
    const mode = buf.readUInt32BE(off + 24);
    const flags = buf.readUInt16BE(off + 40 + oidLength);
    off += fixed;
    let extended = 0;
    if (version >= 3 && flags & EXTENDED) {
      if (off + 2 > limit) return null;
      extended = buf.readUInt16BE(off);
      off += 2;
    }
    let key: string;
    if (version === 4) {
      // A varint of how many bytes to strip from the previous path, then the rest.
      let strip = 0;
      let byte: number;
      let n = 0;
      do {
        if (off >= limit) return null;
        byte = buf[off++] as number;
        strip = n === 0 ? byte & 0x7f : ((strip + 1) << 7) | (byte & 0x7f);
        n++;
      } while (byte & 0x80);
      const end = buf.indexOf(0, off);
      if (end < 0 || end >= limit || strip > previous.length) return null;
      key = previous.slice(0, previous.length - strip) + buf.toString('latin1', off, end);
      off = end + 1;
    } else {
      const end = buf.indexOf(0, off);
      if (end < 0 || end >= limit) return null;
      key = buf.toString('latin1', off, end);
      // NUL padding to a multiple of 8 bytes from the entry's start, at least one.
      off = start + Math.ceil((end - start + 1) / 8) * 8;
      if (off > limit) return null;
    }
    previous = key;
    out.push(new Entry(key, mode, (flags >> 12) & 3, start, (flags & ASSUME_VALID) !== 0 || (extended & SKIP_WORKTREE) !== 0, extended));
  }
  const entriesEnd = off;
  // Extensions, then the checksum. A split index ("link") keeps most entries
  // in another file: this one is not the whole story.
  while (off + 8 <= limit) {
    const signature = buf.toString('latin1', off, off + 4);
    if (signature === 'link') return null;
    off += 8 + buf.readUInt32BE(off + 4);
  }
  if (off !== limit) return null;
  return { version, entries: out, entriesEnd };
}

/**
 * An index as stashbase writes it back after a run: the entries as they are,
 * without any extension (a cache-tree would let your next commit record trees
 * other than the entries', an untracked cache or fsmonitor token would hide
 * files), the stat data of `fresh` entries zeroed (git then compares their
 * content with the file, never trusts a size and time the agent chose), and
 * its checksum made anew.
 */
export function rebuildIndex(buf: Buffer, layout: IndexLayout, fresh: IndexEntryAt[], oidLength: 20 | 32): Buffer {
  const { createHash } = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');
  const body = Buffer.from(buf.subarray(0, layout.entriesEnd));
  // ctime, mtime, dev, ino (offsets 0-23), then uid, gid, size (28-39); the mode (24-27) stays.
  for (const e of fresh) {
    body.fill(0, e.at, e.at + 24);
    body.fill(0, e.at + 28, e.at + 40);
  }
  return Buffer.concat([body, createHash(oidLength === 20 ? 'sha1' : 'sha256').update(body).digest()]);
}

const GITLINK_MODE = 0o160000;
const SYMLINK_MODE = 0o120000;
/** The modes git records: a file, an executable, a symbolic link, a gitlink. */
const MODES = new Set([0o100644, 0o100755, SYMLINK_MODE, GITLINK_MODE]);

/** What NTFS ignores after a name: trailing dots and spaces, then the end or a stream (`.git::$INDEX_ALLOCATION`). */
const NTFS_TAIL = /^[. ]*(?::.*)?$/s;

/**
 * Whether a path component is `.<name>` on some file system, as git's
 * is_hfs_dot* and is_ntfs_dot* see it: case folded, HFS's ignored characters
 * dropped, NTFS's tail ignored, and NTFS's 8.3 short names (`git~1`,
 * `gitmod~1`, or the hashed `gi7eba~1`).
 */
function isDot(component: string, name: string, hashed: string | null): boolean {
  const c = component.replace(HFS_IGNORED, '').toLowerCase();
  const tail = (prefix: string) => c.startsWith(prefix) && NTFS_TAIL.test(c.slice(prefix.length));
  if (tail(`.${name}`)) return true;
  if (name === 'git') return tail('git~1');
  const m = /^([a-z0-9]{1,6})~([1-9][0-9]*)/.exec(c);
  if (m === null || !NTFS_TAIL.test(c.slice(m[0].length))) return false;
  return (m[1] === name.slice(0, 6) && /^[1-4]$/.test(m[2] as string)) || (hashed !== null && m[1] === hashed);
}

/** What every name isDot matches holds: a '.' first once HFS's ignored characters are dropped, or a '~' (a short name). */
const MAY_BE_DOT = new RegExp(`^[${HFS_IGNORED_CLASS}]*\\.|~`);
const isDotGit = (component: string) => MAY_BE_DOT.test(component) && isDot(component, 'git', null);
/** The files git reads from the working tree as its own: a symbolic link by any of their names is refused (git's own check). */
const GIT_FILES: Array<[string, string]> = [['gitmodules', 'gi7eba'], ['gitattributes', 'gi7d29'], ['gitignore', 'gi250a'], ['mailmap', 'maba30']];

/**
 * Why an entry's path is not one git would ever add (git's verify_path, with
 * the HFS and NTFS protections on): a path your `git restore .` or `git
 * checkout .` would write outside the working tree, or into a `.git`. Null
 * when it is one.
 */
export function badIndexPath(path: string, mode: number): string | null {
  return badPathFrom(path, mode, 0);
}

/** badIndexPath for a path whose first `checked` characters (a folder's path and its '/') already passed. */
function badPathFrom(path: string, mode: number, checked: number): string | null {
  if (path === '' || path.startsWith('/') || path.endsWith('/')) return 'an empty or absolute path';
  const rest = checked === 0 ? path : path.slice(checked);
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f\\]/.test(rest)) return 'a control character or backslash';
  const components = rest.split('/');
  for (const c of components) {
    if (c === '' || c === '.' || c === '..') return 'an empty, "." or ".." component';
    if (isDotGit(c)) return 'a .git component';
  }
  const last = components[components.length - 1] as string;
  if ((mode & 0o170000) === SYMLINK_MODE && GIT_FILES.some(([name, hashed]) => isDot(last, name, hashed))) return 'a symbolic link git reads as its own file';
  return null;
}

/**
 * What makes an index one git would not have written: an entry whose path is
 * not one git adds, entries out of git's order (by path bytes, then stage) or
 * repeated, a name length that disagrees with the name, a mode git does not
 * record (only 100644, 100755, 120000 and 160000), extended flags git does not
 * define, a file that is also a folder of another entry (`d` and `d/x`). Null
 * when none.
 */
export function indexProblem(buf: Buffer, layout: IndexLayout, oidLength: 20 | 32): string | null {
  let previous: IndexEntryAt | null = null;
  const keys = new Set(layout.entries.map((e) => e.key));
  // The folder part (up to its last '/') of the entry before, whose folders all passed: entries come folder by folder,
  // so each folder is checked once, not once per file in it.
  let passed: string | null = null;
  for (const e of layout.entries) {
    if (!MODES.has(e.mode)) return `${JSON.stringify(e.path)}: mode ${e.mode.toString(8)}`;
    if ((e.extended & ~(SKIP_WORKTREE | INTENT_TO_ADD)) !== 0) return `${JSON.stringify(e.path)}: extended flags ${e.extended.toString(16)}`;
    const folder = e.key.slice(0, e.key.lastIndexOf('/') + 1);
    const same = folder !== '' && folder === passed;
    if (!same) {
      for (let i = e.key.indexOf('/'); i > 0; i = e.key.indexOf('/', i + 1)) {
        if (keys.has(e.key.slice(0, i))) return `${JSON.stringify(e.path)}: below ${JSON.stringify(Buffer.from(e.key.slice(0, i), 'latin1').toString('utf8'))}, which is an entry itself`;
      }
    }
    const path = e.path;
    // The folder's path as decoded (a '/' is never part of a UTF-8 sequence): its length in the decoded path.
    const bad = badPathFrom(path, e.mode, same ? path.lastIndexOf('/') + 1 : 0);
    if (bad !== null) return `${JSON.stringify(path)}: ${bad}`;
    passed = folder;
    const nameLength = buf.readUInt16BE(e.at + 40 + oidLength) & 0xfff;
    // Latin-1: one character per byte.
    if (nameLength !== Math.min(e.key.length, 0xfff)) return `${JSON.stringify(path)}: its name length says ${nameLength}`;
    if (previous !== null && (previous.key > e.key || (previous.key === e.key && previous.stage >= e.stage))) return `${JSON.stringify(e.path)}: out of order or repeated`;
    previous = e;
  }
  return null;
}
