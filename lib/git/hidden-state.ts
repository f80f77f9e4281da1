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
import { hiddenPathsOfIndex, indexLayout, rebuildIndex } from './git-index.js';
import { writeIndexByLock } from './index-import.js';
import { repoFormat } from './run-git-dir.js';

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

/**
 * An index the run wrote in such a repository, rewritten as the top one's is after a run (rebuildIndex): every entry's
 * stat data zeroed and no extension, so git compares each file's content and never trusts a size and time the agent
 * chose (found in review: an entry with the old blob id and the new file's stat data hid a change from git status and
 * git diff; an untracked cache or fsmonitor token could hide more). Null when done or nothing to do; else a finding
 * (an index in a form stashbase does not rewrite: split or sparse, or one it cannot read).
 */
export function distrustIndex(gitDir: string, counts: (path: string) => boolean): string | null {
  const index = join(gitDir, 'index');
  if (!counts(index)) return null;
  const read = readBack(index, MAX_INDEX_BYTES);
  if (!read.ok) return read.why === 'missing' ? null : `index (${read.why}: stashbase cannot make your git look at the files again)`;
  const oidLength = repoFormat(gitDir).objectFormat === 'sha256' ? 32 : 20;
  const layout = indexLayout(read.data, oidLength);
  const why = 'index (in a form stashbase does not rewrite, whose stat data could hide a change from git status)';
  if (layout === null) return why;
  // A split index (link) or a sparse one (sdir) needs its extension: not rewritten without it.
  for (let off = layout.entriesEnd; off + 8 <= read.data.length - oidLength; ) {
    const sig = read.data.toString('latin1', off, off + 4);
    if (sig === 'link' || sig === 'sdir') return why;
    off += 8 + read.data.readUInt32BE(off + 4);
  }
  const written = writeIndexByLock(index, rebuildIndex(read.data, layout, layout.entries, oidLength));
  if (written === null) return null;
  return written === 'locked' ? 'index (locked when the run ended: stashbase could not make your git look at the files again)' : 'index (stashbase could not make your git look at the files again)';
}
