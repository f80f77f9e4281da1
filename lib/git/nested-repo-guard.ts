// After a run, in the repository it ran in: nested repositories the agent
// registered as gitlinks (submodules, in the index it may write). Your own
// git status visits every populated submodule with that submodule's own
// configuration, so a `core.fsmonitor` there runs on your machine
// (`.git/config` and `.git/hooks` of the repository itself are read-only to
// the agent; these are not). A submodule whose git directory got, during the
// run, a config beyond the keys git init and git clone write (or one git
// cannot read), or a hook, is unplugged: its `.git` entry, inside your
// repository, is renamed `.git.stashbase-quarantine` (git then passes it by as
// not checked out), and a warning names it and why. Nothing outside the
// repository is ever renamed, whatever the agent pointed at; files it
// planted are read only when they are small regular files.
import { chmodSync, type Dirent, lstatSync, mkdirSync, readdirSync, readlinkSync, realpathSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import { probe } from '../exec.js';
import { git as gitSafe } from '../../templates/git.js';
import { findTool } from '../util/find-tool.js';
import { gitlinks } from './gitlinks.js';
import { findRepoRoot } from './repo.js';
import { checkoutGit, moduleGitDirs, worktreeOfGitDir } from './run-git-dir.js';
import { gitDirLink } from './git-dir-links.js';
import { checkObjects } from './forged-objects.js';
import { distrustIndex, hiddenState } from './hidden-state.js';
import { MAX_GIT_ENTRIES } from './sanitize.js';
import { noteSharedNames, type SharedNames } from './shared-names.js';
import { beneath, changedBelow, changeFinder, folderOfUnknownPath, commondirOf, dotGitsUnder, gitPathFile, kernelJoin, kernelPath, kernelWay, moveAside, movedAside, movesWithin, QUARANTINE, realFolder, realOrSelf, removeLink, runChanges, runWrites, kernelFolder, within, writableOutsideTree } from './planted-repos.js';
import { configFoldersOf, isEnvFileName, isLockFileName, isNamedFile, isToolConfigBelow, quarantineDeeperToolConfigs, quarantineToolConfigs } from '../paths/tool-configs.js';
import { remakeHint, restoreHint } from '../util/style.js';
import { executedKind, sourcedByEnvrc, venvCheck } from '../paths/host-executed.js';
import { stashbaseHome } from '../home.js';
import { noteLinks, type ProtectedLink, restoreLinks } from '../paths/protected-links.js';
import { firstFew } from '../util/printable.js';


/** Keys git init, clone and submodule write, which run nothing. */
const HARMLESS = [
  /^core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|precomposeunicode|symlinks|worktree|autocrlf|eol|safecrlf)$/,
  /^remote\.[^\n]+\.(url|fetch|pushurl|tagopt|mirror)$/,
  /^branch\.[^\n]+\.(remote|merge|rebase)$/,
  /^extensions\.(objectformat|worktreeconfig)$/,
  /^(user\.(name|email)|init\.defaultbranch|submodule\.active|lfs\.repositoryformatversion|pull\.rebase|pull\.ff)$/,
];

/** A `.git` directory, or the directory a `.git` file ("gitdir: …") points at. */
export function gitDirOf(dotGit: string): string | null {
  const st = statSync(dotGit, { throwIfNoEntry: false });
  if (!st) return null;
  if (st.isDirectory()) return dotGit;
  // As git reads it: the whole file, less trailing CR/LF, must start "gitdir: "; the rest, spaces and all, is the path.
  const text = gitPathFile(dotGit) ?? '';
  if (!text.startsWith('gitdir: ') || text.length === 8) return null;
  return kernelPath(dirname(dotGit), text.slice(8));
}

/** The config keys of a file, as git reads it, or null when git cannot. */
function configKeys(git: string, file: string): string[] | null {
  const r = probe({ file: git, args: ['config', '--file', file, '--null', '--list'] });
  if (r.code !== 0) return null;
  return r.stdout.split('\0').filter(Boolean).map((kv) => kv.split('\n')[0] as string);
}


/**
 * Whether a path in the git directory `top` counts as the run's: written
 * itself, a folder between it and `top` changed (one renamed into place
 * brings its old files: found in review, an old folder of hooks moved into
 * `hooks`), or, for a link, what it leads to written the same way (found in
 * review: `config` linked to `conf.d/main`, changed in a later run).
 */
function countsIn(top: string, written: (p: string) => boolean): (p: string) => boolean {
  const realTop = realOrSelf(top);
  return (p) => {
    if (written(p) || changedBelow(dirname(p), top, written)) return true;
    if (!lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink()) return false;
    const real = realOrSelf(p);
    return real !== p && (written(real) || changedBelow(dirname(real), realTop, written));
  };
}

/** What in a submodule's git directory (its common directory, its own submodules' git directories) the run wrote, or changed, that would run programs. */
function risks(git: string, gitDir: string, writtenHere: (p: string) => boolean, withModules = true): string[] {
  const dirs: Array<[string, (p: string) => boolean]> = [[gitDir, countsIn(gitDir, writtenHere)]];
  const common = commondirOf(gitDir);
  // A commondir written during the run points at a folder whose old files then count, all of them.
  if (common !== null) dirs.push([common, writtenHere(join(gitDir, 'commondir')) ? () => true : countsIn(common, writtenHere)]);
  const found: string[] = [];
  for (const [d, written] of dirs) {
    for (const name of ['config', 'config.worktree']) {
      const f = join(d, name);
      const st = lstatSync(f, { throwIfNoEntry: false });
      if (!st || !written(f)) continue;
      // A FIFO (or a link to one) would hold git, and this check, until its timeout: named, not read.
      if (!(statSync(f, { throwIfNoEntry: false })?.isFile() ?? false)) {
        found.push(`${f}: not a regular file`);
        continue;
      }
      const keys = configKeys(git, f);
      const bad = keys === null ? ['unreadable'] : [...new Set(keys.filter((k) => !HARMLESS.some((h) => h.test(k))))];
      if (bad.length > 0) found.push(`${f}: ${firstFew(bad, 10)}`);
    }
    const hooksDir = join(d, 'hooks');
    let hooks: string[] = [];
    try {
      hooks = readdirSync(hooksDir);
    } catch (e) {
      // A hooks folder it cannot list (the agent's chmod 111: git still runs a hook by its name) hides what it holds (found in review).
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR' && written(hooksDir)) found.push(`${hooksDir}: a folder stashbase cannot list (${code ?? 'unreadable'}), whose hooks git still runs`);
    }
    for (const h of hooks) if (!h.endsWith('.sample') && written(join(hooksDir, h))) found.push(`${join(hooksDir, h)}: a hook`);
    // Its own submodules' git directories, which git submodule update --init (recursive) uses: judged the same way (found in review: only yours were).
    if (withModules) {
      for (const m of moduleDirs(join(d, 'modules'), (dir, why) => {
        if (why.startsWith('more than') || written(dir)) found.push(`${dir}: a folder stashbase cannot list (${why}), which may hold submodules' git directories`);
      })) found.push(...risks(git, m, written, false));
    }
  }
  return found;
}

