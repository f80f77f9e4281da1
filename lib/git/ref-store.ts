// The refs of a git directory in git's "files" format, read by stashbase
// itself: the loose refs under refs/ and the packed-refs file, no link
// followed, no special file opened, every name and value checked, the walk
// bounded. What does not parse is not a ref: it is a problem, named.
import { type Dirent, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readBack } from '../readback/file.js';
import { OID, validRefName } from './refname.js';

export type RefValue = { kind: 'oid'; oid: string } | { kind: 'symref'; target: string };

export interface RefStore {
  refs: Map<string, RefValue>;
  /** What was there but is no ref (a link, a FIFO, a malformed file or name), each named. */
  problems: string[];
  /** The walk stopped at its bound: the refs are not all known. */
  incomplete: boolean;
}

/** Loose refs and the entries walked to find them: far beyond any real repository's. */
export const MAX_REF_ENTRIES = 200_000;
const MAX_LOOSE_BYTES = 4096;
const MAX_PACKED_BYTES = 256 << 20;

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A loose ref's or HEAD's bytes as text: UTF-8, as git writes the names it is given and as the refs' own names are
 * read (review, round 35: read as Latin-1, a branch `feat©` in HEAD named no ref the run had and was refused); bytes
 * that are not UTF-8 are no ref's value ('').
 */
export function refFileText(data: Buffer): string {
  try {
    return UTF8.decode(data);
  } catch {
    return '';
  }
}

/** The value of a loose ref or of HEAD: an object id, or "ref: <name>" (null when it is neither). */
export function parseRefFile(text: string): RefValue | null {
  const line = text.endsWith('\n') ? text.slice(0, -1) : text;
  if (OID.test(line)) return { kind: 'oid', oid: line };
  if (line.startsWith('ref: ')) {
    const target = line.slice(5);
    if (validRefName(target)) return { kind: 'symref', target };
  }
  return null;
}

/** packed-refs: "<oid> <name>" lines, "^<oid>" peeled lines, a "#" header. */
export function parsePackedRefs(text: string, into: Map<string, RefValue>, problems: string[]): void {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const [i, line] of lines.entries()) {
    if (i === 0 && line.startsWith('# pack-refs with:')) continue;
    if (line.startsWith('^') && OID.test(line.slice(1))) continue;
    const sp = line.indexOf(' ');
    const oid = line.slice(0, sp);
    const name = line.slice(sp + 1);
    if (sp < 0 || !OID.test(oid) || !validRefName(name)) {
      problems.push(`packed-refs line ${i + 1} (not a ref)`);
      continue;
    }
    into.set(name, { kind: 'oid', oid });
  }
}

/** The refs of the git directory `gitDir` (loose ones win over packed ones, as in git). */
export function readRefStore(gitDir: string): RefStore {
  const refs = new Map<string, RefValue>();
  const problems: string[] = [];
  const packed = readBack(join(gitDir, 'packed-refs'), MAX_PACKED_BYTES);
  if (packed.ok) parsePackedRefs(packed.data.toString('utf8'), refs, problems);
  else if (packed.why !== 'missing') problems.push(`packed-refs (${packed.why})`);
  let seen = 0;
  let incomplete = false;
  const walk = (dir: string, name: string) => {
    let list: Dirent[];
    try {
      list = readdirSync(dir, { withFileTypes: true });
    } catch {
      problems.push(`${name} (unreadable)`);
      return;
    }
    for (const e of list) {
      if (++seen > MAX_REF_ENTRIES) {
        incomplete = true;
        return;
      }
      const ref = `${name}/${e.name}`;
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        walk(path, ref);
        if (incomplete) return;
        continue;
      }
      // Git's own leftovers of an interrupted write are not refs.
      if (e.isFile() && e.name.endsWith('.lock')) continue;
      if (!e.isFile()) {
        problems.push(`${ref} (${e.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'})`);
        continue;
      }
      if (!validRefName(ref)) {
        problems.push(`${JSON.stringify(ref)} (not a valid ref name)`);
        continue;
      }
      const r = readBack(path, MAX_LOOSE_BYTES);
      const value = r.ok ? parseRefFile(refFileText(r.data)) : null;
      if (value === null) problems.push(`${ref} (${r.ok ? 'not a ref' : r.why})`);
      else refs.set(ref, value);
    }
  };
  walk(join(gitDir, 'refs'), 'refs');
  // packed-refs counts too: a flood of refs is a flood wherever it is written.
  if (refs.size > MAX_REF_ENTRIES) incomplete = true;
  return { refs, problems, incomplete };
}

/** The same refs with the same values. */
export function sameRefs(a: Map<string, RefValue>, b: Map<string, RefValue>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (!w || !sameValue(v, w)) return false;
  }
  return true;
}

export const sameValue = (a: RefValue | null | undefined, b: RefValue | null | undefined): boolean =>
  a == null || b == null ? a == b : a.kind === 'oid' ? b.kind === 'oid' && a.oid === b.oid : b.kind === 'symref' && a.target === b.target;
