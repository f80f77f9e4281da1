// After a run on a backend where the agent writes the repository's git state
// directly (Docker: the index is the real one), what it could leave to hide
// its changes or to run later: paths newly marked assume-unchanged or
// skip-worktree (your git status and git diff pass over them), and a paused
// rebase, cherry-pick or am whose queued `exec` steps your `--continue` would
// run. The marks are cleared and the paused state moved aside, each named.
// (The native backend's view of .git keeps both out already: lib/views.)
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { moveAside, QUARANTINE } from './planted-repos.js';
import { join } from 'node:path';
import { probe } from '../exec.js';
import { hiddenPathsOfIndex } from './git-index.js';
import { restoreHint } from '../util/style.js';

/** git's folders of an operation in progress (rebase, am; cherry-pick and revert). */
export const PAUSED = ['rebase-merge', 'rebase-apply', 'sequencer'];

export interface GitStateSnapshot {
  hidden: string[] | null;
  paused: string[];
}

function hiddenNow(gitDir: string): string[] | null {
  try {
    if (!lstatSync(join(gitDir, 'index')).isFile()) return null;
    return hiddenPathsOfIndex(readFileSync(join(gitDir, 'index')));
  } catch {
    return [];
  }
}

export function snapshotGitState(gitDir: string): GitStateSnapshot {
  return { hidden: hiddenNow(gitDir), paused: PAUSED.filter((d) => existsSync(join(gitDir, d))) };
}

/** Clears what the run newly hid and moves aside a paused operation it left; returns what to tell. */
export function checkGitState(git: string, root: string, gitDir: string, start: GitStateSnapshot): string[] {
  const out: string[] = [];
  const now = hiddenNow(gitDir);
  if (start.hidden !== null && now !== null) {
    const fresh = now.filter((p) => !start.hidden!.includes(p));
    if (fresh.length > 0) {
      // fsmonitor off: nothing of any config runs for it. One mark per call: update-index takes only one of the two at a time.
      const clear = (flag: string) => probe({ file: git, args: ['-C', root, '-c', 'core.fsmonitor=false', 'update-index', flag, '--', ...fresh] }, 30_000);
      const first = clear('--no-assume-unchanged');
      const r = first.code === 0 ? clear('--no-skip-worktree') : first;
      const list = `${fresh.slice(0, 5).join(', ')}${fresh.length > 5 ? ` and ${fresh.length - 5} more` : ''}`;
      out.push(r.code === 0
        ? `the agent marked ${list} assume-unchanged or skip-worktree in ${root}, which hid their changes from your git status and git diff: the marks were cleared`
        : `the agent marked ${list} assume-unchanged or skip-worktree in ${root}, and the marks could not be cleared (${r.stderr.trim()}): run git update-index --no-assume-unchanged --no-skip-worktree on them`);
    }
  }
  for (const d of PAUSED) {
    const p = join(gitDir, d);
    if (start.paused.includes(d) || !existsSync(p)) continue;
    const failed = moveAside(p);
    out.push(failed === null
      ? `the agent left a paused ${d === 'sequencer' ? 'cherry-pick or revert' : 'rebase'} in ${root} (${p}), whose queued steps your --continue would run: it was moved to ${p}${QUARANTINE}; review it (its todo list), then ${restoreHint(p + QUARANTINE, p)}`
      : `the agent left a paused operation in ${p}, and it could not be moved aside (${failed}): review its todo list before any --continue`);
  }
  return out;
}
