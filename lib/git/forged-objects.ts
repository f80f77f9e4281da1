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
import { closeSync, fstatSync, lstatSync, openSync, readdirSync, readSync, constants } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { probe } from '../exec.js';
import { SAFE_ENV } from '../../templates/git.js';
import { repoFormat } from './run-git-dir.js';

/** What one check reads of loose objects at most, and verifies of packs: past it, said unverified. */
export const MAX_VERIFIED_BYTES = 512 << 20;
/** What one loose object may inflate to. */
const MAX_OBJECT_BYTES = 256 << 20;
const VERIFY_PACK_MS = 120_000;

export type ObjectCheck = { forged: string } | { unverified: string } | null;

/**
 * The first object under `gitDir/objects` that `counts` (written during the run) and that is not what its name says,
 * as `objects/…` with why; `unverified` when what counts is past MAX_VERIFIED_BYTES; null when all is as named.
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
      if (read === 'big') return { unverified: `${rel} and what follows (more than ${MAX_VERIFIED_BYTES >> 20} MiB of objects written in the run)` };
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
  const packDir = join(objects, 'pack');
  for (const name of list(packDir)) {
    const m = /^(pack-[0-9a-f]{40,64})\.pack$/.exec(name);
    if (!m) continue;
    const pack = join(packDir, name);
    const idx = join(packDir, `${m[1]}.idx`);
    if (!counts(pack) && !counts(idx)) continue;
    const st = lstatSync(pack, { throwIfNoEntry: false });
    if (!st?.isFile() || !lstatSync(idx, { throwIfNoEntry: false })?.isFile()) continue;
    if (st.size > budget) return { unverified: `objects/pack/${name} and what follows (more than ${MAX_VERIFIED_BYTES >> 20} MiB of objects written in the run)` };
    budget -= st.size;
    // No repository: verify-pack reads the pack and its index alone, and runs nothing a config could name.
    const r = probe({ file: git, args: ['verify-pack', idx], cwd: '/', env: { ...SAFE_ENV, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_DIR: '/nonexistent' } }, VERIFY_PACK_MS);
    if (r.code !== 0) return { forged: `objects/pack/${name} (${st.nlink > 1 ? 'a file with other names, changed in all of them: ' : ''}git verify-pack refuses it: ${(r.stderr.trim().split('\n').at(-1) ?? `exit ${r.code}`).slice(0, 160)})` };
  }
  return null;
}

const others = (links: number) => (links > 1 ? 'a file with other names (a local clone\'s), changed in all of them: ' : '');

/** A regular file's bytes (opened without following a link), 'big' past `max`, null when it is no regular file. */
function readFile(path: string, max: number): { data: Buffer; links: number } | 'big' | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return null;
    if (st.size > max) return 'big';
    const data = Buffer.alloc(st.size);
    let at = 0;
    while (at < data.length) {
      const n = readSync(fd, data, at, data.length - at, at);
      if (n === 0) break;
      at += n;
    }
    return { data: data.subarray(0, at), links: st.nlink };
  } finally {
    closeSync(fd);
  }
}
