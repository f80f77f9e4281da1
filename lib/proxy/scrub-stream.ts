// A response body stream in which every form of a real secret value becomes
// the same form of its placeholder (lib/proxy/scrub.ts), also across chunk
// boundaries, holding back only a tail that could still begin one.
import { Transform, type TransformCallback } from 'node:stream';
import { Scrubber, type ScrubPair } from './scrub.js';

export class ScrubStream extends Transform {
  private readonly scrubber: Scrubber;

  constructor(pairs: ScrubPair[]) {
    super();
    this.scrubber = new Scrubber(pairs);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    const out = this.scrubber.push(chunk);
    done(null, out.length > 0 ? out : undefined);
  }

  override _flush(done: TransformCallback): void {
    const rest = this.scrubber.end();
    done(null, rest.length > 0 ? rest : undefined);
  }
}
