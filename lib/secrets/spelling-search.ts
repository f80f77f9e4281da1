// Finding a secret's value however a host spelled each of its characters:
// raw or escaped, each character in a style of its own (Go's JSON writes `\"`
// beside `\u0026`, an HTML template `&#34;` beside `&amp;`), as JSON, JavaScript,
// C, Python, CSS, HTML, XML, URLs, quoted-printable and hex write characters,
// and escaped again (a JSON text inside a JSON string, `&amp;#43;`, `%252B`);
// letters in either case. A list of whole forms cannot hold that (a value of n
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
// that much of a value (or all of a shorter one) is the place worked out
// again, byte by byte, to find where the value begins and whether it is whole.
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
if (LONGEST_READING >= RING) throw new Error('the ring is shorter than a reading');

/** Upper case to lower, for ASCII letters: a value is found in either case. */
/** 0: a byte read as itself only; 1: a hex digit (a pair of them reads as a byte); 2: a byte that begins an escape. */
const KIND = Uint8Array.from(READINGS, (r, b) => (r === 0 ? 0 : HEX_OF[b]! >= 0 ? 1 : 2));

const FOLD = Uint8Array.from({ length: 256 }, (_, b) => (b >= 0x41 && b <= 0x5a ? b + 32 : b));

export class SpellingSearch {
  private readonly values: Uint8Array[];
  /** masks[g * 256 + b]: the positions among value g's first PREFIX bytes whose byte is b (either case). */
  private readonly masks: Int32Array;
  /** Each value's last followed bit. */
  private readonly last: Int32Array;
  /** ring[place % RING]: the state of the value searched where readings end at that place. */
  private readonly ring = new Int32Array(RING);
  private readonly fulls: Array<Full | undefined> = [];

  constructor(values: Uint8Array[]) {
    if (values.some((v) => v.length === 0)) throw new Error('an empty value cannot be searched for');
    this.values = values.map((v) => Uint8Array.from(v, (b) => FOLD[b]!));
    const G = this.values.length;
    this.masks = new Int32Array(256 * G);
    this.last = new Int32Array(G);
    for (const [g, v] of this.values.entries()) {
      const n = Math.min(v.length, PREFIX);
      for (let k = 0; k < n; k++) {
        const b = v[k]!;
        for (const c of b >= 0x61 && b <= 0x7a ? [b, b - 32] : [b]) this.masks[g * 256 + c]! |= 1 << k;
      }
      this.last[g] = 1 << (n - 1);
    }
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
  find(src: Uint8Array, from = 0, limit = src.length): SpellingHit[] {
    const hits: SpellingHit[] = [];
    if (this.values.length === 0 || from >= limit) return hits;
    const ends = this.run(src, from, Math.min(src.length, limit + this.longest));
    const seen = new Set<string>();
    // The stretches around the places found, one a value where they overlap: each read once.
    for (const [group, lo, hi] of this.stretches(ends, from, src.length)) {
      for (const h of this.whole(src, from, lo, hi, group)) {
        const key = `${h.at}:${h.end}:${h.group}`;
        if (h.at < limit && !seen.has(key)) {
          seen.add(key);
          hits.push(h);
        }
      }
    }
    return hits.sort((p, q) => p.at - q.at || p.end - q.end || p.group - q.group);
  }

  /** For places where values' followed bytes end (pairs: place, value), the stretches that could hold them whole. */
  private stretches(ends: number[], from: number, size: number): Array<[number, number, number]> {
    const byGroup = new Map<number, Array<[number, number]>>();
    for (let i = 0; i < ends.length; i += 2) {
      const end = ends[i]!;
      const g = ends[i + 1]!;
      const n = this.values[g]!.length;
      const followed = Math.min(n, PREFIX);
      // The followed bytes may end inside the reading that ends at `end`.
      const lo = Math.max(from, end - SPELLED_PER_BYTE * followed - LONGEST_READING);
      const hi = Math.min(size, end + SPELLED_PER_BYTE * (n - followed));
      byGroup.set(g, [...(byGroup.get(g) ?? []), [lo, hi]]);
    }
    const out: Array<[number, number, number]> = [];
    for (const [g, list] of byGroup) {
      list.sort((a, b) => a[0] - b[0]);
      let [lo, hi] = list[0]!;
      for (const [l, h] of list.slice(1)) {
        if (l <= hi) hi = Math.max(hi, h);
        else {
          out.push([g, lo, hi]);
          [lo, hi] = [l, h];
        }
      }
      out.push([g, lo, hi]);
    }
    return out;
  }

  /**
   * The automaton over [from, to): each place where a value's followed bytes end, and which value (pairs, flat).
   * Every place costs its readings' word operations for each value, whatever the state and the values' bytes.
   */
  private run(src: Uint8Array, from: number, to: number): number[] {
    const found: number[] = [];
    for (let g = 0; g < this.values.length; g++) this.runOne(src, from, to, g, found);
    return found;
  }

  /** The automaton of value `g` over [from, to): one pass a value, as form-search.ts makes one a secret. */
  private runOne(text: Uint8Array, from: number, to: number, g: number, found: number[]): void {
    // A plain view (a Buffer's own class made each byte's read slower).
    const src = new Uint8Array(text.buffer, text.byteOffset, text.length);
    const masks = this.masks.subarray(g * 256, g * 256 + 256);
    const last = this.last[g]!;
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
      if ((x & last) !== 0) found.push(p + 1, g);
      const kind = KIND[c]!;
      if (kind === 0) continue;
      if (kind === 1) {
        // Two hex digits: a byte written in hex.
        const l = p + 1 < to ? HEX_OF[src[p + 1]!]! : -1;
        if (l < 0) continue;
        x = ((r << 1) | 1) & masks[(HEX_OF[c]! << 4) | l]!;
        ring[(p + 2) & RING_MASK]! |= x;
        if ((x & last) !== 0) found.push(p + 2, g);
        continue;
      }
      const n = readingsAt(src, p, to);
      const t = readings();
      for (let o = 0; o < 6 * n; o += 6) {
        const count = t[o + 1]!;
        x = ((r << 1) | 1) & masks[t[o + 2]!]!;
        // A reading's later bytes: no value begins inside it. The followed bytes may end inside it (a value longer
        // than PREFIX): looked at after each byte.
        let any = x;
        if (count > 1) any |= x = (x << 1) & masks[t[o + 3]!]!;
        if (count > 2) any |= x = (x << 1) & masks[t[o + 4]!]!;
        if (count > 3) any |= x = (x << 1) & masks[t[o + 5]!]!;
        ring[(p + t[o]!) & RING_MASK]! |= x;
        if ((any & last) !== 0) found.push(p + t[o]!, g);
      }
    }
  }

