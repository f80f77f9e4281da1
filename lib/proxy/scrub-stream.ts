// A message filter (lib/proxy/message-filter.ts) as a stream: what a push
// lets through goes on at once, the window on the filter's timer, the rest at
// the end. A response body or an upgraded stream's bytes toward the agent
// (ScrubStream) or toward the upstream (lib/proxy/body-guard.ts).
import { Transform, type TransformCallback } from 'node:stream';
import { type BodyRefused, type MessageFilter, ReleaseTimer } from './message-filter.js';
import { Scrubber, type ScrubPair } from './scrub.js';

export class FilterStream extends Transform {
  private readonly timer: ReleaseTimer;
  private readonly messageFilter: MessageFilter;

  constructor(filter: MessageFilter) {
    super();
    this.messageFilter = filter;
    this.timer = new ReleaseTimer(() => filter, (b) => void this.push(b), (e) => this.destroy(e));
  }

  /** Dropped before its end (the sender went): a value among the bytes held unread, for the audit. */
  abandon(): BodyRefused | null {
    this.timer.stop();
    return this.messageFilter.abandon?.() ?? null;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    try {
      const out = this.messageFilter.push(chunk);
      this.timer.touch();
      done(null, out.length > 0 ? out : undefined);
    } catch (e) {
      this.timer.stop();
      done(e as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    this.timer.stop();
    try {
      const rest = this.messageFilter.end();
      done(null, rest.length > 0 ? rest : undefined);
    } catch (e) {
      done(e as Error);
    }
  }

  override _destroy(e: Error | null, cb: (e: Error | null) => void): void {
    this.timer.stop();
    cb(e);
  }
}

/** Every form of a real secret value becomes the same form of its placeholder, also across chunks (lib/proxy/scrub.ts). */
export class ScrubStream extends FilterStream {
  constructor(pairs: ScrubPair[]) {
    super(new Scrubber(pairs));
  }
}
