// Finding a secret's value however a host spelled each of its characters:
// raw or escaped, each character in a style of its own (Go's JSON writes `\"`
// beside `\u0026`, an HTML template `&#34;` beside `&amp;`), as JSON, JavaScript,
// C, Python, CSS, HTML, XML, URLs, quoted-printable and hex write characters,
// and escaped again (a JSON text inside a JSON string, `&amp;#43;`, `%252B`);
// letters in either case (past ASCII too, where both cases are as long in
// UTF-8). A list of whole forms cannot hold that (a value of n
// special characters has a dozen spellings of each: dozens to the n forms);
// this search takes every spelling of each character at each place at once.
//
// The text is read as a lattice: at each place, each way its bytes can be read
// as one character (lib/secrets/spellings.ts) leads to the place after it. A
// bit-parallel automaton (Shift-And) runs over it: bit k of a place's state says
// the value's first k+1 bytes end there, read some way. Each reading costs the
// same few word operations whatever the value's bytes and whatever the state:
// the time over a text depends on the text and on the values' lengths, never
// on what is in them (docs/proxy.md, *No decision visible in time*). The
// automaton follows each value's first PREFIX bytes; only where a text holds
// that much of a value (or all of a shorter one) is the stretch around it read
// again, by the same kind of automaton over the value's last PREFIX bytes, and
// only where that finds them too is the whole value worked back from its end,
// over all of its bytes, at a cost its bytes do not change either.
import { HEX_OF, LONGEST_READING, READINGS, SPELLED_PER_BYTE, readings, readingsAt } from './spellings.js';

export { SPELLED_PER_BYTE };

/** A value found whole: the bytes [at, end) read as it, and which value. */
export interface SpellingHit {
  at: number;
  end: number;
  group: number;
}

/** How many of a value's first bytes the automaton follows: its state is one word a value, whatever its length. */
const PREFIX = 32;
/** A place's state is needed until the longest reading from it has ended (LONGEST_READING + 1, rounded up to a power of two). */
const RING = 64;
const RING_MASK = RING - 1;
/** How many word operations a search spends working found ends back to where they begin (~0.1 s). */
const BACKWARD_BUDGET = 1 << 24;
if (LONGEST_READING >= RING) throw new Error('the ring is shorter than a reading');

/** 0: a byte read as itself only; 1: a hex digit (a pair of them reads as a byte); 2: a byte that begins an escape. */
const KIND = Uint8Array.from(READINGS, (r, b) => (r === 0 ? 0 : HEX_OF[b]! >= 0 ? 1 : 2));

/**
 * The bytes that may stand at each byte of a value: its own, and for a letter those of the same letter in the other
 * case where that is as long in UTF-8 (review, round 37: a host that upper-cased its error gave back `PÄSSWORT`).
 */
function alternatives(value: Uint8Array): number[][] {
  const out: number[][] = Array.from(value, (b) => [b]);
  for (let at = 0; at < value.length; ) {
    const size = utf8Size(value, at);
    if (size === 1 && value[at]! >= 0x80) {
      // Not UTF-8 here: the byte stands as it is.
      at += 1;
      continue;
    }
    const c = Buffer.from(value.subarray(at, at + size)).toString('utf8');
    for (const other of new Set([c.toLowerCase(), c.toUpperCase(), ...(SAME_LETTER.find((g) => g.includes(c)) ?? [])])) {
      const bytes = Buffer.from(other);
      if ([...other].length !== 1 || bytes.length !== size) continue;
      for (let i = 0; i < size; i++) if (!out[at + i]!.includes(bytes[i]!)) out[at + i]!.push(bytes[i]!);
    }
    at += size;
  }
  return out;
}

/** How many bytes the UTF-8 character at `at` takes: 1 for ASCII and for a byte that begins none. */
function utf8Size(v: Uint8Array, at: number): number {
  const b = v[at]!;
  const size = b >= 0xf0 && b < 0xf5 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 && b < 0xe0 ? 2 : 1;
  if (b < 0xc2 || b >= 0xf5) return 1;
  for (let i = 1; i < size; i++) if (at + i >= v.length || (v[at + i]! & 0xc0) !== 0x80) return 1;
  return size;
}

/** Letters with more than two forms that case mapping alone does not join (review, round 37: a final sigma). */
const SAME_LETTER = [['σ', 'ς', 'Σ'], ['µ', 'μ', 'Μ']];

/** masks[b * words + (k >> 5)] bit k: byte b may stand at place k of `places`. */
function masksOf(places: number[][], words: number): Int32Array {
  const m = new Int32Array(256 * words);
  for (const [k, bytes] of places.entries()) for (const b of bytes) m[b * words + (k >> 5)]! |= 1 << (k & 31);
  return m;
}

