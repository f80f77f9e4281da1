// Version managers' shim folders (pyenv, rbenv, nodenv, goenv, plenv, jenv)
// that the agent's shells rewrite on every start (`pyenv init -` rehashes):
// read-only, each shell prints "pyenv: cannot rehash: … isn't writable". A
// run gets a private copy of each, bound writable at its path and discarded
// with the run directory: nothing the agent writes there reaches your shims
// (which your shell runs after the run), and nothing comes back.
import { copyFileSync, lstatSync, mkdirSync, readdirSync, readlinkSync, symlinkSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { inside } from '../paths/rules.js';

export interface ScratchCopy {
  /** The host folder copied. */
  from: string;
  /** Its copy in the run directory, bound writable at `from`. */
  src: string;
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

/**
 * The shim folders that exist as real directories (not links), outside the
 * areas the run can write anyway and outside every denied path (a denial wins).
 */
export function scratchFolders(home: string, env: NodeJS.ProcessEnv, writable: string[], denied: string[]): string[] {
  const out: string[] = [];
  for (const [name, dflt] of MANAGERS) {
    const set = env[name];
    const root = set !== undefined && set !== '' && isAbsolute(set) ? set : join(home, dflt);
    const dir = join(root, 'shims');
    if (out.includes(dir) || !lstatSync(dir, { throwIfNoEntry: false })?.isDirectory()) continue;
    if (writable.some((w) => inside(dir, w)) || denied.some((d) => inside(dir, d) || inside(d, dir))) continue;
    out.push(dir);
  }
  return out;
}

export const scratchCopies = (runDir: string, folders: string[]): ScratchCopy[] => folders.map((from, i) => ({ from, src: join(runDir, `scratch-${i}`) }));

/** The folder's files and links (never through a link; subfolders and anything else are left out), or why it is too big to copy. */
function scratchEntries(from: string): Array<{ name: string; link: string | null }> | string {
  const names = readdirSync(from);
  if (names.length > SCRATCH_LIMITS.entries) return `${from} holds ${names.length} entries (more than ${SCRATCH_LIMITS.entries})`;
  let bytes = 0;
  const out: Array<{ name: string; link: string | null }> = [];
  for (const name of names) {
    const st = lstatSync(join(from, name), { throwIfNoEntry: false });
    if (st?.isSymbolicLink()) out.push({ name, link: readlinkSync(join(from, name)) });
    else if (st?.isFile()) {
      bytes += st.size;
      out.push({ name, link: null });
    }
  }
  return bytes > SCRATCH_LIMITS.bytes ? `${from} holds ${bytes} bytes (more than ${SCRATCH_LIMITS.bytes})` : out;
}

/** Why the folder is not copied (it stays read-only), or null. */
export function scratchRefusal(from: string): string | null {
  const e = scratchEntries(from);
  return typeof e === 'string' ? e : null;
}

/** Makes `to` (mode 700) with copies of the folder's files and links, read again now; what grew past the limits is left out whole. */
export function fillScratch(from: string, to: string): void {
  mkdirSync(to, { mode: 0o700 });
  const entries = scratchEntries(from);
  if (typeof entries === 'string') return;
  for (const { name, link } of entries) {
    try {
      if (link !== null) symlinkSync(link, join(to, name));
      // A copy, never a hard link: the agent's writes must not reach your file.
      else copyFileSync(join(from, name), join(to, name));
    } catch {
      // gone since it was listed: the copy lacks it, as your folder now does
    }
  }
}
