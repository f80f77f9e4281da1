// What the agent must never read back from a host a secret is bound to: the
// real value however the host spelled it, each character raw or escaped in a
// style of its own (JSON's, HTML's, URLs', …: lib/secrets/spellings.ts),
// becomes the placeholder; and base64 forms (stashbase itself puts a value
// base64-encoded inside Basic credentials) become the same form of the
// placeholder, taken at all three byte alignments, so the value is found
// inside any base64 text (an echoed `Authorization: Basic …`, a JSON blob
// encoded whole), in the standard and the URL-safe alphabet.
//
// A Scrubber works on a stream: it replaces every complete form and holds a
// window of fixed length (SPELLED_PER_BYTE bytes a byte of the longest value,
// less one: as long as any spelling of it can be, whatever its bytes) for a few
// milliseconds, whatever is in it: how long a byte takes never depends on the
// secret (lib/proxy/message-filter.ts). The spellings are found by
// lib/secrets/spelling-search.ts and the base64 forms by
// lib/secrets/form-search.ts, whose costs do not depend on them either.
import { FormSearch } from '../secrets/form-search.js';
import { SPELLED_PER_BYTE, SpellingSearch } from '../secrets/spelling-search.js';
import type { BoundSecret } from './secrets.js';
import { isBreak, lastBreak, Waiting } from './waiting.js';

export interface ScrubPair {
  /** The value (spelled: found however its characters are written), or one of its base64 forms. */
  find: Buffer;
  replace: Buffer;
  /** `find` as Latin-1 text (one character per byte). */
  text: string;
  /** Whether `find` is the value itself, found in every spelling (lib/secrets/spelling-search.ts), or a form found as it is. */
  spelled: boolean;
  /** The longest any spelling of its value can be: what a stream holds is fixed by it, not by the form. */
  bound: number;
  /** Which of the run's secrets it is a form of: the forms of one are searched in one pass. */
  secret: number;
}

/** How a run's pairs are searched: the base64 forms one group per secret (lib/secrets/form-search.ts), the values in every spelling (lib/secrets/spelling-search.ts). */
interface Searched {
  forms: FormSearch;
  /** A form's pair, by group and index in it. */
  pairOf: number[][];
  spellings: SpellingSearch;
  /** A spelled value's pair, by its index in the spelling search. */
  spelledPair: number[];
  longest: number;
}

const searches = new WeakMap<ScrubPair[], Searched>();

/**
 * One pass a secret for its base64 forms, each hashed over its shortest form's length; one a secret for its value in
 * every spelling. Forms are found whole; only a text that already holds that much of a form costs a comparison more.
 */
function searchedOf(pairs: ScrubPair[]): Searched {
  let s = searches.get(pairs);
  if (!s) {
    const bySecret = new Map<number, number[]>();
    const spelledPair: number[] = [];
    for (const [i, p] of pairs.entries()) {
      if (p.spelled) spelledPair.push(i);
      else bySecret.set(p.secret, [...(bySecret.get(p.secret) ?? []), i]);
    }
    const pairOf = [...bySecret.values()];
    const forms = (g: number[]) => g.map((i) => (pairs[i] as ScrubPair).find);
    s = {
      // Tables of one size whatever the number of forms (which the value's length decides).
      forms: new FormSearch(pairOf.map((g) => ({ window: Math.min(...forms(g).map((f) => f.length)), forms: forms(g), capacity: FORMS_PER_SECRET }))),
      pairOf,
      spellings: new SpellingSearch(spelledPair.map((i) => (pairs[i] as ScrubPair).find)),
      spelledPair,
      longest: Math.max(0, ...pairs.map((p) => (p.spelled ? p.bound : p.find.length))),
    };
    searches.set(pairs, s);
  }
  return s;
}

/**
 * A base64 text as it is and with its `+`, its `/` or both escaped in one style: percent-encoded (either case),
 * `\u002B` (either case), `\/`, a character reference (hex in either case, decimal, named).
 */