/** Whether git could take `dir` for a git directory by its HEAD: a file, or a link (to a ref); a folder named HEAD is none. */
function hasHead(dir: string): boolean {
  const st = lstatSync(join(dir, 'HEAD'), { throwIfNoEntry: false });
  return st !== undefined && (st.isFile() || st.isSymbolicLink());
}

/**
 * The git directories under a `modules` folder: every folder below it with a HEAD git could take, at any depth and by
 * any name (a submodule's name may hold slashes, or end like a folder stashbase moved aside; found in review: names
 * past a depth, with that ending, or under a folder holding a folder named HEAD were passed by), its submodules' among
 * them; links not followed. A folder it cannot list, or past the walk's bound, is told to `unlisted`.
 */
function moduleDirs(dir: string, unlisted: (dir: string, why: string) => void = () => {}): string[] {
  const out: string[] = [];
  let seen = 0;
  const walk = (d: string): boolean => {
    let entries: Dirent[];
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? 'unreadable';
      if (code !== 'ENOENT' && code !== 'ENOTDIR') unlisted(d, code);
      return true;
    }
    for (const e of entries) {
      if (++seen > MAX_GIT_ENTRIES) {
        unlisted(dir, `more than ${MAX_GIT_ENTRIES} entries`);
        return false;
      }
      if (!e.isDirectory()) continue;
      const sub = join(d, e.name);
      if (hasHead(sub)) out.push(sub);
      if (!walk(sub)) return false;
    }
    return true;
  };
  walk(dir);
  return out;
}

export interface NestedRepoGuard {
  /** Unplugs what the run left, and says what. */
  check(): string[];
  /** What the check needs besides the record of the run (lib/run/session.ts ended): to be made again by a later run. */
  settings(): { keep: string[]; writableOutside: string[]; newRepo: boolean; tree: string; root?: string };
  /** The links the check puts back, as noted when the run started: on the run's record, for a later run after a kill. */
  links: ProtectedLink[];
}

/**
 * Set up before the agent starts (it takes the run's start time from the
 * kernel's clock): the planted repositories, and the tools' configs the agent
 * makes (lib/paths/tool-configs.ts). `direct`: the backend lets the agent set
 * file modes itself (Docker): setuid bits are checked too (bubblewrap's filter
 * keeps them out). The repository's git directory is the run's own on every
 * backend (lib/git/run-git-dir.ts): its index and state come back only
 * through the import. `writableOutside`: where the agent could write outside
 * the tree, asked when the run ends (never on the way to its start). `tree`:
 * the folder the run writes (the working directory, or a worktree's top), in
 * the repository the check walks whole: the files of the rest that share their
 * data with other names are noted while the run goes on.
 */
export function nestedRepoGuard(cwd: string, env: NodeJS.ProcessEnv, session: string, toolConfigs: string[] = [], direct = false, keep: string[] = [], denyWrite: string[] = [], writableOutside: () => string[] = () => [], tree: string = cwd): NestedRepoGuard | null {
  const missing = toolConfigs.filter((p) => !lstatSync(p, { throwIfNoEntry: false }));
  // deny_write paths that are links: the sandbox protects their targets; the links are put back at the end (lib/paths/protected-links.ts).
  const links = noteLinks(denyWrite, [realOrSelf(cwd), realOrSelf(tree), cwd, tree]);
  if (!findTool('git', env)) return { links, check: () => [...restoreLinks(links), ...quarantineToolConfigs(missing, null)], settings: () => ({ keep, writableOutside: writableOutside(), newRepo: false, tree }) };
  // File times come from the kernel's clock, at its granularity: so does this mark (in stashbase's own folder, which no sandbox reaches).
  const home = stashbaseHome(env);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const mark = join(home, `.${session}.start`);
  writeFileSync(mark, '', { flag: 'wx', mode: 0o600 });
  const since = statSync(mark).ctimeMs;
  unlinkSync(mark);
  // A folder that was no repository: a .git the agent makes in it is its, like any planted one.
  const repo = findRepoRoot(cwd);
  const realRoot = realOrSelf(repo?.root ?? cwd);
  const realTree = realOrSelf(tree);
  // A run in a folder of the repository: what of the rest may change through a name in it (lib/git/shared-names.ts).
  const shared = realTree === realRoot || !beneath(realTree, realRoot) ? null : noteSharedNames(realTree);
  // Each check on its own: one that fails (a broken index, an unreadable folder) says so and stops none of the others.
  const each = (what: string, f: () => string[]): string[] => {
    try {
      return f();
    } catch (e) {
      return [`the check for ${what} could not finish (${(e as Error).message}): look for it yourself before you run git or your tools there`];
    }
  };
  return {
    links,
    settings: () => ({ keep, writableOutside: writableOutside(), newRepo: repo === null, tree, ...(repo ? { root: repo.root } : {}) }),
    check: () => {
      const outside = writableOutside();
      // Nothing any step moves aside leaves the tree (found in review: a top-level .claude made a link to ~/.claude had
      // your own settings.json renamed as the agent's).
      return movesWithin([cwd, repo?.root ?? cwd, ...outside], () => [
        ...each('links deny_write protects', () => restoreLinks(links)),
        ...each(`repositories planted in ${cwd}, setuid files and what your tools run unseen`, () => {
          const found = checkNestedRepos(cwd, env, since, { newRepo: repo === null, setId: direct, keep, writableOutside: outside, tree, shared, ...(repo ? { root: repo.root } : {}) });
          // What it did elsewhere in the repository may have been your own (found in review: said, not silent).
          if (found.length > 0 && shared?.incomplete) found.push(`${tree} could not be noted whole as the run started (${shared.incomplete}), so what changed elsewhere in ${realRoot} during the run counted as the agent's, your own changes too`);
          return found;
        }),
        // Only where the run could write: one your side made meanwhile elsewhere is yours. (In the tree by name: a folder
        // on its way the agent made a link is its.)
        ...each("tools' configs the agent made", () => {
          const writes = runWrites(realRoot, tree, outside);
          return quarantineToolConfigs(missing.filter((p) => beneath(p, tree) || writes(join(realOrSelf(dirname(p)), basename(p)))), null);
        }),
      ]);
    },
  };
}

/**
 * Clears setuid and setgid bits set during the run (where the sandbox cannot
 * refuse them: Docker, whose agent is the file's owner): a setuid shell left in
 * your repository runs as its owner for anyone on the machine.
 */
function stripSetId(files: string[]): string[] {
  const out: string[] = [];
  for (const f of files) {
    try {
      const mode = lstatSync(f).mode & 0o7777;
      chmodSync(f, mode & ~0o6000);
      out.push(`the agent left ${f} with its ${mode & 0o4000 ? 'setuid' : 'setgid'} bit set (it would run as its owner for anyone on this machine): the bit was cleared (mode ${(mode & ~0o6000).toString(8)})`);
    } catch (e) {
      out.push(`the agent left ${f} setuid or setgid and the bit could not be cleared (${(e as NodeJS.ErrnoException).code}): remove it`);
    }
  }
  return out;
}

