// The ways a text's bytes at one place can be read as one character of a
// value (lib/secrets/spelling-search.ts): besides the byte itself,
//   - a backslash escape, after any run of backslashes (a JSON text escaped
//     again writes `\\u0026`, `\\\"`): `\uXXXX` (a pair of them past the BMP),
//     `\u{X…}`, `\UXXXXXXXX`, `\xXX`, C's and Python's octal `\NNN`, CSS's
//     `\X…` (a space after it taken too), `\t`, `\b`, `\f`, `\v`, `\a`, `\e`,
//     and any ASCII punctuation
//     (`\"`, `\/`, `\\`, a shell's `\$`);
//   - a percent escape, once, twice or three times (`%2B`, `%252B`,
//     `%25252B`), and `%uXXXX` (JavaScript's escape()); a form's `+` for a
//     space escaped again (`%2B`);
//   - an HTML or XML character reference, and one escaped again (`&amp;#43;`):
//     decimal or hex with any zeros before it, with or without its semicolon,
//     and each of the HTML standard's names for a character that is no ASCII
//     letter or digit (lib/secrets/html-entities.ts);
//   - quoted-printable's `=XX`, a pair of hex digits (a value written in hex),
//     `+` for a space (forms), a doubled quote (CSV's and SQL's `""`, `''`,
//     doubled again as CSV of CSV writes it, four), and a shell's quote inside
//     single quotes (`'"'"'`, `'\''`);
//   - any of these whose own syntax was escaped again in another style
//     (stacked(): `%5C%22`, `\&quot;`, `%26amp%3B`, `\u0026#34;`, `\""`).
// Hex digits in either case. A reading is at most SPELLED_PER_BYTE bytes a
// byte of what it reads as: what a stream holds back is fixed by that.
import { BARE, NAMED } from './html-entities.js';

/** The longest a reading is, a byte of what it reads as (`&amp;#x2B;`, `\U0000002B`). */
export const SPELLED_PER_BYTE = 10;
/** The longest a reading is (four bytes of UTF-8, a character past the BMP). */
export const LONGEST_READING = 4 * SPELLED_PER_BYTE;

/** A hex digit's value; -1 for other bytes. */
export const HEX_OF = new Int8Array(256).fill(-1);
for (let b = 0; b < 256; b++) {
  const c = String.fromCharCode(b);
  if (/[0-9a-fA-F]/.test(c)) HEX_OF[b] = parseInt(c, 16);
}
const HEX = HEX_OF;
/** 1 for the bytes that begin an escape: the readings other than the byte itself and a pair of hex digits. */
const ESCAPES = new Uint8Array(256);
for (const c of '\\%&=+"\'') ESCAPES[c.charCodeAt(0)] = 1;
/** 1 for the bytes any reading other than the byte itself can begin with. */
export const READINGS = Uint8Array.from(ESCAPES, (e, b) => (e === 1 || HEX_OF[b]! >= 0 ? 1 : 0));

/** The readings found at a place: [length, byte count, byte 0..3] each. */
const MAX_READINGS = 96;
const out = new Int32Array(MAX_READINGS * 6);
let count = 0;
let end = 0;

/** The buffer readingsAt fills (valid until it is called again). */
export function readings(): Int32Array {
  return out;
}

function put(len: number, n: number, b0: number, b1 = 0, b2 = 0, b3 = 0): void {
  if (len > SPELLED_PER_BYTE * n || count >= MAX_READINGS) return;
  const o = count++ * 6;
  out[o] = len;
  out[o + 1] = n;
  out[o + 2] = b0;
  out[o + 3] = b1;
  out[o + 4] = b2;
  out[o + 5] = b3;
}

