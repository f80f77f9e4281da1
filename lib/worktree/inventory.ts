// The agent worktrees and branches of a repository, with what may be done to
// each: running, locked (by you), UNSAFE, clean or dirty, or only a branch left.
import { existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { BRANCH_PREFIX, git, statusCommand, worktreeRemoveCommand, worktreeUnlockCommand } from '../../templates/git.js';
import { StashbaseError, UsageError } from '../errors.js';
import { capture, probe } from '../exec.js';
import { branchExists, driversIn, locate, type Repo, pointersIntact, type Worktree, worktreeOf } from './layout.js';
import { lockState } from './lifecycle.js';
import { parseRefFile, readRefStore, refFileText } from '../git/ref-store.js';
import { gitlinks } from '../git/gitlinks.js';
import { OID } from '../git/refname.js';
import { firstFew } from '../util/printable.js';
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
  // Submodules: any the worktree's index records (git's own test before it removes a worktree; their git directories
  // lie in the admin folder's modules, or inside the checkout when one was cloned there first), or a modules folder.
  // A gitlink never checked out there (no .git in its folder) holds nothing.
  const listed = gitlinks(repo.git, w.adminDir, w.path, repo.gitDir);
  const links = typeof listed === 'string' ? listed : listed.filter((l) => hasEntry(join(w.path, l, '.git')));
  const modules = join(w.adminDir, 'modules');
  if (typeof links === 'string' || links.length > 0 || existsSync(modules)) {
    heldTags.push('submodules');
    const named = typeof links === 'string' ? `(${links})` : links.length > 0 ? firstFew(links.map((l) => JSON.stringify(l)), 5) : `in ${modules}`;
    held.push(`submodules ${named}, whose git directories go with it, with any commit made in them that no remote has`);
  }
  // Commits that only the worktree's HEAD, its own refs (refs/worktree, refs/bisect) or its HEAD's reflog hold: none of
  // your branches, tags, remote-tracking refs nor your checkout's HEAD. What cannot be read whole counts as holding.
  const tips = worktreeTips(w);
  const only = tips.oids.length === 0 ? { code: 0, stdout: '' } : probe(git(repo.git, repo.root, ['rev-list', '--stdin', '--not', '--branches', '--tags', '--remotes', 'HEAD']), 5000, 16 << 20, tips.oids.map((t) => `${t}\n`).join(''));
  const found = only.code === 0 ? only.stdout.split('\n').filter(Boolean) : null;
  if (found === null || found.length > 0 || tips.unread !== null) {
    heldTags.push('commits on no branch');
    const what = found === null ? 'commits' : found.length > 0 ? `${found.length} commit(s)` : 'perhaps commits';
    // rev-list gives the newest first: a branch there keeps it and what it was made on.
    const keep = found !== null && found.length > 0 ? ` (git branch kept-${w.name} ${found[0]} keeps the newest of them)` : '';
    held.push(`${what} on no branch, held only by its HEAD, its own refs or its HEAD's history${tips.unread !== null ? ` (${tips.unread})` : ''}${keep}`);
  }
  return { held, heldTags };
}

const MAX_TIPS = 10_000;
const MAX_REFLOG_BYTES = 16 << 20;

/** Something is there, a link to nothing included. */
const hasEntry = (path: string) => lstatSync(path, { throwIfNoEntry: false }) !== undefined;

/**
 * The object ids the worktree alone may hold: its HEAD, its own refs, its HEAD's reflog; `unread` says what could
 * not be read whole (review, round 35: a reflog past the read's bound, or past a cap on its entries, was passed by
 * and the worktree called clean).
 */
function worktreeTips(w: Worktree): { oids: string[]; unread: string | null } {
  const oids = new Set<string>();
  let unread: string | null = null;
  const add = (oid: string | undefined) => {
    if (oid === undefined || !OID.test(oid) || /^0+$/.test(oid)) return;
    if (oids.size < MAX_TIPS) oids.add(oid);
    else unread ??= `more than ${MAX_TIPS} entries in its history`;
  };
  const r = readBack(join(w.adminDir, 'HEAD'), 4096);
  const head = r.ok ? parseRefFile(refFileText(r.data)) : null;
  if (head?.kind === 'oid') add(head.oid);
  // Its own refs, where it has any (most worktrees have no refs folder).
  if (hasEntry(join(w.adminDir, 'refs'))) {
    const refs = readRefStore(w.adminDir);
    if (refs.problems.length > 0 || refs.incomplete) unread ??= 'its own refs could not all be read';
    for (const v of refs.refs.values()) if (v.kind === 'oid') add(v.oid);
  }
  const log = readBack(join(w.adminDir, 'logs', 'HEAD'), MAX_REFLOG_BYTES);
  if (log.ok) for (const line of log.data.toString('latin1').split('\n')) add(line.split(' ')[1]);
  else if (log.why !== 'missing') unread ??= `its HEAD's history could not be read: ${log.why}`;
  return { oids: [...oids], unread };
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
