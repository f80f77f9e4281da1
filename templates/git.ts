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

/** The filter and merge drivers your config names (`git config --name-only --get-regexp '^(filter|merge)\.'`). */
export interface Drivers {
  filters: string[];
  merges: string[];
}

export const NO_DRIVERS: Drivers = { filters: [], merges: [] };

/** Your config's drivers, from that listing's output. */
export function driversOf(names: string): Drivers {
  const filters = new Set<string>();
  const merges = new Set<string>();
  for (const line of names.split('\n')) {
    // A driver's name may be empty (`[filter ""]`, which `filter=` in an attribute names: review, round 33).
    const m = /^(filter|merge)\.(.*)\.[^.]+$/s.exec(line.trim());
    if (m) (m[1] === 'filter' ? filters : merges).add(m[2] as string);
  }
  return { filters: [...filters], merges: [...merges] };
}

export const DRIVER_NAMES_ARGS = ['config', '--name-only', '--get-regexp', '^(filter|merge)\\.'];

/**
 * A git command over what the agent wrote, run with none of your drivers:
 * every filter's clean, smudge and process emptied (not required), every merge
 * driver `false` (a conflict, never its program) (found in review, rounds 29
 * and 30: your post-checkout hook, a `python -m` clean filter that imported a
 * module the agent planted in its worktree, your merge driver in the merge
 * review, each ran on the agent's files outside the sandbox; the agent's
 * .gitattributes chooses which file gets which driver). As GIT_CONFIG_KEY_n: a
 * driver's name may hold an "=", which -c would split at.
 */
export function withoutDrivers(cmd: Command, d: Drivers): Command {
  const pairs = [
    ...d.filters.flatMap((f) => [[`filter.${f}.clean`, ''], [`filter.${f}.smudge`, ''], [`filter.${f}.process`, ''], [`filter.${f}.required`, 'false']]),
    ...d.merges.map((m) => [`merge.${m}.driver`, 'false']),
  ];
  // GIT_CONFIG_PARAMETERS in stashbase's own environment would be read after these, and win (review, round 31).
  const unsetEnv = [...(cmd.unsetEnv ?? []), 'GIT_CONFIG_PARAMETERS'];
  if (pairs.length === 0) return { ...cmd, unsetEnv };
  const env: Record<string, string> = { ...cmd.env, GIT_CONFIG_COUNT: String(pairs.length) };
  pairs.forEach(([k, v], i) => Object.assign(env, { [`GIT_CONFIG_KEY_${i}`]: k, [`GIT_CONFIG_VALUE_${i}`]: v }));
  return { ...cmd, env, unsetEnv };
}

/**
 * A new branch from HEAD (`from`), or (resume, `from` null) the run's branch
 * checked out again: with no hook and none of your drivers (withoutDrivers)
 * either way. The resumed branch is the agent's (found in review: a
 * post-checkout hook running npm install ran the agent's preinstall script
 * outside any sandbox), and HEAD may hold commits an earlier run brought back
 * (review, round 31: your smudge filter ran on the agent's files). A filter's
 * files stay as committed.
 */
export function worktreeAddCommand(gitPath: string, repo: string, path: string, name: string, from: string | null, drivers: Drivers = NO_DRIVERS): Command {
  // No files yet: they are checked out in the worktree itself (worktreeCheckoutCommand), where your config's conditional
  // includes are decided by its branch (review, round 32: an includeIf "onbranch:stashbase/**" named a filter the
  // listing in your checkout never saw).
  const args = from !== null ? ['worktree', 'add', '--no-checkout', '-b', `${BRANCH_PREFIX}${name}`, path, from] : ['worktree', 'add', '--no-checkout', path, `${BRANCH_PREFIX}${name}`];
  return withoutDrivers(git(gitPath, repo, args), drivers);
}

/** The worktree's files checked out in it, with none of the drivers your config names as git reads it there. */
export function worktreeCheckoutCommand(gitPath: string, worktree: string, drivers: Drivers = NO_DRIVERS): Command {
  return withoutDrivers(git(gitPath, worktree, ['reset', '--hard', '-q', '--no-recurse-submodules']), drivers);
}

export function worktreeLockCommand(gitPath: string, repo: string, path: string, reason: string): Command {
  return git(gitPath, repo, ['worktree', 'lock', '--reason', reason, path]);
}

export function worktreeUnlockCommand(gitPath: string, repo: string, path: string): Command {
  return git(gitPath, repo, ['worktree', 'unlock', path]);
}

/** Removing an agent's worktree: git checks it is clean first, with none of your drivers. */
export function worktreeRemoveCommand(gitPath: string, repo: string, path: string, force: boolean, drivers: Drivers = NO_DRIVERS): Command {
  return withoutDrivers(git(gitPath, repo, ['worktree', 'remove', ...(force ? ['--force'] : []), path]), drivers);
}

/**
 * Whether a checkout is clean, with none of your drivers (a file a filter
 * would change then shows as changed) and no git run inside its submodules
 * (review, round 31: there your config's conditional includes, matched by the
 * agent's own remote URL or branch, named drivers no listing here sees). A
 * worktree holding submodules is never removed (lib/worktree/lifecycle.ts).
 */
export function statusCommand(gitPath: string, worktree: string, drivers: Drivers = NO_DRIVERS, o: { untracked?: 'all' | 'normal' | 'no'; nul?: boolean } = {}): Command {
  return withoutDrivers(git(gitPath, worktree, ['status', '--porcelain', ...(o.nul ? ['-z'] : []), `--untracked-files=${o.untracked ?? 'all'}`, '--ignore-submodules=all']), drivers);
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

/** What merging the reviewed commit into your HEAD would write (a tree, git 2.38 on), with none of your drivers. */
export function mergeTreeCommand(gitPath: string, repo: string, oid: string, drivers: Drivers = NO_DRIVERS): Command {
  return withoutDrivers(git(gitPath, repo, ['merge-tree', '--write-tree', '--no-messages', 'HEAD', oid]), drivers);
}

export function rawDiffCommand(gitPath: string, repo: string, from: string, to: string): Command {
  return git(gitPath, repo, ['diff', '--raw', '-z', '--no-renames', '--no-abbrev', '--no-ext-diff', '--no-textconv', from, to]);
}
