// Reading a small text file that may be missing, or be something planted to
// hang the reader (a FIFO, a device): only a regular file is read.
import { lstatSync, readFileSync } from 'node:fs';

/** The text of a regular file of at most `maxBytes` (procfs files report 0), or null. */
export function readSmallText(path: string, maxBytes = 64 * 1024): string | null {
  try {
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (!st?.isFile() || st.size > maxBytes) return null;
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}