  /** Value g's automaton over all its bytes, forwards and backwards (made when a text first holds its followed bytes). */
  private full(g: number): Full {
    let f = this.fulls[g];
    if (!f) {
      const v = this.values[g]!;
      const words = Math.ceil(v.length / 32);
      const masks = (order: Uint8Array) => {
        const m = new Int32Array(256 * words);
        for (let k = 0; k < order.length; k++) {
          const b = order[k]!;
          for (const c of b >= 0x61 && b <= 0x7a ? [b, b - 32] : [b]) m[c * words + (k >> 5)]! |= 1 << (k & 31);
        }
        return m;
      };
      f = { words, forward: masks(v), backward: masks(v.slice().reverse()) };
      this.fulls[g] = f;
    }
    return f;
  }

  /**
   * Where value `group` is read whole within [lo, hi) (a stretch around places where its followed bytes end): each
   * place it ends, with the first place from `from` on it begins. The automaton over all of its bytes runs over every
   * reading of the stretch at a cost the value's bytes do not change (its first bytes may be public, as a JWT's
   * header is: how far a text matches past them must not show; found on the way, a first version worked it out
   * byte by byte); only an end found, the whole value, is worked back to its beginning.
   */
  private whole(src: Uint8Array, from: number, lo: number, hi: number, group: number): SpellingHit[] {
    const n = this.values[group]!.length;
    const { words: W, forward, backward } = this.full(group);
    const top = (n - 1) >> 5;
    const bit = 1 << ((n - 1) & 31);
    // ring[(place % RING) * W …]: the state where readings end at that place, as in runOne, over all of the value.
    const ring = new Int32Array(RING * W);
    const x = new Int32Array(W);
    const ends: number[] = [];
    const step = (p: number, len: number, count: number, t: Int32Array | number[], o: number) => {
      shiftInto(x, ring, (p & RING_MASK) * W, W, 1, forward, t[o]!);
      for (let k = 1; k < count; k++) shiftInto(x, x, 0, W, 0, forward, t[o + k]!);
      const to = ((p + len) & RING_MASK) * W;
      for (let w = 0; w < W; w++) ring[to + w]! |= x[w]!;
      if ((x[top]! & bit) !== 0) ends.push(p + len);
    };
    const one = [0];
    for (let p = lo; p < hi; p++) {
      const c = src[p]!;
      one[0] = c;
      step(p, 1, 1, one, 0);
      if (READINGS[c] === 1) {
        const k = readingsAt(src, p, hi);
        const t = readings();
        for (let o = 0; o < 6 * k; o += 6) step(p, t[o]!, t[o + 1]!, t, o + 2);
      }
      ring.fill(0, (p & RING_MASK) * W, (p & RING_MASK) * W + W);
    }
    const out: SpellingHit[] = [];
    for (const e of new Set(ends)) {
      // The whole value ends here: read backwards from here, the first place it begins.
      const start = Math.max(lo, e - SPELLED_PER_BYTE * n);
      const rs = readingsIn(src, start, e);
      const L = e - start + 1;
      const back = new Int32Array(L * W);
      let first = -1;
      for (let i = rs.length - 7; i >= 0; i -= 7) {
        const s = rs[i]! - start;
        const re = rs[i + 1]! - start;
        const count = rs[i + 2]!;
        shiftInto(x, back, re * W, W, re === L - 1 ? 1 : 0, backward, rs[i + 3 + count - 1]!);
        for (let k = count - 2; k >= 0; k--) shiftInto(x, x, 0, W, 0, backward, rs[i + 3 + k]!);
        for (let w = 0; w < W; w++) back[s * W + w]! |= x[w]!;
        if ((back[s * W + top]! & bit) !== 0 && start + s >= from) first = s;
      }
      if (first !== -1) out.push({ at: start + first, end: e, group });
    }
    return out;
  }
}

interface Full {
  words: number;
  forward: Int32Array;
  backward: Int32Array;
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

/** Every reading within [lo, hi), in order of where it begins: start, end, byte count, bytes (seven numbers each). */
function readingsIn(src: Uint8Array, lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let q = lo; q < hi; q++) {
    const c = src[q]!;
    out.push(q, q + 1, 1, c, 0, 0, 0);
    if (READINGS[c] === 0) continue;
    const n = readingsAt(src, q, hi);
    const r = readings();
    for (let o = 0; o < 6 * n; o += 6) out.push(q, q + r[o]!, r[o + 1]!, r[o + 2]!, r[o + 3]!, r[o + 4]!, r[o + 5]!);
  }
  return out;
}
