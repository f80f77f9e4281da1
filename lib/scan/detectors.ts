// stashbase's own detectors, beside the rule set: the real values of the
// secrets a profile binds (exact match), and private key blocks of any kind.
import { PLACEHOLDER } from '../secrets/placeholder.js';
import { mask, maskBound } from './findings.js';
import type { Hit } from './unit.js';

export interface BoundSecret {
  /** The profile's name for it ([secrets.NAME]). */
  name: string;
  value: string;
}

/** Shorter values would match ordinary text; they are not searched (the scan says so). */
export const MIN_BOUND_LENGTH = 8;

export function boundSecretHits(text: string, secrets: BoundSecret[]): Hit[] {
  const hits: Hit[] = [];
  for (const s of secrets) {
    if (s.value.length < MIN_BOUND_LENGTH) continue;
    for (let i = text.indexOf(s.value); i !== -1; i = text.indexOf(s.value, i + s.value.length)) {
      hits.push({ start: i, end: i + s.value.length, rule: `bound-secret:${s.name}`, masked: maskBound(s.value) });
    }
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
