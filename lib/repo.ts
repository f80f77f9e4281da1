// Where the repository around a working directory is: the nearest folder up
// the tree that holds a `.git` (a directory, or a worktree's pointer file).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

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

/** The names in a git directory of the files git runs or obeys. */
const GIT_FILES = ['hooks', 'config', 'commondir', 'config.worktree'];

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
