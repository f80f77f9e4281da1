// What a byte stream toward one side must not carry, as a filter over one
// message at a time (a response body, a WebSocket message): push() returns
// what may go on now, end() the rest. Scrubber (lib/proxy/scrub.ts) replaces
// real values coming back; Guard refuses the values of secrets not bound to
// the host going out. Both hold back only a tail that could begin a value.
import { holdFrom } from './scrub.js';
import type { BodyNeedle } from './secrets.js';

export interface MessageFilter {
  push(chunk: Buffer): Buffer;
  end(): Buffer;
}

export class BodyRefused extends Error {
  constructor(readonly rule: string, readonly suspect: string) {
    super(rule);
  }
}

/** Passes bytes on until one of the needles would complete; then throws BodyRefused. */
export class Guard implements MessageFilter {
  private carry: Buffer = Buffer.alloc(0);
  private readonly finds: Array<{ find: Buffer }>;

  constructor(private readonly needles: BodyNeedle[]) {
    this.finds = needles.filter((n) => n.needle.length > 0).map((n) => ({ find: n.needle }));
  }

  private check(buf: Buffer): void {
    for (const n of this.needles) if (n.needle.length > 0 && buf.includes(n.needle)) throw new BodyRefused(n.rule, n.suspect);
  }

  push(chunk: Buffer): Buffer {
    if (this.finds.length === 0) return chunk;
    const all = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    this.check(all);
    const cut = holdFrom(all, this.finds);
    this.carry = Buffer.from(all.subarray(cut));
    return all.subarray(0, cut);
  }

  end(): Buffer {
    const rest = this.carry;
    this.carry = Buffer.alloc(0);
    this.check(rest);
    return rest;
  }
}