const BASE64_ESCAPES: Array<(t: string) => string> = [(t) => t];
{
  const hex = (c: string) => c.charCodeAt(0).toString(16);
  const styles: Array<(c: string) => string> = [
    (c) => `%${hex(c).toUpperCase()}`,
    (c) => `%${hex(c)}`,
    (c) => `\\u00${hex(c).toUpperCase()}`,
    (c) => `\\u00${hex(c)}`,
    (c) => `\\${c}`,
    (c) => `&#x${hex(c).toUpperCase()};`,
    (c) => `&#x${hex(c)};`,
    (c) => `&#${c.charCodeAt(0)};`,
    (c) => (c === '+' ? '&plus;' : '&sol;'),
  ];
  for (const style of styles) for (const set of ['+', '/', '+/']) BASE64_ESCAPES.push((t) => t.replace(/[+/]/g, (c) => (set.includes(c) ? style(c) : c)));
}

/** At most as many base64 forms as a secret can have: 3 alignments, the standard alphabet's escaped 28 ways, the URL-safe one's. */
const FORMS_PER_SECRET = 96;

/** Base64 forms shorter than this are not looked for: too short to tell from other base64 text. */
const MIN_BASE64_FORM = 8;
/** The shortest value a secret may have (lib/profile/validate.ts): from 7 bytes on, every base64 form of it is MIN_BASE64_FORM characters or more. */
export const MIN_SECRET_BYTES = 7;

/** The base64 characters determined by `bytes` alone when it starts `offset` bytes into a base64 text. */
function base64Inner(bytes: Buffer, offset: number, urlSafe: boolean): string {
  const text = Buffer.concat([Buffer.alloc(offset), bytes]).toString(urlSafe ? 'base64url' : 'base64');
  const from = Math.ceil((8 * offset) / 6);
  const to = Math.floor((8 * (offset + bytes.length)) / 6);
  return text.slice(from, to);
}

/**
 * The forms of each secret's real value to look for, each with the same form
 * of its placeholder. A scrubbed body may change its size (a percent-encoded
 * value is longer than its placeholder so encoded): it goes on without its
 * Content-Length (lib/proxy/forward-response.ts).
 */
export function scrubPairs(secrets: BoundSecret[]): ScrubPair[] {
  const pairs: ScrubPair[] = [];
  const seen = new Set<string>();
  for (const [secret, s] of secrets.entries()) {
    const real = Buffer.from(s.real);
    const ph = Buffer.from(s.placeholder);
    const bound = SPELLED_PER_BYTE * real.length;
    // Every spelling of the value (review, round 36: percent-encoders' sets, once and twice; JSON inside JSON; .NET's,
    // Gson's and Go's escapes, each of its own style; HTML's references) becomes the placeholder, which has no
    // character any encoder escapes (lib/secrets/placeholder.ts): whatever spelling the host chose, the agent reads
    // the same text, which tells nothing of how many of the value's characters it escaped.
    pairs.push({ find: real, replace: ph, text: real.toString('latin1'), spelled: true, bound, secret });
    for (const urlSafe of [false, true]) {
      for (let offset = 0; offset < 3; offset++) {
        const find = base64Inner(real, offset, urlSafe);
        if (find.length < MIN_BASE64_FORM) continue;
        const replace = base64Inner(ph, offset, urlSafe);
        // Its `+` and `/` escaped too, as a JSON, URL or HTML encoder writes them (review, round 37: an echoed Basic
        // credential in PHP's JSON, `\/`, decoded to the value), each style alike for all, the replacement the same.
        for (const escape of urlSafe ? [(t: string) => t] : BASE64_ESCAPES) {
          const f = escape(find);
          if (seen.has(f)) continue;
          seen.add(f);
          pairs.push({ find: Buffer.from(f), replace: Buffer.from(escape(replace)), text: f, spelled: false, bound, secret });
        }
      }
    }
  }
  return pairs;
}

/**
 * Replaces every complete form, leftmost first (the longest at one place),
 * in the bytes from `from` on; forms that begin at or after `limit` are left
 * (a stream's held tail). Forms may overlap or nest (one secret's value inside
 * or against another's): every byte any form covers is replaced, so a form
 * that begins inside one already replaced goes on as the rest of its own
 * placeholder. Returns the bytes from `from` up to `end`: `limit`, or further
 * where a form that began before it ends later.
 *
 * Every whole form is found first, in searches whose cost does not depend on
 * the forms' bytes (lib/secrets/spelling-search.ts, form-search.ts); `src` is
 * the buffer, or its Latin-1 text (a header's).
 */
