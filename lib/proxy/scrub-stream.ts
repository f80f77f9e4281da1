// A response body stream in which every real secret value becomes its
// placeholder, also across chunk boundaries: the tail that could start a value
// is held back until the next chunk shows whether it does.
import { Transform, type TransformCallback } from 'node:stream';
import type { BoundSecret } from './secrets.js';

export class ScrubStream extends Transform {
  private carry: Buffer = Buffer.alloc(0);
  private readonly pairs: Array<[Buffer, Buffer]>;
  private readonly keep: number;

  constructor(secrets: BoundSecret[]) {
    super();
    this.pairs = secrets.map((s) => [Buffer.from(s.real), Buffer.from(s.placeholder)]);
    this.keep = Math.max(0, ...this.pairs.map(([r]) => r.length - 1));
  }

  private replace(buf: Buffer): Buffer {
    let out = buf;
    for (const [real, ph] of this.pairs) {
      let i = out.indexOf(real);
      if (i === -1) continue;
      const parts: Buffer[] = [];
      let from = 0;
      while (i !== -1) {
        parts.push(out.subarray(from, i), ph);
        from = i + real.length;
        i = out.indexOf(real, from);
      }
      parts.push(out.subarray(from));
      out = Buffer.concat(parts);
    }
    return out;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    const all = this.replace(Buffer.concat([this.carry, chunk]));
    const cut = Math.max(0, all.length - this.keep);
    this.carry = all.subarray(cut);
    done(null, all.subarray(0, cut));
  }

  override _flush(done: TransformCallback): void {
    done(null, this.replace(this.carry));
  }
}
