// Where an agent worktree lives and which git files around it an agent must not
// touch: the repository's executable state, the checkout, other worktrees.
import { lstatSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { BRANCH_PREFIX, DRIVER_NAMES_ARGS, type Drivers, driversOf, git, WORKTREES_DIR } from '../../templates/git.js';
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

export function findGit(env: NodeJS.ProcessEnv, who = 'worktree runs'): string {
  const git = findTool('git', env);
  if (!git) throw new SandboxUnavailableError(`${who} need git, which is not on PATH; nothing was run`);
  return git;
}

/**
 * The repository around `cwd`, which must be its main checkout (or a folder in
 * it); `what` names the command for the errors. `run`: a run that cannot start
 * (exit 4; the default for --worktree), else an ordinary failure; `none`: what
 * to say when there is no repository, if not the default.
 */
export function findRepo(cwd: string, env: NodeJS.ProcessEnv, what = '--worktree', o: { run?: boolean; none?: string; who?: string } = {}): Repo {
  const git = findGit(env, o.who);
  const r = probe({ file: git, args: ['-C', cwd, 'rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir'] });
  // For a run the sandbox cannot be set up as asked (exit 4); for a command it is an ordinary failure.
  const fail = (m: string) => ((o.run ?? what === '--worktree') ? new SandboxUnavailableError(`${m}; nothing was run`) : new StashbaseError(`${m}; nothing was done`, 1));
  if (r.code !== 0) throw fail(o.none ?? `${what} needs a git repository, and ${cwd} is not in one`);
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

export function branchExists(repo: Repo, branch: string): boolean {
  return probe(git(repo.git, repo.root, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`])).code === 0;
}

/**
 * What the agent may not change during a worktree run: the whole checkout
 * (.stashbase/agents and other agents' worktrees included) and the
 * worktree's own `.git` pointer file. The worktree itself stays writable
 * inside the checkout; the git directory is the run's own
 * (lib/git/run-git-dir.ts), never yours.
 */
export function protectedPaths(repo: Repo, w: Worktree): { pointer: string; checkout: string[] } {
  return { pointer: join(w.path, '.git'), checkout: [repo.root] };
}

/** The filter and merge drivers your config names, as git reads it in `at` (a worktree's own branch and git directory decide its conditional includes). */
export function driversIn(repo: Repo, at: string = repo.root): Drivers {
  const r = probe(git(repo.git, at, DRIVER_NAMES_ARGS));
  return driversOf(r.code === 0 ? r.stdout : '');
}
