// What a run can leave in a repository of yours in the tree (a nested one) for
// your git to act on later without showing it (found in review, each with
// your git's own commands): a paused rebase whose queued `exec` your
// `--continue` runs; index bits that hide a changed file from `git status`
// (skip-worktree, assume-unchanged); `info/exclude` hiding a planted file and
// `info/attributes` turning a diff into "Binary files differ". Named by path in
// the git directory, or null; read only, never following a link.
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { readBack } from '../readback/file.js';
import { hiddenPathsOfIndex } from './git-index.js';

/** Work git resumes with --continue (a rebase's todo may run commands: exec lines). */
const PAUSED = ['rebase-merge', 'rebase-apply', 'sequencer'];
/** The files of info/ that hide what is in the working tree from git status and git diff. */
const HIDING = ['exclude', 'attributes', 'sparse-checkout'];
/** What the index reader takes at most. */
const MAX_INDEX_BYTES = 256 << 20;

export function hiddenState(gitDir: string, workTree: string | null, counts: (path: string) => boolean): string | null {
  for (const name of PAUSED) {
    const p = join(gitDir, name);
    if (lstatSync(p, { throwIfNoEntry: false }) !== undefined && counts(p)) return `${name} (work your git resumes with --continue, running what it queued: a rebase's exec lines)`;
  }
  // Those that hide, when they say anything (git init writes an exclude of comments alone).
  for (const name of HIDING) {
    const p = join(gitDir, 'info', name);
    if (!counts(p)) continue;
    const read = readBack(p, 1 << 20);
    const says = !read.ok ? read.why !== 'missing' : read.data.toString('latin1').split('\n').some((l) => l.trim() !== '' && !l.trimStart().startsWith('#'));
    if (says) return `info/${name} (what your git ignores, how it diffs, which files it checks out: it hides from git status and git diff what the agent left)`;
  }
  if (workTree === null) return null;
  const index = join(gitDir, 'index');
  if (!counts(index)) return null;
  const read = readBack(index, MAX_INDEX_BYTES);
  if (!read.ok) return null;
  // A sparse checkout's skip-worktree files are not there: those that are, and any marked assume-unchanged, are hidden.
  const hidden = (hiddenPathsOfIndex(read.data) ?? []).filter((p) => lstatSync(join(workTree, p), { throwIfNoEntry: false }) !== undefined);
  return hidden.length > 0 ? `index (it hides ${hidden.slice(0, 3).join(', ')}${hidden.length > 3 ? ', …' : ''} from git status: skip-worktree or assume-unchanged on a file that is there)` : null;
}
