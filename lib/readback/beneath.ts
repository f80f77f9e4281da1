// Reading a tree someone else can change while it is read (a folder an agent
// of another run writes): every step below the root is opened from the folder
// opened before it, never by its path again, and no step may be a link. On
// Linux each step is opened through /proc/self/fd/<folder>/<name> with
// O_NOFOLLOW: the kernel starts from the folder already open, so swapping a
// folder for a link between two steps leads nowhere. Elsewhere (macOS, where
// there is no such path), each step is opened by its full path with
// O_NOFOLLOW on that step: a folder above it swapped for a link between two
// steps can still win there.
import { closeSync, constants, fstatSync, openSync, readdirSync, readSync, type Stats } from 'node:fs';
import { join } from 'node:path';

const PROC = process.platform === 'linux';
const DIR = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const FILE = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

export class NotBeneath extends Error {
  constructor(readonly rel: string, readonly why: 'a symbolic link' | 'missing' | 'not a regular file or folder' | 'unreadable') {
    super(`${rel}: ${why}`);
  }
}

/** An open folder of the tree: its descriptor and its path, relative to the root (for messages). */
export interface OpenDir {
  fd: number;
  rel: string;
  /** Where the next step is opened from: /proc/self/fd/N on Linux, the folder's path elsewhere. */
  base: string;
}

function refusal(e: unknown, rel: string): NotBeneath {
  const code = (e as NodeJS.ErrnoException).code;
  return new NotBeneath(rel, code === 'ELOOP' || code === 'ENOTDIR' ? 'a symbolic link' : code === 'ENOENT' ? 'missing' : code === 'ENXIO' ? 'not a regular file or folder' : 'unreadable');
}

/** Opens the root (a real path: the caller resolved it). */
export function openRoot(root: string): OpenDir {
  const fd = openSync(root, DIR);
  return { fd, rel: '', base: PROC ? `/proc/self/fd/${fd}` : root };
}

/** One step down, a folder: never through a link. */
export function openChildDir(parent: OpenDir, name: string): OpenDir {
  const rel = parent.rel === '' ? name : `${parent.rel}/${name}`;
  let fd: number;
  try {
    fd = openSync(join(parent.base, name), DIR);
  } catch (e) {
    throw refusal(e, rel);
  }
  return { fd, rel, base: PROC ? `/proc/self/fd/${fd}` : join(parent.base, name) };
}

/** What a child is (lstat through the open folder): a folder, a file, a link, or something else. */
export function childKind(parent: OpenDir, name: string): 'dir' | 'file' | 'link' | 'other' | 'missing' {
  let fd: number;
  try {
    fd = openSync(join(parent.base, name), FILE);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ELOOP' ? 'link' : code === 'ENOENT' ? 'missing' : 'other';
  }
  try {
    const st = fstatSync(fd);
    return st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
  } finally {
    closeSync(fd);
  }
}

/** The names in an open folder. */
export function listDir(dir: OpenDir): string[] {
  return readdirSync(dir.base);
}

/** A regular file's bytes, opened from its folder without following a link, at most `max` (null: larger). */
export function readChildFile(parent: OpenDir, name: string, max: number): { data: Buffer; st: Stats } | null {
  const rel = parent.rel === '' ? name : `${parent.rel}/${name}`;
  let fd: number;
  try {
    fd = openSync(join(parent.base, name), FILE);
  } catch (e) {
    throw refusal(e, rel);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new NotBeneath(rel, 'not a regular file or folder');
    if (st.size > max) return null;
    const buf = Buffer.allocUnsafe(st.size + 1);
    let n = 0;
    for (;;) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
      if (n === buf.length) return null;
    }
    return { data: buf.subarray(0, n), st };
  } finally {
    closeSync(fd);
  }
}

export function closeDir(dir: OpenDir): void {
  try {
    closeSync(dir.fd);
  } catch {
    // closed already
  }
}
