// Where the repository around a working directory is: the nearest folder up
// the tree that holds a `.git` (a directory, or a worktree's pointer file).
import { existsSync, lstatSync, readlinkSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { readBackText } from '../readback/file.js';
import { probe } from '../exec.js';
import { findTool } from '../util/find-tool.js';
import { commondirOf, gitPathFile, realOrSelf } from './planted-repos.js';
import { gitPath, namedByGit } from './named-files.js';
import { rulePaths } from '../paths/rules.js';
import { noteLinks } from '../paths/protected-links.js';

export interface RepoRoot {
  root: string;
  /** The `.git` directory, when `.git` is one (not a worktree's pointer file). */
  gitDir: string | null;
}

export function findRepoRoot(cwd: string): RepoRoot | null {
  for (let dir = cwd; ; dir = dirname(dir)) {
    const st = statSync(join(dir, '.git'), { throwIfNoEntry: false });
    if (st) return { root: dir, gitDir: st.isDirectory() ? join(dir, '.git') : null };
    if (dirname(dir) === dir) return null;
  }
}

/**
 * Why a run cannot start in a checkout whose `.git` is a symbolic link (or
 * null): the link is an entry of the working tree, which the agent writes,
 * and no mount can keep an entry that is a link from being removed. An agent
 * could replace it with a repository of its own, whose config your git would
 * obey at your next command there. A `gitdir:` file does the same job and is
 * protected like any file.
 */
export function gitLinkProblem(cwd: string): string | null {
  const repo = findRepoRoot(cwd);
  if (repo === null) return null;
  const dotGit = join(repo.root, '.git');
  if (!lstatSync(dotGit, { throwIfNoEntry: false })?.isSymbolicLink()) return null;
  return `${dotGit} is a symbolic link, which the agent could replace with a repository your git would then obey; make it a gitdir file instead (rm ${dotGit} && echo "gitdir: $(realpath <its target>)" > ${dotGit}); nothing was run`;
}

/**
 * What a stand-in at a missing git file must hold, or null when the path is
 * not one: a file wherever it is (git dies on a directory there), "." for a
 * git directory's own commondir (read as "here"; an empty one is fatal), empty
 * for config.worktree. A linked worktree's commondir always exists.
 */
export function gitFileStandIn(path: string): string | null {
  if (/\/\.git\/(modules\/[^/]+\/)?commondir$/.test(path)) return '.\n';
  if (/\/\.git\/((modules|worktrees)\/[^/]+\/)?config\.worktree$/.test(path)) return '';
  return null;
}

/** The names in a git directory of the files git runs or obeys (info/exclude hides files from your git status). */
const GIT_FILES = ['hooks', 'config', 'commondir', 'config.worktree', 'info'];

/** A git directory's hooks or info folder: when missing, an empty folder stands in, so none can be made. */
export const isGitFolderStandIn = (path: string) => /\/\.git\/((modules|worktrees)\/[^/]+\/)?(hooks|info)$/.test(path);

function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => join(dir, e.name));
  } catch {
    return [];
  }
}

/**
 * The repository's git files that git executes or obeys: never writable by an
 * agent. `commondir` would point git at another directory's config (and its
 * core.fsmonitor): while missing, it gets a stand-in file holding "." (this
 * directory itself), which git reads as no redirection at all.
 * `config.worktree` is read with extensions.worktreeConfig: while missing, an
 * empty stand-in (an empty config). The same for the git directory of each
 * submodule (`.git/modules/*`: your git status visits them), and, for each
 * linked worktree's admin folder (`.git/worktrees/*`), its pointer files and
 * `config.worktree`.
 */
