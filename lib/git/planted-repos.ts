// After a run: every `.git` under the working tree, at any depth, in either
// form (a directory, or a pointer file "gitdir: …"), not only registered
// submodules. A repository planted in a subfolder runs its own config when
// you `cd` there with a git-aware prompt, or when an IDE scans nested
// repositories; so does a bare repository under any name, when you run git
// inside it. A walk of the tree (symlinks not followed, no `.git` entered)
// finds them; one whose git files were written during the run and would run
// programs is unplugged like a submodule (lib/git/nested-repo-guard.ts).
import { createHash } from 'node:crypto';
import { chmodSync, closeSync, constants as fsConstants, type Dir, type Dirent, lstatSync, mkdirSync, rmdirSync, type Stats, openSync, opendirSync, readdirSync, readlinkSync, realpathSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { readBackText } from '../readback/file.js';
import { freeName } from '../paths/free-name.js';
import { O_PATH } from '../paths/bind-sources.js';
import type { SharedNames } from './shared-names.js';
import { KERNEL_FOLDERS } from '../paths/expand.js';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';

/**
 * Whether an entry (`st`: its lstat, undefined when it is gone) is one the run
 * changed: its time says during the run, and it lies where the run could write
 * (its tree, its allow_write folders), or it is a file that may share its data
 * with a name there (a write through one changes all): one with other names
 * now, or one `shared` says had a name in the tree at the start
 * (lib/git/shared-names.ts; none told, or an incomplete note: every file). A
 * folder elsewhere is never the run's. What changed
 * elsewhere meanwhile is yours (found in CI: a run in a folder of a larger
 * repository had your ~/.config link removed when your side wrote below where
 * it leads).
 */
export type ChangeTest = (path: string, st: Stats | undefined) => boolean;

/** The ChangeTest of a run that started at `since` (the kernel's clock) and could write where `writes` says (by name). */
export function runChanges(since: number, writes: (path: string) => boolean = () => true, shared: SharedNames | null = null): ChangeTest {
  return (path, st) => st !== undefined && st.ctimeMs >= since && (writes(path) || (!st.isDirectory() && (st.nlink > 1 || shared === null || shared.incomplete !== null || shared.has(st.dev, st.ino))));
}

/**
 * Whether a path (real folders, named as walked) lies where a run could write:
 * in `tree` (the folder it writes in the repository whose top is `root`), or
 * in a folder it could write outside (lib/git/planted-repos.ts writableOutsideTree).
 */
export function runWrites(root: string, tree: string, outside: string[]): (path: string) => boolean {
  const top = realOrSelf(tree);
  return (named) => {
    // (Walked from a root at /, names begin with //.)
    const p = named.startsWith('//') ? named.slice(1) : named;
    return p === top || beneath(p, top) || writableOutsideTree(p, root, outside);
  };
}

/** The kernel's own file systems, when a walk starts at / (a repository there): nothing the run left, and /proc holds every process's links. */
export function kernelFolder(p: string): boolean {
  const n = p.startsWith('//') ? p.slice(1) : p;
  return KERNEL_FOLDERS.some((k) => n === k || n.startsWith(k + '/'));
}

/** What a plant is renamed to: git and your tools pass it by, and a `mv` restores it. */
export const QUARANTINE = '.stashbase-quarantine';

/** The folders a check may rename in (real paths; none: anywhere), set for one check by movesWithin. */
let moveRoots: string[] = [];
/** What moveAside renamed within the current movesWithin, in order. */
let moves: Array<[string, string]> = [];

/** The renames moveAside made within the current movesWithin, from and to. */
export function movedAside(): ReadonlyArray<[string, string]> {
  return moves;
}

/**
 * Runs `f` with every moveAside in it held to folders whose real path lies in
 * `roots` (found in review: a link among the folders of a path the check had
 * judged in the tree was re-aimed by one of its own renames, and the next
 * rename through it moved your files outside the tree).
 */
export function movesWithin<T>(roots: string[], f: () => T): T {
  const before = moveRoots;
  const movesBefore = moves;
  moveRoots = roots.map(realOrSelf);
  moves = [];
  try {
    return f();
  } finally {
    moveRoots = before;
    moves = movesBefore;
  }
}

/** Why `path` may not be renamed or removed within the current movesWithin (its folder lies elsewhere), or null. */
function outsideMoves(path: string): string | null {
  if (moveRoots.length === 0) return null;
  const parent = realOrSelf(dirname(path));
  return moveRoots.some((r) => parent === r || beneath(parent, r)) ? null : `its folder is ${parent}, outside the tree`;
}

/**
 * The link on `path`'s way that lies in one of the current movesWithin's
 * folders and leads out of them (`.config` → a folder the run could write
 * elsewhere), or null: what to move aside where `path` itself may not be
 * (review, round 32: the config behind it stayed, and your tool read it).
 */
export function linkOutOnTheWay(path: string): string | null {
  const parts = path.split('/');
  for (let i = 2; i < parts.length; i++) {
    const at = parts.slice(0, i).join('/');
    let link = false;
    try {
      link = lstatSync(at).isSymbolicLink();
    } catch {
      return null;
    }
    if (link && outsideMoves(at) === null) return at;
  }
  return null;
}

/** Removes the link `path`, held as moveAside is; returns why it could not be. */
export function removeLink(path: string): string | null {
  const outside = outsideMoves(path);
  if (outside !== null) return outside;
  try {
    unlinkSync(path);
    return null;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? 'error';
  }
}

/** Where moveAside put something, or why it could not. */
export type Aside = { to: string; failed?: undefined } | { failed: string; to?: undefined };

/**
 * Renames `path` to a name beside it ending in QUARANTINE that nothing holds
 * (lib/paths/free-name.ts; review, round 34: a folder the agent left under the
 * one name tried kept in place what it should take, and a file there was
 * replaced, an earlier run's quarantine lost); says where, or why it could not.
 * `keepName`: into a folder of that name instead, under its own name
 * (`node_modules.stashbase-quarantine/node_modules`), which test runners and
 * tools pass by (review, round 34: renamed whole, pytest and node --test
 * collected the agent's tests in `node_modules.stashbase-quarantine`).
 */
export function moveAside(path: string, keepName = false): Aside {
  const outside = outsideMoves(path);
  if (outside !== null) return { failed: outside };
  const free = freeName(path, QUARANTINE);
  if ('failed' in free) return free;
  const to = keepName ? join(free.to, basename(path)) : free.to;
  let made = false;
  try {
    if (keepName) made = (mkdirSync(free.to, { mode: 0o700 }), true);
    renameSync(path, to);
    moves.push([path, to]);
    return { to };
  } catch (e) {
    // The folder it made for it, empty still, goes again.
    if (made) rmdirSync(free.to);
    return { failed: (e as NodeJS.ErrnoException).code ?? 'error' };
  }
}

/**
 * Whether a folder holding bin and lib is a Python environment by what its
 * bin or lib still hold (review, round 28b: its pyvenv.cfg, site-packages,
 * lib64 removed, or lib's entries made files, and its bin/pip ran as yours):
 * bin/pyvenv.cfg or bin/activate of any type, or an entry of lib named for a
 * Python (pythonX.Y, pypyX.Y) of any type. Read a few entries at a time, and
 * any error counted as one (a link loop there is the agent's).
 */
function pythonLayout(dir: string): boolean {
  for (const f of ['pyvenv.cfg', 'activate']) {
    try {
      if (lstatSync(dir + sep + 'bin' + sep + f, { throwIfNoEntry: false }) !== undefined) return true;
    } catch {
      return true;
    }
  }
  let lib: Dir;
  try {
    lib = opendirSync(dir + sep + 'lib', { bufferSize: 64 });
  } catch {
    return false;
  }
  try {
    for (let e = lib.readSync(); e !== null; e = lib.readSync()) if (/^(?:python|pypy)\d/.test(e.name)) return true;
    return false;
  } catch {
    return true;
  } finally {
    lib.closeSync();
  }
}

/**
 * Every `.git` entry below `root` (not root's own: a folder, a pointer file
 * or a symlink, which git follows), and every folder that is a git directory
 * by its contents (HEAD, objects, refs) under another name: a bare repository
 * git finds when you run it inside. Links are not followed, and git
 * directories are not entered, except with `setId`, which also lists every
 * file whose setuid or setgid bit is set, inside git directories too (one
 * lstat per file). The walk is whole: no count of entries stops it (an agent
 * can make any number in seconds), and a folder is read a few entries at a
 * time, so that one of millions costs no memory.
 */
export function dotGitsUnder(
  root: string,
  setId = false,
  configs: (path: string) => boolean = () => false,
  executed: (path: string) => boolean = () => false,
  changed: ChangeTest | null = null,
  dependencyRoot: (path: string) => boolean = () => false,
  writableOutside: string[] = [],
  installedChanged: ChangeTest | null = changed,
  environmentRoot: (path: string) => boolean = () => false,
): { found: string[]; bare: string[]; setId: string[]; configs: string[]; executed: string[]; renamed: string[]; unreadable: string[]; dependencies: string[]; shared: string[]; folderLinks: Array<{ link: string; dep: string | null }> } {
  const found: string[] = [];
  const renamed: string[] = [];
  const unreadable: string[] = [];
  const executedList: string[] = [];
  const configList: string[] = [];
  const bare: string[] = [];
  const setIds: string[] = [];
  // Folders of installed code your tools load that git does not show (node_modules, a virtual environment's
  // site-packages): each one in which the run wrote or renamed anything, found by one lstat per entry below it.
  const dependencies = new Set<string>();
  // Files changed in them that have other names (hard links: a package store's, another repository's): written there too.
  const shared: string[] = [];
  // Links at a dependency folder's name (node_modules → elsewhere): what they lead to in the tree, judged after the walk.
  const linkedDeps: string[] = [];
  // Every link the walk passes (not followed), with the folder of installed code it lies in: judged by the check, as links
  // to folders, once its other steps are done (found in review: code kept in a plain .git folder and reached through a
  // link where a tool looks, docs/_build/api, .venv/bin, crate/.cargo, tests/, test/.git; one dangling during the walk,
  // made live by the check's own renames).
  const folderLinks: Array<{ link: string; dep: string | null }> = [];
  const ownGit = root + sep + '.git';
  const stack: Array<[string, boolean, string | null]> = [[root, false, null]];
  /**
   * Whether an entry of installed code changed in the run, a file or a link (a folder is judged as it is walked, below:
   * changed, and holding a changed entry other than a __pycache__; review, round 28c: the __pycache__ your python made
   * in a package moved the whole environment aside, while a package renamed into place changes the folder it lands in,
   * whose changed entry it is). Byte-code caches have their own rule (removed). A link to a file counts by that file too,
   * where it lies in the tree or where the run could write (review, round 28c: uv's symlinked install, the file it
   * leads to rewritten in an ignored cache in the tree).
   */
  const installedEntryChanged = (full: string, st: Stats | undefined): boolean => {
    if (installedChanged === null || st === undefined) return false;
    if (st.isSymbolicLink()) {
      if (installedChanged(full, st)) return true;
      try {
        const real = realpathSync.native(full);
        const target = lstatSync(real, { throwIfNoEntry: false });
        if (target === undefined || target.isDirectory()) return false;
        return (real === root || beneath(real, root) || writableOutsideTree(real, root, writableOutside)) && installedChanged(real, target);
      } catch (e) {
        // Dangling: nothing there to run. Any other failure (a real path past PATH_MAX, which the kernel still follows
        // by the links' short names: review, round 28d) cannot be told from a change, so it counts as one.
        return (e as NodeJS.ErrnoException).code !== 'ENOENT' && (e as NodeJS.ErrnoException).code !== 'ENOTDIR';
      }
    }
    return !st.isDirectory() && !/\.py[co]$/.test(full) && installedChanged(full, st);
  };
  const walkOne = (dir: string, inGit: boolean, dep: string | null): void => {
    if (root === sep && kernelFolder(dir)) return;
    let handle: Dir;
    try {
      handle = opendirSync(dir, { bufferSize: 256 });
    } catch (e) {
      // Gone or replaced meanwhile: nothing there to check. One of yours closed to you (the agent, which writes as you,
      // can chmod it): what lies below is unseen, and your git still reaches it by its path, so the check fails, said
      // (found in review). Another user's folder you cannot read (a database container's data) is none of the agent's.
      const code = (e as NodeJS.ErrnoException).code;
      const mine = lstatSync(dir, { throwIfNoEntry: false })?.uid === process.getuid?.();
      // The rest of the walk goes on (found in review: one such folder stopped every other check of the tree).
      // (In a git directory, the check of the git directory names it, as a finding: not said twice.)
      if ((code === 'EACCES' || code === 'EPERM') && mine && !inGit) unreadable.push(`${dir} (${code})`);
      return;
    }
    // Whether the folder is a git directory by its contents: three names, noted as they pass.
    const marks: Dirent[] = [];
    // Whether it is an environment by its contents (a virtual environment's pyvenv.cfg, beside its bin or in it; a conda
    // environment's conda-meta; PHP's vendor folder): installed code and the settings its tools read (pip.conf, etc/ and share/ for IPython
    // and Jupyter, conda's activation scripts), judged whole (review, round 28: a pip.conf at a virtual environment's
    // top, an IPython config in its etc/ and a Jupyter kernel's command in its share/ were passed by). Its folders are
    // walked once its names are all read, with it as theirs.
    let environment = false;
    let binAndLib = 0;
    let hasBin = false;
    // In installed code: whether an entry here changed in the run, a __pycache__ aside (this folder's own change, below).
    let changedEntry = false;
    const linksFrom = folderLinks.length;
    const folders: Array<[string, boolean, string | null]> = [];
    const visit = (e: Dirent) => {
      if (e.name === 'HEAD' || e.name === 'objects' || e.name === 'refs' || e.name === 'commondir') marks.push(e);
      if (dep === null && !inGit) {
        // Of any type (review, round 28b: conda-meta made a link to a folder outside the tree, which conda still takes).
        if (e.name === 'pyvenv.cfg' || e.name === 'conda-meta') environment = true;
        if ((e.name === 'bin' || e.name === 'lib') && e.isDirectory()) binAndLib++;
        if ((e.name === 'bin' || e.name === 'Scripts') && e.isDirectory()) hasBin = true;
        // PHP's vendor folder (Composer's): its autoload.php, which every script of the project requires, or composer/.
        if ((e.name === 'autoload.php' || e.name === 'composer') && dir.endsWith(`${sep}vendor`)) environment = true;
      }
      const full = dir + sep + e.name;
      // node_modules/.bin, a real folder, is judged entry by entry (executed, below), as a command found by name; one
      // that is a link is judged here (found in review: .bin swapped for a link to a folder of the agent's).
      const skip = dep !== null && dir === dep && e.name === '.bin' && e.isDirectory();
      // (.bin itself counts: one renamed into place, its entries' times old, changes only its own; found in review.)
      if (dep !== null && installedChanged !== null) {
        const st = lstatSync(full, { throwIfNoEntry: false });
        if (e.name !== '__pycache__' && !/\.py[co]$/.test(e.name) && installedChanged(full, st)) changedEntry = true;
        if (installedEntryChanged(full, st)) {
          dependencies.add(dep);
          if (st?.isFile() === true && st.nlink > 1 && shared.length < 1000) shared.push(full);
        }
      }
      // A dependency folder's name that is a link (found in review: node_modules, site-packages swapped for links to
      // folders the walk passes by under other names): a new one moved aside, an old one judged by what it leads to.
      if (dep === null && !inGit && changed !== null && !e.isDirectory() && dependencyRoot(full.slice(root.length + 1))) {
        if (changed(full, lstatSync(full, { throwIfNoEntry: false }))) dependencies.add(full);
        else if (e.isSymbolicLink()) linkedDeps.push(full);
      }
      // (One at a dependency folder's name has its own rule, below; the tree's own .git is the run's git directory's walk's.)
      if (changed !== null && e.isSymbolicLink() && !(dep === null && !inGit && dependencyRoot(full.slice(root.length + 1))) && dir !== ownGit && !beneath(dir, ownGit)) folderLinks.push({ link: full, dep });
      if (!inGit && dir !== root && configs(full.slice(root.length + 1))) configList.push(full);
      // Inside a .git folder too: a test runner's search enters it (found in review: node --test ran x/.git/t/a.test.js).
      if (!e.isDirectory() && executed(full.slice(root.length + 1))) executedList.push(full);
      if (e.name === '.git' && !inGit) {
        if (dir !== root && (e.isDirectory() || e.isFile() || e.isSymbolicLink())) found.push(full);
        // A nested one always (what a test runner finds in it); the top's own, the run's git directory, for setuid bits.
        if (e.isDirectory() && (setId || (changed !== null && dir !== root))) folders.push([full, true, null]);
      } else if (e.isDirectory()) {
        const newDep = dep === null && !skip && !inGit && changed !== null && dependencyRoot(full.slice(root.length + 1));
        // One renamed into place, its entries' times old (review, round 28b: a node_modules kept in an ignored folder in
        // one run, renamed into place in the next, and node ran it): its own time says so.
        if (newDep && installedChanged !== null && installedChanged(full, lstatSync(full, { throwIfNoEntry: false }))) dependencies.add(full);
        folders.push([full, inGit, skip ? null : (dep ?? (newDep ? full : null))]);
      }
      // Every file, whatever its name (found in review: a setuid file named .git was moved aside as a planted repository,
      // its bit kept).
      if (setId && e.isFile() && ((lstatSync(full, { throwIfNoEntry: false })?.mode ?? 0) & 0o6000) !== 0) setIds.push(full);
    };
    // Names that are not UTF-8 would be read as others (U+FFFD) and their entries passed by, unchecked (found in review:
    // a setuid shell, a nested repository with an fsmonitor, a .pth file): renamed by their bytes to names that are,
    // once the folder is read, and checked under those.
    const odd: Array<{ bytes: Buffer; entry: Dirent }> = [];
    // Read as UTF-8 (a third of the cost of reading bytes): a name that is not comes with U+FFFD in it, as may one that
    // is, and such names alone are read again by their bytes, below.
    let replaced = false;
    try {
      for (let e = handle.readSync(); e !== null; e = handle.readSync()) {
        if (e.name.includes('\uFFFD')) replaced = true;
        else visit(e);
      }
    } finally {
      // A folder that cannot be read to its end fails the check (the caller says so), its handle closed.
      handle.closeSync();
    }
    let again: Dir | null = null;
    if (replaced) {
      try {
        again = opendirSync(dir, { bufferSize: 256, encoding: 'buffer' as BufferEncoding });
      } catch (e) {
        // Replaced meanwhile: what it held by those names is unseen.
        unreadable.push(`${dir} (${(e as NodeJS.ErrnoException).code ?? 'failed'} on reading its names that are not UTF-8)`);
      }
    }
    if (again !== null) {
      try {
        for (let e = again.readSync(); e !== null; e = again.readSync()) {
          const bytes = e.name as unknown as Buffer;
          const name = bytes.toString('utf8');
          if (!name.includes('\uFFFD')) continue; // visited above
          if (Buffer.from(name, 'utf8').equals(bytes)) visit(Object.assign(e, { name }));
          else odd.push({ bytes, entry: e });
        }
      } finally {
        again.closeSync();
      }
    }
    for (const { bytes, entry } of odd) {
      const from = Buffer.concat([Buffer.from(dir + sep), bytes]);
      const shown = `${dir}${sep}<${bytes.toString('hex').slice(0, 64)}${bytes.length > 32 ? '…' : ''}>`;
      const st = lstatSync(from, { throwIfNoEntry: false });
      if (st === undefined) continue;
      // Only what the run wrote is renamed (your own, older, is left as it is: found in review), never inside a git
      // directory (git names refs and reflogs by those bytes); what is not renamed cannot be walked by name: a folder is
      // said unchecked, a setuid bit the run set cleared where it is.
      const ours = changed === null || changed(from.toString('utf8'), st);
      if (inGit || !ours) {
        if (ours && (st.mode & 0o6000) !== 0) chmodSync(from, st.mode & 0o1777);
        if (ours && st.isDirectory()) unreadable.push(`${shown} (a name that is not UTF-8)`);
        // An old one outside a git directory: walked by its bytes for a change below it (found in review: an old folder
        // of such a name moved into an ignored folder, and a conftest.py written below it in the next run, unseen).
        else if (!inGit && changed !== null && st.isDirectory() && (changedUnder(from, changed) || changedBelow(dir, root, (d) => changed(d, lstatSync(d, { throwIfNoEntry: false }))))) unreadable.push(`${shown} (a name that is not UTF-8, with something changed below it or on its way during the run)`);
        continue;
      }
      // A name of bounded length (the hex of a long one would pass the file system's limit), never over another entry.
      const name = `stashbase-renamed-${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}${QUARANTINE}`;
      if (lstatSync(dir + sep + name, { throwIfNoEntry: false }) !== undefined) {
        unreadable.push(`${shown} (a name that is not UTF-8, not renamed: ${name} is taken)`);
        continue;
      }
      try {
        renameSync(from, dir + sep + name);
      } catch (e) {
        unreadable.push(`${shown} (a name that is not UTF-8, not renamed: ${(e as NodeJS.ErrnoException).code ?? 'failed'})`);
        continue;
      }
      renamed.push(dir + sep + name);
      visit(Object.assign(entry, { name }));
    }
    if (!inGit && dir !== root && looksLikeGitDir(dir, marks)) bare.push(dir);
    // A folder inside installed code counts when it changed and an entry of it other than a __pycache__ did (a folder
    // renamed into it, a package replaced): its root, by its own time alone (when it was found, above).
    if (dep !== null && dir !== dep && changedEntry && installedChanged !== null) {
      try {
        if (installedChanged(dir, lstatSync(dir, { throwIfNoEntry: false }))) dependencies.add(dep);
      } catch {
        dependencies.add(dep);
      }
    }
    // Environments by name too: Bundler's vendor/bundle, PDM's __pypackages__ (review, round 28c), and .venv or venv with
    // a bin or Scripts, whatever else they hold (round 28b: every marker removed; a source package of that name, CPython's
    // Lib/venv, has no bin). Then a folder holding bin and lib, by what they hold (pythonLayout). The walk's root may be
    // one: the caller names it, never moving it.
    if (!environment && dep === null && !inGit && dir !== root && (/[\\/](?:__pypackages__|vendor[\\/]bundle)$/.test(dir) || (hasBin && /[\\/]\.?venv$/.test(dir)))) environment = true;
    if (!environment && binAndLib === 2 && dep === null && !inGit) environment = pythonLayout(dir);
    // An environment's folders and links are its own; the root's, only those an environment has (never the whole tree as one).
    const ownFolder = (f: string) => dir !== root || /^(?:bin|Scripts|lib|lib64|Lib|etc|share|include|Include|conda-meta)$/.test(f.slice(dir.length + 1));
    const asEnvironment = environment && dep === null && !inGit && changed !== null && installedChanged !== null && environmentRoot(dir === root ? '' : dir.slice(root.length + 1));
    if (asEnvironment) {
      // Its own links are its own (a venv's lib64 → lib): judged with it, never alone after it went aside.
      for (let i = linksFrom; i < folderLinks.length; i++) {
        const l = folderLinks[i] as { link: string; dep: string | null };
        if (l.dep === null && ownFolder(l.link)) l.dep = dir;
      }
      try {
        // Renamed into place, its entries' times old (review, round 28b): its own time says so.
        if (installedChanged(dir, lstatSync(dir, { throwIfNoEntry: false }))) dependencies.add(dir);
        // Its own entries, as a dependency folder's are (its folders' entries are, below it): read again, a few at a time
        // (no list of a folder's names is kept: one of millions costs no memory).
        const again = opendirSync(dir, { bufferSize: 256 });
        try {
          for (let e = again.readSync(); e !== null && !dependencies.has(dir); e = again.readSync()) {
            const full = dir + sep + e.name;
            const st = lstatSync(full, { throwIfNoEntry: false });
            if (installedEntryChanged(full, st) || (st?.isDirectory() === true && e.name !== '__pycache__' && installedChanged(full, st))) dependencies.add(dir);
          }
        } finally {
          again.closeSync();
        }
      } catch {
        // Whatever it throws (a name past PATH_MAX), it counts as changed; its folders are still walked (below).
        dependencies.add(dir);
      }
    }
    for (const f of folders) stack.push(asEnvironment && f[2] === null && !f[1] && ownFolder(f[0]) ? [f[0], false, dir] : f);
  };
  while (stack.length > 0) {
    const [dir, inGit, dep] = stack.pop() as [string, boolean, string | null];
    try {
      walkOne(dir, inGit, dep);
    } catch (e) {
      // Whatever one folder throws (found in review: a link loop, a path past PATH_MAX, a folder that can be listed and
      // not passed ended the whole walk), it alone is unchecked, and said; the rest of the tree is walked.
      unreadable.push(`${dir} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  }
  const changedBehind = changeFinder(changed ?? (() => false));
  for (const link of linkedDeps) {
    const real = realOrSelf(link);
    // In the tree, or in a folder the run could write outside it (found in review: an old node_modules link into an allow_write folder).
    const reachable = real === root || beneath(real, root) || writableOutsideTree(real, root, writableOutside);
    if (real !== link && reachable && changedBehind(real)) dependencies.add(link);
  }
  return { found: found.sort(), bare: bare.sort(), setId: setIds.sort(), configs: configList.sort(), executed: executedList.sort(), renamed: renamed.sort(), unreadable, dependencies: [...dependencies].sort(), shared: shared.sort(), folderLinks };
}

/**
 * Whether a folder or anything below it (links not followed) changed during
 * the run (`changed`), each folder walked once for all the folders one finder is
 * asked about (found in review: links to each folder of one deep chain had
 * it walked again for each). A name it cannot read back, or a folder it cannot
 * list, counts as a change.
 */
export function changeFinder(changed: ChangeTest): (dir: string) => boolean {
  const memo = new Map<string, boolean>();
  const changedItself = (p: string) => {
    try {
      return changed(p, lstatSync(p, { throwIfNoEntry: false }));
    } catch {
      return true;
    }
  };
  type Frame = { dir: string; subs: string[]; i: number; changed: boolean };
  const open = (dir: string): Frame => {
    const f: Frame = { dir, subs: [], i: 0, changed: changedItself(dir) };
    try {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const full = dir + sep + e.name;
        if (e.name.includes('\uFFFD')) f.changed = true;
        else if (e.isDirectory()) f.subs.push(full);
        else if (!f.changed && changedItself(full)) f.changed = true;
      }
    } catch {
      f.changed = true;
    }
    return f;
  };
  return (top: string) => {
    const known = memo.get(top);
    if (known !== undefined) return known;
    const stack = [open(top)];
    while (stack.length > 0) {
      const f = stack[stack.length - 1] as Frame;
      if (f.i < f.subs.length) {
        const sub = f.subs[f.i++] as string;
        const m = memo.get(sub);
        if (m === undefined) stack.push(open(sub));
        else f.changed ||= m;
        continue;
      }
      stack.pop();
      memo.set(f.dir, f.changed);
      const parent = stack[stack.length - 1];
      if (parent) parent.changed ||= f.changed;
    }
    return memo.get(top) as boolean;
  };
}

/** Whether the folder `dir` names by its bytes, or anything below it (links not followed), changed during the run (changeFinder for names that are UTF-8). */
function changedUnder(dir: Buffer, changedInRun: ChangeTest): boolean {
  const stack: Buffer[] = [dir];
  const slash = Buffer.from(sep);
  const changed = (p: Buffer) => {
    try {
      return changedInRun(p.toString('utf8'), lstatSync(p, { throwIfNoEntry: false }));
    } catch {
      return true; // cannot be told (a path too long): counted
    }
  };
  while (stack.length > 0) {
    const d = stack.pop() as Buffer;
    if (changed(d)) return true;
    let entries: Dirent[];
    try {
      entries = readdirSync(d, { withFileTypes: true, encoding: 'buffer' }) as unknown as Dirent[];
    } catch {
      continue;
    }
    for (const e of entries) {
      const full = Buffer.concat([d, slash, e.name as unknown as Buffer]);
      if (e.isDirectory()) stack.push(full);
      else if (changed(full)) return true;
    }
  }
  return false;
}

/**
 * What git itself checks a folder for (is_git_directory): a HEAD that is a
 * file or a link into refs/, and objects and refs folders, links followed,
 * in the folder or in the one its commondir names.
 */
function looksLikeGitDir(dir: string, entries: Dirent[]): boolean {
  const head = entries.find((e) => e.name === 'HEAD');
  if (!head) return false;
  if (head.isSymbolicLink()) {
    let target = '';
    try {
      target = readlinkSync(dir + sep + 'HEAD');
    } catch {
      return false;
    }
    if (!target.startsWith('refs/')) return false;
  } else if (!head.isFile()) return false;
  const base = entries.some((e) => e.name === 'commondir') ? commondirOf(dir) : dir;
  if (base === null) return false;
  // A link loop or a name too long is no folder to git either (its stat fails).
  const isDir = (p: string) => {
    try {
      return statSync(p, { throwIfNoEntry: false })?.isDirectory() === true;
    } catch {
      return false;
    }
  };
  return isDir(base + sep + 'objects') && isDir(base + sep + 'refs');
}

/** `path` (absolute, or relative to `base`) joined for the kernel to walk: no `..` taken by its text. */
export function kernelJoin(base: string, path: string): string {
  return isAbsolute(path) ? path : `${base}/${path}`;
}

/**
 * `path` (absolute, or relative to `base`) as the kernel resolves it: a `..`
 * after a symlink leaves the link's target, not the link's folder (resolve()
 * would take it by its text). A path that does not exist is left as written.
 */
export function kernelPath(base: string, path: string): string {
  const joined = kernelJoin(base, path);
  try {
    return realpathSync.native(joined);
  } catch {
    return resolve(joined);
  }
}

/**
 * Each entry the kernel passes resolving `path` (absolute, or relative to
 * `base`): every folder and link on the way, links followed (at most 40, as
 * the kernel), `..` taken from where the walk is; the last one is the path's
 * own. Stops where an entry is missing, a folder cannot be searched or a link
 * cannot be read (found in review: an agent's link to a folder closed to you
 * made it throw, and the rest of the end-of-run check was never done).
 */
export function kernelWay(base: string, path: string): Array<{ path: string; link: boolean }> {
  const out: Array<{ path: string; link: boolean }> = [];
  let pending = kernelJoin(base, path).split('/');
  let at = '/';
  for (let hops = 0; pending.length > 0; ) {
    const part = pending.shift() as string;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      at = dirname(at);
      continue;
    }
    const next = at === '/' ? `/${part}` : `${at}/${part}`;
    let st: ReturnType<typeof lstatSync> | undefined;
    try {
      st = lstatSync(next, { throwIfNoEntry: false });
    } catch {
      // A folder on the way that cannot be searched (EACCES): what lies past it is as unreachable to your tools.
      break;
    }
    if (st === undefined) break;
    out.push({ path: next, link: st.isSymbolicLink() });
    if (!st.isSymbolicLink()) {
      at = next;
      continue;
    }
    let target: string;
    try {
      target = readlinkSync(next);
    } catch {
      break;
    }
    if (++hops > 40) break;
    if (isAbsolute(target)) at = '/';
    pending = [...target.split('/'), ...pending];
  }
  return out;
}

/**
 * Whether `dir` or a folder above it, below `top`, changed during the run
 * (`written`): a folder renamed into place (its time changes, not its
 * contents') brings old files with it. `top` itself changes whenever the agent
 * makes a file there.
 */
export function changedBelow(dir: string, top: string, written: (p: string) => boolean): boolean {
  for (let d = dir; d !== top && beneath(d, top); d = dirname(d)) if (written(d)) return true;
  return false;
}

/** Whether `path` lies below `dir`, by their names alone (both as the kernel walks them: no link resolved). */
export function beneath(path: string, dir: string): boolean {
  return path.startsWith(dir === '/' ? '/' : dir + sep);
}

/**
 * Whether `path` (named as walked) lies in a folder a run could write outside
 * its tree (`outside`: its allow_write roots, or `/` with deny-list writes),
 * never the tree itself or a folder above it (their times change with
 * everything beside the tree; renaming one moves the tree itself).
 */
export function writableOutsideTree(path: string, root: string, outside: string[]): boolean {
  return path !== root && !beneath(root, path) && outside.some((w) => path === w || beneath(path, w));
}

/**
 * The real path of a folder `p` names (links followed), as the kernel tells it
 * of a descriptor: one walk of the path, where realpath(3) walks each prefix
 * again (found in review: links to a folder 2,000 levels deep cost 0.1 s
 * each). Null when it is no folder, or its path cannot be told (folderOfUnknownPath).
 */
export function realFolder(p: string): string | null {
  return folderPath(p) ?? null;
}

/** Whether `p` leads to a folder whose real path cannot be told (past PATH_MAX): the kernel still follows it (review, round 28d). */
export function folderOfUnknownPath(p: string): boolean {
  return folderPath(p) === null;
}

/** The real path of the folder `p` leads to; undefined when it is no folder, null when its path cannot be told. */
function folderPath(p: string): string | null | undefined {
  // Without /proc (macOS, where O_PATH's value means another flag): realpath(3), each prefix walked again (found in
  // review: every link was passed by there).
  if (process.platform !== 'linux') {
    try {
      const real = realpathSync.native(p);
      return statSync(real).isDirectory() ? real : undefined;
    } catch {
      return undefined;
    }
  }
  let fd: number;
  try {
    fd = openSync(p, O_PATH | fsConstants.O_DIRECTORY);
  } catch {
    return undefined;
  }
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** `p` resolved, or as it is when it cannot be. */
export function realOrSelf(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return p;
  }
}

/** A file git reads as a path (a .git pointer, commondir): all of it, less trailing CR/LF, as git strips it; null when unreadable. */
export function gitPathFile(file: string): string | null {
  // As much as git reads of one (1 MiB; found in review: a pointer padded past 64 KiB was passed by, and git followed it).
  return readBackText(file, 1 << 20)?.replace(/[\r\n]+$/, '') ?? null;
}

/** The folder a git directory's commondir names, kernel-resolved; null without one (or when it cannot be read). */
export function commondirOf(gitDir: string): string | null {
  const common = gitPathFile(gitDir + sep + 'commondir');
  return common === null ? null : kernelPath(gitDir, common);
}

/** Whether `path` (resolved) lies inside `dir`. */
export function within(path: string, dir: string): boolean {
  try {
    const real = realpathSync.native(path);
    return real === dir || real.startsWith(dir + sep);
  } catch {
    return false;
  }
}

