// Writes to standard output without creating process.stdout, whose stream
// classes cost ~2 ms of start-up: --dry-run prints its plan this way.
import { writeSync } from 'node:fs';

export function writeStdout(text: string): void {
  const buf = Buffer.from(text, 'utf8');
  let off = 0;
  try {
    while (off < buf.length) off += writeSync(1, buf, off);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EPIPE') return; // the reader is gone (… | head): nothing more to say
    if (code !== 'EAGAIN') throw e;
    process.stdout.write(buf.subarray(off)); // a non-blocking pipe that is full: the stream waits for it
  }
}
