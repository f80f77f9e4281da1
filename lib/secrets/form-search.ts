// Finding secrets' values (in any of the forms scrubbing and the guards look
// for) in bytes the agent chooses, at a cost that never depends on the
// values' bytes. A string search (Boyer-Moore-Horspool, as V8's and Node's
// are) skips ahead by tables made of the needle's own bytes: the time it took
// over a body of an agent's pattern ("K1#" repeated) told where each of its
// characters last occurs in the secret (found in review, 20 ms over 16 MiB).
//
// Here every place of the text costs the same: a rolling hash of the window of
// bytes starting there (a polynomial with a random multiplier per search, so
// the agent cannot aim at it), looked up in a table of the forms' hashes; only a
// whole hash that matches leads to a comparison, itself of every byte of the
// form, whatever matches. A window covers a whole form, or (a group's
// `window`) its first bytes when the form is longer: as many as the value
// has, which in a base64 form stand for three quarters of its bytes and in a
// percent-encoded one for a third and more, a fifth encoded twice (a comparison more is paid only
// where the text already holds that much of the value, in that form). The
// number of passes over a text is the number of groups, which the caller fixes
// by the secrets alone (one each), never by what is in them.
import { randomBytes } from 'node:crypto';

export interface FormGroup {
  /** How many leading bytes of each form the hash covers: at most the shortest form's length. */
  window: number;
  forms: Uint8Array[];
  /** How many forms the table is sized for (at least the forms'): a size that does not tell how many there are. */
  capacity?: number;
}

/** A whole form found: where it begins, its group, and its index there. */
export interface FormHit {
  at: number;
  group: number;
  form: number;
}

interface Table {
  window: number;
  /** The multiplier to the power `window`. */
  pow: number;
  /** The odd multiplier that spreads a hash's bits before its top bits pick its slot. */
  mix: number;
  shift: number;
  /** Two hashes a slot (a slot of none holds 0, which only a hash of 0 matches; the forms' list then has none). */
  slots: Int32Array;
  byHash: Map<number, number[]>;
  forms: Uint8Array[];
}

/** Reused between searches (one runs at a time: they are synchronous). */
let prefix = new Int32Array(1024);

function prefixOf(n: number): Int32Array {
  if (prefix.length < n + 1) prefix = new Int32Array(Math.max(n + 1, prefix.length * 2));
  return prefix;
}

function hashOf(bytes: Uint8Array, len: number, b: number): number {
  let h = 0;
  for (let i = 0; i < len; i++) h = (Math.imul(h, b) + bytes[i]! + 1) | 0;
  return h;
}

/** h[k] = the hash of the text's first k bytes from `from` (a byte counted as itself plus one, so zeros count). */
function prefixOfBytes(h: Int32Array, src: Uint8Array, from: number, b: number): void {
  let x = 0;
  h[0] = 0;
  for (let i = from, k = 1; i < src.length; i++, k++) h[k] = x = (Math.imul(x, b) + src[i]! + 1) | 0;
}

function prefixOfText(h: Int32Array, src: string, from: number, b: number): void {
  let x = 0;
  h[0] = 0;
  for (let i = from, k = 1; i < src.length; i++, k++) h[k] = x = (Math.imul(x, b) + src.charCodeAt(i) + 1) | 0;
}

/** The first place from `i` before `last` whose window's hash is in a slot; -1 when none. The same work at every place. */
function nextCandidate(h: Int32Array, i: number, last: number, w: number, pow: number, mix: number, shift: number, slots: Int32Array): number {
  for (; i < last; i++) {
    const v = (h[i + w]! - Math.imul(h[i]!, pow)) | 0;
    const s = (Math.imul(v, mix) >>> shift) << 1;
    if ((slots[s] === v) || (slots[s + 1] === v)) return i;
  }
  return -1;
}

/** Every byte of the form compared, whatever differs first. */
function sameAt(src: Uint8Array | string, at: number, form: Uint8Array): boolean {
  let d = 0;
  if (typeof src === 'string') for (let k = 0; k < form.length; k++) d |= src.charCodeAt(at + k) ^ form[k]!;
  else for (let k = 0; k < form.length; k++) d |= src[at + k]! ^ form[k]!;
  return d === 0;
}

