// What the agent must never read back from a host a secret is bound to: the
// real value in every form stashbase itself puts it in (raw in a header,
// percent-encoded in a query, base64 inside Basic credentials), each turned
// into the same form of the placeholder. The base64 forms are taken at all
// three byte alignments, so the value is found inside any base64 text (an
// echoed `Authorization: Basic …`, a JSON blob encoded whole), in the
// standard and the URL-safe alphabet.
//
// A Scrubber works on a stream: it replaces every complete form and holds a
// window of fixed length (five times the longest value, less one: as long as
// any form of it can be, percent-encoded twice, whatever its bytes) for a few milliseconds, whatever
// is in it: how long a byte takes never depends on the secret
// (lib/proxy/message-filter.ts). The forms are found by lib/secrets/form-search.ts,
// whose cost does not depend on them either.
import { FormSearch } from '../secrets/form-search.js';
import type { BoundSecret } from './secrets.js';

export interface ScrubPair {
  find: Buffer;
  replace: Buffer;
  /** `find` as Latin-1 text (one character per byte). */
  text: string;
  /** The longest any form of its value can be (five bytes a byte, percent-encoded twice): what a stream holds is fixed by it, not by the form. */
  bound: number;
  /** Which of the run's secrets it is a form of: the forms of one are searched in one pass. */
  secret: number;
}

/** How a run's pairs are searched: one group per secret (lib/secrets/form-search.ts), fixed by the secrets alone. */
interface Searched {
  search: FormSearch;
  /** A hit's pair, by group and index in it. */
  pairOf: number[][];
  longest: number;
}

const searches = new WeakMap<ScrubPair[], Searched>();

/**
 * One pass a secret, each of its forms hashed over its shortest form's length (the value's own): all of the raw form,
 * the first characters of the others (a base64 form's stand for three quarters of the value's bytes, a
 * percent-encoded one's for a third and more: all of them where it escapes none). Forms are found whole; only a text
 * that already holds that much of a form costs a comparison more.
 */
function searchedOf(pairs: ScrubPair[]): Searched {
  let s = searches.get(pairs);
  if (!s) {
    const bySecret = new Map<number, number[]>();
    for (const [i, p] of pairs.entries()) bySecret.set(p.secret, [...(bySecret.get(p.secret) ?? []), i]);
    const pairOf = [...bySecret.values()];
    const forms = (g: number[]) => g.map((i) => (pairs[i] as ScrubPair).find);
    s = {
      // Tables of one size whatever the number of forms (which the value's bytes decide).
      search: new FormSearch(pairOf.map((g) => ({ window: Math.min(...forms(g).map((f) => f.length)), forms: forms(g), capacity: FORMS_PER_SECRET }))),
      pairOf,
      longest: Math.max(0, ...pairs.map((p) => p.find.length)),
    };
    searches.set(pairs, s);
  }
  return s;
}

/**
 * The characters each kind of percent-encoder leaves as they are: encodeURIComponent's; RFC 3986's unreserved
 * (Python's quote and quote_plus, Go's QueryEscape, PHP's rawurlencode, curl); the form encoding's (URLSearchParams,
 * Java's URLEncoder), which also writes a space as `+`; and, found in the round's third review, Go's PathEscape and
 * URL paths (`$&+,/:;=@` kept), PHP's urlencode (`~` and `*` escaped) and .NET's UrlEncode (`!*()` kept, `~`
 * escaped).
 */
