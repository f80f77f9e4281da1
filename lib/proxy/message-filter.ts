// What a byte stream toward one side must not carry, as a filter over one
// message at a time (a response body, a WebSocket message): push() returns
// what may go on now, release() what it holds (on a timer), end() the rest.
// Scrubber (lib/proxy/scrub.ts) replaces real values coming back; Guard
// refuses the values of secrets not bound to the host going out.
//
// Decided in constant time: how much a filter holds never depends on
// whether the bytes could begin a secret. It always holds the last `window`
// bytes (the longest form it looks for, less one), whatever they are, and
// RELEASE_MS after the last bytes came (ReleaseTimer) lets them go up to the
// last line break among them: no form holds one (a secret may not), so no
// form is ever split by a release, and an event stream's events (each ended
// by a line break) are not late. Bytes after the last break wait for more
// bytes or the message's end. A filter that held only a tail that could
// begin a secret told, by the time its bytes took, whether a guess was a
// prefix of the secret: an agent read a whole token back that way, one
// character at a time. What the window held still counts when the next bytes
// come: a value split across the release is found whole. Pieces smaller than
// the window wait to be read together (each reading goes over the window
// again: a byte a piece would cost the window a byte), until a window's worth
// has come, the timer finds a line break among them, or the message ends.
import { type FormSearch, searchFor } from '../secrets/form-search.js';
import { lastBreak, Waiting } from './waiting.js';
import type { BodyNeedle } from './secrets.js';

export interface MessageFilter {
  push(chunk: Buffer): Buffer;
  /** What is held now, let go (the timer's: the window moves on, still watched). */
  release(): Buffer;
  end(): Buffer;
  /** How many bytes are held: a function of the byte counts alone. */
  readonly held: number;
  /** A value the timer's release found (the guard's): the stream is to fail with it (ReleaseTimer's onRefused). */
  readonly refused?: BodyRefused | null;
  /** The stream is dropped before its end: what waits is checked, and a value found is returned, for the audit. */
  abandon?(): BodyRefused | null;
}

/** How long held bytes wait for more before they go: short enough that an event stream's events are not late by more than a few milliseconds. */
export const RELEASE_MS = 2;

/** A filter that passes everything at once (nothing to look for). */
export const PASS: MessageFilter = { push: (b) => b, release: () => EMPTY, end: () => EMPTY, held: 0 };

const EMPTY = Buffer.alloc(0);

export class BodyRefused extends Error {
  constructor(readonly rule: string, readonly suspect: string) {
    super(rule);
  }
}

/** Passes bytes on until one of the needles would complete; then throws BodyRefused. */
export class Guard implements MessageFilter {
  /** The last `window` bytes of the stream, sent or not: a needle across a release is still seen whole. */
  private tail: Buffer = EMPTY;
  /** How many of the tail's last bytes have not gone out. */
  private unsent = 0;
  private readonly window: number;
  private readonly needles: BodyNeedle[];

  private readonly search: FormSearch;

  constructor(needles: BodyNeedle[]) {
    this.needles = needles.filter((n) => n.needle.length > 0);
    this.window = Math.max(0, ...this.needles.map((n) => n.needle.length - 1));
    this.waiting = new Waiting(this.window);
    // One search per list of needles (a tunnel's, made once): a pass per value, its whole length hashed.
    const kept = this.needles;
    this.search = searchFor(needles, () => kept.map((n) => ({ window: n.needle.length, forms: [n.needle] })));
  }

  /** Whether a value is in the bytes, found at a cost its bytes do not change (lib/secrets/form-search.ts). */
  private check(buf: Buffer): void {
    const hit = this.search.find(buf)[0];
    if (hit !== undefined) {
      const n = this.needles[hit.group] as BodyNeedle;
      throw new BodyRefused(n.rule, n.suspect);
    }
  }

  /** Pieces pushed and not yet checked: a check reads the window again, so small pieces wait (as the Scrubber's). */
  private readonly waiting: Waiting;

  /** A value found by the timer's check: nothing more goes, and the next push or end throws it. */
  private found: BodyRefused | null = null;
  /** Dropped (abandon()): nothing more goes, whatever comes (what was read to check it is gone from the stream). */
  private dropped = false;

  push(chunk: Buffer): Buffer {
    if (this.needles.length === 0) return chunk;
    if (this.found !== null) throw this.found;
    if (chunk.length === 0 || this.dropped) return EMPTY;
    const ready = this.waiting.admit(chunk);
    return ready === null ? EMPTY : this.read(ready);
  }

