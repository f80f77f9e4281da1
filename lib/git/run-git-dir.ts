// The run's own git directory: what the agent's git writes instead of yours.
// The sandbox sees it at your git directory's path. In it, as copies of
// yours made when the run starts: HEAD, the index, packed-refs, refs/,
// reflogs and git's other state files (and a linked worktree's own admin
// folder). Its object store starts empty, with yours as the alternate: your
// objects are read (bound read-only at <git dir>/stashbase-objects) and new
// ones land in the run's store. Your config, hooks, info and every other
// folder are bound read-only from yours. Nothing in it comes back by copying:
// after the run, lib/git/import.ts brings in what passes git's checks.
import { printable } from '../util/printable.js';
import { copyFileSync, type Dirent, lstatSync, mkdirSync, readdirSync, type Stats, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import type { BindMount } from '../../templates/bwrap.js';
import type { PlannedGitDir } from '../../templates/git-import.js';
import { readBackText } from '../readback/file.js';
import { SandboxUnavailableError } from '../errors.js';
import { gitDirLink } from './git-dir-links.js';
import { HOOK_NAMES } from './named-files.js';
import { commondirOf, gitPathFile, kernelJoin, kernelPath } from './planted-repos.js';
import { MAX_GIT_ENTRIES } from './sanitize.js';
import { realPathOf } from '../util/real-path.js';
import { readRefStore, type RefValue } from './ref-store.js';
import { parseRefFile } from './ref-store.js';

export interface CheckoutGit {
  /** The git directory (the common one, for a linked worktree). */
  gitDir: string;
  /** A linked worktree's admin folder name under gitDir/worktrees. */
  admin: string | null;
  /** The checkout's `.git` pointer file, when `.git` is one (kept read-only). */
  pointer: string | null;
}

/**
 * The git directory of the checkout whose top is `root`: its `.git` folder,
 * or what a `.git` pointer file names (a submodule's git directory, or a
 * linked worktree's admin folder inside the common directory). Null when
 * there is none it could use; `pointer` alone when the pointer leads nowhere usable.
 */
export function checkoutGit(root: string): CheckoutGit | { pointer: string } | null {
  const dotGit = join(root, '.git');
  const st = lstatSync(dotGit, { throwIfNoEntry: false });
  if (!st) return null;
  // An empty stand-in is no repository: git itself wants HEAD, objects/ and refs/. A .git folder with a commondir is
  // none either (only a linked worktree's admin folder has one): git would take its refs and objects from the folder it
  // names (found in review: an agent's, naming another repository of yours, whose refs the import then wrote).
  if (st.isDirectory()) return isGitDir(dotGit) && lstatSync(join(dotGit, 'commondir'), { throwIfNoEntry: false }) === undefined ? { gitDir: dotGit, admin: null, pointer: null } : null;
  if (!st.isFile()) return null;
  // Read as git reads it (found in review: a pointer git follows, ending in two newlines or past 4 KiB, was taken for
  // none, and the git directory it names, in the tree, left the agent's to write, hooks and all).
  const named = pointerTarget(root);
  if (named === null) return { pointer: dotGit };
  // A path through a link is none of the checkout's (below): judged by its text as well as where the kernel goes.
  const written = gitPathFile(dotGit)!.slice(8);
  if (resolve(root, written) !== named) return { pointer: dotGit };
  if (!lstatSync(named, { throwIfNoEntry: false })?.isDirectory()) return { pointer: dotGit };
  // A pointer file is anyone's to write who writes the tree: the git directory it names is taken only where it names
  // this checkout back (found in review: a .git file an agent left named another repository of yours, which a later
  // run from that folder showed it, and whose refs and index the import wrote). Every path is judged as it really is:
  // one reached through a link is none of the checkout's (found in review: a link in the tree to another repository's
  // .git, whose submodule's relative core.worktree, applied to the text, named the checkout).
  const realRoot = realPathOf(root);
  if (realPathOf(named) !== named) return { pointer: dotGit };
  // As git reads it (its trailing CR/LF dropped, nothing else).
  const common = gitPathFile(join(named, 'commondir'));
  if (!common) return isGitDir(named) && namesBack(named, realRoot) ? { gitDir: named, admin: null, pointer: dotGit } : { pointer: dotGit };
  const commonDir = isAbsolute(common) ? common : resolve(named, common);
  if (realPathOf(commonDir) !== commonDir) return { pointer: dotGit };
  // A linked worktree's admin folder sits in the common directory's worktrees/, its gitdir file naming this checkout's .git.
  if (dirname(named) !== join(commonDir, 'worktrees') || !isGitDir(commonDir)) return { pointer: dotGit };
  const back = readBackText(join(named, 'gitdir'), 4096)?.trim();
  if (!back || realRoot === null || realPathOf(resolve(named, back)) !== join(realRoot, '.git')) return { pointer: dotGit };
  return { gitDir: commonDir, admin: basename(named), pointer: dotGit };
}

/**
 * Whether a git directory named by a checkout's pointer file belongs to it:
 * it lies in the checkout itself (the tree's own, whoever made it), or its
 * core.worktree names the checkout (git's submodules, absorbed into the
 * superproject's .git/modules/).
 */
function namesBack(gitDir: string, realRoot: string | null): boolean {
  if (realRoot === null) return false;
  const real = realPathOf(gitDir);
  if (real !== null && real.startsWith(`${realRoot}/`)) return true;
  const worktree = worktreeOfGitDir(gitDir);
  return typeof worktree === 'string' && realPathOf(kernelJoin(gitDir, worktree)) === realRoot;
}

/**
 * core.worktree of a git config's text (its last value; quotes removed), null when it sets none, or undefined when
 * stashbase cannot tell as git would: "worktree" anywhere but on a plain `worktree = value` line of a plain `[core]`
 * section (a key on the header's own line, `[core] worktree = /x`, found in review; a continued line; escapes,
 * comments or quotes inside the value), or any include (git follows it, and the file it names may set one).
 */
export function coreWorktree(config: string): string | null | undefined {
  let section = '';
  let value: string | null = null;
  let continued = false;
  for (const line of config.split('\n')) {
    const wasContinued = continued;
    continued = /\\\r?$/.test(line);
    const mentions = /worktree/i.test(line);
    if (wasContinued) {
      if (mentions) return undefined;
      continue;
    }
    const head = /^\s*\[([^\]]*)\]\s*(.*)$/.exec(line);
    if (head) {
      const name = (head[1] as string).trim().toLowerCase();
      if (/^include(if\b|$)/.test(name)) return undefined;
      // Anything after the header is a key of that section, as git reads it.
      if (mentions && (head[2] as string).replace(/^[;#].*/, '') !== '') return undefined;
      section = name;
      continue;
    }
    if (!mentions) continue;
    // git's whitespace is C's (space, tab, \v, \f, \r), never JavaScript's \s (no-break spaces among it: found in review).
    const kv = /^[ \t]*([A-Za-z][A-Za-z0-9-]*)[ \t]*(=[ \t]*(.*?))?[ \t]*\r?$/.exec(line);
    if (kv === null) return undefined;
    if ((kv[1] as string).toLowerCase() !== 'worktree') {
      // Another key whose value or name says worktree (extensions.worktreeConfig): git's core.worktree is not it.
      if (section === 'core' && kv[3] !== undefined && /["\\;#]/.test(kv[3])) return undefined;
      continue;
    }
    if (section !== 'core') {
      if (section.startsWith('core')) return undefined;
      continue;
    }
    const v = kv[3];
    // A plain path alone: git turns whitespace inside a value into spaces, and reads quotes, escapes and comments.
    if (v === undefined || !/^"?[A-Za-z0-9._/~+@:,=-]+"?$/.test(v) || (v.startsWith('"') !== v.endsWith('"'))) return undefined;
    value = v.replace(/^"(.*)"$/, '$1');
  }
  return value;
}

/**
 * core.worktree as git takes it for a git directory: its config's, or, where the config turns worktree configs on,
 * config.worktree's over it (found in review: git obeys one there that stashbase never read); undefined when unsure.
 */
export function worktreeOfGitDir(gitDir: string): string | null | undefined {
  const main = coreWorktree(readBackText(join(gitDir, 'config'), 1 << 16) ?? '');
  const own = readBackText(join(gitDir, 'config.worktree'), 1 << 16);
  if (own === null) return lstatSync(join(gitDir, 'config.worktree'), { throwIfNoEntry: false }) === undefined ? main : undefined;
  const over = coreWorktree(own);
  return over === undefined || main === undefined ? undefined : (over ?? main);
}

/**
 * The folder a checkout's `.git` file names, as git reads the file (the whole of it less trailing CR/LF, after
 * "gitdir: ") and as the kernel walks the path (`lnk/../gd` is gd beside where lnk leads: found in review, resolve()
 * took it by its text, and the git directory git used was left the agent's to write), or null.
 */
function pointerTarget(root: string): string | null {
  const text = gitPathFile(join(root, '.git'));
  return text !== null && text.startsWith('gitdir: ') && text.length > 8 ? kernelPath(root, text.slice(8)) : null;
}

/**
 * What of a checkout's git state a run that takes no git directory of its own
 * for it keeps read-only (real paths, those there): the `.git` entry, the git
 * directory git uses (a pointer's, as git reads it), the common directory its
 * commondir names, and where every link in them leads (an `objects` or `refs`
 * kept elsewhere; found in review: linked into the tree, the agent's writes
 * there were your refs and objects). A link that leads nowhere, or a hard link
 * in them (but for the objects' files, which a local clone links), refuses the
 * run: where it leads, or its other name, may be the agent's to make or write.
 */
export function untakenGitState(root: string): string[] {
  const dotGit = join(root, '.git');
  const st = lstatSync(dotGit, { throwIfNoEntry: false });
  if (st === undefined) return [];
  const out = new Set<string>([dotGit]);
  const named = st.isDirectory() ? dotGit : st.isFile() ? pointerTarget(root) : null;
  const gitDir = named === null ? null : realPathOf(named);
  if (gitDir === null || !lstatSync(gitDir, { throwIfNoEntry: false })?.isDirectory()) return [...out];
  const dirs = [gitDir];
  const common = commondirOf(gitDir);
  const realCommon = common === null ? null : realPathOf(common);
  if (realCommon !== null && realCommon !== gitDir && lstatSync(realCommon, { throwIfNoEntry: false })?.isDirectory()) dirs.push(realCommon);
  for (const d of dirs) {
    out.add(d);
    for (const target of linkTargets(d)) out.add(target);
    for (const store of [d, ...moduleGitDirs(d)].flatMap(alternateStores)) out.add(store);
  }
  return [...out];
}

/**
 * The object stores a git directory's objects/info/alternates names, and theirs in turn (git follows five deep), as
 * real paths: your git reads objects there as its own, so a run keeps each read-only wherever it lies (found in review:
 * one in the tree, the agent rewrote an object of your history there, and your checkout wrote its script). A line git
 * would read quoted, which stashbase does not unquote, refuses the run.
 */
export function alternateStores(gitDir: string): string[] {
  const out: string[] = [];
  const walk = (objects: string, depth: number): void => {
    if (depth > 5) return;
    const text = gitPathFile(join(objects, 'info', 'alternates'));
    if (text === null) return;
    for (const line of text.split('\n')) {
      if (line === '' || line.startsWith('#')) continue;
      if (line.startsWith('"')) throw new SandboxUnavailableError(`${join(objects, 'info', 'alternates')} names a store in quotes, which stashbase does not read as git does; nothing was run`);
      const store = kernelPath(objects, line.replace(/\r$/, ''));
      if (out.includes(store)) continue;
      out.push(store);
      walk(store, depth + 1);
    }
  };
  walk(join(gitDir, 'objects'), 1);
  return out;
}

/** The git directories a repository keeps for its submodules (modules/<name>, and theirs in turn), bounded in depth. */
export function moduleGitDirs(gitDir: string): string[] {
  const out: string[] = [];
  // `level`: a folder under modules/ (a submodule's name may hold slashes: modules/a/b); `depth` bounds the whole walk.
  const walk = (level: string, depth: number): void => {
    if (depth > 8) return;
    for (const e of list(level)) {
      if (!e.isDirectory()) continue;
      const sub = join(level, e.name);
      if (lstatSync(join(sub, 'objects'), { throwIfNoEntry: false })?.isDirectory()) {
        out.push(sub);
        walk(join(sub, 'modules'), depth + 1);
      } else walk(sub, depth + 1);
    }
  };
  walk(join(gitDir, 'modules'), 1);
  return out;
}

/** Where each link in a git directory leads (real paths); one leading nowhere, or a hard link outside the objects, refuses the run. */
function linkTargets(gitDir: string): string[] {
  const found: string[] = [];
  let seen = 0;
  const walk = (dir: string, rel: string): void => {
    for (const e of list(dir)) {
      if (++seen > MAX_GIT_ENTRIES) throw new SandboxUnavailableError(`${gitDir} holds more than ${MAX_GIT_ENTRIES} entries, which stashbase cannot judge for a run that keeps it read-only; nothing was run`);
      const path = rel ? `${rel}/${e.name}` : e.name;
      const full = join(dir, e.name);
      if (e.isSymbolicLink()) {
        const real = realPathOf(full);
        // One that leads nowhere yet leads where the agent may make something (a link of its own to your files).
        if (real === null) throw new SandboxUnavailableError(`${gitDir} holds ${printable(path, true)}, a symbolic link that leads nowhere: git would write where it leads, which the agent may make; remove it, or run from another folder; nothing was run`);
        found.push(real);
      } else if (e.isDirectory()) walk(full, path);
      else if (e.isFile() && !/^objects\/([0-9a-f]{2}|pack)\//.test(path) && (lstatSync(full, { throwIfNoEntry: false })?.nlink ?? 1) > 1) {
        throw new SandboxUnavailableError(`${gitDir} holds ${printable(path, true)} (a hard link: the same file has another name, which the agent may be able to write); nothing was run`);
      }
    }
  };
  walk(gitDir, '');
  return found;
}

/**
 * What keeps the `.git` folder at a checkout's top from getting a git
 * directory of the run's own (checkoutGit took none): git itself follows links
 * there (an `objects` or `refs` linked to a store elsewhere), so it may well be
 * your repository. The run then leaves it read-only as a whole (found in
 * review: left as a folder of the tree, the agent wrote its HEAD, refs and
 * reflogs live, a link there among them).
 */
export function untakenGitDirWhy(dotGit: string): string {
  for (const [name, what] of [['HEAD', 'file'], ['objects', 'dir'], ['refs', 'dir']] as const) {
    const st = lstatSync(join(dotGit, name), { throwIfNoEntry: false });
    if (st === undefined) return `has no ${name}`;
    if (st.isSymbolicLink()) return `has ${name} as a symbolic link`;
    if (what === 'file' ? !st.isFile() : !st.isDirectory()) return `has ${name} as no ${what === 'file' ? 'file' : 'folder'}`;
  }
  if (lstatSync(join(dotGit, 'commondir'), { throwIfNoEntry: false }) !== undefined) return 'has a commondir, which only a linked worktree\'s admin folder has';
  return repoFormat(dotGit).reftable ? 'keeps its refs in the reftable format, which stashbase does not import' : UNREAD;
}

const UNREAD = 'is not a git directory stashbase reads';

/** The warning for such a `.git` folder. */
export function untakenGitDirWarning(dotGit: string): string {
  return `${dotGit} ${untakenGitDirWhy(dotGit)}: the run gets no git directory of its own for it, and it is read-only in this run (the agent's git cannot commit there)`;
}

/** The warning for a checkout whose `.git` (a folder, or a file naming one) the run takes no git directory of its own for; null when there is none. */
export function untakenWarning(root: string): string | null {
  const dotGit = join(root, '.git');
  const st = lstatSync(dotGit, { throwIfNoEntry: false });
  if (st?.isDirectory()) return untakenGitDirWarning(dotGit);
  const named = st?.isFile() ? pointerTarget(root) : null;
  if (named === null || !lstatSync(named, { throwIfNoEntry: false })?.isDirectory()) return null;
  const why = untakenGitDirWhy(named);
  return `${dotGit} names ${named}, which ${why === UNREAD ? 'does not name this checkout back' : why}: the run gets no git directory of its own for it, and it is read-only in this run (the agent's git cannot commit there)`;
}

/** What git takes for a git directory: a HEAD file, an objects/ and a refs/ folder. */
function isGitDir(dir: string): boolean {
  const is = (name: string, what: 'file' | 'dir') => {
    const st = lstatSync(join(dir, name), { throwIfNoEntry: false });
    return what === 'file' ? st?.isFile() === true : st?.isDirectory() === true;
  };
  return is('HEAD', 'file') && is('objects', 'dir') && is('refs', 'dir');
}

/** Where your object store appears inside the sandbox, beside the run's own. */
export const SHARED_OBJECTS = 'stashbase-objects';

/** Files of a git directory that git obeys: bound read-only from yours, never copied. */
const OBEYED = new Set(['config', 'config.worktree', 'commondir']);

/** Folders the run gets copies of; `objects` is the run's own, `worktrees` is built (a linked worktree's admin folder copied, others bound). */
const COPIED_DIRS = new Set(['refs', 'logs']);

export interface RunGitDirPlan {
  /** Your git directory (the common one of every worktree). */
  gitDir: string;
  /** The name of a linked worktree's admin folder under worktrees/, when the run's checkout is one. */
  admin: string | null;
  /** The run's own git directory, in the run directory. */
  dir: string;
  objectFormat: 'sha1' | 'sha256';
  /** Top-level names copied in (files, and refs/ logs/). */
  copies: string[];
  /** Top-level names bound read-only from yours, with what they are. */
  readOnly: Array<{ name: string; dir: boolean }>;
  /** Other worktrees' admin folders bound read-only (none when they are hidden). */
  otherWorktrees: string[];
  /**
   * The run's own branch when stashbase made it (a worktree run's
   * refs/heads/stashbase/<name>): HEAD may then point at it alone. Null: the
   * branch the checkout is on when the run starts.
   */
  fixedOwn: string | null;
  /** What the sandbox mounts, outermost first. */
  mounts: BindMount[];
  /** The checkout's top, whose files the index may stage (lib/git/index-import.ts); absent in a record made before it was kept. */
  workTree?: string;
  /** The run's working tree is not on this machine (a remote run): the branch your checkout has is one checked out elsewhere. */
  remote?: true;
}

export interface StartState {
  refs: Array<[string, RefValue]>;
  /** The HEAD the run's checkout has (a linked worktree's own), as copied. */
  head: RefValue | null;
  /** Stamps of the run's HEAD and index copies, and of yours, as the run started. */
  runHead: Stamp | null;
  runIndex: Stamp | null;
  yourHead: Stamp | null;
  yourIndex: Stamp | null;
  /**
   * Your object store's files with other names (hard links: a local clone's, perhaps in the tree), stamped as the run
   * started: the agent may rewrite one through another name, which no mount keeps read-only (found in review). Checked
   * against their names where they changed (lib/git/import.ts).
   */
  linked?: Array<[string, Stamp]>;
}

export interface RunGitDirRecord {
  version: 1;
  plan: Omit<RunGitDirPlan, 'mounts'>;
  /** The run's own branch (full name), or null. */
  own: string | null;
  start: StartState;
}

/** The files of a git directory's object store (loose objects, packs and their indexes) that have other names, stamped. */
function linkedObjects(gitDir: string): Array<[string, Stamp]> {
  const out: Array<[string, Stamp]> = [];
  const objects = join(gitDir, 'objects');
  let seen = 0;
  for (const sub of list(objects)) {
    if (!sub.isDirectory() || !/^([0-9a-f]{2}|pack)$/.test(sub.name)) continue;
    for (const e of list(join(objects, sub.name))) {
      if (++seen > MAX_GIT_ENTRIES || !e.isFile()) continue;
      const path = join(objects, sub.name, e.name);
      const st = lstatSync(path, { throwIfNoEntry: false });
      if (st !== undefined && st.nlink > 1) out.push([path, stampOfStats(st)]);
    }
  }
  return out;
}

/** What tells a file changed: the inode, size and both times (a ctime no one can set back). */
export interface Stamp {
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

export function stampOf(path: string): Stamp | null {
  const st = lstatSync(path, { throwIfNoEntry: false });
  return st ? stampOfStats(st) : null;
}

const stampOfStats = (st: Stats): Stamp => ({ ino: st.ino, size: st.isFile() ? st.size : -1, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs });

export const sameStamp = (a: Stamp | null, b: Stamp | null): boolean =>
  a === null || b === null ? a === b : a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;

function list(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch {
    return [];
  }
}

/** The object format and ref storage your config names. */
export function repoFormat(gitDir: string): { objectFormat: 'sha1' | 'sha256'; reftable: boolean } {
  const config = readBackText(join(gitDir, 'config'), 1 << 20) ?? '';
  return { objectFormat: /^\s*objectformat\s*=\s*sha256\s*$/im.test(config) ? 'sha256' : 'sha1', reftable: /^\s*refstorage\s*=\s*reftable\s*$/im.test(config) };
}

/**
 * The plan for a run over your git directory `gitDir` (and, for a checkout
 * that is a linked worktree, its admin folder `admin`); `hideOthers`: other
 * worktrees' admin folders are not shown at all (a Docker worktree run).
 * Reads what your git directory holds; writes nothing.
 */
export function planRunGitDir(o: { gitDir: string; admin: string | null; stateDir: string; hideOthers: boolean; own?: string; workTree?: string; remote?: true }): RunGitDirPlan {
  const dir = join(o.stateDir, 'git');
  const copies: string[] = [];
  const readOnly: Array<{ name: string; dir: boolean }> = [];
  // A link is bound as what it names: only one that stays in the git directory (found in review: a git directory the agent
  // made in the tree, named by a .git file, held links to your files, which a later run bound in for it to read).
  const realG = realPathOf(o.gitDir);
  const staysIn = (name: string) => {
    const real = realPathOf(join(o.gitDir, name));
    return realG !== null && real !== null && real.startsWith(`${realG}/`);
  };
  // The import writes here with git, which follows what it finds: nothing in it may lead elsewhere but the links git
  // only reads (hooks, config: those leaving it are not bound, above) (found in review: a
  // git directory the agent made in the tree, its reflog linked to your ~/.bashrc, took the import's appended line).
  // A hook that is a link (hooks is bound read-only at its own path: ../../scripts/x leads where it does outside) is
  // yours to keep: nothing writes there, and what it leads to is kept read-only in the run as what your git runs
  // (lib/git/named-files.ts; review, round 34: a run was refused for one, git's common set-up). Only a hook's own
  // name, right in hooks: a link of any other name there leads to what nothing keeps (a `pre-commit.d` folder of
  // scripts your hook runs: found in review of that change), and refuses the run as before.
  const led = gitDirLink(o.gitDir, () => true, () => true, (path) => path.startsWith('hooks/') && HOOK_NAMES.has(path.slice('hooks/'.length)));
  if (led !== null) throw new SandboxUnavailableError(`${o.gitDir} holds ${printable(led, true)}, through which the run's import would write elsewhere: remove it (an agent may have left it there), or run from another folder; nothing was run`);
  for (const e of list(o.gitDir)) {
    if (e.name === 'objects' || e.name === 'worktrees' || e.name === SHARED_OBJECTS) continue;
    if (e.isSymbolicLink() && !staysIn(e.name)) continue;
    if (e.isFile() && !OBEYED.has(e.name)) {
      // Another git's lock (index.lock, packed-refs.lock): its work under way, not the repository's state.
      if (!e.name.endsWith('.lock')) copies.push(e.name);
    }
    else if (e.isDirectory() && COPIED_DIRS.has(e.name)) copies.push(e.name);
    else if (e.isDirectory() || e.isFile() || e.isSymbolicLink()) readOnly.push({ name: e.name, dir: !e.isFile() && lstatSync(join(o.gitDir, e.name)).isDirectory() });
  }
  const worktreesLinked = lstatSync(join(o.gitDir, 'worktrees'), { throwIfNoEntry: false })?.isSymbolicLink() === true;
  const otherWorktrees = o.hideOthers || worktreesLinked ? [] : list(join(o.gitDir, 'worktrees')).filter((e) => e.isDirectory() && e.name !== o.admin).map((e) => e.name);
  const g = o.gitDir;
  const mounts: BindMount[] = [
    { src: dir, dest: g, ro: false },
    { src: join(g, 'objects'), dest: join(g, SHARED_OBJECTS), ro: true },
    ...readOnly.map((r) => ({ src: join(g, r.name), dest: join(g, r.name), ro: true })),
    ...otherWorktrees.map((n) => ({ src: join(g, 'worktrees', n), dest: join(g, 'worktrees', n), ro: true })),
  ];
  return { gitDir: g, admin: o.admin, dir, objectFormat: repoFormat(g).objectFormat, copies, readOnly, otherWorktrees, fixedOwn: o.own ?? null, mounts, ...(o.workTree !== undefined ? { workTree: o.workTree } : {}), ...(o.remote ? { remote: true as const } : {}) };
}

/** Copies a folder's subfolders and regular files (a link or a special file of yours is not carried into the run). */
function copyTree(src: string, dest: string): void {
  mkdirSync(dest, { recursive: true, mode: 0o700 });
  for (const e of list(src)) {
    if (e.isDirectory()) copyTree(join(src, e.name), join(dest, e.name));
    // A lock is another git's work under way (another run's import, your own git), gone the next moment: not copied.
    else if (e.isFile() && !e.name.endsWith('.lock')) copyIfThere(join(src, e.name), join(dest, e.name));
  }
}

/** Copies a file that another git may remove meanwhile (a ref it deletes, a loose ref it packs): gone, it is not copied. */
function copyIfThere(src: string, dest: string): void {
  try {
    copyFileSync(src, dest);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

/** The folder of the run's HEAD and index: the admin folder of a linked worktree, else the top. */
export const checkoutDir = (root: string, admin: string | null) => (admin === null ? root : join(root, 'worktrees', admin));

/**
 * Makes the run's git directory and writes its record beside it; returns the
 * record's file. The run's own branch is the one its checkout is on.
 */
export function createRunGitDir(plan: RunGitDirPlan): { record: RunGitDirRecord; file: string } {
  const { dir, gitDir: g } = plan;
  mkdirSync(dirname(dir), { recursive: true, mode: 0o700 });
  mkdirSync(dir, { mode: 0o700 });
  for (const name of plan.copies) {
    if (COPIED_DIRS.has(name)) copyTree(join(g, name), join(dir, name));
    else copyIfThere(join(g, name), join(dir, name));
  }
  mkdirSync(join(dir, 'refs', 'heads'), { recursive: true });
  mkdirSync(join(dir, 'refs', 'tags'), { recursive: true });
  mkdirSync(join(dir, 'objects', 'info'), { recursive: true });
  mkdirSync(join(dir, 'objects', 'pack'));
  writeFileSync(join(dir, 'objects', 'info', 'alternates'), `${join(g, SHARED_OBJECTS)}\n`);
  // Mount points of what is bound in.
  mkdirSync(join(dir, SHARED_OBJECTS));
  for (const r of plan.readOnly) {
    if (r.dir) mkdirSync(join(dir, r.name));
    else writeFileSync(join(dir, r.name), '');
  }
  if (plan.admin !== null || plan.otherWorktrees.length > 0) mkdirSync(join(dir, 'worktrees'));
  for (const n of plan.otherWorktrees) mkdirSync(join(dir, 'worktrees', n));
  if (plan.admin !== null) {
    const from = join(g, 'worktrees', plan.admin);
    const to = join(dir, 'worktrees', plan.admin);
    mkdirSync(to);
    for (const e of list(from)) {
      if (e.isFile()) copyFileSync(join(from, e.name), join(to, e.name));
      else if (e.name === 'logs' && e.isDirectory()) copyTree(join(from, e.name), join(to, e.name));
    }
  }
  const here = checkoutDir(dir, plan.admin);
  const yours = checkoutDir(g, plan.admin);
  const headText = readBackText(join(here, 'HEAD'), 4096);
  const head = headText === null ? null : parseRefFile(headText);
  const { mounts: _, ...kept } = plan;
  const record: RunGitDirRecord = {
    version: 1,
    plan: kept,
    own: plan.fixedOwn ?? (head?.kind === 'symref' && head.target.startsWith('refs/heads/') ? head.target : null),
    start: {
      refs: [...readRefStore(dir).refs],
      head,
      runHead: stampOf(join(here, 'HEAD')),
      runIndex: stampOf(join(here, 'index')),
      yourHead: stampOf(join(yours, 'HEAD')),
      yourIndex: stampOf(join(yours, 'index')),
      linked: linkedObjects(g),
    },
  };
  const file = `${dir}.json`;
  writeFileSync(file, JSON.stringify(record), { mode: 0o600 });
  return { record, file };
}

/** The plan as the dry run shows it. */
export function plannedGitDir(p: RunGitDirPlan): PlannedGitDir {
  return { dir: p.dir, at: p.gitDir, copies: p.copies, readOnly: p.readOnly.map((r) => r.name), admin: p.admin, otherWorktrees: p.otherWorktrees, shared: join(p.gitDir, SHARED_OBJECTS) };
}
