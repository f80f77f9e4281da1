// Where the repository around a working directory is: the nearest folder up
// the tree that holds a `.git` (a directory, or a worktree's pointer file).
import { statSync } from 'node:fs';
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
 * The repository's git files that git executes or obeys: never writable by an
 * agent. `commondir` would point git at another directory's config (and its
 * core.fsmonitor): while missing, it gets a stand-in file holding "." (this
 * directory itself), which git reads as no redirection at all.
 * `config.worktree` is read with extensions.worktreeConfig: while missing, an
 * empty stand-in (an empty config).
 */
export function executableGitState(cwd: string): string[] {
  const repo = findRepoRoot(cwd);
  return repo?.gitDir ? ['hooks', 'config', 'commondir', 'config.worktree'].map((f) => join(repo.gitDir as string, f)) : [];
}