export class SpellingSearch {
  private readonly values: Uint8Array[];
  /** Each value's automata: its first PREFIX bytes, its last PREFIX bytes, and all of them read backwards. */
  private readonly automata: Automata[];
  /** ring[place % RING]: the state of the value searched where readings end at that place. */
  private readonly ring = new Int32Array(RING);

  constructor(values: Uint8Array[]) {
    if (values.some((v) => v.length === 0)) throw new Error('an empty value cannot be searched for');
    this.values = values.map((v) => Uint8Array.from(v));
    this.automata = this.values.map((v) => {
      const places = alternatives(v);
      const n = Math.min(v.length, PREFIX);
      const words = Math.ceil(v.length / 32);
      return {
        first: masksOf(places.slice(0, n), 1),
        last: masksOf(places.slice(v.length - n), 1),
        top: 1 << (n - 1),
        n: v.length,
        words,
        backward: masksOf(places.slice().reverse(), words),
      };
    });
  }

  /** The longest any value can be spelled: SPELLED_PER_BYTE bytes a byte of it. */
  get longest(): number {
    return SPELLED_PER_BYTE * Math.max(0, ...this.values.map((v) => v.length));
  }

  /**
   * Every value found whole, read from `from` on, beginning before `limit` and
   * ending within `src`: for each place it ends, the first place it begins.
   * In order of place, then end, then value.
   */
  find(text: Uint8Array, from = 0, limit = text.length): SpellingHit[] {
    const hits: SpellingHit[] = [];
    if (this.values.length === 0 || from >= limit) return hits;
    // A plain view (a Buffer's own class made each byte's read slower).
    const src = new Uint8Array(text.buffer, text.byteOffset, text.length);
    const to = Math.min(src.length, limit + this.longest);
    let budget = BACKWARD_BUDGET;
    for (const [g, v] of this.values.entries()) {
      const a = this.automata[g]!;
      const prefixes: number[] = [];
      this.automaton(src, from, to, a.first, a.top, 0, prefixes);
      if (prefixes.length === 0) continue;
      // Where the value ends, if anywhere: its first bytes' ends for a value no longer than them; else its last
      // bytes' ends, looked for only in the stretches around its first bytes' (one stretch where they overlap).
      let ends = prefixes;
      if (v.length > PREFIX) {
        ends = [];
        for (const [lo, hi] of stretches(prefixes, v.length, from, src.length)) this.automaton(src, lo, hi, a.last, a.top, 1, ends);
      }
      let before = -1;
      for (const end of ends.sort((p, q) => p - q)) {
        if (end === before) continue;
        before = end;
        const lo = Math.max(from, end - SPELLED_PER_BYTE * v.length);
        // Each end worked back costs ten bytes a byte of the value, a word a 32 of them: past the budget (a long value
        // a host echoes hundreds of times, one that repeats itself: review, round 37, minutes for one body), an end
        // stands for all it could hold, the most a spelling of the value can be before it.
        const cost = SPELLED_PER_BYTE * v.length * a.words;
        const at = budget >= cost ? this.beginning(src, lo, end, a) : lo;
        budget -= Math.min(budget, cost);
        if (at !== -1 && at < limit) hits.push({ at, end, group: g });
      }
    }
    return hits.sort((p, q) => p.at - q.at || p.end - q.end || p.group - q.group);
  }

  /**
   * A one-word automaton (masks, top bit) over the readings of [from, to): each place where its bytes end, in
   * `found`. Every reading costs the same word operations whatever the state and the value's bytes. `inner` 1 lets
   * its bytes begin inside a reading (a value's last bytes may begin in the middle of a character's), 0 not.
   */
  private automaton(src: Uint8Array, from: number, to: number, masks: Int32Array, last: number, inner: number, found: number[]): void {
    const ring = this.ring;
    ring.fill(0);
    // The state where the byte before ends (the byte read as itself), kept out of the ring: the next place reads it at once.
    let next = 0;
    for (let p = from; p < to; p++) {
      const c = src[p]!;
      const at = p & RING_MASK;
      const r = next | ring[at]!;
      ring[at] = 0;
      // The byte itself.
      let x = ((r << 1) | 1) & masks[c]!;
      next = x;
      if ((x & last) !== 0) found.push(p + 1);
      const kind = KIND[c]!;
      if (kind === 0) continue;
      if (kind === 1) {
        // Two hex digits: a byte written in hex.
        const l = p + 1 < to ? HEX_OF[src[p + 1]!]! : -1;
        if (l < 0) continue;
        x = ((r << 1) | 1) & masks[(HEX_OF[c]! << 4) | l]!;
        ring[(p + 2) & RING_MASK]! |= x;
        if ((x & last) !== 0) found.push(p + 2);
        continue;
      }
      const n = readingsAt(src, p, to);
      const t = readings();
      for (let o = 0; o < 6 * n; o += 6) {
        const count = t[o + 1]!;
        x = ((r << 1) | 1) & masks[t[o + 2]!]!;
        // A reading's later bytes: the value's first bytes do not begin inside it, and may end inside it (a value
        // longer than PREFIX): looked at after each byte.
        let any = x;
        if (count > 1) any |= x = ((x << 1) | inner) & masks[t[o + 3]!]!;
        if (count > 2) any |= x = ((x << 1) | inner) & masks[t[o + 4]!]!;
        if (count > 3) any |= x = ((x << 1) | inner) & masks[t[o + 5]!]!;
        ring[(p + t[o]!) & RING_MASK]! |= x;
        if ((any & last) !== 0) found.push(p + t[o]!);
      }
    }
  }

