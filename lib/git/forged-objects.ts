// Objects a run wrote in a git directory of the tree whose content is not the
// object their name says (found in review: in a repository nested in the
// folder the agent worked in, a loose object of `master:build.sh` rewritten
// with another script; git never checks a loose object's content against its
// name when it reads one, so your next `git checkout master` wrote the agent's
// script under a commit you had reviewed). Loose objects are inflated and
// hashed here; a pack the run wrote or changed is checked by `git
// verify-pack`, which names every object from its content again. Read only,
// never following a link (links there are gitDirLink's findings).
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, rmSync } from 'node:fs';
import { readBack } from '../readback/file.js';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { probe } from '../exec.js';
import { SAFE_ENV } from '../../templates/git.js';
import { repoFormat } from './run-git-dir.js';

/** What one check reads of loose objects at most, and verifies of packs: past it, the repository is unplugged all the same (an agent's junk must not buy a forgery a pass). */
export const MAX_VERIFIED_BYTES = 512 << 20;
/** What one loose object may inflate to. */
const MAX_OBJECT_BYTES = 256 << 20;
const VERIFY_PACK_MS = 120_000;

export type ObjectCheck = { forged: string } | null;

/**
 * What else has git show another object under a name you trust, the run's doing: a replace ref (loose, or in
 * packed-refs), info/grafts, or an alternates file naming another store (found in review: a replace ref for
 * `master:build.sh`'s blob passed the object check, and your checkout wrote the agent's script). Named by its path in
 * the git directory, or null.
 */
