// What the stream filters (lib/proxy/scrub.ts Scrubber, lib/proxy/message-filter.ts
// Guard) share about the bytes they hold: where line breaks are (no form of a
// secret holds one, so the timer's release may let bytes go up to one), and the
// pieces that wait to be read together. Each reading goes over the filter's
// window again: a host that writes a byte a record would cost the window a
// byte (review, round 38). When pieces are read is a function of the byte
// counts alone.
import { HeldBytes } from '../util/held-bytes.js';

export const isBreak = (c: number) => c === 0x0a || c === 0x0d;

/** Whether `b` holds a CR or LF. */
export function hasBreak(b: Buffer): boolean {
  return b.indexOf(0x0a) !== -1 || b.indexOf(0x0d) !== -1;
}

/** The index of the last CR or LF of `b` in [from, to); -1 when there is none. */
export function lastBreak(b: Buffer, from: number, to = b.length): number {
  if (to <= from) return -1;
  const at = Math.max(b.lastIndexOf(0x0a, to - 1), b.lastIndexOf(0x0d, to - 1));
  return at >= from ? at : -1;
}

/** Pieces pushed and not yet read (fewer bytes than the window), copied together (a list of them cost ~100 bytes a byte). */
export class Waiting {
  private readonly bytes = new HeldBytes();
  /** Whether a line break is among them (a release has nothing to let go otherwise, and reads nothing). */
  private breaks = false;

  constructor(private readonly window: number) {}

  /** What is to be read now, `chunk` among it: null while fewer bytes than the window wait (a window's worth with nothing waiting is read as it came, no copy). */
  admit(chunk: Buffer): Buffer | null {
    if (this.bytes.size === 0 && chunk.length >= this.window) return chunk;
    this.bytes.push(chunk);
    this.breaks ||= hasBreak(chunk);
    return this.bytes.size < this.window ? null : this.take();
  }

  /** Everything waiting; nothing waits after. */
  take(): Buffer {
    this.breaks = false;
    return this.bytes.take();
  }

  get hasBreak(): boolean {
    return this.breaks;
  }

  get size(): number {
    return this.bytes.size;
  }
}
