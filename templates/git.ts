// The git commands of worktree runs and `agent worktrees`. Commands run after an
// agent had the repository's object store and refs in its hands carry SAFE:
// no hooks, no fsmonitor, whatever a config might say.
import type { Command } from './command.js';

export const BRANCH_PREFIX = 'stashbase/';
export const WORKTREES_DIR = '.stashbase/worktrees';
/** The lock reason a run writes; a lock without it is the user's own. */
export const LOCK_REASON_PREFIX = 'stashbase run ';

// protocol.allow=never and no lazy fetch: a promisor remote in a config the
// agent wrote (a partial clone) would otherwise make git fetch a missing
// object, through the ssh command or remote helper that config names.
const SAFE = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'core.untrackedCache=false', '-c', 'protocol.allow=never'];
// GIT_ALLOW_PROTOCOL: unlike -c protocol.allow, no protocol.<name>.allow in a config can undo it.
export const SAFE_ENV: Readonly<Record<string, string>> = { GIT_NO_LAZY_FETCH: '1', GIT_ALLOW_PROTOCOL: 'none' };

export function git(gitPath: string, repo: string, args: string[], safe = true): Command {
  return safe ? { file: gitPath, args: ['-C', repo, ...SAFE, ...args], env: { ...SAFE_ENV } } : { file: gitPath, args: ['-C', repo, ...args] };
}

export function lockReason(session: string, pid: number): string {
  return `${LOCK_REASON_PREFIX}${session} pid ${pid}`;
}

export function worktreeAddCommand(gitPath: string, repo: string, path: string, name: string, from: string | null): Command {
  // A new branch from HEAD, or (resume) the existing branch checked out again.
  // The user's own post-checkout hook runs as with any `git worktree add`: the agent has not run yet.
  return from === null
    ? git(gitPath, repo, ['worktree', 'add', path, `${BRANCH_PREFIX}${name}`], false)
    : git(gitPath, repo, ['worktree', 'add', '-b', `${BRANCH_PREFIX}${name}`, path, from], false);
}

export function worktreeLockCommand(gitPath: string, repo: string, path: string, reason: string): Command {
  return git(gitPath, repo, ['worktree', 'lock', '--reason', reason, path]);
}

export function worktreeUnlockCommand(gitPath: string, repo: string, path: string): Command {
  return git(gitPath, repo, ['worktree', 'unlock', path]);
}

export function worktreeRemoveCommand(gitPath: string, repo: string, path: string, force: boolean): Command {
  return git(gitPath, repo, ['worktree', 'remove', ...(force ? ['--force'] : []), path]);
}

export function statusCommand(gitPath: string, worktree: string): Command {
  return git(gitPath, worktree, ['status', '--porcelain', '--untracked-files=all', '--ignore-submodules=none']);
}

/** The user's merge, run as their own git (their hooks run): the reviewed commit, never a name a tag could shadow. */
export function mergeCommand(gitPath: string, repo: string, branch: string, oid: string, o: { squash: boolean; message?: string }): Command {
  return o.squash
    ? git(gitPath, repo, ['merge', '--squash', oid], false)
    : git(gitPath, repo, ['merge', '--no-ff', '--no-edit', '-m', o.message ?? `Merge branch '${branch}'`, oid], false);
}

/** After `merge --squash`: git's prepared message (the squashed commits) unless -m gave one. */
export function squashCommitCommand(gitPath: string, repo: string, message: string | undefined): Command {
  return git(gitPath, repo, message === undefined ? ['commit', '--no-edit'] : ['commit', '-m', message], false);
}

export function rawDiffCommand(gitPath: string, repo: string, from: string, to: string): Command {
  return git(gitPath, repo, ['diff', '--raw', '-z', '--no-renames', '--no-abbrev', '--no-ext-diff', '--no-textconv', from, to]);
}