function replaceAll(buf: Buffer, pairs: ScrubPair[], src: Buffer | string = buf, from = 0, limit = buf.length): { out: Buffer; end: number } {
  const found = hitsOf(pairs, src, from, limit);
  const { longest } = searchedOf(pairs);
  let pos = from;
  let parts: Buffer[] | null = null;
  let k = 0;
  for (;;) {
    let best = -1;
    let pick: Hit | null = null;
    for (let j = k; j < found.length; j++) {
      const h = found[j] as Hit;
      if (best !== -1 && h.at > best) break;
      // A form that would still cover a byte not yet passed on.
      if (h.at < pos - h.len + 1) continue;
      if (best === -1 || h.len > pick!.len) {
        best = h.at;
        pick = h;
      }
    }
    if (pick === null) break;
    parts ??= [];
    const replace = pick.p.replace;
    if (best >= pos) parts.push(buf.subarray(pos, best), replace);
    // Overlapping what went out already: the rest of its placeholder (all of it where the lengths differ).
    else parts.push(replace.length === pick.len ? replace.subarray(pos - best) : replace);
    pos = best + pick.len;
    // Those that can no longer cover a byte not passed on, whatever their length.
    while (k < found.length && (found[k] as { at: number }).at < pos - longest + 1) k++;
  }
  const end = Math.max(pos, limit);
  if (parts === null) return { out: from === 0 && end === buf.length ? buf : buf.subarray(from, end), end };
  if (end > pos) parts.push(buf.subarray(pos, end));
  return { out: Buffer.concat(parts), end };
}

/** A whole form found: where it begins, how long it is there, and whose. */
interface Hit {
  at: number;
  len: number;
  p: ScrubPair;
}

/** Every whole form that could cover a byte from `from` on and begins before `limit`, in order of place. */
function hitsOf(pairs: ScrubPair[], src: Buffer | string, from: number, limit: number): Hit[] {
  const { forms, pairOf, spellings, spelledPair, longest } = searchedOf(pairs);
  let start = Math.max(0, from - longest + 1);
  // No form holds a line break: none that covers `from` begins before the last one before it, and none that begins
  // before `limit` goes past one just before it (a release ends at one). Read no further: where the breaks are is
  // the bytes' own layout (review, round 38: a release read the window for a piece of a few bytes).
  if (typeof src !== 'string') {
    const b = lastBreak(src, start, from);
    if (b !== -1) start = b + 1;
    if (limit > 0 && limit < src.length && isBreak(src[limit - 1] as number)) src = src.subarray(0, limit);
  }
  const hits: Hit[] = forms.find(src, start, limit).map((h) => {
    const p = pairs[(pairOf[h.group] as number[])[h.form] as number] as ScrubPair;
    return { at: h.at, len: p.find.length, p };
  });
  const bytes = typeof src === 'string' ? Buffer.from(src, 'latin1') : src;
  for (const h of spellings.find(bytes, start, limit)) hits.push({ at: h.at, len: h.end - h.at, p: pairs[spelledPair[h.group] as number] as ScrubPair });
  return hits.sort((a, b) => a.at - b.at);
}

/** Replaces every form in a whole text (a header value, a complete message). */
export function scrubBuffer(buf: Buffer, pairs: ScrubPair[]): Buffer {
  return pairs.length === 0 ? buf : replaceAll(buf, pairs).out;
}

/** The same for a header's text (Latin-1, as the parser gives it): untouched, and no copy made, when no form is in it. */
export function scrubText(text: string, pairs: ScrubPair[]): string {
  if (pairs.length === 0 || hitsOf(pairs, text, 0, text.length).length === 0) return text;
  const b = Buffer.from(text, 'latin1');
  const out = replaceAll(b, pairs, text).out;
  return out === b ? text : out.toString('latin1');
}

const EMPTY = Buffer.alloc(0);

/**
 * A stream's scrubbing state. It always holds the last `window` raw bytes
 * (the longest form, less one), whatever they are, and lets them go up to
 * their last line break on release() (lib/proxy/message-filter.ts's timer),
 * the rest with the next bytes or at the end: how long a byte waits never
 * tells whether it could begin a secret. The held bytes stay as the lookbehind
 * once released: a form that began in them and ends in the next bytes is still
 * found, its rest replaced by the rest of its placeholder.
 */
