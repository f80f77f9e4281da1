// What changed in a repository profile since you trusted it: the text you
// trusted is kept ($STASHBASE_HOME/trusted/<sha256>.toml, written by
// stashbase, read back only as text), and a line diff of it against the new
// one is shown before the question, lines that add a host, a secret or a
// program marked: the prompt used to print the whole profile, where a new
// "evil.example" among forty lines was easy to miss.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { homePaths, stashbaseHome } from '../home.js';
import { printable } from '../util/printable.js';
import { readBackText } from '../readback/file.js';

/** Bytes kept of a trusted text; a longer one is not kept (a diff against part of it would mislead). */
const MAX_TEXT = 256 * 1024;

const trustedDir = (env: NodeJS.ProcessEnv) => join(homePaths(stashbaseHome(env)).trust, '..', 'trusted');

export function keepTrustedText(sha: string, text: string, env: NodeJS.ProcessEnv): void {
  if (!/^[0-9a-f]{64}$/.test(sha)) return;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length > MAX_TEXT) return;
  const dir = trustedDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `${sha}.${process.pid}.tmp`);
  writeFileSync(tmp, bytes, { mode: 0o600 });
  renameSync(tmp, join(dir, `${sha}.toml`));
}

/** The text trusted at `sha`, or null when it was not kept (trusted by an older stashbase). */
export function trustedText(sha: string, env: NodeJS.ProcessEnv): string | null {
  return /^[0-9a-f]{64}$/.test(sha) ? readBackText(join(trustedDir(env), `${sha}.toml`), MAX_TEXT) : null;
}

/** A line that only comments or spaces: every other line of a profile changes what it allows (a list's entry on a line of its own too). */
const INERT = /^\s*(#.*)?$/;

/** Lines removed (-) and added (+), in order, from a longest common subsequence; each that changes what the profile allows marked "!" ("+!", "-!"). */
export function lineDiff(before: string, after: string): string[] {
  const a = before.split('\n');
  const b = after.split('\n');
  if (a.length * b.length > 4_000_000) return [`  (too long to compare line by line: ${a.length} and ${b.length} lines)`];
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i++;
      j++;
    } else if (i < a.length && (j === b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      const line = a[i++] as string;
      out.push(`${INERT.test(line) ? '- ' : '-!'} ${printable(line, true)}`);
    } else {
      const line = b[j++] as string;
      out.push(`${INERT.test(line) ? '+ ' : '+!'} ${printable(line, true)}`);
    }
  }
  return out;
}
