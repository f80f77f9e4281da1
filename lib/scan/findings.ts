// What a scan reports: where, which rule, and the match masked. The raw match
// never leaves the detector that found it: only `masked` is carried, printed
// and sent back to a sandbox.
import { KNOWN_PREFIX } from '../secrets/placeholder.js';
import { escaped, UNPRINTABLE } from '../util/printable.js';

// Tabs and newlines too: a finding is one line.
const VISIBLE = new RegExp(`[\\t\\n${UNPRINTABLE}]`, 'gu');

export interface Finding {
  file: string;
  line: number;
  rule: string;
  /** The match with all but a short prefix replaced by `*`. */
  masked: string;
  /** For --range: the commit that added the line. */
  commit?: string;
}

const MAX_SHOWN = 4;
const MAX_STARS = 24;

/**
 * Keeps a short prefix and masks the rest: a known token prefix (ghp_, AKIA,
 * sk-ant-api03-) and nothing more, else at most 4 characters and never more
 * than a quarter of the value, so a short secret shows one or none.
 */
export function mask(secret: string): string {
  const known = KNOWN_PREFIX.exec(secret)?.[1];
  const shown = known ?? secret.slice(0, Math.min(MAX_SHOWN, Math.floor(secret.length / 4)));
  const rest = secret.length - shown.length;
  return visible(shown) + '*'.repeat(Math.min(rest, MAX_STARS)) + (rest > MAX_STARS ? '…' : '');
}

/** A bound secret's real value: only the prefix its placeholder shows anyway. */
export function maskBound(secret: string): string {
  const known = KNOWN_PREFIX.exec(secret)?.[1] ?? '';
  const rest = secret.length - known.length;
  return known + '*'.repeat(Math.min(rest, MAX_STARS)) + (rest > MAX_STARS ? '…' : '');
}

/** Control characters spelled out: a finding must not drive the terminal that shows it. */
export function visible(s: string): string {
  return s.replace(VISIBLE, escaped);
}

export function formatFinding(f: Finding): string {
  return `${visible(f.file)}:${f.line} ${f.rule} ${f.masked}${f.commit ? ` (commit ${f.commit.slice(0, 12)})` : ''}`;
}

/** One finding per place, rule and match (a range can add the same line in two commits: the first is kept). */
export function dedupe(findings: Finding[]): Finding[] {
  const seen = new Set<string>();
  const out: Finding[] = [];
  for (const f of findings) {
    const key = `${f.file}\0${f.line}\0${f.rule}\0${f.masked}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(f);
  }
  return out;
}