export class FormSearch {
  private readonly b: number;
  private readonly tables: Table[];

  constructor(groups: FormGroup[]) {
    for (let tries = 0; ; tries++) {
      // Odd multipliers: every byte of a window counts in its hash, and every bit of the hash in its slot (forms whose
      // windows differ only in their last byte, `%2` `%C` `%c`, have hashes a few units apart: by their top bits alone
      // three shared a slot whatever the multiplier, and no table was ever made; review, round 35).
      const random = randomBytes(8);
      const b = random.readInt32LE(0) | 1;
      const mix = random.readInt32LE(4) | 1;
      // More slots after many tries: a table is always made.
      const tables = groups.map((g) => table(g, b, mix, tries >> 4));
      if (tables.every((t) => t !== null)) {
        this.b = b;
        this.tables = tables as Table[];
        return;
      }
    }
  }

  /** Whether any form occurs whole in `src` (Latin-1 text: a character per byte). */
  has(src: Uint8Array | string): boolean {
    return this.find(src).length > 0;
  }

  /**
   * Every whole form beginning at `from` or after and before `limit`, and
   * ending within `src`; in order of place, then group, then form.
   */
  find(src: Uint8Array | string, from = 0, limit = src.length): FormHit[] {
    const n = src.length;
    const hits: FormHit[] = [];
    if (this.tables.length === 0 || from >= n) return hits;
    const h = prefixOf(n - from);
    if (typeof src === 'string') prefixOfText(h, src, from, this.b);
    else prefixOfBytes(h, src, from, this.b);
    for (let g = 0; g < this.tables.length; g++) {
      const t = this.tables[g] as Table;
      const last = Math.min(limit, n - t.window + 1) - from;
      // The places whose window's hash is one of the forms' (rare): each then compared whole.
      let i = -1;
      while ((i = nextCandidate(h, i + 1, last, t.window, t.pow, t.mix, t.shift, t.slots)) !== -1) {
        const v = (h[i + t.window]! - Math.imul(h[i]!, t.pow)) | 0;
        for (const f of t.byHash.get(v) ?? []) {
          const form = t.forms[f]!;
          if (from + i + form.length <= n && sameAt(src, from + i, form)) hits.push({ at: from + i, group: g, form: f });
        }
      }
    }
    if (this.tables.length > 1 && hits.length > 1) hits.sort((p, q) => p.at - q.at || p.group - q.group || p.form - q.form);
    return hits;
  }
}

const cached = new WeakMap<object, FormSearch>();

/** The search made once for `key` (a run's secrets, a tunnel's needles), from `groups` the first time. */
export function searchFor(key: object, groups: () => FormGroup[]): FormSearch {
  let s = cached.get(key);
  if (!s) {
    s = new FormSearch(groups());
    cached.set(key, s);
  }
  return s;
}

/** A group's table, or null when three of its hashes share a slot (another multiplier is drawn). */
function table(g: FormGroup, b: number, mix: number, more: number): Table | null {
  const w = g.window;
  if (!Number.isInteger(w) || w < 1 || g.forms.some((f) => f.length < w)) throw new Error(`a form shorter than its group's window (${w})`);
  let pow = 1;
  for (let i = 0; i < w; i++) pow = Math.imul(pow, b);
  // At least four slots a form (more after many tries): the top bits of the mixed 32-bit hash pick the slot.
  let bits = 6;
  while (1 << bits < 4 * Math.max(g.forms.length, g.capacity ?? 0)) bits++;
  bits = Math.min(bits + more, 24);
  const slots = new Int32Array(2 << bits);
  const used = new Uint8Array(1 << bits);
  const byHash = new Map<number, number[]>();
  for (const [i, f] of g.forms.entries()) {
    const v = hashOf(f, w, b);
    const list = byHash.get(v);
    if (list) {
      list.push(i);
      continue;
    }
    byHash.set(v, [i]);
    const s = Math.imul(v, mix) >>> (32 - bits);
    if (used[s]! >= 2) return null;
    slots[(s << 1) + used[s]!] = v;
    used[s]!++;
  }
  // A slot with room holds 0: a window hashing to 0 there is looked up and finds no form unless one hashes to 0.
  return { window: w, pow, mix, shift: 32 - bits, slots, byHash, forms: g.forms };
}
