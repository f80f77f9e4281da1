// Reading a small text file that may be missing, or be something planted to
// hang the reader (a FIFO, a device) or to lead it elsewhere (a link, swapped
// in between a check and the read): opened without following a link and
// without waiting, and read only when the descriptor is a regular file.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** The text of a regular file of at most `maxBytes` (procfs files report 0), or null. */
export function readSmallText(path: string, maxBytes = 64 * 1024): string | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > maxBytes) return null;
    // Read to the end, never past maxBytes (a file that grows, or reports 0 as procfs does).
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.alloc(Math.min(65536, maxBytes + 1 - total));
      if (buf.length === 0) return null;
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(buf.subarray(0, n));
      total += n;
      if (total > maxBytes) return null;
    }
    return Buffer.concat(chunks).toString('utf8');
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
