// stashbase's own detectors, beside the rule set: the real values of the
// secrets a profile binds (exact match), and private key blocks of any kind.
import { PLACEHOLDER } from '../secrets/placeholder.js';
import { searchFor } from '../secrets/form-search.js';
import { mask, maskBound } from './findings.js';
import type { Hit } from './unit.js';

export interface BoundSecret {
  /** The profile's name for it ([secrets.NAME]). */
  name: string;
  value: string;
}

/** Shorter values would match ordinary text; they are not searched (the scan says so). */
export const MIN_BOUND_LENGTH = 8;

/**
 * Where each bound secret's value occurs whole, not overlapping itself, at a
 * cost its bytes do not change (lib/secrets/form-search.ts: one pass a secret
 * over the text's UTF-8 bytes; review, round 34: a string search's skip table
 * is made of the value, and the time a scan of the agent's files took told
 * where each character last occurs in it, as the proxy's did in round 26).
 */
export function boundSecretHits(text: string, secrets: BoundSecret[]): Hit[] {
  const searched = secrets.filter((s) => s.value.length >= MIN_BOUND_LENGTH);
  if (searched.length === 0 || text.length === 0) return [];
  const search = searchFor(secrets, () => searched.map((s) => {
    const form = Buffer.from(s.value, 'utf8');
    return { window: form.length, forms: [form] };
  }));
  const bytes = Buffer.from(text, 'utf8');
  const hits: Hit[] = [];
  const ends = new Array<number>(searched.length).fill(0);
  // Back to the text's own places, counted on from the last hit (in order of place): a found value starts and ends on
  // whole characters, its own bytes being UTF-8's.
  let byte = 0;
  let at = 0;
  for (const f of search.find(bytes)) {
    const s = searched[f.group]!;
    if (f.at < ends[f.group]!) continue;
    ends[f.group] = f.at + Buffer.byteLength(s.value, 'utf8');
    at += bytes.toString('utf8', byte, f.at).length;
    byte = f.at;
    hits.push({ start: at, end: at + s.value.length, rule: `bound-secret:${s.name}`, masked: maskBound(s.value) });
  }
  return hits;
}

// The armour line of any PEM or OpenSSH private key (RSA, EC, DSA, OPENSSH,
// ENCRYPTED, PGP ... BLOCK), followed on the next line by key material or the
// headers of an encrypted key. A header alone ("-----BEGIN PRIVATE KEY-----"
// then "..." in documentation) is not a key.
const PRIVATE_KEY = /-----BEGIN ((?:[A-Z0-9]+ ){0,3})PRIVATE KEY( BLOCK)?-----[ \t]*\r?\n[ \t]*(?:[A-Za-z0-9+/=]{16,}|Proc-Type:|Version:|Comment:)/g;

export function privateKeyHits(text: string): Hit[] {
  if (!text.includes('PRIVATE KEY')) return [];
  const hits: Hit[] = [];
  for (const m of text.matchAll(PRIVATE_KEY)) {
    const header = `-----BEGIN ${m[1] ?? ''}PRIVATE KEY${m[2] ?? ''}-----`;
    hits.push({ start: m.index, end: m.index + header.length, rule: 'private-key', masked: header });
  }
  return hits;
}

/** A rule set's match that is a stashbase placeholder (a per-run stand-in, not a secret). */
export function isPlaceholder(match: string): boolean {
  return PLACEHOLDER.test(match);
}

export { mask };