  /**
   * The first place in [lo, end) from which the whole value reads up to `end`, or -1: an automaton over all of its
   * bytes, read backwards from `end` (its state `words` words, a fixed number of word operations a reading).
   */
  private beginning(src: Uint8Array, lo: number, end: number, a: Automata): number {
    const { words: W, n } = a;
    const top = (n - 1) >> 5;
    const bit = 1 << ((n - 1) & 31);
    // back[(place % RING) * W …]: the value's last bytes read from that place up to `end`.
    const back = new Int32Array(RING * W);
    const x = new Int32Array(W);
    let first = -1;
    for (let s = end - 1; s >= lo; s--) {
      // No reading from here reads a state past RING - 1 places on: that slot is free for this place's.
      const slot = (s & RING_MASK) * W;
      back.fill(0, slot, slot + W);
      const c = src[s]!;
      this.backwards(back, x, W, s, s + 1, end, 1, c, 0, 0, 0, a.backward);
      if (READINGS[c] === 1) {
        const k = readingsAt(src, s, end);
        const t = readings();
        for (let o = 0; o < 6 * k; o += 6) this.backwards(back, x, W, s, s + t[o]!, end, t[o + 1]!, t[o + 2]!, t[o + 3]!, t[o + 4]!, t[o + 5]!, a.backward);
      }
      if ((back[slot + top]! & bit) !== 0) first = s;
    }
    return first;
  }

  /** One reading [s, e) of `count` bytes, taken backwards into the state at `s`. */
  private backwards(back: Int32Array, x: Int32Array, W: number, s: number, e: number, end: number, count: number, b0: number, b1: number, b2: number, b3: number, masks: Int32Array): void {
    const bytes = [b0, b1, b2, b3];
    shiftInto(x, back, (e & RING_MASK) * W, W, e === end ? 1 : 0, masks, bytes[count - 1]!);
    for (let k = count - 2; k >= 0; k--) shiftInto(x, x, 0, W, 0, masks, bytes[k]!);
    const slot = (s & RING_MASK) * W;
    for (let w = 0; w < W; w++) back[slot + w]! |= x[w]!;
  }
}

interface Automata {
  first: Int32Array;
  last: Int32Array;
  /** The top bit of the first and last automata. */
  top: number;
  /** The value's length, and the words of a state over all of it. */
  n: number;
  words: number;
  backward: Int32Array;
}

/**
 * The stretches around the places where a value's first bytes end (in any order) that could hold the value whole,
 * merged where they overlap: each read once, whatever the number of places.
 */
function stretches(ends: number[], n: number, from: number, size: number): Array<[number, number]> {
  const followed = Math.min(n, PREFIX);
  const out: Array<[number, number]> = [];
  for (const end of ends.sort((p, q) => p - q)) {
    // The followed bytes may end inside the reading that ends at `end`.
    const lo = Math.max(from, end - SPELLED_PER_BYTE * followed - LONGEST_READING);
    const hi = Math.min(size, end + SPELLED_PER_BYTE * (n - followed));
    const prev = out[out.length - 1];
    if (prev && lo <= prev[1]) prev[1] = Math.max(prev[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

/** dst = ((src[at…] << 1) | inject) & masks[byte]: a state of `W` words read one byte further. */
function shiftInto(dst: Int32Array, src: Int32Array, at: number, W: number, inject: number, masks: Int32Array, byte: number): void {
  let carry = inject;
  const m = byte * W;
  for (let w = 0; w < W; w++) {
    const v = src[at + w]!;
    dst[w] = ((v << 1) | carry) & masks[m + w]!;
    carry = v >>> 31;
  }
}