/** A code point read from `len` bytes, as its UTF-8 bytes (none for a surrogate or past Unicode). */
function putCode(len: number, cp: number): void {
  if (cp < 0x80) put(len, 1, cp);
  else if (cp < 0x800) put(len, 2, 0xc0 | (cp >> 6), 0x80 | (cp & 63));
  else if (cp >= 0xd800 && cp <= 0xdfff) return;
  else if (cp < 0x10000) put(len, 3, 0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
  else if (cp <= 0x10ffff) put(len, 4, 0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
}

/** A byte read (`%E9`, `\xE9`): the byte, and where it is past ASCII also the character U+00XX (JavaScript's `\xE9` is é). */
function putByteOrCode(len: number, b: number): void {
  put(len, 1, b);
  if (b >= 0x80) putCode(len, b);
}

const hexAt = (s: Uint8Array, i: number): number => (i < end ? HEX[s[i]!]! : -1);

/** The value of `n` hex digits at `i`; -1 unless all are. */
function hexN(s: Uint8Array, i: number, n: number): number {
  let v = 0;
  for (let k = 0; k < n; k++) {
    const d = hexAt(s, i + k);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/** How many hex (or, `radix` 10 or 8, decimal or octal) digits follow `i`, at most `max`. */
function digits(s: Uint8Array, i: number, max: number, radix: number): number {
  let k = 0;
  while (k < max && i + k < end && HEX[s[i + k]!]! >= 0 && HEX[s[i + k]!]! < radix) k++;
  return k;
}

function valueOf(s: Uint8Array, i: number, n: number, radix: number): number {
  let v = 0;
  for (let k = 0; k < n; k++) v = v * radix + HEX[s[i + k]!]!;
  return v;
}

/**
 * A UTF-16 unit escape whose head (`\u`, `\\u`, `%u`) is the `head` bytes at `p`, its four hex digits after it;
 * a high surrogate with the same head and a low one after it reads as the character past the BMP.
 */
function unitEscape(s: Uint8Array, p: number, head: number): void {
  const hi = hexN(s, p + head, 4);
  if (hi < 0) return;
  const len = head + 4;
  if (hi < 0xd800 || hi > 0xdfff) return putCode(len, hi);
  if (hi > 0xdbff) return;
  for (let i = 0; i < head; i++) if (p + len + i >= end || s[p + len + i] !== s[p + i]) return;
  const lo = hexN(s, p + len + head, 4);
  if (lo >= 0xdc00 && lo <= 0xdfff) putCode(2 * len, 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00));
}

function backslash(s: Uint8Array, p: number): void {
  let k = 0;
  while (k < 8 && p + k < end && s[p + k] === 0x5c) k++;
  // A backslash escaped by those before it (`\\`, `\\\\`).
  for (let j = 1; j < k; j++) put(j + 1, 1, 0x5c);
  backslashBody(s, p, p + k);
}

/** The control character a backslash and this letter stand for; 0 for none. */
const CONTROL = new Uint8Array(256);
for (const [c, v] of [['t', 9], ['b', 8], ['f', 12], ['v', 11], ['a', 7], ['e', 27]] as const) CONTROL[c.charCodeAt(0)] = v;

const SHELL_QUOTE = Buffer.from(`'"'"'`);
const SHELL_QUOTE_2 = Buffer.from(`'\\''`);

function startsWith(s: Uint8Array, p: number, what: Uint8Array): boolean {
  if (p + what.length > end) return false;
  for (let i = 0; i < what.length; i++) if (s[p + i] !== what[i]) return false;
  return true;
}

const isAlnum = (b: number) => (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);

/** Each layer percentLayers() read: its value (-1: no hex digits) and the length from the first `%`. */
const LAYER_V = new Int32Array(3);
const LAYER_LEN = new Int32Array(3);

/** `%XX` at the `%` at `p`, and `%25` before it once or twice (a percent-encoded text encoded again): how many layers. */
function percentLayers(s: Uint8Array, p: number): number {
  let n = 0;
  for (let q = p + 1; n < 3; q += 2) {
    const v = hexN(s, q, 2);
    LAYER_V[n] = v;
    LAYER_LEN[n++] = q + 2 - p;
    if (v !== 0x25) break;
  }
  return n;
}

function percent(s: Uint8Array, p: number): void {
  for (let k = 0, n = percentLayers(s, p); k < n; k++) {
    const v = LAYER_V[k]!;
    const len = LAYER_LEN[k]!;
    if (v >= 0) putByteOrCode(len, v);
    // A form's `+` for a space, encoded again (`%2B`).
    if (v === 0x2b) put(len, 1, 0x20);
  }
  if (p + 1 < end && (s[p + 1] === 0x75 || s[p + 1] === 0x55)) unitEscape(s, p, 2);
}

let named: Map<string, number> | null = null;
let bare: Set<string> | null = null;
let longestName = 0;

function names(): Map<string, number> {
  if (!named) {
    named = new Map();
    for (const entry of NAMED.split('|')) {
      const sp = entry.indexOf(' ');
      named.set(entry.slice(0, sp), parseInt(entry.slice(sp + 1), 16));
      longestName = Math.max(longestName, sp);
    }
    bare = new Set(BARE.split('|'));
  }
  return named;
}

function ampersand(s: Uint8Array, p: number): void {
  reference(s, p, p + 1);
  // Escaped again: `&amp;#43;`, `&amp;quot;`.
  if (p + 4 < end && s[p + 1] === 0x61 && s[p + 2] === 0x6d && s[p + 3] === 0x70 && s[p + 4] === 0x3b) reference(s, p, p + 5);
}

/**
 * Fills readings() with the ways the bytes at `p` (before `limit`) read as one character, other than the byte itself;
 * returns how many.
 */
export function readingsAt(s: Uint8Array, p: number, limit: number): number {
  count = 0;
  end = Math.min(limit, s.length);
  const c = s[p]!;
  if (c === 0x5c) backslash(s, p);
  else if (c === 0x25) percent(s, p);
  else if (c === 0x26) ampersand(s, p);
  else if (c === 0x3d /* = */) {
    const v = hexN(s, p + 1, 2);
    if (v >= 0) putByteOrCode(3, v);
  } else if (c === 0x2b) put(1, 1, 0x20);
  else if (c === 0x22 || c === 0x27) {
    // Doubled once or again (CSV of CSV: four).
    for (const n of [2, 4, 8]) {
      let k = 1;
      while (k < n && p + k < end && s[p + k] === c) k++;
      if (k === n) put(n, 1, c);
    }
    // A shell's quote inside single quotes: `'"'"'` and `'\''`.
    if (c === 0x27 && startsWith(s, p, SHELL_QUOTE)) put(5, 1, c);
    if (c === 0x27 && startsWith(s, p, SHELL_QUOTE_2)) put(4, 1, c);
  }
  if (HEX[c]! >= 0) {
    const v = hexN(s, p, 2);
    if (v >= 0) put(2, 1, v);
  }
  if (c === 0x5c || c === 0x25 || c === 0x26) stacked(s, p);
  return count;
}

/**
 * Readings whose own syntax was escaped again in another style (review, round 37: JSON inside an HTML attribute,
 * `\&quot;`; JSON in a URL, `%5C%22`, `%5Cu00e4`; HTML in a URL, `%26amp%3B`; Go's JSON of HTML, `\u0026#34;`; CSV of
 * JSON, `\""`): a backslash escape or a character reference whose introducer, escaped character, `#` or `;` is
 * itself spelled (syntaxAt), and a doubled quote whose quotes are.
 */
function stacked(s: Uint8Array, p: number): void {
  for (const [c, len] of syntaxAt(s, p, false)) {
    if (c === 0x5c && !plainPair(s, p, len)) backslashBody(s, p, p + len);
    else if (c === 0x26) reference(s, p, p + len);
    else if (c === 0x22 || c === 0x27) {
      for (const [d, more] of syntaxAt(s, p + len, true)) if (d === c) put(len + more, 1, c);
    }
  }
}

/** Whether the `len` bytes at `i` are `\\`: a backslash escaped by a backslash, backslash()'s own run. */
const plainPair = (s: Uint8Array, i: number, len: number) => len === 2 && s[i] === 0x5c;

/**
 * The body of a backslash escape whose introducer (a run of backslashes, or one spelled in another style: stacked())
 * ends at `q`: `u` (a surrogate pair repeats the whole introducer), `u{…}`, `U`, `x`, a control letter, octal, CSS's
 * hex, punctuation however spelled, a doubled quote; and a spelled backslash more (a run: `%5C%5Cu00e4`), up to four.
 */
function backslashBody(s: Uint8Array, p: number, q: number): void {
  if (q >= end) return;
  const b = s[q]!;
  if (q - p < 4 * 6) for (const [c, len] of syntaxAt(s, q, false)) if (c === 0x5c && !plainPair(s, q, len)) backslashBody(s, p, q + len);
  if (b === 0x75 /* u */) {
    unitEscape(s, p, q + 1 - p);
    if (q + 1 < end && s[q + 1] === 0x7b /* { */) {
      const n = digits(s, q + 2, 6, 16);
      if (n > 0 && q + 2 + n < end && s[q + 2 + n] === 0x7d) putCode(q + 3 + n - p, valueOf(s, q + 2, n, 16));
    }
  } else if (b === 0x55 /* U */) {
    const v = hexN(s, q + 1, 8);
    if (v >= 0) putCode(q + 9 - p, v);
  } else if (b === 0x78 /* x */) {
    const v = hexN(s, q + 1, 2);
    if (v >= 0) putByteOrCode(q + 3 - p, v);
  } else if (CONTROL[b]! !== 0) {
    // JSON's, C's and JavaScript's short escapes of control characters (`\t`, `\b`, `\f`, `\v`, `\a`, `\e`; review,
    // round 37: JSON.stringify writes U+0008 as `\b`); `b`, `f`, `a` and `e` also begin CSS's hex escapes, below.
    put(q + 1 - p, 1, CONTROL[b]!);
  }
  if (HEX[b]! >= 0) {
    // C's, Python's and JavaScript's octal, greedy to three digits.
    const o = digits(s, q, 3, 8);
    if (o > 0) {
      const v = valueOf(s, q, o, 8);
      if (v < 0x100) putByteOrCode(q + o - p, v);
    }
    // CSS's hex escape, greedy to six digits, with the space, tab or form feed that may end it (review, round 38:
    // `\22\f` was left). A line break may end it too, and is not read so: no spelling holds one (the timer's release
    // cuts at them), as documented.
    const h = digits(s, q, 6, 16);
    const v = valueOf(s, q, h, 16);
    putCode(q + h - p, v);
    if (q + h < end && (s[q + h] === 0x20 || s[q + h] === 0x09 || s[q + h] === 0x0c)) putCode(q + h + 1 - p, v);
  }
  // Punctuation, raw or spelled in another style (`\&quot;`, `\%22`), or a doubled quote (`\""`).
  for (const [c, len] of syntaxAt(s, q, true)) if (c >= 0x20 && c < 0x7f && !isAlnum(c)) put(q + len - p, 1, c);
  if (q + 1 < end && b === 0x22 && s[q + 1] === 0x22) put(q + 2 - p, 1, 0x22);
}

/**
 * A character reference whose `&` (raw, `&amp;` or spelled otherwise) ends at `q`: decimal or hex with any zeros,
 * with or without its `;`, or a name; its `#` and `;` raw or percent-encoded (`%26%23x27%3B`).
 */
function reference(s: Uint8Array, p: number, q: number): void {
  const ends = (at: number, cp: number, bare: boolean) => {
    if (bare) putCode(at - p, cp);
    const semi = percented(s, at, 0x3b);
    if (semi > 0) putCode(at + semi - p, cp);
  };
  const hash = percented(s, q, 0x23);
  if (hash > 0) {
    const h = q + hash;
    const hex = h < end && (s[h] === 0x78 || s[h] === 0x58);
    const at = hex ? h + 1 : h;
    const n = digits(s, at, 10, hex ? 16 : 10);
    if (n > 0) ends(at + n, valueOf(s, at, n, hex ? 16 : 10), true);
    return;
  }
  const table = names();
  let name = '';
  for (let len = 1; len <= longestName && q + len <= end && isAlnum(s[q + len - 1]!); len++) {
    name += String.fromCharCode(s[q + len - 1]!);
    const cp = table.get(name);
    if (cp !== undefined) ends(q + len, cp, bare!.has(name));
  }
}

/** How many bytes at `i` spell `c` raw or percent-encoded once to three times (`;`, `%3B`, `%253B`); 0 when they do not. */
function percented(s: Uint8Array, i: number, c: number): number {
  if (i >= end) return 0;
  if (s[i] === c) return 1;
  if (s[i] !== 0x25) return 0;
  for (let k = 0, n = percentLayers(s, i); k < n; k++) if (LAYER_V[k] === c) return LAYER_LEN[k]!;
  return 0;
}

/**
 * The ways the bytes at `i` spell one ASCII character of a reading's syntax: itself (where `raw`), percent-encoded,
 * as `\u00XX` or `\xXX`, escaped by a backslash, or as a character reference. [character, length] each.
 */
function syntaxAt(s: Uint8Array, i: number, raw: boolean): Array<[number, number]> {
  const options: Array<[number, number]> = [];
  if (i >= end) return options;
  const c = s[i]!;
  if (raw) options.push([c, 1]);
  if (c === 0x25) {
    // %XX, and %25 before it once or twice, as percent() reads them (a URL's query encoded again).
    for (let k = 0, n = percentLayers(s, i); k < n; k++) if (LAYER_V[k]! >= 0 && LAYER_V[k]! < 0x80) options.push([LAYER_V[k]!, LAYER_LEN[k]!]);
  } else if (c === 0x5c && i + 1 < end) {
    const b = s[i + 1]!;
    const v = b === 0x75 ? hexN(s, i + 2, 4) : b === 0x78 ? hexN(s, i + 2, 2) : -1;
    if (v >= 0 && v < 0x80) options.push([v, b === 0x75 ? 6 : 4]);
    if (b >= 0x20 && b < 0x7f && !isAlnum(b)) options.push([b, 2]);
  } else if (c === 0x26) {
    const at = count;
    reference(s, i, i + 1);
    // What reference() put: single ASCII characters.
    for (let o = at * 6; o < count * 6; o += 6) if (out[o + 1] === 1 && out[o + 2]! < 0x80) options.push([out[o + 2]!, out[o]!]);
    count = at;
  }
  return options;
}

