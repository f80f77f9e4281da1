// The agent worktrees and branches of a repository, with what may be done to
// each: running, locked (by you), UNSAFE, clean or dirty, or only a branch left.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BRANCH_PREFIX, git, statusCommand, worktreeRemoveCommand, worktreeUnlockCommand } from '../../templates/git.js';
import { StashbaseError, UsageError } from '../errors.js';
import { capture, probe } from '../exec.js';
import { branchExists, driversIn, locate, type Repo, pointersIntact, type Worktree, worktreeOf } from './layout.js';
import { lockState } from './lifecycle.js';
import { parseRefFile, refFileText } from '../git/ref-store.js';
import { readBack } from '../readback/file.js';
import { NAME_PATTERN } from './names.js';

export type Status = 'running' | 'locked' | 'UNSAFE' | 'clean' | 'dirty' | 'branch only';

export interface AgentWork {
  name: string;
  branch: string;
  path: string | null;
  status: Status;
  /** Commits on the agent's branch that the checkout's HEAD does not have. */
  unmerged: number;
  staleLock: boolean;
  /**
   * What removing the worktree loses beyond its branch and its uncommitted changes, in words (review, round 35):
   * its submodules' git directories (git keeps them in the worktree's own admin folder: commits made there go with
   * it; git worktree remove refuses such a worktree unless forced), and commits on no branch (a detached HEAD).
   */
  held: string[];
  /** The same, a word or two each, for the list. */
  heldTags: string[];
}

function branches(repo: Repo): string[] {
  const out = probe(git(repo.git, repo.root, ['for-each-ref', '--format=%(refname:short)', `refs/heads/${BRANCH_PREFIX}`])).stdout;
  return out.split('\n').filter((b) => b.startsWith(BRANCH_PREFIX) && NAME_PATTERN.test(b.slice(BRANCH_PREFIX.length)));
}

export function unmergedCount(repo: Repo, branch: string): number {
  const r = probe(git(repo.git, repo.root, ['rev-list', '--count', `HEAD..refs/heads/${branch}`]));
  return r.code === 0 ? Number(r.stdout.trim()) : 0;
}

export function inspect(repo: Repo, name: string): AgentWork {
  const w = locate(repo, name);
  const unmerged = unmergedCount(repo, w.branch);
  if (!existsSync(w.path)) return { name, branch: w.branch, path: null, status: 'branch only', unmerged, staleLock: false, held: [], heldTags: [] };
  const base = { name, branch: w.branch, path: w.path, unmerged, held: [] as string[], heldTags: [] as string[] };
  if (!pointersIntact(w)) return { ...base, status: 'UNSAFE', staleLock: false };
  const lock = lockState(w);
  if (lock.kind === 'running') return { ...base, status: 'running', staleLock: false };
  if (lock.kind === 'user') return { ...base, status: 'locked', staleLock: false };
  const st = probe(statusCommand(repo.git, w.path, driversIn(repo, w.path)));
  return { ...base, ...heldIn(repo, w), status: st.code === 0 && st.stdout.trim() === '' ? 'clean' : 'dirty', staleLock: lock.kind === 'stale' };
}

/** What the worktree holds that its removal would lose, its branch and uncommitted changes aside (AgentWork.held). */
function heldIn(repo: Repo, w: Worktree): { held: string[]; heldTags: string[] } {
  const held: string[] = [];
  const heldTags: string[] = [];
  const modules = join(w.adminDir, 'modules');
  if (existsSync(modules)) {
    heldTags.push('submodules');
    held.push(`its submodules' git directories (${modules}), with any commit made in them that no remote has`);
  }
  // A detached HEAD's commits that no branch, tag, remote-tracking ref or your checkout's HEAD holds.
  const r = readBack(join(w.adminDir, 'HEAD'), 4096);
  const head = r.ok ? parseRefFile(refFileText(r.data)) : null;
  if (head?.kind === 'oid') {
    const n = probe(git(repo.git, repo.root, ['rev-list', '--count', head.oid, '--not', '--branches', '--tags', '--remotes', 'HEAD']));
    const count = n.code === 0 ? Number(n.stdout.trim()) : NaN;
    if (count !== 0) {
      heldTags.push('commits on no branch');
      held.push(`${Number.isNaN(count) ? 'commits' : `${count} commit(s)`} made on no branch (its HEAD is detached at ${head.oid.slice(0, 12)}: git branch kept-${w.name} ${head.oid} keeps them)`);
    }
  }
  return { held, heldTags };
}

/** One agent's work by name, or a clear error when there is none of that name. */
export function named(repo: Repo, name: string): AgentWork {
  if (!NAME_PATTERN.test(name)) throw new UsageError(`an agent worktree name looks like amber-river-storm, not ${JSON.stringify(name)}`);
  const work = inspect(repo, name);
  if (work.path === null && !branchExists(repo, work.branch)) throw new StashbaseError(`there is no agent worktree or branch ${work.branch} in ${repo.root}`, 1);
  return work;
}

export function inventory(repo: Repo): AgentWork[] {
  const names = new Set(branches(repo).map((b) => b.slice(BRANCH_PREFIX.length)));
  const list = probe(git(repo.git, repo.root, ['worktree', 'list', '--porcelain'])).stdout;
  const prefix = worktreeOf(repo, 'x').path.slice(0, -1);
  for (const line of list.split('\n')) {
    if (!line.startsWith('worktree ')) continue;
    const path = line.slice(9);
    if (path.startsWith(prefix) && NAME_PATTERN.test(path.slice(prefix.length))) names.add(path.slice(prefix.length));
  }
  return [...names].sort().map((n) => inspect(repo, n));
}

/** Whether the agent's branch is contained in the checkout's HEAD. */
export function merged(repo: Repo, branch: string): boolean {
  return probe(git(repo.git, repo.root, ['merge-base', '--is-ancestor', `refs/heads/${branch}`, 'HEAD'])).code === 0;
}

/** What no command may remove: a run is using it, you locked it, or its pointer files are not git's. */
export const untouchable = (w: AgentWork) => w.status === 'running' || w.status === 'locked' || w.status === 'UNSAFE';

/** Removes the worktree (a stale lock released first) and, unless kept, the branch; never a running, locked or UNSAFE one. */
export async function discard(repo: Repo, work: AgentWork, keepBranch: boolean, removeVolumes: (w: Worktree) => Promise<unknown>): Promise<void> {
  if (untouchable(work)) throw new Error(`${work.name} is ${work.status}: left alone`);
  const w = locate(repo, work.name);
  if (work.path !== null) {
    if (work.staleLock) await capture(worktreeUnlockCommand(repo.git, repo.root, w.path));
    await capture(worktreeRemoveCommand(repo.git, repo.root, w.path, true, driversIn(repo, w.path)));
    await removeVolumes(w);
  }
  if (!keepBranch) await capture(git(repo.git, repo.root, ['branch', '-D', w.branch]));
}
