// Where an agent worktree lives and which git files around it an agent must not
// touch: the repository's executable state, the checkout, other worktrees.
import { lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { BRANCH_PREFIX, git, WORKTREES_DIR } from '../../templates/git.js';
import { SandboxUnavailableError, StashbaseError } from '../errors.js';
import { probe } from '../exec.js';
import { findTool } from '../util/find-tool.js';

export interface Repo {
  git: string;
  /** The main checkout (realpath). */
  root: string;
  /** Its .git directory, the common directory of every worktree. */
  gitDir: string;
  /** Where the run started, relative to the checkout's root ('' at the root). */
  subdir: string;
}

export interface Worktree {
  name: string;
  branch: string;
  path: string;
  /** .git/worktrees/<id>: git's administrative folder for this worktree. */
  adminDir: string;
}

export function findGit(env: NodeJS.ProcessEnv): string {
  const git = findTool('git', env);
  if (!git) throw new SandboxUnavailableError('worktree runs need git, which is not on PATH; nothing was run');
  return git;
}

/** The repository around `cwd`, which must be its main checkout (or a folder in it); `what` names the command for the errors. */
export function findRepo(cwd: string, env: NodeJS.ProcessEnv, what = '--worktree'): Repo {
  const git = findGit(env);
  const r = probe({ file: git, args: ['-C', cwd, 'rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir'] });
  // For a run the sandbox cannot be set up as asked (exit 4); for a command it is an ordinary failure.
  const fail = (m: string) => (what === '--worktree' ? new SandboxUnavailableError(`${m}; nothing was run`) : new StashbaseError(`${m}; nothing was done`, 1));
  if (r.code !== 0) throw fail(`${what} needs a git repository, and ${cwd} is not in one`);
  const [top = '', common = ''] = r.stdout.trim().split('\n');
  const root = realpathSync(top);
  const gitDir = realpathSync(common);
  if (gitDir !== join(root, '.git')) {
    throw fail(`run ${what} from the repository's main checkout (${gitDir.replace(/\/\.git$/, '')}), not from a linked worktree`);
  }
  return { git, root, gitDir, subdir: relative(root, realpathSync(cwd)) };
}

export function worktreeOf(repo: Repo, name: string): Worktree {
  return { name, branch: `${BRANCH_PREFIX}${name}`, path: join(repo.root, WORKTREES_DIR, name), adminDir: join(repo.gitDir, 'worktrees', name) };
}

/**
 * The worktree as git registered it: git numbers the admin folder
 * (.git/worktrees/<name>1) when one of the name is left over, so the folder is
 * read from the worktree's pointer when that names one directly under
 * .git/worktrees; `pointersIntact` then checks all three files against it.
 */
export function locate(repo: Repo, name: string): Worktree {
  const w = worktreeOf(repo, name);
  try {
    const m = /^gitdir: (.*)\n$/.exec(readFileSync(join(w.path, '.git'), 'utf8'));
    const dir = m?.[1];
    if (dir && dirname(dir) === join(repo.gitDir, 'worktrees') && /^[A-Za-z0-9._-]+$/.test(basename(dir)) && !basename(dir).startsWith('.')) return { ...w, adminDir: dir };
  } catch {
    // no pointer: the expected folder
  }
  return w;
}

/** The exact pointer files git writes for a worktree: anything else may send the user's git elsewhere. */
export function expectedPointers(w: Worktree): Array<{ file: string; content: string }> {
  return [
    { file: join(w.path, '.git'), content: `gitdir: ${w.adminDir}\n` },
    { file: join(w.adminDir, 'gitdir'), content: `${join(w.path, '.git')}\n` },
    { file: join(w.adminDir, 'commondir'), content: '../..\n' },
  ];
}

export function pointersIntact(w: Worktree): boolean {
  return expectedPointers(w).every(({ file, content }) => {
    try {
      return lstatSync(file).isFile() && readFileSync(file, 'utf8') === content;
    } catch {
      return false;
    }
  });
}

const entries = (dir: string) => {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
};
export function branchExists(repo: Repo, branch: string): boolean {
  return probe(git(repo.git, repo.root, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`])).code === 0;
}

/** The worktree's own config.worktree: read by git in the worktree when extensions.worktreeConfig is on. */
export const worktreeConfigFile = (w: Worktree) => join(w.adminDir, 'config.worktree');

/** The files of the agent's own worktree that stay read-only inside its writable parts: its pointers and its config.worktree. */
export function ownProtectedFiles(w: Worktree): string[] {
  return [...expectedPointers(w).map((p) => p.file), worktreeConfigFile(w)];
}

/**
 * What the agent may not change during a worktree run: the whole .git
 * directory (its config, hooks, info, HEAD, index, submodule and other
 * worktrees' metadata, and nothing new in it either: a planted `commondir`
 * would send the user's next git to a config of the agent's) and the whole
 * checkout (.stashbase/agents and other agents' worktrees included), with
 * `writableGitDirs` and the worktree itself writable again inside them, its own
 * pointer files and config.worktree read-only once more. `otherWorktrees` is
 * what the Docker backend hides.
 */
export function protectedPaths(repo: Repo, w: Worktree): { gitFiles: string[]; otherWorktrees: string[]; checkout: string[] } {
  const g = repo.gitDir;
  const otherWorktrees = entries(join(g, 'worktrees')).filter((n) => n !== basename(w.adminDir)).map((n) => join(g, 'worktrees', n));
  return { gitFiles: [g, ...ownProtectedFiles(w)], otherWorktrees, checkout: [repo.root] };
}

/**
 * The parts of .git a commit on the agent's own branch writes, all else of .git
 * staying read-only (so nothing new appears beside config and hooks either):
 * the object store, refs and reflogs, and its own admin folder.
 */
export function writableGitDirs(repo: Repo, w: Worktree, create = true): string[] {
  if (create) mkdirSync(join(repo.gitDir, 'logs'), { recursive: true });
  return [join(repo.gitDir, 'objects'), join(repo.gitDir, 'refs'), join(repo.gitDir, 'logs'), w.adminDir];
}
