// A worktree run's before and after: create (or resume) the worktree on its own
// branch and lock it; afterwards (once the run's git work is imported:
// lib/git/import.ts) restore its pointer file, unlock, and remove it when clean.
import { appendFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { git, LOCK_REASON_PREFIX, lockReason, statusCommand, WORKTREES_DIR, worktreeAddCommand, worktreeLockCommand, worktreeRemoveCommand, worktreeUnlockCommand } from '../../templates/git.js';
import { SandboxUnavailableError, UsageError } from '../errors.js';
import { capture, probe } from '../exec.js';
import { processAlive } from '../run/session.js';
import { branchExists, expectedPointers, locate, pointersIntact, type Repo, type Worktree, worktreeOf } from './layout.js';
import { freshName, NAME_PATTERN } from './names.js';

export interface Started {
  repo: Repo;
  worktree: Worktree;
  resumed: boolean;
}

const EXCLUDE_LINE = `/${WORKTREES_DIR}/`;

export type LockState = { kind: 'none' } | { kind: 'running'; pid: number } | { kind: 'stale'; pid: number } | { kind: 'user'; reason: string };

export function lockState(w: Worktree): LockState {
  let reason: string;
  try {
    reason = readFileSync(join(w.adminDir, 'locked'), 'utf8').trim();
  } catch {
    return { kind: 'none' };
  }
  const m = new RegExp(`^${LOCK_REASON_PREFIX}ags_[a-z2-7]{16} pid (\\d+)$`).exec(reason);
  if (!m) return { kind: 'user', reason };
  const pid = Number(m[1]);
  return processAlive(pid) ? { kind: 'running', pid } : { kind: 'stale', pid };
}

function ensureExcluded(repo: Repo): void {
  const file = join(repo.gitDir, 'info', 'exclude');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (text.split('\n').includes(EXCLUDE_LINE)) return;
  mkdirSync(dirname(file), { recursive: true });
  appendFileSync(file, `${text === '' || text.endsWith('\n') ? '' : '\n'}${EXCLUDE_LINE}\n`);
}

/** Creates (or, with `resume`, reopens) the run's worktree and locks it for this run. */
export async function startWorktree(repo: Repo, o: { session: string; resume?: string; warn: (m: string) => void }): Promise<Started> {
  const dirty = probe(statusCommand(repo.git, repo.root));
  if (dirty.code === 0 && dirty.stdout.trim() !== '') o.warn('your checkout has uncommitted changes; they are not carried over into the agent\'s worktree');
  ensureExcluded(repo);
  let w: Worktree;
  let resumed = false;
  if (o.resume !== undefined) {
    if (!NAME_PATTERN.test(o.resume)) throw new UsageError(`--resume takes a worktree name such as amber-river-storm, not ${JSON.stringify(o.resume)}`);
    w = locate(repo, o.resume);
    resumed = true;
    if (existsSync(w.path)) {
      if (!pointersIntact(w)) throw new SandboxUnavailableError(`worktree ${w.name} is UNSAFE: its git pointer files are not what git wrote; inspect ${w.path} by hand before running git in it; nothing was run`);
      const lock = lockState(w);
      if (lock.kind === 'running') throw new SandboxUnavailableError(`worktree ${w.name} is in use by a run still going (pid ${lock.pid}); nothing was run`);
      if (lock.kind === 'user') throw new SandboxUnavailableError(`worktree ${w.name} is locked (${lock.reason || 'no reason given'}); unlock it with git worktree unlock ${w.path}; nothing was run`);
      if (lock.kind === 'stale') await capture(worktreeUnlockCommand(repo.git, repo.root, w.path));
    } else {
      if (!branchExists(repo, w.branch)) throw new UsageError(`there is no agent worktree or branch ${w.branch} to resume`);
      await capture(git(repo.git, repo.root, ['worktree', 'prune']));
      await capture(worktreeAddCommand(repo.git, repo.root, w.path, w.name, null));
    }
  } else {
    const name = freshName((n) => existsSync(worktreeOf(repo, n).path) || existsSync(worktreeOf(repo, n).adminDir) || branchExists(repo, worktreeOf(repo, n).branch));
    w = worktreeOf(repo, name);
    await capture(worktreeAddCommand(repo.git, repo.root, w.path, w.name, 'HEAD'));
  }
  // git names its admin folder after the path's last component, numbered if taken.
  w = locate(repo, w.name);
  if (!pointersIntact(w)) throw new SandboxUnavailableError(`worktree ${w.name}: git wrote pointer files stashbase does not recognise; nothing was run`);
  await capture(worktreeLockCommand(repo.git, repo.root, w.path, lockReason(o.session, process.pid)));
  return { repo, worktree: w, resumed };
}

/** Puts back what git wrote: the pointer files (the agent could aim the worktree's at code of its own). */
export function restorePointers(w: Worktree): void {
  for (const { file, content } of expectedPointers(w)) {
    if (lstatSync(file, { throwIfNoEntry: false })?.isDirectory()) rmSync(file, { recursive: true, force: true });
    writeFileSync(file, content);
  }
}

/** How long a git of the end of a run may take over the agent's worktree before it is stopped and said. */
const AFTER_RUN_MS = 120_000;

export async function isClean(repo: Repo, w: Worktree): Promise<boolean> {
  return (await capture(statusCommand(repo.git, w.path), undefined, AFTER_RUN_MS)).trim() === '';
}

/** After the run, on every way out: pointers, refs, lock; then a clean worktree goes (its branch stays). */
export async function finishWorktree(s: Started, warn: (m: string) => void, note: (m: string) => void, removeVolumes: (w: Worktree) => Promise<unknown>): Promise<{ removed: boolean }> {
  restorePointers(s.worktree);
  await capture(worktreeUnlockCommand(s.repo.git, s.repo.root, s.worktree.path), undefined, AFTER_RUN_MS);
  if (await isClean(s.repo, s.worktree)) {
    await capture(worktreeRemoveCommand(s.repo.git, s.repo.root, s.worktree.path, false), undefined, AFTER_RUN_MS);
    await removeVolumes(s.worktree);
    note(`Worktree ${s.worktree.name} was clean and is removed; its branch ${s.worktree.branch} is kept (stashbase agent run --resume ${s.worktree.name} continues it).`);
    return { removed: true };
  }
  note(`Worktree ${s.worktree.name} has uncommitted changes and is kept: ${s.worktree.path}`);
  return { removed: false };
}
