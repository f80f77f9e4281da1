// The one way stashbase reads a file the agent could have touched (what a run
// leaves: its git directory, the agents' state, run records): opened without
// following a link and without blocking (a FIFO, a device, a socket are
// refused before a byte is read), type-checked on the open descriptor, and
// bounded in size. Every refusal says why, so the caller can name it.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

export type ReadBack = { ok: true; data: Buffer } | { ok: false; why: Refusal };

export type Refusal = 'missing' | 'a symbolic link' | 'not a regular file' | 'too large' | 'unreadable';

const FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/** The bytes of a regular file of at most `maxBytes`, or why not. */
export function readBack(path: string, maxBytes: number): ReadBack {
  let fd: number;
  try {
    fd = openSync(path, FLAGS);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { ok: false, why: code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : code === 'ELOOP' ? 'a symbolic link' : code === 'ENXIO' ? 'not a regular file' : 'unreadable' };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, why: 'not a regular file' };
    if (st.size > maxBytes) return { ok: false, why: 'too large' };
    // The size can change under a reader (and procfs reports 0): read to the end, never past one byte more than allowed.
    const parts: Buffer[] = [];
    let n = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(Math.max(st.size, 4096) + 1, maxBytes + 1 - n));
      const got = readSync(fd, buf, 0, buf.length, null);
      if (got === 0) break;
      parts.push(buf.subarray(0, got));
      n += got;
      if (n > maxBytes) return { ok: false, why: 'too large' };
    }
    return { ok: true, data: parts.length === 1 ? parts[0]! : Buffer.concat(parts, n) };
  } catch {
    return { ok: false, why: 'unreadable' };
  } finally {
    closeSync(fd);
  }
}

/**
 * The first `maxBytes` of a regular file, as Latin-1 text (a script's, read
 * for what it names), or null (missing, special, unreadable; a link unless
 * `follow`: a hook is run through its link, as git runs it). Opened without
 * blocking: a FIFO holds nothing.
 */
export function readHead(path: string, maxBytes: number, follow = false): string | null {
  let fd: number;
  try {
    fd = openSync(path, follow ? FLAGS & ~constants.O_NOFOLLOW : FLAGS);
  } catch {
    return null;
  }
  try {
    if (!fstatSync(fd).isFile()) return null;
    const buf = Buffer.alloc(maxBytes);
    let n = 0;
    for (let got = 1; got > 0 && n < buf.length; n += got) got = readSync(fd, buf, n, buf.length - n, null);
    return buf.subarray(0, n).toString('latin1');
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** The text of a regular file of at most `maxBytes`, or null (missing, a link, special, too large). */
export function readBackText(path: string, maxBytes: number): string | null {
  const r = readBack(path, maxBytes);
  return r.ok ? r.data.toString('utf8') : null;
}