export class Scrubber {
  /** The last raw bytes of the stream (at least the window's worth once there were so many). */
  private carry: Buffer = EMPTY;
  /** How many of them went out already. */
  private sent = 0;
  private readonly waiting: Waiting;
  private readonly window: number;

  constructor(private readonly pairs: ScrubPair[]) {
    // Fixed by the values' lengths, not by their forms (a percent-encoded one's length tells how many bytes it escaped).
    this.window = Math.max(0, ...pairs.map((p) => p.bound - 1));
    this.waiting = new Waiting(this.window);
  }

  /**
   * The bytes that may go out now: all but the window, scrubbed. Pieces are
   * read once the bytes not yet read are the window's worth (or on release()
   * and end()): each reading goes over the window again, and a host that
   * writes a byte a record would otherwise cost ten times the value's length
   * a byte (review, round 38). When a piece is read is a function of the
   * byte counts alone.
   */
  push(chunk: Buffer): Buffer {
    if (this.pairs.length === 0) return chunk;
    if (chunk.length === 0) return EMPTY;
    const ready = this.waiting.admit(chunk);
    return ready === null ? EMPTY : this.read(ready);
  }

  /** Reads `came` (what waited): all but the window goes out, scrubbed. */
  private read(came: Buffer): Buffer {
    if (came.length === 0) return EMPTY;
    const all = this.carry.length ? Buffer.concat([this.carry, came]) : came;
    const limit = Math.max(this.sent, all.length - this.window);
    // Nothing may go yet (the timer's release, before its own reading): not read (review, round 38: each release read
    // the window twice), kept from where the reading to come begins, which sees what this one would have: the longest
    // form before what has not gone, or the last line break before it, no form holding one (kept whole, the carry grew
    // a piece a release, and was copied each time).
    if (limit <= this.sent) {
      const behind = Math.max(0, this.sent - searchedOf(this.pairs).longest);
      const b = lastBreak(all, behind, this.sent);
      const from = b === -1 ? behind : b;
      this.carry = Buffer.from(all.subarray(from));
      this.sent -= from;
      return EMPTY;
    }
    // Held raw, not scrubbed: a value that nests another's must be seen whole (replacing the inner
    // one first would leave the rest of the outer one to go out).
    const { out, end } = replaceAll(all, this.pairs, all, this.sent, limit);
    this.keep(all, end);
    return out;
  }

  /** Keeps the last window's worth of `all` as the lookbehind; `end`: where what went out ends. */
  private keep(all: Buffer, end: number): void {
    const from = Math.max(0, all.length - this.window);
    this.carry = Buffer.from(all.subarray(from));
    this.sent = Math.max(0, end - from);
  }

  /**
   * The timer's: what is held up to its last line break, scrubbed of every form complete in it.
   * No form holds a line break (a secret may not), so none began there and goes on past it: a
   * value an upstream splits with a pause never leaves half raw. Where the break is is the
   * bytes' own layout, never a comparison with a secret.
   */
  release(): Buffer {
    // Nothing to let go without a line break: nothing read (a host pausing after each byte would have the window read
    // again each time).
    if (!this.waiting.hasBreak && lastBreak(this.carry, this.sent) < 0) return EMPTY;
    const out = this.read(this.waiting.take());
    const at = lastBreak(this.carry, this.sent);
    if (at < 0) return out;
    const rest = this.flush(at + 1);
    return out.length === 0 ? rest : rest.length === 0 ? out : Buffer.concat([out, rest]);
  }

  private flush(limit: number): Buffer {
    if (this.sent >= limit) return EMPTY;
    const { out, end } = replaceAll(this.carry, this.pairs, this.carry, this.sent, limit);
    this.sent = Math.min(end, this.carry.length);
    return out;
  }

  /** The rest, at the end of the stream. */
  end(): Buffer {
    const read = this.read(this.waiting.take());
    const out = this.flush(this.carry.length);
    this.carry = EMPTY;
    this.sent = 0;
    return read.length === 0 ? out : out.length === 0 ? read : Buffer.concat([read, out]);
  }

  get held(): number {
    return this.carry.length - this.sent + this.waiting.size;
  }
}
