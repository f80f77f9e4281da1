// What your working tree holds at a path, as git would hash it: read without
// following a link, from a folder inside the tree (never through a link out
// of it). For the checks that compare what an index stages with your files
// (lib/git/index-import.ts, lib/git/index-follow.ts).
import { createHash } from 'node:crypto';
import { lstatSync, readlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readBack } from '../readback/file.js';
import { realPathOf } from '../util/real-path.js';

/** A file (its bytes and executable bit), a link (its target's bytes), nothing at all, or something else (a folder, a socket, unreadable). */
export type TreeContent = { kind: 'file'; data: Buffer; executable: boolean } | { kind: 'link'; data: Buffer } | { kind: 'none' } | { kind: 'other' };

/** What the tree at `top` (its real path `realTop`) holds at `path`; 'too much' for a file larger than `room` bytes. */
export function treeContentAt(top: string, realTop: string, path: string, room: number): TreeContent | 'too much' {
  const at = join(top, path);
  // Its folder in the tree, not reached through a link out of it; a missing folder holds nothing.
  const parent = realPathOf(dirname(at));
  if (parent === null) return { kind: 'none' };
  if (parent !== realTop && !parent.startsWith(`${realTop}/`)) return { kind: 'other' };
  // A file where the path's folder would be (ENOTDIR) holds nothing there: no error may stop the caller (found in review).
  let st: ReturnType<typeof lstatSync> | undefined;
  try {
    st = lstatSync(at, { throwIfNoEntry: false });
  } catch {
    return { kind: 'none' };
  }
  if (st === undefined) return { kind: 'none' };
  if (st.isSymbolicLink()) {
    try {
      return { kind: 'link', data: readlinkSync(at, { encoding: 'buffer' }) };
    } catch {
      return { kind: 'other' };
    }
  }
  if (!st.isFile()) return { kind: 'other' };
  if (st.size > room) return 'too much';
  const r = readBack(at, room);
  return r.ok ? { kind: 'file', data: r.data, executable: (st.mode & 0o100) !== 0 } : { kind: 'other' };
}

/** The blob id git gives `data` (sha1 or sha256). */
export function blobOid(data: Buffer, algorithm: 'sha1' | 'sha256'): string {
  return createHash(algorithm).update(`blob ${data.length}\0`).update(data).digest('hex');
}