/**
 * What host tools execute unseen that the run made or changed
 * (lib/paths/host-executed.ts): caches removed (their tool makes them again),
 * the rest moved aside; each named.
 */
function settleExecuted(root: string, paths: string[], sourced: Set<string>, isVenv: (dir: string) => boolean): string[] {
  const out: string[] = [];
  const caches: string[] = [];
  for (const p of paths) {
    const kind = executedKind(p.slice(root.length + 1), sourced, isVenv);
    if (kind === null) continue;
    if (kind.kind === 'bytecode') {
      try {
        unlinkSync(p);
        caches.push(p);
      } catch (e) {
        out.push(`the agent wrote ${p}, ${kind.why}, and it could not be removed (${(e as NodeJS.ErrnoException).code}): remove it`);
      }
      continue;
    }
    const moved = moveAside(p);
    out.push(moved.to !== undefined
      ? `the agent made or changed ${p}, ${kind.why}, where git shows nothing: it was renamed ${moved.to}; review it, then ${restoreHint(moved.to, p)}`
      : `the agent made or changed ${p}, ${kind.why}, and it could not be moved aside (${moved.failed}): review it before you run anything there`);
  }
  if (caches.length > 0) out.push(`the agent wrote ${caches.length} Python byte-code cache(s) (${caches.slice(0, 3).join(', ')}${caches.length > 3 ? ', …' : ''}), which Python runs instead of their source when the recorded time and size match: removed (Python makes them again)`);
  return out;
}