const UNRESERVED_SETS: Uint8Array[] = [/[A-Za-z0-9\-_.!~*'()]/, /[A-Za-z0-9\-_.~]/, /[A-Za-z0-9*\-_.]/, /[A-Za-z0-9\-_.~$&+,/:;=@]/, /[A-Za-z0-9\-_.]/, /[A-Za-z0-9\-_.!*()]/].map((re) => {
  const kept = new Uint8Array(128);
  for (let b = 0; b < 128; b++) kept[b] = re.test(String.fromCharCode(b)) ? 1 : 0;
  return kept;
});
const HEX_UPPER = Array.from({ length: 256 }, (_, b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`);
const HEX_LOWER = Array.from({ length: 256 }, (_, b) => `%${b.toString(16).padStart(2, '0')}`);

/** At most as many forms as a secret can have: its raw value, 1,200 percent-encoded ones (percentForms), 6 of base64. */
const FORMS_PER_SECRET = 2048;

/** Base64 forms shorter than this are not looked for: too short to tell from other base64 text. */
const MIN_BASE64_FORM = 8;
/** The shortest value a secret may have (lib/profile/validate.ts): from 7 bytes on, every base64 form of it is MIN_BASE64_FORM characters or more. */
export const MIN_SECRET_BYTES = 7;

/**
 * Bytes percent-encoded by an encoder that leaves `set` as it is, and `/` where `keepSlash` (quote()'s); `plus` writes
 * a space as `+`; `lower` spells the hex digits in lower case.
 */
function percentEncode(bytes: Buffer, set: Uint8Array, keepSlash: boolean, plus: boolean, lower: boolean): string {
  const hex = lower ? HEX_LOWER : HEX_UPPER;
  const parts: string[] = new Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    parts[i] = plus && b === 0x20 ? '+' : b < 0x80 && (set[b] === 1 || (keepSlash && b === 0x2f)) ? String.fromCharCode(b) : (hex[b] as string);
  }
  return parts.join('');
}

/**
 * The value as the encoders web stacks use write it, once and twice (a login redirect's `?next=` holds a query
 * encoded again): each kind of encoder (UNRESERVED_SETS), `/` kept or not, a space as `+` or not, hex digits in either
 * case; the second step by any of them, `/` kept or not, in either case. Identical forms are one (scrubPairs).
 */
function percentForms(real: Buffer, ph: Buffer): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const spaces = real.includes(0x20) || ph.includes(0x20);
  const seenOnce = new Set<string>();
  for (const set of UNRESERVED_SETS) {
    for (const keepSlash of [false, true]) {
      for (const plus of spaces ? [false, true] : [false]) {
        for (const lower of [false, true]) {
          const once: [string, string] = [percentEncode(real, set, keepSlash, plus, lower), percentEncode(ph, set, keepSlash, plus, lower)];
          // The same pair twice (most encoders agree on most values) is encoded again only once.
          const key = `${once[0]}\0${once[1]}`;
          if (seenOnce.has(key)) continue;
          seenOnce.add(key);
          out.push(once);
          for (const set2 of UNRESERVED_SETS) {
            for (const keepSlash2 of [false, true]) {
              for (const lower2 of [false, true]) {
                const again = (t: string) => percentEncode(Buffer.from(t, 'latin1'), set2, keepSlash2, false, lower2);
                out.push([again(once[0]), again(once[1])]);
              }
            }
          }
        }
      }
    }
  }
  return out;
}

/** The base64 characters determined by `bytes` alone when it starts `offset` bytes into a base64 text. */
function base64Inner(bytes: Buffer, offset: number, urlSafe: boolean): string {
  const text = Buffer.concat([Buffer.alloc(offset), bytes]).toString(urlSafe ? 'base64url' : 'base64');
  const from = Math.ceil((8 * offset) / 6);
  const to = Math.floor((8 * (offset + bytes.length)) / 6);
  return text.slice(from, to);
}

/** A string's text inside a JSON string as the common encoders write it: JSON.stringify's, Python's ensure_ascii (`\u00e9`), PHP's `\/`. */
const jsonOnce: Array<(v: string) => string> = [
  (v) => JSON.stringify(v).slice(1, -1),
  (v) => JSON.stringify(v).slice(1, -1).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
  (v) => JSON.stringify(v).slice(1, -1).replaceAll('/', '\\/'),
];

/** Each JSON form, and each escaped again by JSON.stringify (JSON text carried inside a JSON string). */
const JSON_ESCAPES: Array<(v: string) => string> = [...jsonOnce, ...jsonOnce.map((f) => (v: string) => JSON.stringify(f(v)).slice(1, -1))];

/**
 * The bytes a stream holds back for each byte of a value (less one): the longest form, one of its characters written
 * in six or seven (`\u002B`, `&#x2B;`, `\\u0001`), whatever the value's bytes (the fourth review: at five a byte, a
 * value mostly of punctuation had escaped forms longer than the window, which a stream cut in pieces let through).
 */
const WINDOW_PER_BYTE = 7;

/** UTF-16 code units of a character (a surrogate pair past the BMP), as JSON's `\u` escapes write them. */
const units = (c: string) => Array.from({ length: c.length }, (_, i) => c.charCodeAt(i));
const cp = (c: string) => c.codePointAt(0)!;

/** How an encoder writes one character it escapes: JSON's `\u` in either case, JavaScript's `\x`, HTML's and XML's character references. */
const ESCAPE_STYLES: Array<(c: string) => string> = [
  (c) => units(c).map((u) => `\\u${u.toString(16).padStart(4, '0')}`).join(''),
  (c) => units(c).map((u) => `\\u${u.toString(16).toUpperCase().padStart(4, '0')}`).join(''),
  (c) => (cp(c) < 0x100 ? `\\x${cp(c).toString(16).padStart(2, '0')}` : c),
  (c) => (cp(c) < 0x100 ? `\\x${cp(c).toString(16).toUpperCase().padStart(2, '0')}` : c),
  (c) => `&#${cp(c)};`,
  (c) => `&#x${cp(c).toString(16)};`,
  (c) => `&#x${cp(c).toString(16).toUpperCase()};`,
  (c) => NAMED[c] ?? `&#${cp(c)};`,
  (c) => (c === "'" ? '&#039;' : NAMED[c] ?? `&#${cp(c)};`),
  (c) => (c === "'" ? '&apos;' : NAMED[c] ?? `&#${cp(c)};`),
  (c) => (c === "'" ? '&#x27;' : c === '/' ? '&#x2F;' : NAMED[c] ?? `&#x${cp(c).toString(16).toUpperCase()};`),
];
const NAMED: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** The sets of characters known encoders escape (Go's JSON and Rails' `<>&`, Gson's `<>&='`, .NET's `+<>&'"\``, HTML's `&<>"'/`). */
const KNOWN_ESCAPED = ['<>&', "<>&='", '+<>&\'"`', '&<>"\'/', '&<>"', '+<>&\'"'];

/**
 * The value with some of its characters other than letters and digits (and any past ASCII) escaped, as JSON encoders
 * and HTML templates write them (review, round 36: .NET's and Gson's JSON, Go's `encoding/json` and `html/template`
 * escape `+`, `=`, `&`, `<` one character at a time, and a value named in a bound host's error came back whole in such a
 * form). Every subset of the value's distinct ASCII punctuation, where it has at most five; else each known
 * encoder's set, all of them, and each one alone; its characters past ASCII with none or all of them (the fourth
 * review: hundreds of them made thousands of forms). Each escape style applies to the whole subset.
 */
function escapedForms(real: string): string[] {
  const chars = [...real];
  const special = [...new Set(chars.filter((c) => cp(c) < 0x80 && !/[A-Za-z0-9]/.test(c)))];
  const wide = chars.filter((c) => cp(c) > 0x7f);
  const subsets: string[][] = [];
  if (special.length <= 5) {
    for (let mask = 1; mask < 1 << special.length; mask++) subsets.push(special.filter((_, i) => (mask >> i) & 1));
  } else {
    subsets.push(special, ...special.map((c) => [c]));
    for (const known of KNOWN_ESCAPED) {
      const sub = special.filter((c) => known.includes(c));
      if (sub.length > 0) subsets.push(sub);
    }
  }
  const picks = wide.length === 0 ? subsets : [...subsets, ...[[], ...subsets].map((sub) => [...sub, ...wide])];
  const out = new Set<string>();
  for (const sub of picks) {
    for (const style of ESCAPE_STYLES) out.add(chars.map((c) => (sub.includes(c) ? style(c) : c)).join(''));
  }
  out.delete(real);
  return [...out];
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
    const add = (find: string | Buffer, replace: string | Buffer) => {
      const f = Buffer.isBuffer(find) ? find : Buffer.from(find);
      if (f.length === 0 || seen.has(f.toString('latin1'))) return;
      seen.add(f.toString('latin1'));
      pairs.push({ find: f, replace: Buffer.isBuffer(replace) ? replace : Buffer.from(replace), text: f.toString('latin1'), bound: WINDOW_PER_BYTE * real.length, secret });
    };
    add(real, ph);
    // The placeholder percent-encoded as it is: one that escaped as many of its letters as the value has bytes to
    // escape kept the length, and told that number to an agent that had it echoed (found in review). The forms of
    // every kind of encoder, once and twice (review, round 35: a login redirect's `?next=` held the query encoded
    // again, `%252B`; Python's quote kept `/`; RFC 3986's encoders escape `!*'()`, which encodeURIComponent keeps,
    // and a value whose only special character was `!` had no percent form at all).
    for (const [find, replace] of percentForms(real, ph)) add(find, replace);
    // Inside JSON strings, once and twice (review, round 36: a local MCP server's text held JSON, which its answer
    // escaped again, and a value with a quote or a backslash came back as neither form).
    for (const escape of JSON_ESCAPES) add(escape(s.real), escape(s.placeholder));
    for (const form of escapedForms(s.real)) add(form, ph);
    for (const urlSafe of [false, true]) {
      for (let offset = 0; offset < 3; offset++) {
        const find = base64Inner(real, offset, urlSafe);
        if (find.length >= MIN_BASE64_FORM) add(find, base64Inner(ph, offset, urlSafe));
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
 * Every whole form is found first, in one search whose cost does not depend on
 * the forms' bytes (lib/secrets/form-search.ts); `src` is the buffer, or its
 * Latin-1 text (a header's).
 */
function replaceAll(buf: Buffer, pairs: ScrubPair[], src: Buffer | string = buf, from = 0, limit = buf.length): { out: Buffer; end: number } {
  const found = hitsOf(pairs, src, from, limit);
  const { longest } = searchedOf(pairs);
  let pos = from;
  let parts: Buffer[] | null = null;
  let k = 0;
  for (;;) {
    let best = -1;
    let pick: ScrubPair | null = null;
    for (let j = k; j < found.length; j++) {
      const h = found[j] as { at: number; p: ScrubPair };
      if (best !== -1 && h.at > best) break;
      // A form that would still cover a byte not yet passed on.
      if (h.at < pos - h.p.find.length + 1) continue;
      if (best === -1 || h.p.find.length > pick!.find.length) {
        best = h.at;
        pick = h.p;
      }
    }
    if (pick === null) break;
    parts ??= [];
    if (best >= pos) parts.push(buf.subarray(pos, best), pick.replace);
    // Overlapping what went out already: the rest of its placeholder (all of it where the lengths differ).
    else parts.push(pick.replace.length === pick.find.length ? pick.replace.subarray(pos - best) : pick.replace);
    pos = best + pick.find.length;
    // Those that can no longer cover a byte not passed on, whatever their length.
    while (k < found.length && (found[k] as { at: number }).at < pos - longest + 1) k++;
  }
  const end = Math.max(pos, limit);
  if (parts === null) return { out: from === 0 && end === buf.length ? buf : buf.subarray(from, end), end };
  if (end > pos) parts.push(buf.subarray(pos, end));
  return { out: Buffer.concat(parts), end };
}

/** Every whole form that could cover a byte from `from` on and begins before `limit`, in order of place. */
function hitsOf(pairs: ScrubPair[], src: Buffer | string, from: number, limit: number): Array<{ at: number; p: ScrubPair }> {
  const { search, pairOf, longest } = searchedOf(pairs);
  return search.find(src, Math.max(0, from - longest + 1), limit).map((h) => ({ at: h.at, p: pairs[(pairOf[h.group] as number[])[h.form] as number] as ScrubPair }));
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

/** The index of the last CR or LF of `b` at or after `from`; -1 when there is none. */
export function lastBreak(b: Buffer, from: number): number {
  const at = Math.max(b.lastIndexOf(0x0a), b.lastIndexOf(0x0d));
  return at >= from ? at : -1;
}

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
  private readonly window: number;

  constructor(private readonly pairs: ScrubPair[]) {
    // Fixed by the values' lengths, not by their forms (a percent-encoded one's length tells how many bytes it escaped).
    this.window = Math.max(0, ...pairs.map((p) => p.bound - 1));
  }

  /** The bytes that may go out now: all but the window, scrubbed. */
  push(chunk: Buffer): Buffer {
    if (this.pairs.length === 0) return chunk;
    const all = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    const limit = Math.max(this.sent, all.length - this.window);
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
    const at = lastBreak(this.carry, this.sent);
    return at < 0 ? EMPTY : this.flush(at + 1);
  }

  private flush(limit: number): Buffer {
    if (this.sent >= limit) return EMPTY;
    const { out, end } = replaceAll(this.carry, this.pairs, this.carry, this.sent, limit);
    this.sent = Math.min(end, this.carry.length);
    return out;
  }

  /** The rest, at the end of the stream. */
  end(): Buffer {
    const out = this.flush(this.carry.length);
    this.carry = EMPTY;
    this.sent = 0;
    return out;
  }

  get held(): number {
    return this.carry.length - this.sent;
  }
}
