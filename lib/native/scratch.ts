// Version managers' shim folders (pyenv, rbenv, nodenv, goenv, plenv, jenv)
// that the agent's shells rewrite on every start (`pyenv init -` rehashes):
// read-only, each shell prints "pyenv: cannot rehash: … isn't writable". A
// run gets a private copy of each, bound writable at its real path and
// discarded with the run directory: nothing the agent writes there reaches
// your shims (which your shell runs after the run), and nothing comes back.
//
// The folder is another process's to change while the run starts (a second
// run that may write ~/.pyenv, say), so it is read as planned or not at all:
// planned by its real path, opened without following a link, checked to be
// the same folder, and each entry opened from that descriptor without
// following one, checked again by descriptor, and copied only when it is a
// regular file of yours, readable by you, within the size budget.
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readlinkSync, readSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { inside } from '../paths/rules.js';
import { realPathOf } from '../util/real-path.js';

export interface ScratchCopy {
  /** The host folder copied, by its real path (where the copy is bound). */
  from: string;
  /** Its copy in the run directory, bound writable at `from`. */
  src: string;
  /** The folder as planned: filled only from this very folder. */
  dev: number;
  ino: number;
}

/** The managers: the variable naming the root, and the default root under home. */
const MANAGERS: Array<[string, string]> = [
  ['PYENV_ROOT', '.pyenv'],
  ['RBENV_ROOT', '.rbenv'],
  ['NODENV_ROOT', '.nodenv'],
  ['GOENV_ROOT', '.goenv'],
  ['PLENV_ROOT', '.plenv'],
  ['JENV_ROOT', '.jenv'],
];

/** A shim folder holds a few hundred small scripts; a bigger one is not copied (it stays read-only). */
export const SCRATCH_LIMITS = { entries: 4096, bytes: 64 << 20 };


export interface ScratchPlan {
  folders: Array<{ from: string; dev: number; ino: number }>;
  /** Why a folder that exists stays read-only. */
  warnings: string[];
}

/**
 * The shim folders to copy, by real path: a directory of this user's, not
 * writable by others (nor its parent), with at most SCRATCH_LIMITS.entries
 * entries, outside the areas the run can write anyway, and clear of every
 * denied path and pattern root (a denial wins), as written or resolved.
 */
export function scratchFolders(home: string, env: NodeJS.ProcessEnv, o: { writable: string[]; denied: string[] }): ScratchPlan {
  const out: ScratchPlan = { folders: [], warnings: [] };
  const uid = process.getuid?.();
  const denied = [...o.denied, ...o.denied.map(realPathOf).filter((d): d is string => d !== null)];
  for (const [name, dflt] of MANAGERS) {
    const set = env[name];
    const root = set !== undefined && set !== '' && isAbsolute(set) ? set : join(home, dflt);
    const at = join(root, 'shims');
    try {
      if (!lstatSync(at, { throwIfNoEntry: false })) continue;
      const real = realPathOf(at);
      const st = real === null ? undefined : lstatSync(real, { throwIfNoEntry: false });
      if (real === null || !st?.isDirectory() || out.folders.some((f) => f.from === real)) continue;
      const why = (() => {
        if (uid !== undefined && st.uid !== uid) return 'it is not yours';
        const parent = lstatSync(dirname(real));
        if ((st.mode & 0o022) !== 0 || ((parent.mode & 0o022) !== 0 && (parent.mode & 0o1000) === 0)) return 'others can write it or its folder';
        if (readdirSync(real).length > SCRATCH_LIMITS.entries) return `it holds more than ${SCRATCH_LIMITS.entries} entries`;
        return null;
      })();
      if (o.writable.some((w) => inside(real, w)) || denied.some((d) => inside(real, d) || inside(d, real) || inside(at, d))) continue;
      if (why !== null) out.warnings.push(`${at}: ${why}, so it stays read-only in this run (its shims cannot be rehashed)`);
      else out.folders.push({ from: real, dev: st.dev, ino: st.ino });
    } catch (e) {
      out.warnings.push(`${at}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}, so it stays read-only in this run`);
    }
  }
  return out;
}

export const scratchCopies = (runDir: string, folders: ScratchPlan['folders']): ScratchCopy[] => folders.map((f, i) => ({ ...f, src: join(runDir, `scratch-${i}`) }));

/** Reads exactly `size` bytes from a descriptor (a file that grew is cut at what it was; one that shrank is refused). */
function readExactly(fd: number, size: number): Buffer | null {
  const buf = Buffer.alloc(size);
  let got = 0;
  while (got < size) {
    const n = readSync(fd, buf, got, size - got, got);
    if (n === 0) return null;
    got += n;
  }
  return buf;
}

/**
 * Makes `c.src` (mode 700) and fills it from the planned folder alone; returns
 * what to say when the folder changed since (the copy then stays empty).
 */
export function fillScratch(c: ScratchCopy, deniedPatterns: RegExp[] = []): string | null {
  mkdirSync(c.src, { mode: 0o700 });
  let dir: number;
  try {
    dir = openSync(c.from, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (e) {
    return `${c.from} could not be opened as planned (${(e as NodeJS.ErrnoException).code}): its copy in this run is empty`;
  }
  try {
    const st = fstatSync(dir);
    if (st.dev !== c.dev || st.ino !== c.ino) return `${c.from} was replaced since the run was planned: its copy in this run is empty`;
    // Entries are named through the descriptor: /proc/self/fd/N is the folder opened, whatever is at its path now.
    const base = `/proc/self/fd/${dir}`;
    const names = readdirSync(base);
    if (names.length > SCRATCH_LIMITS.entries) return `${c.from} grew past ${SCRATCH_LIMITS.entries} entries since the run was planned: its copy in this run is empty`;
    const uid = process.getuid?.();
    let budget = SCRATCH_LIMITS.bytes;
    for (const name of names) {
      // What a deny pattern names is not copied (its mount covers the copy's path in the sandbox anyway).
      if (deniedPatterns.some((r) => r.test(join(c.from, name)))) continue;
      const p = `${base}/${name}`;
      const lst = lstatSync(p, { throwIfNoEntry: false });
      if (lst?.isSymbolicLink()) {
        try {
          symlinkSync(readlinkSync(p), join(c.src, name));
        } catch {
          // gone since it was listed
        }
        continue;
      }
      if (!lst?.isFile()) continue;
      let fd: number;
      try {
        fd = openSync(p, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      } catch {
        continue; // swapped for a link or gone
      }
      try {
        const f = fstatSync(fd);
        // Yours and readable by you: a copy made by root must not lend the sandbox what root's capabilities read.
        if (!f.isFile() || f.size > budget || (uid !== undefined && f.uid !== uid) || (f.mode & 0o400) === 0) continue;
        const bytes = readExactly(fd, f.size);
        if (bytes === null) continue;
        budget -= f.size;
        // A copy, never a hard link, and without setuid or setgid bits: the agent's writes must not reach your file.
        writeFileSync(join(c.src, name), bytes, { mode: f.mode & 0o777, flag: 'wx' });
      } finally {
        closeSync(fd);
      }
    }
    return null;
  } finally {
    closeSync(dir);
  }
}