/** Which of `paths` (in the repository at `root`) git ignores there, or cannot answer for (counted as hidden). */
function ignoredBy(git: string, root: string, paths: string[]): Set<string> {
  const out = new Set<string>();
  // All in one git (found in review: one git per name git would quote made the check take minutes for names an agent
  // made in seconds), each as ./name, never read as a pathspec's magic (a name starting with a colon); with -z git
  // neither takes nor gives quoted names.
  const ask = (some: string[]): 'answered' | 'refused' | 'timed out' => {
    // --no-index: a name is asked as a pathspec, and one with glob characters matching a file of the index counted as
    // tracked, so shown (found in review: '*/*.test.js' in an ignored folder named '*'); without the index, only the
    // ignore rules answer (a file you track in an ignored folder counts as hidden: moved aside if changed, and said).
    const r = probe(gitSafe(git, root, ['check-ignore', '--no-index', '--stdin', '-z']), 120_000, 256 << 20, some.map((p) => `./${p.slice(root.length + 1)}\0`).join(''));
    if (r.code === null) return 'timed out';
    if (r.code !== 0 && r.code !== 1) return 'refused';
    for (const name of r.stdout.split('\0')) if (name !== '') out.add(join(root, name.replace(/^\.\//, '')));
    return 'answered';
  };
  // One path git refuses (beyond a link) fails the lot: then halves, down to the one, which git cannot answer for, so
  // neither does your git status: counted as hidden. Out of time: all counted so.
  const settle = (some: string[]): void => {
    if (some.length === 0) return;
    const answer = ask(some);
    if (answer === 'answered') return;
    if (answer === 'timed out' || some.length === 1) {
      for (const p of some) out.add(p);
      return;
    }
    settle(some.slice(0, some.length >> 1));
    settle(some.slice(some.length >> 1));
  };
  settle(paths);
  return out;
}

/**
 * Whether `relative` (a folder in the tree, from its top) holds installed code
 * your tools load that git does not show: node_modules (Node's require, npm
 * run, npx), a virtual environment's site-packages (its python, pip, every
 * console script).
 */
function dependencyFolder(relative: string, isVenv: (dir: string) => boolean): boolean {
  if (/(?:^|\/)node_modules$/.test(relative)) return true;
  const venv = /^(?:(.+)\/)?lib\/python[^/]*\/site-packages$/.exec(relative);
  return venv !== null && isVenv(venv[1] ?? '');
}

/** Environment and lock files named one by one at the end of a run. */
const NAMED_FILES_SAID = 20;

/**
 * The environment and lock files the run made or changed, named (never moved: they are the app's): those at the top
 * of `tops` and those the walk found below (`below`); a lock file only where git does not show it (`hidden` asks git).
 * Lock files first, then by depth: a flood of .env files cannot bury one (review, round 28f); past a bound, counted.
 */
function nameEnvAndLockFiles(tops: string[], below: string[], written: (p: string) => boolean, hidden: (locks: string[]) => Set<string>): string[] {
  const atTop = (dir: string) => {
    try {
      return readdirSync(dir).filter((n) => isEnvFileName(n) || isLockFileName(n)).map((n) => join(dir, n));
    } catch {
      return [];
    }
  };
  const changed = [...new Set([...tops.flatMap(atTop), ...below])].filter((p) => {
    try {
      return lstatSync(p, { throwIfNoEntry: false }) !== undefined && written(p);
    } catch {
      return true;
    }
  });
  const isEnv = (p: string) => isEnvFileName(basename(p));
  const locks = changed.filter((p) => !isEnv(p));
  const toName = [...(locks.length === 0 ? [] : hidden(locks)), ...changed.filter(isEnv)].sort((a, b) => Number(isEnv(a)) - Number(isEnv(b)) || a.split(sep).length - b.split(sep).length || (a < b ? -1 : 1));
  const out = toName.slice(0, NAMED_FILES_SAID).map((p) => (isEnv(p)
    ? `the agent made or changed ${p}, which tools load into their environment (Flask's FLASK_APP, docker compose's COMPOSE_FILE, bun, Vite, Next.js, pipenv, direnv's dotenv): review it before you run them there`
    : `the agent made or changed ${p}, a lock file git does not show, which says where your next install takes each package from (a resolved URL of the agent's is its code, install scripts and all): review it, or remove it, before you install there`));
  if (toName.length > NAMED_FILES_SAID) out.push(`and ${toName.length - NAMED_FILES_SAID} more environment or lock files the agent made or changed (git status --ignored lists them): review them before you run or install there`);
  return out;
}

/** What a folder of installed code is, said (by its name and what it holds; never a throw: review, round 28c). */
function dependencyKind(f: string): string {
  if (f.endsWith('node_modules')) return 'node_modules, whose code Node, npm run and npx load';
  if (/(?:^|\/)site-packages$/.test(f)) return "a virtual environment's site-packages, whose code its python, pip and every console script load";
  if (/(?:^|\/)vendor\/bundle$/.test(f)) return "Bundler's vendor/bundle, whose gems bundle exec loads";
  if (basename(f) === '__pypackages__') return "PDM's __pypackages__, whose packages its python loads";
  let conda = false;
  try {
    conda = lstatSync(join(f, 'conda-meta'), { throwIfNoEntry: false }) !== undefined;
  } catch {
    conda = false;
  }
  if (conda) return 'a conda environment, whose activation scripts conda activate runs and whose code its commands load';
  if (basename(f) === 'vendor') return "PHP's vendor folder, whose autoload.php every script of the project loads, and whose bin/ composer runs";
  return 'a Python environment, whose code its python, pip and every console script load, and whose settings pip, IPython and Jupyter read';
}

/**
 * Environments that cannot be moved aside whole: the walk's root, the run's
 * own folder or one above it. The rest are moved, files git tracks in them
 * too (review, round 28c: the index the agent writes said which were tracked,
 * and one file staged kept the environment in place; git shows the tracked
 * ones deleted until the folder is restored).
 */
function splitEnvironments(folders: string[], root: string, tree: string): [string[], string[]] {
  const top = realOrSelf(tree);
  const move: string[] = [];
  const said: string[] = [];
  for (const d of folders) (d === root || d === top || beneath(top, d) ? said : move).push(d);
  return [move, said];
}

/**
 * A folder of installed code stashbase moved aside, inside its quarantine
 * folder (`node_modules.stashbase-quarantine/node_modules`): stashbase's own,
 * not judged again (it would be moved aside into itself at every run's end).
 */
const inQuarantine = (rel: string) => rel.split('/').slice(0, -1).some((part) => part.endsWith(QUARANTINE));

/**
 * Each folder of installed code the run wrote or renamed anything in, moved
 * aside whole (found in review: a file a package loads rewritten, one step past
 * the command found by name, and npm test, pip and pytest ran it): the
 * reinstall your tool makes, or the folder restored once reviewed.
 */
function settleDependencies(folders: string[]): { warnings: string[]; moved: Set<string> } {
  const moved = new Set<string>();
  const warnings = folders.map((f) => {
    const what = dependencyKind(f);
    // One kept aside by an earlier run, or anything else under that name, gets a name of its own beside it; the folder
    // keeps its own name inside it, which test runners pass by (round 34).
    const aside = moveAside(f, true);
    if (aside.to !== undefined) moved.add(f);
    return aside.to !== undefined
      ? `the agent changed code in ${f} (${what}), where git shows nothing: it was moved to ${aside.to}; install it again (npm ci, pip install), or review it, then ${restoreHint(aside.to, f)} and remove the empty ${dirname(aside.to)} ([filesystem] keep_executables keeps what a run installs there)`
      : `the agent changed code in ${f} (${what}), where git shows nothing, and it could not be moved aside (${aside.failed}): remove it and install it again before you run your tools there`;
  });
  return { warnings, moved };
}

/**
 * For one found by name that is a link (node_modules/.bin/x → ../x/cli.js):
 * whether the run changed what it leads to in the tree, the file or a link or
 * folder on the way there that is not above the link itself (found in review:
 * the link left as it was, the file it leads to rewritten, and npm run ran it).
 */
function targetChanged(p: string, root: string, written: (p: string) => boolean, outside: string[] = []): boolean {
  if (lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink() !== true) return false;
  return kernelWay(dirname(p), basename(p)).some((e) => {
    if (e.path === p || beneath(p, e.path) || written(e.path) === false) return false;
    // In the tree, or in a folder the run could write outside it (found in review: a link to a file in an allow_write folder).
    return beneath(e.path, root) || writableOutsideTree(e.path, root, outside);
  });
}

/**
 * Whether the run changed the way from a pointer file to the git directory it
 * names: in the tree, a link on it written during the run, or a folder on it
 * (not the git directory itself, whose time git changes as it works; not one
 * in your own git directory, whose modules' own rules apply); in a folder the
 * run could write outside the tree (`outside`: its allow_write roots), any
 * entry, the root and the git directory itself included (found in review: a
 * submodule's git directory kept in an allow_write folder, swapped by renaming
 * a copy made in an earlier run).
 */
function wayChanged(dotGit: string, root: string, own: string | null, written: (p: string) => boolean, outside: string[]): boolean {
  const text = gitPathFile(dotGit);
  if (text === null || !text.startsWith('gitdir: ')) return false;
  // The way's entries are named as walked (each in a real folder): compared by their names, a link's own place counts.
  const way = kernelWay(dirname(dotGit), text.slice(8));
  return way.some((e, i) => {
    if (beneath(e.path, root)) return (own === null || (e.path !== own && !beneath(e.path, own))) && (e.link || i < way.length - 1) && written(e.path);
    return writableOutsideTree(e.path, root, outside) && written(e.path);
  });
}

/** The nearest folder named .git above `dir` (a real path) and below `top`, or null. */
function enclosingGitDir(dir: string, top: string): string | null {
  for (let d = dirname(dir); d !== top && d.startsWith(top + sep); d = dirname(d)) if (d.endsWith(`${sep}.git`)) return d;
  return null;
}

/** The common git directory of a git directory (a linked worktree's admin folder names it in commondir). */
function commonDirOf(gitDir: string): string {
  const common = commondirOf(gitDir);
  if (common === null) return gitDir;
  try {
    return realpathSync.native(common);
  } catch {
    return gitDir;
  }
}

/**
 * Renames a git directory (or a .git entry) aside, and a folder's HEAD too, so that git inside the folder moved aside
 * does not take it for a repository (found in review: git status there ran the agent's fsmonitor, as it would in a
 * bare repository, whose HEAD is renamed for that); with the one line that undoes both.
 */
function moveGitDirAside(path: string): { failed: string | null; aside: string; head: 'none' | { renamed: string } | { failed: string }; back: string } {
  const moved = moveAside(path);
  if (moved.to === undefined) return { failed: moved.failed, aside: path, head: 'none', back: '' };
  const aside = moved.to;
  const hasHead = lstatSync(aside, { throwIfNoEntry: false })?.isDirectory() === true && lstatSync(join(aside, 'HEAD'), { throwIfNoEntry: false }) !== undefined;
  if (!hasHead) return { failed: null, aside, head: 'none', back: restoreHint(aside, path) };
  const head = moveAside(join(aside, 'HEAD'));
  return head.to !== undefined
    ? { failed: null, aside, head: { renamed: head.to }, back: restoreHint(head.to, join(aside, 'HEAD'), [aside, path]) }
    : { failed: null, aside, head: { failed: head.failed }, back: restoreHint(aside, path) };
}

/** Renames a nested repository's .git aside (moveGitDirAside); returns what to tell. */
function unplugged(dotGit: string, where: string, found: string[], what: string): string {
  const moved = moveGitDirAside(dotGit);
  if (moved.failed !== null) return `the agent left a nested repository at ${where} whose git files would run programs (${found.join('; ')}), and its .git could not be renamed (${moved.failed}): remove ${dotGit} before you run git there`;
  const { aside, head } = moved;
  const said = head === 'none' ? '' : 'renamed' in head
    ? ` and its HEAD ${head.renamed}, so git takes neither for a repository`
    : `, but its HEAD could not be renamed (${head.failed}): do not run git inside ${aside}`;
  return `the agent left a nested repository at ${where}, ${what}, whose git files would run programs when your git visits it (git status does): ${found.join('; ')}. ` +
    `Its .git was renamed ${aside}${said}${head !== 'none' && 'renamed' in head ? '' : ', so git passes it by'}; review it, then ${moved.back}`;
}

/**
 * Unplugs the repository's submodules whose git files changed since `since`
 * (a file time, ms) would run programs; returns the warnings. Also run for a
 * run that was killed, from its recorded start.
 */
export interface CheckOptions {
  /** The run started in a folder that was no repository. */
  newRepo?: boolean;
  /** Setuid bits are checked too (Docker, whose agent owns what it writes). */
  setId?: boolean;
  /** keep_executables' paths. */
  keep?: string[];
  /** Where the run could write outside the tree (real paths; `/` with deny-list writes). */
  writableOutside?: string[];
  /** The folder the run writes in the repository (the working directory, by default). */
  tree?: string;
  /** The files that had names in it and others as the run started (lib/git/shared-names.ts); none told: every file outside it counts by its time. */
  shared?: SharedNames | null;
  /** The repository's top as the run started (found in review: a .git the agent made in the working directory became the top, found again at the end, and its own). */
  root?: string;
}

export function checkNestedRepos(cwd: string, env: NodeJS.ProcessEnv, since: number, o: CheckOptions = {}): string[] {
  const writableOutside = o.writableOutside ?? [];
  // Nothing it moves aside leaves the tree and the folders the run could write (found in review: a rename through a link
  // one of its own renames had re-aimed).
  return movesWithin([cwd, o.root ?? findRepoRoot(cwd)?.root ?? cwd, ...writableOutside], () => checkTree(cwd, env, since, o.newRepo === true, o.setId === true, o.keep ?? [], writableOutside, o.tree ?? cwd, o.shared ?? null, o.root ?? null));
}

function checkTree(cwd: string, env: NodeJS.ProcessEnv, since: number, newRepo: boolean, setId: boolean, keep: string[], writableOutside: string[], tree: string, shared: SharedNames | null, startRoot: string | null): string[] {
  const git = findTool('git', env);
  if (!git) return [];
  // A run that started outside any repository: the working directory's tree, its own .git included, is all the agent's.
  const repo = newRepo ? null : findRepoRoot(startRoot ?? cwd);
  const gitDir = repo ? (repo.gitDir ?? gitDirOf(join(repo.root, '.git'))) : null;
  const root = realpathSync.native(repo?.root ?? cwd);
  // The whole repository is walked (what a tool run at its top finds), but only what lies where the run could write
  // counts as the run's: its tree (the working directory, or a worktree's top), its allow_write folders; what changed
  // elsewhere meanwhile is yours (found in CI: a run in a folder of a larger repository had your ~/.config link, in
  // another of its folders, removed when your side wrote below where it leads).
  // A run that could have written anywhere (a killed run, whose record does not say where: tree /) has links and ways
  // anywhere judged too (found in review, round 5: links into its allow_write folders were still passed by); its renames
  // stay held to the repository by the caller's bounds.
  if (realOrSelf(tree) === sep) writableOutside = [sep];
  const changed = runChanges(since, runWrites(root, tree, writableOutside), shared);
  const written = (p: string) => changed(p, lstatSync(p, { throwIfNoEntry: false }));
  const own = gitDir ? realpathSync.native(gitDir) : null;
  const warnings: string[] = [];
  // What the objects check of a repository found (lib/git/forged-objects.ts checkObjects): a finding, or the caches removed, said.
  const objectsSaid = (o: ReturnType<typeof checkObjects>, dir: string, holds: string, why: string, found: string[]): void => {
    if ('held' in o) found.push(`${holds} ${o.held}${why}`);
    else {
      if (o.caches.left.length > 0) found.push(`${holds} caches the run wrote, which git reads history through without checking them, and which could not be removed: ${o.caches.left.join(', ')}`);
      if (o.caches.removed.length > 0) warnings.push(`the run wrote caches git reads ${dir}'s history through without checking them (${o.caches.removed.join(', ')}): removed (git works without them, and git gc writes them again)`);
    }
  };
  const done = new Set<string>();
  const unplug = (dotGit: string, where: string, found: string[], what: string) => {
    done.add(dotGit);
    warnings.push(unplugged(dotGit, where, found, what));
  };
  const links = gitDir ? gitlinks(git, gitDir, root) : [];
  if (typeof links === 'string') {
    warnings.push(`the index of ${root} could not be read for submodules the agent registered (${links}): run git ls-files -s | grep ^160000 there before you run git submodule; the other checks ran`);
  }
  for (const link of typeof links === 'string' ? [] : links) {
    // Only a folder really inside the repository: never through a link the agent made out of it.
    let where: string;
    try {
      where = realpathSync.native(join(root, link));
    } catch {
      continue; // not checked out: git does not visit it
    }
    if (!where.startsWith(root + sep)) continue;
    const dotGit = join(where, '.git');
    const dir = gitDirOf(dotGit);
    let realDir: string;
    try {
      realDir = dir === null ? '' : realpathSync.native(dir);
    } catch {
      continue; // points nowhere: git cannot use it
    }
    if (!dir || realDir === own) continue;
    const found = risks(git, dir, written);
    if (found.length > 0) {
      unplug(dotGit, where, found, 'registered as a submodule');
      done.add(realDir);
    }
  }
  // Submodules' git directories whether checked out or not: git submodule update --init runs their hooks.
  const unlistedModules: string[] = [];
  for (const m of own ? moduleDirs(join(own, 'modules'), (dir, why) => unlistedModules.push(`${dir} (${why})`)) : []) {
    if (done.has(m)) continue;
    const found = risks(git, m, written, false);
    if (found.length === 0) continue;
    // Its HEAD too: a submodule the agent names after the folder moved aside would have git use it (found in review).
    const { failed, aside, head, back } = moveGitDirAside(m);
    warnings.push(failed === null
      ? `the agent left a submodule's git directory ${m} whose files would run programs when your git uses it (git submodule update --init does): ${firstFew(found, 5, '; ')}. It was renamed ${aside}${head === 'none' ? '' : 'renamed' in head ? `, its HEAD ${head.renamed}` : ` (its HEAD could not be renamed: ${head.failed})`}; review it, then ${back}`
      : `the agent left a submodule's git directory ${m} whose files would run programs (${firstFew(found, 5, '; ')}), and it could not be renamed (${failed}): remove it before you run git submodule in ${root}`);
  }
  if (unlistedModules.length > 0) warnings.push(`stashbase could not list ${firstFew(unlistedModules, 10)}, which may hold submodules' git directories: look there yourself before you run git submodule in ${root}`);
  // Then every other .git in the tree, at any depth, in either form.
  const sourced = sourcedByEnvrc(root);
  const isVenv = venvCheck(root);
  // Installed code by its time wherever it lies (found in review: uv's cache and pnpm's store, in allow_write, install by
  // hard links into a workspace's .venv or node_modules outside the run's folder; written through the store's name, that
  // name then removed, a file there had one name and was not the run's).
  const walk = dotGitsUnder(root, setId, (rel) => isToolConfigBelow(rel) || isNamedFile(rel), (rel) => executedKind(rel, sourced, isVenv) !== null, changed, (rel) => dependencyFolder(rel, isVenv) && !inQuarantine(rel) && !keep.some((k) => within(join(root, rel), k)), writableOutside, runChanges(since), (rel) => !keep.some((k) => within(join(root, rel), k)));
  if (walk.unreadable.length > 0) {
    warnings.push(`${firstFew(walk.unreadable, 10)} cannot be read (the agent, which writes as you, can close a folder of yours to you, or give it a name stashbase cannot use), so what lies below is unchecked: look there yourself before you run git or your tools there; the rest of the tree was checked`);
  }
  if (walk.renamed.length > 0) {
    warnings.push(`the agent left ${walk.renamed.length} name(s) that are not UTF-8, which stashbase cannot check by name (your tools still open them): renamed, and checked under the new names: ${walk.renamed.slice(0, 5).join(', ')}${walk.renamed.length > 5 ? ', …' : ''}`);
  }
  warnings.push(...stripSetId(walk.setId.filter((p) => {
    try {
      return written(p);
    } catch {
      return true;
    }
  })));
  // Each judged on its own: one that cannot be (an error on its way) counts as changed, and stops none of the others.
  // A folder on its way renamed into place counts it too (found in review: an old conftest.py, __pycache__ or .cargo kept
  // aside in one run, its folder renamed into place in the next, and no time of the file's own changed): from the
  // file's folder up, or for a command in a bin folder from the folder that holds bin (pip adds to bin; a bin renamed
  // into place changes the folder above).
  // (Each folder's time read once: many files share their folders.)
  const folderTimes = new Map<string, boolean>();
  const folderWritten = (d: string) => {
    let v = folderTimes.get(d);
    if (v === undefined) folderTimes.set(d, (v = written(d)));
    return v;
  };
  const wayWritten = (p: string) => {
    const rel = p.slice(root.length + 1);
    // A folder .envrc puts on PATH counts itself (found in review: PATH_add bin, with bin renamed into place at the top).
    const onPath = sourced.has(rel.slice(0, rel.lastIndexOf('/') + 1));
    const kind = executedKind(rel, sourced, isVenv)?.kind;
    return changedBelow(kind === 'bin' && !onPath ? dirname(dirname(p)) : dirname(p), root, folderWritten);
  };
  // What lies inside a nested repository is not shown by your git status (only its folder is; found in review): each
  // judged by its folders, one lookup each (found in review: a list searched per file made the check quadratic).
  // Whether a folder above `p`, below the top, is one of `folders`: one lookup per folder on the way.
  const underOneOf = (folders: Set<string>) => (p: string) => {
    for (let d = dirname(p); d.length > root.length; d = dirname(d)) if (folders.has(d)) return true;
    return false;
  };
  const inNested = underOneOf(new Set(walk.found.map((g) => dirname(g))));
  // Links to folders (lib/git/planted-repos.ts folderLinks) in a folder of installed code: one made during the run, or whose
  // folder changed below it, takes the whole folder aside with it. The others are judged last, below.
  const changedBehind = changeFinder(changed);
  // Where a link to a folder leads, when it is one the check judges: in the tree (not the tree or a folder above it),
  // or in a folder the run could write outside it.
  const judgedTarget = (link: string): string | null => {
    const target = realFolder(link);
    if (target === null || target === root || beneath(root, target) || kernelFolder(target)) return null;
    return beneath(target, root) || writableOutsideTree(target, root, writableOutside) ? target : null;
  };
  const linkChanged = (link: string, target: string) => {
    try {
      return written(link) || changedBehind(target);
    } catch {
      return true;
    }
  };
  const linkedInstalls = new Set<string>();
  for (const { link, dep } of walk.folderLinks) {
    if (dep === null || keep.some((k) => within(link, k))) continue;
    const target = judgedTarget(link);
    // One whose folder's real path cannot be told (past PATH_MAX; review, round 28d): counted as changed.
    if (target === null && folderOfUnknownPath(link)) {
      linkedInstalls.add(dep);
      continue;
    }
    // One that leads inside its own folder (a venv's lib64 → lib): what lies there is judged by the walk of that folder,
    // entry by entry (review, round 28c: the byte-code your python wrote below lib moved the environment aside).
    if (target !== null && target !== dep && beneath(target, dep) && !written(link)) continue;
    if (target !== null && linkChanged(link, target)) linkedInstalls.add(dep);
  }
  // What lies in a folder of installed code moved aside whole goes with it: named one by one only where it changed itself.
  // (A kept folder inside one keeps it whole: keep_executables = [".venv/lib/python3.12/site-packages"] keeps the environment.)
  const candidates = [...new Set([...walk.dependencies, ...linkedInstalls])].sort().filter((d) => !keep.some((k) => within(d, k) || within(k, d)));
  // An environment that is the run's own folder or above it (review, round 28b: a tool's folder that was also a venv)
  // is said, never moved aside.
  const [wholly, inPlace] = splitEnvironments(candidates, root, tree);
  const goesWith = underOneOf(new Set(wholly));
  const changedOrUnknown = (p: string) => {
    try {
      return written(p) || targetChanged(p, root, written, writableOutside) || (!goesWith(p) && wayWritten(p));
    } catch {
      return true;
    }
  };
  const changedExecuted = walk.executed.filter((p) => changedOrUnknown(p) && !keep.some((k) => within(p, k)));
  // A file a test runner discovers counts only where git ignores it (elsewhere git status shows it): asked of git at once.
  const discovered = new Set(changedExecuted.filter((p) => executedKind(p.slice(root.length + 1), sourced, isVenv)?.kind === 'discovered'));
  const hidden = new Set([...discovered].filter(inNested));
  // In a folder that is no repository nothing is hidden by git, and nothing shown either: left as written.
  const ask = [...discovered].filter((p) => !hidden.has(p));
  if (ask.length > 0 && gitDir !== null) for (const p of ignoredBy(git, root, ask)) hidden.add(p);
  // Folders of installed code first: what lies in one moved aside whole goes with it, untouched (review: its files renamed
  // one by one inside it, then it moved, left an environment that did not work once restored as said, and restore lines
  // that named paths no longer there). Where one could not be moved, its files are judged one by one as before.
  const settled = settleDependencies(wholly);
  warnings.push(...settled.warnings);
  const wentWith = underOneOf(settled.moved);
  warnings.push(...settleExecuted(root, changedExecuted.filter((p) => (!discovered.has(p) || hidden.has(p)) && !wentWith(p)), sourced, isVenv));
  // Each also by the folders of its config's name (a .cargo renamed in beside a crate brings an old config.toml).
  const named = new Set(walk.configs.filter((p) => isNamedFile(p.slice(root.length + 1)) && !isToolConfigBelow(p.slice(root.length + 1))));
  warnings.push(...quarantineDeeperToolConfigs(walk.configs.filter((p) => !named.has(p) && !wentWith(p)), (p) => {
    try {
      return written(p) || configFoldersOf(p.slice(root.length + 1)).some((f) => written(join(root, f)));
    } catch {
      return true; // cannot be told (a path past PATH_MAX): counted (found in review: it ended the whole check)
    }
  }));
  // Environment and lock files the run made or changed, at the top, in its folder and below (review, round 28e: Flask
  // looks for .env upward from where it starts): named, never moved (they are the app's).
  warnings.push(...nameEnvAndLockFiles([root, realOrSelf(tree)], [...named], written, (locks) => (gitDir === null ? new Set(locks) : ignoredBy(git, root, locks))));
  for (const d of inPlace) warnings.push(`the agent changed ${d} (${dependencyKind(d)}), which is the folder the run worked in, or holds it, so it was not moved aside: its commands, code and settings may be the agent's now; make it again (python -m venv --clear, conda create, composer install) before you use it`);
  // A write through one name of a file with others (hard links) lands in all of them: not undone by moving this one aside.
  if (walk.shared.length > 0) {
    warnings.push(`the agent changed ${walk.shared.length} file(s) of installed code that have other names (hard links, as a package store such as pnpm's or a local git clone makes): those other names, outside what was moved aside, hold the agent's content too, and stashbase cannot tell where they are: ${walk.shared.slice(0, 5).join(', ')}${walk.shared.length > 5 ? ', …' : ''}; check the store they come from (pnpm store prune, then pnpm install --force) and the projects that share it`);
  }
  const rootGit = join(root, '.git');
  const what = newRepo ? 'in a folder that was no repository' : 'in a subfolder';
  // Your own linked worktrees (and stashbase's) point at an admin folder in your git directory's
  // worktrees/ whose commondir is your git directory (whose config and hooks the sandbox cannot
  // write). Not anything else inside it: objects, refs and logs are the agent's to write, a whole git
  // directory fits in there, and on Docker a new admin folder can be made in worktrees/ itself.
  const ownCommon = own === null ? null : commonDirOf(own);
  const yours = (dir: string) => ownCommon !== null && within(dir, join(ownCommon, 'worktrees')) && commonDirOf(realpathSync.native(dir)) === ownCommon;
  for (const dotGit of newRepo && lstatSync(rootGit, { throwIfNoEntry: false }) ? [rootGit, ...walk.found] : walk.found) {
    if (done.has(dotGit)) continue;
    try {
    // A .git the agent wrote, moved or put in a folder of its making (a pointer file, a folder renamed
    // into place, an old quarantined one put back) brings old files: all of them count, not only those
    // written during the run.
    // (A .git folder's own time changes whenever git writes its index: its parent's says it was moved.)
    const entry = lstatSync(dotGit, { throwIfNoEntry: false });
    let moved = changedBelow(dirname(dotGit), root, written) || ((entry?.isFile() === true || entry?.isSymbolicLink() === true) && written(dotGit));
    const dir = gitDirOf(dotGit);
    if (!dir) {
      // One the agent wrote that stashbase cannot read as a pointer (git reads up to 1 MiB, found in review): moved aside unread.
      if (moved && entry?.isFile() === true) unplug(dotGit, dirname(dotGit), ['it is a .git file stashbase cannot read as a pointer, which your git may still follow'], what);
      continue;
    }
    const real = realOrSelf(dir);
    // A pointer to a git directory kept inside another .git folder, where the tree's walk does not look: one swapped in
    // there by renaming a folder on its way keeps its old files' times, so that folder's change counts it whole (found in
    // review: a pointer's git directory replaced by renaming inside another repository's .git, then your git status ran
    // its fsmonitor). Under that .git's modules/ a submodule's is told by modules/ itself changing, as when it is added.
    const inGit = entry?.isFile() === true ? enclosingGitDir(real, root) : null;
    if (inGit !== null && changedBelow(dirname(real), inGit, written)) moved = true;
    // An old pointer whose way to its git directory the run changed (found in review: a folder on its way replaced by a
    // link into another .git, where a git directory made in an earlier run waited, its files old): judged whole too.
    if (!moved && entry?.isFile() === true && wayChanged(dotGit, root, own, written, writableOutside)) moved = true;
    // What a later run would take for the folder's git directory: the same rules for your git (lib/git/run-git-dir.ts).
    const located = checkoutGit(dirname(dotGit));
    const namedBack = located !== null && 'gitDir' in located;
    // Your worktrees' admin folders pass, but a pointer the agent wrote to one must be named back by it (found in review).
    if (yours(dir) && (!moved || namedBack)) continue;
    const counts = moved ? () => true : written;
    const found = risks(git, dir, counts);
    // Git working on another repository of yours from that folder, or writing through it (each found in review): a .git
    // the agent wrote or moved, judged whole, or one already there, judged by what the run wrote in it.
    if (moved && !within(real, root)) found.push(`it names a git directory outside this tree (${real}), which your git in that folder would take for its own`);
    else if (within(real, root)) {
      const config = join(real, 'config');
      const wt = counts(config) || counts(join(real, 'config.worktree')) ? worktreeOfGitDir(real) : null;
      const led = gitDirLink(real, (name) => within(join(real, name), real), counts);
      if (lstatSync(join(real, 'commondir'), { throwIfNoEntry: false }) !== undefined && counts(join(real, 'commondir'))) found.push(`its git directory ${real} has a commondir, whose repository your git in that folder would work on`);
      else if (led !== null) found.push(`its git directory ${real} holds ${led}, through which git writes elsewhere`);
      else if (moved && real === own) found.push(`it names your repository's git directory, so your git would take that folder for the whole work tree (git add -A there would stage every other file's removal)`);
      else if (moved && entry?.isFile() === true && !namedBack) found.push(`it names ${real}, which does not name that folder back (your git there would work on that repository)`);
      else if (wt === undefined) found.push(`its config sets core.worktree, or may (an include), in a way stashbase does not read as git would: your git in that folder could check files out and remove them elsewhere`);
      else if (wt !== null && realOrSelf(kernelJoin(real, wt)) !== realOrSelf(dirname(dotGit))) found.push(`its core.worktree names ${kernelJoin(real, wt)}, where your git in that folder would check files out and remove them`);
      // Objects the run wrote whose content is not what their name says, or what has git read others in their place
      // (lib/git/forged-objects.ts); the caches git reads history through unchecked, which the run wrote, removed.
      if (found.length === 0 && led === null) {
        // Its own store, and those it keeps for its submodules (found in review: git submodule update reads them);
        // first what it would act on or hide without showing it (lib/git/hidden-state.ts).
        const checkout = entry?.isDirectory() === true || namedBack;
        const hidden = hiddenState(real, checkout ? dirname(dotGit) : null, counts);
        // And an index it wrote: what git knows of each file's stat data is dropped (git looks at the files again).
        const stale = hidden === null && checkout ? distrustIndex(real, counts) : null;
        if (hidden !== null) found.push(`its git directory ${real} holds ${hidden}`);
        else if (stale !== null) found.push(`its git directory ${real} holds ${stale}`);
        else objectsSaid(checkObjects(git, [real, ...moduleGitDirs(real)], counts), real, `its git directory ${real} holds`, ': your git would check out what the agent put there under a name you trust', found);
      }
    }
    if (found.length > 0) unplug(dotGit, dirname(dotGit), found, what);
    } catch (e) {
      // One that cannot be judged stops none of the others (found in review: one error ended the whole check).
      warnings.push(`the check of ${dotGit} could not finish (${(e as Error).message}): look at it yourself before you run git in ${dirname(dotGit)}`);
    }
  }
  // Bare repositories under any name: git takes the folder you run it in for one. Unplugged by their HEAD.
  for (const dir of walk.bare) {
    try {
    // (One a pointer file named is unplugged here too: cd into it and git would take it as it is.)
    // Yours: the git directory itself and your worktrees' admin folders; anything else in it is the agent's.
    if ((ownCommon !== null && realOrSelf(dir) === ownCommon) || yours(dir)) continue;
    const counts = changedBelow(dirname(dir), root, written) || written(dir) ? () => true : written;
    const found = risks(git, dir, counts);
    // Its objects as a repository's are checked (found in review: a bare one's rewritten object reached your clone of it).
    if (found.length === 0) objectsSaid(checkObjects(git, [dir], counts), dir, 'it holds', '', found);
    if (found.length === 0) continue;
    const head = join(dir, 'HEAD');
    const moved = moveAside(head);
    warnings.push(moved.to !== undefined
      ? `the agent left a bare repository at ${dir}, whose git files would run programs when your git runs inside it: ${found.join('; ')}. Its HEAD was renamed ${basename(moved.to)}, so git no longer takes the folder for a repository; review it, then ${restoreHint(moved.to, head)}`
      : `the agent left a bare repository at ${dir} whose git files would run programs (${found.join('; ')}), and its HEAD could not be renamed (${moved.failed}): remove it before you run git there`);
    } catch (e) {
      warnings.push(`the check of ${dir} could not finish (${(e as Error).message}): look at it yourself before you run git inside it`);
    }
  }
  // Links to folders last, as they are once the other steps are done (a link dangling during the walk is made live by a
  // rename of theirs; one they renamed aside still leads a test runner there): one made during the run, or whose folder
  // changed below it, is removed unless git shows both it and what it leads to (a .git entry, or anything in a .git
  // folder, git never shows).
  const inGitFolder = (p: string) => /(?:^|\/)\.git(?:\/|$)/.test(p.slice(root.length + 1));
  const viaLinks: Array<{ link: string; target: string; renamed: boolean }> = [];
  // Where an entry is now: a folder on its way (or itself) the check renamed aside is followed under its new name.
  // (One lstat where it is; else only by the renames this check made: found in review, a lookup of every folder on every
  // link's way cost the cube of the tree's depth.)
  const whereNow = (p: string): string | null => {
    if (lstatSync(p, { throwIfNoEntry: false }) !== undefined) return p;
    for (const [from, to] of movedAside()) {
      if (p === from || beneath(p, from)) {
        const at = to + p.slice(from.length);
        return lstatSync(at, { throwIfNoEntry: false }) !== undefined ? at : null;
      }
    }
    return null;
  };
  for (const { link, dep } of walk.folderLinks) {
    if (dep !== null || keep.some((k) => within(link, k))) continue;
    const at = whereNow(link);
    if (at === null || lstatSync(at, { throwIfNoEntry: false })?.isSymbolicLink() !== true) continue;
    const renamed = at !== link;
    const target = judgedTarget(at);
    if (target !== null && linkChanged(at, target)) viaLinks.push({ link: at, target, renamed });
  }
  const linkAsk = new Set<string>();
  for (const { link, target, renamed } of viaLinks) {
    if (!renamed && !inNested(link) && !inGitFolder(link)) linkAsk.add(link);
    if (beneath(target, root) && !inGitFolder(target) && !inNested(target)) linkAsk.add(target);
  }
  const linkIgnored = linkAsk.size === 0 || gitDir === null ? new Set<string>() : ignoredBy(git, root, [...linkAsk]);
  const shown = (p: string) => linkAsk.has(p) && !linkIgnored.has(p);
  // Shown too: what changed below the folder (found in review, round 22: test → src, the change in the ignored src/build,
  // and node --test ran it through the link). Each folder below such folders walked once for all (found in review: a
  // chain of links, one at each of 1,000 levels, had each walk all below it), its changed entries asked of git at once;
  // a folder holding one git does not show (or one that cannot be read) makes every folder above it not shown. Past a
  // bound of entries looked at, the rest count as not shown (their links removed, said).
  const hiddenBelow = new Set<string>();
  {
    let budget = 500_000;
    const seen = new Set<string>();
    const changedEntries: string[] = [];
    const markUp = (p: string) => {
      for (let d = dirname(p); d.length >= root.length && !hiddenBelow.has(d); d = dirname(d)) {
        hiddenBelow.add(d);
        if (d === root) break;
      }
    };
    for (const { link, target } of viaLinks) {
      if (!(shown(link) && shown(target))) continue;
      // Below a folder that changed, everything counts (found in review, round 23: a folder renamed into place brings old
      // files, hidden by its own .gitignore, whose times say nothing).
      const stack: Array<[string, boolean]> = [[target, false]];
      while (stack.length > 0) {
        const [d, inherited] = stack.pop() as [string, boolean];
        if (seen.has(d)) continue;
        seen.add(d);
        let entries: Dirent[] = [];
        try {
          entries = readdirSync(d, { withFileTypes: true });
        } catch {
          markUp(d + sep + '?');
          continue;
        }
        for (const e of entries) {
          const full = d + sep + e.name;
          if (--budget < 0 || e.name.includes('\uFFFD')) {
            markUp(full);
            break;
          }
          const st = lstatSync(full, { throwIfNoEntry: false });
          if (st === undefined) continue;
          const now = inherited || changed(full, st);
          if (now) {
            if (inNested(full) || inGitFolder(full)) markUp(full);
            else changedEntries.push(full);
          }
          if (st.isDirectory()) stack.push([full, now]);
        }
      }
    }
    if (changedEntries.length > 0 && gitDir !== null) for (const c of ignoredBy(git, root, changedEntries)) markUp(c);
  }
  for (const { link, target } of viaLinks) {
    if (shown(link) && shown(target) && !hiddenBelow.has(target)) continue;
    // Removed, not renamed: under any name a test runner still finds what lies behind it (found in review: tests/ renamed
    // aside, and node --test ran the file through the new name). A link holds nothing but its text, said here.
    let text = '';
    let failed: string | null = null;
    try {
      text = readlinkSync(link);
      failed = removeLink(link);
    } catch (e) {
      failed = (e as NodeJS.ErrnoException).code ?? 'failed';
    }
    warnings.push(failed === null
      ? `the agent made ${link} a link to ${target}, or changed what lies there, where git does not show it or what it leads to: your tools that look in ${link} (a test runner, PATH, an environment's bin, a tool's config folder) would run what is there. The link was removed; review ${target}, then ${remakeHint(text, link)}`
      : `the agent made ${link} a link to ${target}, or changed what lies there, where git does not show it, and it could not be removed (${failed}): remove it before you run your tools in ${dirname(link)}`);
  }
  return warnings;
}