export function executableGitState(cwd: string): string[] {
  const repo = findRepoRoot(cwd);
  // A linked worktree's or a submodule's checkout: its .git pointer file, which "gitdir: <a folder of the agent's>" would redirect.
  if (repo && !repo.gitDir) return [join(repo.root, '.git')];
  if (!repo?.gitDir) return [];
  const gitDir = repo.gitDir;
  const out = GIT_FILES.map((f) => join(gitDir, f));
  for (const m of subdirs(join(gitDir, 'modules'))) out.push(...GIT_FILES.map((f) => join(m, f)));
  for (const w of subdirs(join(gitDir, 'worktrees'))) {
    out.push(join(w, 'config.worktree'));
    for (const f of ['commondir', 'gitdir']) if (existsSync(join(w, f))) out.push(join(w, f));
  }
  return out;
}

/** The value of core.hooksPath in a git config file's text, or null (includes are not followed). */
export function coreHooksPath(text: string): string | null {
  let section = '';
  let found: string | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/^\s+/, '');
    const head = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]\s*(.*)$/.exec(line);
    if (head) {
      section = (head[1] as string).toLowerCase();
      continue;
    }
    if (section !== 'core') continue;
    const kv = /^hookspath\s*=\s*(.*)$/i.exec(line);
    if (!kv) continue;
    let v = (kv[1] as string).replace(/\s+[#;].*$/, '').trim();
    if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) v = v.slice(1, -1).replace(/\\(["\\])/g, '$1');
    found = v; // the last one wins, as in git
  }
  return found || null;
}

/**
 * What the repository's git config makes your git run, for the sandbox to
 * keep read-only: where hooks come from when core.hooksPath names a folder (a
 * folder the agent could otherwise fill with hooks that your next commit
 * runs), and every config file git reads for this repository outside its git
 * directory (an include.path or includeIf naming a file in the working tree,
 * where the agent could add core.fsmonitor). The hooksPath each config file
 * sets (the global ones name the folder of all your repositories), and in a
 * repository what git itself reads (one `git config --list --show-origin`:
 * the system config and every include and includeIf). Relative paths are
 * taken from the repository's top, as git does.
 */
export function gitConfigTargets(cwd: string, home: string, env: NodeJS.ProcessEnv, allowWrite: string[] = []): GitTargets {
  // Asked by the run's plan and by its end-of-run check: one git for both.
  const key = JSON.stringify([cwd, home, env.PATH ?? '', env.XDG_CONFIG_HOME ?? '', allowWrite]);
  const known = asked.get(key);
  if (known !== undefined) return known;
  const found = askGitConfigTargets(cwd, home, env, allowWrite);
  asked.set(key, found);
  return found;
}

const asked = new Map<string, GitTargets>();

function askGitConfigTargets(cwd: string, home: string, env: NodeJS.ProcessEnv, allowWrite: string[]): GitTargets {
  const repo = findRepoRoot(cwd);
  const git = repo ? findTool('git', env) : null;
  const xdg = env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : join(home, '.config');
  const configs = [join(home, '.gitconfig'), join(xdg, 'git', 'config'), ...(repo?.gitDir ? [join(repo.gitDir, 'config')] : [])];
  const out = new Set<string>();
  const files = new Set<string>();
  const madeAside = new Set<string>();
  const named = new Set<string>();
  for (const file of configs) {
    const v = coreHooksPath(readBackText(file, 1 << 20) ?? '');
    if (v !== null && (repo !== null || isAbsolute(v) || v === '~' || v.startsWith('~/'))) out.add(gitPath(v, repo?.root ?? '/', home));
  }
  if (!repo || !git) return { paths: [...out], files: [], madeAside: [], links: [] };
  const gitDir = repo.gitDir ? realOrSelf(repo.gitDir) : realOrSelf(join(repo.root, '.git'));
  // Those the sandbox could write: in the working tree (or your home, under deny-list writes); not in the git directory, whose view keeps them.
  const root = realOrSelf(repo.root);
  const realHome = realOrSelf(home);
  const opened = new Set(rulePaths(allowWrite, home, cwd).flatMap((p) => [p, realOrSelf(p)]));
  // And where allow_write lets the agent write elsewhere (review, round 34: a hook linked to /srv/hooks/pre-commit, a folder
  // the profile opened, was the agent's to rewrite).
  const writable = [root, realHome, ...[...opened].filter((p) => p !== '/')];
  const keep = (path: string): boolean => {
    const inGitDir = path === gitDir || path.startsWith(gitDir + '/');
    const kept = !inGitDir && writable.some((w) => path.startsWith(w + '/'));
    if (kept) out.add(path);
    return kept;
  };
  /**
   * A folder git runs hooks from (core.hooksPath's, a waiting include's, or the git directory's own): kept as named, and
   * where it really leads, made where missing, when that is elsewhere (review, round 34: `.git/hooks -> ../githooks`,
   * with core.hooksPath naming .git/hooks or not, or leading to a folder missing at the start, left the agent's hooks to
   * write); its links on the way noted, and put back as the run ends (a `tools` link replaced by a folder).
   */
  const keepHooks = (hooks: string, named_: boolean) => {
    if (named_) out.add(hooks);
    const target = realOrMissing(finalTarget(hooks));
    if (target !== hooks && target !== gitDir && !target.startsWith(gitDir + '/')) out.add(target);
    if (named_ || target !== hooks) named.add(hooks);
  };
  // The other folders of a git directory git reads and a link may lead out of (`info`: exclude, attributes, grafts).
  for (const common of new Set(checkoutsIn(repo).map(commonGitDir))) {
    if (common === null) continue;
    for (const name of ['info', 'branches', 'remotes']) {
      const p = join(common, name);
      if (lstatOrNone(p)?.isSymbolicLink()) keepHooks(p, false);
    }
  }
  const waitingRead = new Map<string, Array<{ key: string; value: string }>>();
  // Each checkout your git works in inside the tree: the repository's, your linked worktrees and its submodules'
  // (review, round 33: the files their own config and hooks named were writable, and your git status there ran them).
  for (const top of checkoutsIn(repo)) {
    const listed = probe({ file: git, args: ['-C', top.root, 'config', '--list', '--show-origin', '-z'], env: { HOME: home } });
    if (listed.code !== 0) continue;
    const { hooksPath, files: listedFiles, entries } = parseConfigList(listed.stdout);
    const hooks = hooksPath ? gitPath(hooksPath, top.root, home) : hooksFolder(top);
    if (hooks) keepHooks(hooks, hooksPath !== null);
    // The git directory's own, whatever core.hooksPath says now (an includeIf may name another once you switch branch).
    const own = hooksFolder(top);
    if (own !== null && own !== hooks) keepHooks(own, false);
    for (const f of listedFiles) keep(realOrSelf(resolve(top.root, f)));
    // Every file an include names, whether it holds anything yet or not (review, round 33: a missing or empty
    // one was passed by, and the agent wrote core.fsmonitor there), missing ones with a file for a stand-in
    // (git takes a folder there for a bad config, and an empty file for none).
    const includes = includeTargets(entries, top.root, home);
    for (const include of includes) {
      // A missing file by its folder's real path (through a link to elsewhere, its stand-in would be made there).
      const path = realOrMissing(include);
      if (keep(path)) files.add(path);
      // As named, wherever it really lies (review, round 33, second pass: a link to a folder outside the tree and your home was swapped).
      named.add(include);
    }
    // Files a value of your config or one of your hooks names (a filter's `sh scripts/clean.sh`, a hook linked to a
    // script of the tree: review, round 33), where they exist: your next git command runs or reads them.
    // One a profile names in allow_write (that path itself, not a folder above it) is the agent's to write.
    // A missing one named as a path (`scripts/clean.sh`) that the run makes is moved aside as it ends.
    // What an include whose condition is not met yet would add (review, round 33, second pass: its filter's script was
    // writable, and a switch of branch made your git run it): read from its file.
    const listedReal = new Set(listedFiles.map((f) => realOrSelf(resolve(top.root, f))));
    const waiting = includes.filter((t) => !listedReal.has(realOrSelf(t)) && statOrNone(t)?.isFile() === true).slice(0, 16);
    const more = waiting.flatMap((t) => {
      // The same file (a global includeIf's) is read once for every checkout.
      const known = waitingRead.get(t);
      if (known !== undefined) return known;
      const r = probe({ file: git, args: ['config', '--file', t, '--list', '-z'], env: { HOME: home } });
      const read = r.code !== 0 ? [] : r.stdout.split('\0').filter((x) => x !== '').map(keyAndValue);
      waitingRead.set(t, read);
      return read;
    });
    // The hooks folder a waiting include would name (review, round 34: `includeIf "onbranch:release"`'s, writable until then).
    for (const e of more) if (e.key.toLowerCase() === 'core.hookspath' && e.value !== '') keepHooks(gitPath(e.value, top.root, home), true);
    const byGit = namedByGit({ top: top.root, home, entries: [...entries, ...more], hooks });
    // A hook that runs python -m from the top: a module made there would be imported first (review, round 34: the
    // pre-commit framework's launcher took the agent's cfgv.py). Each name its Python can import: made by the run, moved
    // aside as it ends; one there already is the repository's own, left as it is (found in review: kept read-only, a
    // project's own package, which its environment's .pth named, was closed to the agent's edits).
    for (const rel of pythonShadows(byGit.pythons)) {
      const p = join(top.root, rel);
      if (lstatOrNone(p) === undefined) madeAside.add(p);
    }
    for (const n of byGit.files) {
      // A folder is named to the merge review alone: kept whole, it would hold the agent's work (a cd into packages/web).
      if (n.folder || opened.has(n.abs) || opened.has(realOrSelf(n.abs))) continue;
      // A link to a link to nothing yet: the name at its end (review, round 34: made by the agent, your hook ran it).
      const dangling = lstatOrNone(n.abs)?.isSymbolicLink() === true && statOrNone(n.abs) === undefined;
      const at = dangling ? finalTarget(n.abs) : n.abs;
      const st = lstatOrNone(at);
      if (st === undefined) {
        // (Not inside a .git, the git directory's own or a .git file's: review, round 33, ENOTDIR ended the run's check.)
        if (at.startsWith(repo.root + '/') && !/(^|\/)\.git(\/|$)/.test(at.slice(repo.root.length + 1))) madeAside.add(at);
        named.add(n.abs);
        continue;
      }
      // A file, or a link to one; a folder a hook is a link to (your git fails on it now, but a script there would run:
      // round 34), never another folder a link leads to; the links on the way wherever it lies.
      const is = statOrNone(n.abs);
      if (is?.isFile() === true || (is?.isDirectory() === true && n.linkedHook === true)) keep(realOrSelf(n.abs));
      named.add(n.abs);
    }
  }
  // The links in the tree on the way to each (it, a folder above it, or on the way to what one leads to).
  const links = noteLinks([...named], [repo.root, root]).map((l) => l.path);
  return { paths: [...out], files: [...files], madeAside: [...madeAside], links };
}

/** What lstat and stat say of a path, or nothing where they cannot (missing, or through a file: a `.git` file's `.git/hooks/x`, review, round 33: ENOTDIR ended the run). */
export const lstatOrNone = (p: string) => {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
};
export const statOrNone = (p: string) => {
  try {
    return statSync(p);
  } catch {
    return undefined;
  }
};

/**
 * What a module made at a checkout's top would shadow, where its hooks (or a
 * hook framework's entries) run `python -m` from there with `pythons`
 * (namedByGit's): `<name>.py` and `<name>/__init__.py` for each name they
 * import (a package shadows only with its __init__.py; a folder without one is
 * a namespace portion, which a module found later on the path wins over).
 * Relative to the top; none where no hook runs python -m.
 */
export function pythonShadows(pythons: string[]): string[] {
  return pythons.length === 0 ? [] : importableNames(pythons).flatMap((n) => [`${n}.py`, `${n}/__init__.py`]);
}

/** The module names a Python imports (its standard library's and those its site folders hold): at most this many. */
const MAX_MODULES = 8192;
let systemModules: string[] | null = null;

/**
 * The top-level module names the Pythons can import: the system's python3
 * (from /usr/bin or /bin alone, isolated, from /) asked once; another Python
 * named by a path (the pre-commit launcher's INSTALL_PYTHON, a virtual
 * environment's) never run, its site-packages folders read instead (found in
 * review: a Python the hook names may be one the agent can write).
 */
function importableNames(pythons: string[]): string[] {
  const out = new Set<string>();
  if (systemModules === null) {
    const file = findTool('python3', { PATH: '/usr/bin:/bin' });
    const r = file === null ? null : probe({ file, args: ['-I', '-c', PY_MODULES], cwd: '/', env: { PATH: '/usr/bin:/bin' } }, 10_000, 1 << 20);
    systemModules = (r === null || r.code !== 0 ? [] : r.stdout.split('\n')).filter(isModuleName).slice(0, MAX_MODULES);
  }
  for (const n of systemModules) out.add(n);
  for (const py of pythons) {
    if (!isAbsolute(py)) continue;
    // <env>/bin/python → <env>/lib/python3.*/site-packages (read, not run).
    const lib = join(dirname(dirname(py)), 'lib');
    let versions: string[] = [];
    try {
      versions = readdirSync(lib).filter((d) => /^python3(\.\d+)?$/.test(d)).slice(0, 4);
    } catch {
      continue;
    }
    for (const v of versions) {
      let entries: string[] = [];
      try {
        entries = readdirSync(join(lib, v, 'site-packages')).slice(0, MAX_MODULES);
      } catch {
        continue;
      }
      for (const e of entries) {
        // A module, a package, an extension (`x.cpython-311-….so`); not a .pth (it names other folders) nor metadata.
        const name = e.endsWith('.py') ? e.slice(0, -3) : e.includes('.') ? e.split('.')[0]! : e;
        if (isModuleName(name) && !/\.(dist|egg)-info$|\.pth$/.test(e)) out.add(name);
      }
    }
  }
  return [...out].slice(0, MAX_MODULES);
}

const isModuleName = (n: string) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(n);

/** The standard library's names and those the site folders hold, in one process. */
const PY_MODULES = "import sys, pkgutil\nnames = set(getattr(sys, 'stdlib_module_names', ())) | set(sys.builtin_module_names) | {m.name for m in pkgutil.iter_modules()}\nprint('\\n'.join(sorted(names)))";

/** Where a chain of links from `p` ends (a path that is no link, or is missing), followed as written; `p` itself when it is no link. */
function finalTarget(p: string): string {
  let at = p;
  for (let hop = 0; hop < 16; hop++) {
    if (lstatOrNone(at)?.isSymbolicLink() !== true) return at;
    try {
      at = resolve(dirname(at), readlinkSync(at));
    } catch {
      return at;
    }
  }
  return at;
}

/** A path's real form; a missing one's by its folder's (through a link to elsewhere, it would be made there). */
function realOrMissing(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return join(realOrSelf(dirname(p)), basename(p));
  }
}

/** The files the include entries name (include.path, includeIf.<condition>.path, whatever the condition), as git takes them: relative to the file that names them. */
export function includeTargets(entries: readonly ConfigEntry[], top: string, home: string): string[] {
  const out: string[] = [];
  for (const e of entries) {
    if (!/^(include\.path|includeif\..*\.path)$/is.test(e.key) || !e.origin.startsWith('file:') || e.value === '') continue;
    const from = resolve(top, e.origin.slice(5));
    out.push(gitPath(e.value, dirname(from), home));
  }
  return out;
}

/** The most checkouts looked into, and how deep submodules are followed. */
const MAX_CHECKOUTS = 64;
const SUBMODULE_DEPTH = 3;

/**
 * The checkouts inside the repository's tree your git works in: the tree's own
 * first, your linked worktrees placed inside it, and the submodules checked out
 * in any of them (their `.gitmodules` paths holding a `.git`), a few levels deep.
 */
export function checkoutsIn(repo: RepoRoot): RepoRoot[] {
  const tops: RepoRoot[] = [repo];
  const seen = new Set([repo.root]);
  const add = (dir: string): boolean => {
    if (seen.has(dir) || tops.length >= MAX_CHECKOUTS || !dir.startsWith(repo.root + '/')) return false;
    const st = lstatOrNone(join(dir, '.git'));
    if (!st || st.isSymbolicLink()) return false;
    seen.add(dir);
    tops.push({ root: dir, gitDir: st.isDirectory() ? join(dir, '.git') : null });
    return true;
  };
  const common = commonGitDir(repo);
  if (common !== null) {
    let names: string[] = [];
    try {
      names = readdirSync(join(common, 'worktrees')).slice(0, MAX_CHECKOUTS);
    } catch {
      // no linked worktrees
    }
    for (const n of names) {
      const pointer = gitPathFile(join(common, 'worktrees', n, 'gitdir'));
      if (pointer !== null && isAbsolute(pointer)) add(dirname(pointer));
    }
  }
  let level = tops.slice();
  for (let depth = 0; depth < SUBMODULE_DEPTH && level.length > 0; depth++) {
    const next: RepoRoot[] = [];
    for (const t of level) {
      const text = readBackText(join(t.root, '.gitmodules'), 1 << 20) ?? '';
      // Line by line (review, round 33, second pass: one pattern over the whole file took minutes on a file of blanks).
      for (const line of text.split('\n')) {
        const m = /^path\s*=\s*(.*)$/.exec(line.trim());
        if (!m) continue;
        const dir = resolve(t.root, (m[1] as string).trim().replace(/^"(.*)"$/, '$1'));
        if (add(dir)) next.push(tops[tops.length - 1] as RepoRoot);
      }
    }
    level = next;
  }
  return tops;
}

/** A checkout's common git directory: its `.git`, or where its pointer's commondir leads. */
function commonGitDir(top: RepoRoot): string | null {
  if (top.gitDir !== null) return top.gitDir;
  const pointer = gitPathFile(join(top.root, '.git'));
  const m = pointer === null ? null : /^gitdir: (.+)$/.exec(pointer);
  if (!m) return null;
  const gitDir = resolve(top.root, m[1] as string);
  return commondirOf(gitDir) ?? gitDir;
}

/** What a run keeps read-only for git's config (gitConfigTargets): every path, and those of them that stand in as files where missing. */
export interface GitTargets {
  paths: string[];
  files: string[];
  /** Missing files in the tree your config or hooks name as paths: moved aside at the run's end if the run makes them. */
  madeAside: string[];
  /** Links in the tree on the way to what your config and hooks name (lib/paths/protected-links.ts noteLinks): put back as the run ends. */
  links: string[];
}

/** The folder git runs a checkout's hooks from when core.hooksPath does not say: its common git directory's hooks. */
function hooksFolder(top: RepoRoot): string | null {
  const common = commonGitDir(top);
  return common === null ? null : join(common, 'hooks');
}

/** One entry of `git config --list --show-origin -z`: where it came from (`file:…`, `command line:`), its key (lower-case section and name), its value. */
export interface ConfigEntry {
  origin: string;
  key: string;
  value: string;
}

/** One `-z` entry of `git config --list`: its key, a newline, its value (none: a key alone, given as true). */
const keyAndValue = (entry: string) => {
  const nl = entry.indexOf('\n');
  return nl < 0 ? { key: entry, value: '' } : { key: entry.slice(0, nl), value: entry.slice(nl + 1) };
};

/** `git config --list --show-origin -z`: the last core.hooksPath, the files it came from (file: origins), and every entry. */
export function parseConfigList(out: string): { hooksPath: string | null; files: string[]; entries: ConfigEntry[] } {
  const parts = out.split('\0');
  let hooksPath: string | null = null;
  const files = new Set<string>();
  const entries: ConfigEntry[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const origin = parts[i] as string;
    const entry = parts[i + 1] as string;
    if (origin.startsWith('file:')) files.add(origin.slice(5));
    const { key, value } = keyAndValue(entry);
    if (key.toLowerCase() === 'core.hookspath') hooksPath = value;
    entries.push({ origin, key, value });
  }
  return { hooksPath: hooksPath === '' ? null : hooksPath, files: [...files], entries };
}
