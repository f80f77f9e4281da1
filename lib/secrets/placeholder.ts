// Per-run placeholders for bound secrets: the agent sees these, never the real
// value. A placeholder keeps the real value's visible prefix (ghp_, sk-ant-, …)
// and length where that leaves enough randomness, so client-side format checks
// still pass, and carries a marker that makes it recognisable in logs.
import { TOKEN_PREFIXES } from '../env-names.js';
import { randomBytes } from '../util/random.js';
import { secretValue } from './sources.js';
import type { SecretBinding } from '../profile/types.js';

const PREFIXES = TOKEN_PREFIXES;
/** The visible prefixes a placeholder keeps (and the secret scan shows of a bound secret's value). */
export const KNOWN_PREFIX = new RegExp(`^(${PREFIXES})`);
const MARKER = 'SBPH';
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const MIN_RANDOM = 20;

function randomText(n: number): string {
  const bytes = randomBytes(n);
  let out = '';
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return out;
}

/**
 * Text with a placeholder's shape: a known prefix or none, the marker, then at
 * least MIN_RANDOM letters and digits (the secret scan does not report these).
 */
export const PLACEHOLDER = new RegExp(`(?:${PREFIXES})?${MARKER}[A-Za-z0-9]{${MIN_RANDOM},}`);

export function makePlaceholder(real: string): string {
  const prefix = KNOWN_PREFIX.exec(real)?.[1] ?? '';
  const length = Math.max(real.length, prefix.length + MARKER.length + MIN_RANDOM);
  return prefix + MARKER + randomText(length - prefix.length - MARKER.length);
}

export function makePlaceholders(secrets: Record<string, SecretBinding>, env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, s] of Object.entries(secrets)) out[name] = makePlaceholder(secretValue(s, env));
  return out;
}