export function substitutes(gitDir: string, counts: (path: string) => boolean): string | null {
  for (const rel of ['info/grafts', 'objects/info/alternates']) if (lstatSync(join(gitDir, rel), { throwIfNoEntry: false }) !== undefined && counts(join(gitDir, rel))) return `${rel} (git reads other objects in place of yours through it)`;
  const replace = join(gitDir, 'refs', 'replace');
  const walk = (dir: string, rel: string): string | null => {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return null;
    }
    for (const e of entries) {
      const full = join(dir, e);
      if (counts(full)) return `${rel}/${e} (a replace ref: git shows another object in place of the one it names)`;
      if (lstatSync(full, { throwIfNoEntry: false })?.isDirectory()) {
        const below = walk(full, `${rel}/${e}`);
        if (below !== null) return below;
      }
    }
    return null;
  };
  const loose = counts(replace) && lstatSync(replace, { throwIfNoEntry: false }) !== undefined ? 'refs/replace (a folder of replace refs: git shows other objects in place of those they name)' : walk(replace, 'refs/replace');
  if (loose !== null) return loose;
  const packed = join(gitDir, 'packed-refs');
  if (counts(packed)) {
    const read = readFile(packed, 64 << 20);
    if (read === 'big' || (read !== null && /\srefs\/replace\//.test(read.data.toString('latin1')))) return 'packed-refs (it holds replace refs: git shows other objects in place of those they name)';
  }
  return null;
}

/**
 * Caches git reads objects and history through without checking them against the objects (a commit-graph's parents, a
 * multi-pack index's offsets, a bitmap, a reverse index), which the run wrote: removed, git works without them and
 * writes them again (its gc). What was removed, and what could not be, by path in the git directory.
 */
export function dropCaches(gitDir: string, counts: (path: string) => boolean): { removed: string[]; left: string[] } {
  const removed: string[] = [];
  const left: string[] = [];
  const drop = (rel: string) => {
    const full = join(gitDir, rel);
    const st = lstatSync(full, { throwIfNoEntry: false });
    if (st === undefined || !counts(full)) return;
    try {
      rmSync(full, { recursive: st.isDirectory(), force: true });
      removed.push(rel);
    } catch (e) {
      left.push(`${rel} (${(e as NodeJS.ErrnoException).code ?? 'not removed'})`);
    }
  };
  drop('objects/info/commit-graph');
  drop('objects/info/commit-graphs');
  drop('objects/pack/multi-pack-index');
  drop('objects/pack/multi-pack-index.d');
  let packs: string[] = [];
  try {
    packs = readdirSync(join(gitDir, 'objects', 'pack'));
  } catch {
    // none
  }
  for (const n of packs) if (/^pack-[0-9a-f]{40,64}\.(bitmap|rev)$/.test(n)) drop(`objects/pack/${n}`);
  return { removed, left };
}

/**
 * The first object under `gitDir/objects` that `counts` (written during the run) and that is not what its name says,
 * as `objects/…` with why (past MAX_VERIFIED_BYTES: unchecked, said so); null when all is as named.
 */
export function forgedObject(git: string, gitDir: string, counts: (path: string) => boolean): ObjectCheck {
  const objects = join(gitDir, 'objects');
  const algorithm = repoFormat(gitDir).objectFormat === 'sha256' ? 'sha256' : 'sha1';
  const hexLength = algorithm === 'sha256' ? 64 : 40;
  let budget = MAX_VERIFIED_BYTES;
  const list = (dir: string): string[] => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  };
  for (const sub of list(objects)) {
    if (!/^[0-9a-f]{2}$/.test(sub)) continue;
    for (const name of list(join(objects, sub))) {
      if (name.length !== hexLength - 2 || !/^[0-9a-f]+$/.test(name)) continue;
      const full = join(objects, sub, name);
      if (!counts(full)) continue;
      const rel = `objects/${sub}/${name}`;
      const read = readFile(full, Math.min(budget, MAX_OBJECT_BYTES));
      if (read === null) continue; // not a regular file: gitDirLink's to name
      if (read === 'big') return { forged: `${rel} and what follows (more than ${MAX_VERIFIED_BYTES >> 20} MiB of objects written in the run, past what stashbase checks: git fsck there first)` };
      budget -= read.data.length;
      let content: Buffer;
      try {
        content = inflateSync(read.data, { maxOutputLength: MAX_OBJECT_BYTES });
      } catch {
        return { forged: `${rel} (${others(read.links)}not an object git can read)` };
      }
      if (createHash(algorithm).update(content).digest('hex') !== sub + name) return { forged: `${rel} (${others(read.links)}its content is another object's)` };
    }
  }
  // Every index git would load, whatever its name (found in review: git takes any X.idx beside an X.pack, and looks in
  // packs first, so an evil.idx listing the agent's blob under a trusted name passed a check of pack-<hex> names alone).
  const packDir = join(objects, 'pack');
  for (const entry of list(packDir)) {
    if (!entry.endsWith('.idx')) continue;
    const base = entry.slice(0, -'.idx'.length);
    const name = `${base}.pack`;
    const pack = join(packDir, name);
    const idx = join(packDir, entry);
    if (!counts(pack) && !counts(idx)) continue;
    const st = lstatSync(pack, { throwIfNoEntry: false });
    if (st === undefined) continue; // an index without its pack: git loads nothing of it
    if (!st.isFile() || !lstatSync(idx, { throwIfNoEntry: false })?.isFile()) return { forged: `objects/pack/${entry} (a pack or index that is no regular file)` };
    if (st.size > budget) return { forged: `objects/pack/${name} and what follows (more than ${MAX_VERIFIED_BYTES >> 20} MiB of objects written in the run, past what stashbase checks: git fsck there first)` };
    budget -= st.size;
    // No repository: verify-pack reads the pack and its index alone, and runs nothing a config could name.
    const r = probe({ file: git, args: ['verify-pack', idx], cwd: '/', env: { ...SAFE_ENV, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_DIR: '/nonexistent' } }, VERIFY_PACK_MS);
    if (r.code !== 0) return { forged: `objects/pack/${name} (${st.nlink > 1 ? 'a file with other names, changed in all of them: ' : ''}git verify-pack refuses it: ${(r.stderr.trim().split('\n').at(-1) ?? `exit ${r.code}`).slice(0, 160)})` };
  }
  return null;
}

const others = (links: number) => (links > 1 ? 'a file with other names (a local clone\'s), changed in all of them: ' : '');

/** A regular file's bytes (readBack: no link followed, no FIFO waited on), 'big' past `max`, null when it is no regular file; its other names counted. */
function readFile(path: string, max: number): { data: Buffer; links: number } | 'big' | null {
  const r = readBack(path, max);
  if (!r.ok) return r.why === 'too large' ? 'big' : null;
  return { data: r.data, links: lstatSync(path, { throwIfNoEntry: false })?.nlink ?? 1 };
}

/**
 * The objects check of a repository the run wrote in: in each of `dirs` (its git directory, and the stores it keeps for
 * its submodules), what has git read another object in place of a trusted one (substitutes), then objects not as named
 * (forgedObject), named by path from the first; when none, the caches the run wrote in the first, removed (dropCaches).
 */
export function checkObjects(git: string, dirs: string[], counts: (path: string) => boolean): { held: string } | { caches: { removed: string[]; left: string[] } } {
  const [top] = dirs as [string];
  for (const d of dirs) {
    const at = d === top ? '' : `${d.slice(top.length + 1)}/`;
    const instead = substitutes(d, counts);
    if (instead !== null) return { held: `${at}${instead}` };
    const forged = forgedObject(git, d, counts);
    if (forged !== null) return { held: `${at}${forged.forged}` };
  }
  return { caches: dropCaches(top, counts) };
}
