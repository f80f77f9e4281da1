// Random bytes for session ids and placeholders. On Linux and macOS they come
// straight from /dev/urandom, which spares every run loading node:crypto (a few
// milliseconds of start-up); elsewhere from node:crypto.
import { closeSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';

export function randomBytes(n: number): Buffer {
  const buf = Buffer.alloc(n);
  if (process.platform === 'linux' || process.platform === 'darwin') {
    const fd = openSync('/dev/urandom', 'r');
    try {
      let off = 0;
      while (off < n) off += readSync(fd, buf, off, n - off, null);
    } finally {
      closeSync(fd);
    }
    return buf;
  }
  return (createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto')).randomBytes(n);
}

/** A per-run secret as lower-case hex (the proxy's credential). */
export function randomToken(bytes = 18): string {
  return randomBytes(bytes).toString('hex');
}
