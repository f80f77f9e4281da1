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

/** The repository's git files that git executes or obeys: never writable by an agent. */
export function executableGitState(cwd: string): string[] {
  const repo = findRepoRoot(cwd);
  return repo?.gitDir ? [join(repo.gitDir, 'hooks'), join(repo.gitDir, 'config')] : [];
}