  /** Checks `came` (what waited) with the window before it; all but the window may go. */
  private read(came: Buffer): Buffer {
    if (came.length === 0) return EMPTY;
    const all = this.tail.length ? Buffer.concat([this.tail, came]) : came;
    this.check(all);
    const from = this.tail.length - this.unsent;
    const cut = Math.max(from, all.length - this.window);
    this.unsent = all.length - cut;
    this.tail = Buffer.from(all.subarray(Math.max(0, all.length - this.window)));
    return all.subarray(from, cut);
  }

  /**
   * The timer's: the held bytes up to their last line break (no needle holds one), what waited checked first. It
   * never throws (a timer has nobody to catch it): a value found holds everything, and the next push or end says so.
   */
  release(): Buffer {
    if (this.found !== null || this.dropped || (!this.waiting.hasBreak && lastBreak(this.tail, this.tail.length - this.unsent) < 0)) return EMPTY;
    const out = this.checkWaiting();
    if (this.found !== null) return EMPTY;
    const from = this.tail.length - this.unsent;
    const at = lastBreak(this.tail, from);
    if (at < 0) return out;
    const rest = this.letGo(at + 1);
    return out.length === 0 ? rest : Buffer.concat([out, rest]);
  }

  private letGo(to: number): Buffer {
    const from = this.tail.length - this.unsent;
    const out = Buffer.from(this.tail.subarray(from, to));
    this.unsent = this.tail.length - to;
    return out;
  }

  end(): Buffer {
    if (this.found !== null) throw this.found;
    if (this.dropped) return EMPTY;
    const read = this.read(this.waiting.take());
    const out = this.letGo(this.tail.length);
    this.tail = EMPTY;
    return read.length === 0 ? out : Buffer.concat([read, out]);
  }

  get held(): number {
    return this.unsent + this.waiting.size;
  }

  get refused(): BodyRefused | null {
    return this.found;
  }

  abandon(): BodyRefused | null {
    if (this.found === null && !this.dropped) {
      this.dropped = true;
      this.checkWaiting();
    }
    return this.found;
  }

  /** What waited, checked, where nobody can catch a refusal (the timer, the end of a dropped stream): it is kept in `found`. */
  private checkWaiting(): Buffer {
    try {
      return this.read(this.waiting.take());
    } catch (e) {
      if (!(e instanceof BodyRefused)) throw e;
      this.found = e;
      return EMPTY;
    }
  }
}

/**
 * Lets a filter's held bytes go RELEASE_MS after the last push that left any
 * (`emit` gets them). One timer per stream, re-armed, never one per push.
 */
export class ReleaseTimer {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  /** `onRefused`: where a value the release found goes (the stream fails with it; the timer has nobody to throw to). */
  constructor(private readonly filter: () => MessageFilter | null, private readonly emit: (b: Buffer) => void, private readonly onRefused?: (e: BodyRefused) => void) {}

  /** After a push: the held bytes go if nothing follows in time. */
  touch(): void {
    if (this.stopped || (this.filter()?.held ?? 0) === 0) return;
    if (this.timer === null) {
      this.timer = setTimeout(() => this.fire(), RELEASE_MS);
      this.timer.unref();
    } else this.timer.refresh();
  }

  private fire(): void {
    const f = this.filter();
    if (this.stopped || f === null || f.held === 0) return;
    const b = f.release();
    if (b.length > 0) this.emit(b);
    const refused = f.refused ?? null;
    if (refused !== null && this.onRefused) {
      this.stop();
      this.onRefused(refused);
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}

/** Two filters in a row: the first's output through the second. */
export function chain(a: MessageFilter, b: MessageFilter): MessageFilter {
  return {
    // Nothing through the first, nothing to the second (review, round 38: an MCP filter after a scrubber that held
    // every piece read its head again at each empty push).
    push: (x) => {
      const y = a.push(x);
      return y.length === 0 ? EMPTY : b.push(y);
    },
    // What the first lets go goes through the second, which then lets go of what it holds too (a scrubber after
    // another filter keeps its window until its own release).
    release: () => {
      const x = b.push(a.release());
      const y = b.release();
      return x.length === 0 ? y : y.length === 0 ? x : Buffer.concat([x, y]);
    },
    end: () => {
      const x = b.push(a.end());
      const y = b.end();
      return x.length === 0 ? y : y.length === 0 ? x : Buffer.concat([x, y]);
    },
    get held() {
      return a.held + b.held;
    },
    get refused() {
      return a.refused ?? b.refused ?? null;
    },
    abandon: () => a.abandon?.() ?? b.abandon?.() ?? null,
  };
}
