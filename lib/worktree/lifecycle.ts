// A worktree run's before and after: create (or resume) the worktree on its own
// branch and lock it; afterwards (once the run's git work is imported:
// lib/git/import.ts) restore its pointer file, unlock, and remove it when clean.
import { appendFileSync, existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { git, LOCK_REASON_PREFIX, lockReason, statusCommand, WORKTREES_DIR, worktreeAddCommand, worktreeCheckoutCommand, worktreeLockCommand, worktreeRemoveCommand, worktreeUnlockCommand } from '../../templates/git.js';
import { SandboxUnavailableError, UsageError } from '../errors.js';
import { capture, probe } from '../exec.js';
import { liveSessions, processAlive, type SessionRecord } from '../run/session.js';
import { branchExists, driversIn, expectedPointers, locate, pointersIntact, type Repo, type Worktree, worktreeOf } from './layout.js';
import { freshName, NAME_PATTERN } from './names.js';
import { realPathOf } from '../util/real-path.js';
import { freeName } from '../paths/free-name.js';
import { QUARANTINE } from '../git/planted-repos.js';

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

/**
 * Makes the repository's `.stashbase/worktrees` before any run of it starts, where it is missing, so that every run
 * has it read-only (the repository's `.stashbase` is, when it exists): found in review, an agent of a run started
 * before the folder existed made it, and swapped a worktree another run was making, or removing, for a link, and git
 * emptied the folder it named. Never through a link (one the agent left: the worktree run refuses it).
 */
export function ensureWorktreesFolder(root: string): void {
  for (const dir of [join(root, '.stashbase'), join(root, WORKTREES_DIR)]) {
    if (lstatSync(dir, { throwIfNoEntry: false }) !== undefined) {
      if (!lstatSync(dir).isDirectory()) return;
      continue;
    }
    try {
      mkdirSync(dir);
    } catch {
      return; // a read-only checkout: no worktree run could make one either
    }
  }
}

/** Runs of this machine still going (not `self`) whose working tree holds the repository from above. */
function runsAbove(root: string, stashbaseHome: string, self: string): SessionRecord[] {
  return liveSessions(stashbaseHome).filter((r) => r.id !== self && typeof r.cwd === 'string' && root.startsWith(`${r.cwd}/`));
}

function aboveWords(runs: SessionRecord[]): string {
  const r = runs[0] as SessionRecord;
  return `a run going on in ${r.cwd} (session ${r.id}, pid ${r.pid}${runs.length > 1 ? `, and ${runs.length - 1} more` : ''}), whose agent`;
}

/** Creates (or, with `resume`, reopens) the run's worktree and locks it for this run. */
export async function startWorktree(repo: Repo, o: { session: string; resume?: string; warn: (m: string) => void; stashbaseHome?: string }): Promise<Started> {
  // A run going on in a folder above the repository can write its .stashbase (only a run's own repository has it
  // read-only): its agent could swap the worktree git makes for a link, and git would empty what it names (found in review).
  const above = o.stashbaseHome === undefined ? [] : runsAbove(repo.root, o.stashbaseHome, o.session);
  if (above.length > 0) throw new SandboxUnavailableError(`${aboveWords(above)} can write ${join(repo.root, WORKTREES_DIR)}, where the worktree would be made: start the worktree run once it ends, or from a repository no run's tree holds; nothing was run`);
  // Your drivers as git reads your config in your checkout: asked once (git config) for what is run there.
  const yours = driversIn(repo);
  const dirty = probe(statusCommand(repo.git, repo.root, yours));
  if (dirty.code === 0 && dirty.stdout.trim() !== '') o.warn('your checkout has uncommitted changes; they are not carried over into the agent\'s worktree');
  ensureExcluded(repo);
  // Where git is told to make the worktree: the folders on the way must be real ones inside the repository (found in
  // review: a .stashbase the agent of an earlier run made a link had git check the worktree out in the folder it named).
  for (const dir of [join(repo.root, '.stashbase'), join(repo.root, WORKTREES_DIR)]) {
    const real = realPathOf(dir);
    if (real !== null && real !== dir) throw new SandboxUnavailableError(`${dir} is reached through a link (it leads to ${real}), where stashbase makes its worktrees: remove the link (an agent may have left it); nothing was run`);
  }
  let w: Worktree;
  let resumed = false;
  // Whether this run made the worktree folder (a fresh one, or a resumed one recreated from its branch).
  let made = false;
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
      await capture(worktreeAddCommand(repo.git, repo.root, w.path, w.name, null, yours));
      made = true;
    }
  } else {
    const name = freshName((n) => existsSync(worktreeOf(repo, n).path) || existsSync(worktreeOf(repo, n).adminDir) || branchExists(repo, worktreeOf(repo, n).branch));
    w = worktreeOf(repo, name);
    await capture(worktreeAddCommand(repo.git, repo.root, w.path, w.name, 'HEAD', yours));
  }
  // git names its admin folder after the path's last component, numbered if taken.
  w = locate(repo, w.name);
  if (realPathOf(w.path) !== w.path) throw new SandboxUnavailableError(`worktree ${w.name}: ${w.path} is reached through a link; inspect it by hand; nothing was run`);
  if (!pointersIntact(w)) throw new SandboxUnavailableError(`worktree ${w.name}: git wrote pointer files stashbase does not recognise; nothing was run`);
  // Made without its files (templates/git.ts): checked out now, in it, with the drivers your config names there emptied.
  if (!resumed || made) await capture(worktreeCheckoutCommand(repo.git, w.path, driversIn(repo, w.path)));
  await capture(worktreeLockCommand(repo.git, repo.root, w.path, lockReason(o.session, process.pid)));
  return { repo, worktree: w, resumed };
}

/**
 * Puts back what git wrote: the pointer files (the agent could aim the worktree's at code of its own). Only where the
 * worktree and its admin folder are still the real folders git made (found in review: an agent of another run
 * swapped the worktree for a link to another repository, whose .git this then removed); each pointer written anew,
 * never through a link left in its place.
 */
export function restorePointers(w: Worktree): void {
  for (const dir of [w.path, w.adminDir]) {
    if (realPathOf(dir) !== dir) throw new SandboxUnavailableError(`worktree ${w.name} is UNSAFE: ${dir} is no longer the folder git made (${realPathOf(dir) === null ? 'gone' : `it leads to ${realPathOf(dir)}`}); stashbase wrote nothing there: inspect it by hand before you run git in it`);
  }
  for (const { file, content } of expectedPointers(w)) {
    // A link or a file: removed (a link itself, never what it names); a folder moved aside, never removed; then the pointer made afresh.
    const st = lstatSync(file, { throwIfNoEntry: false });
    if (st?.isDirectory()) {
      // Under a name nothing holds (round 34: a folder of the agent's under the one name stopped the rename, and the run's end with it).
      const aside = freeName(file, QUARANTINE);
      if ('failed' in aside) throw new SandboxUnavailableError(`worktree ${w.name} is UNSAFE: ${file} is a folder the agent made, and it could not be moved aside (${aside.failed}); stashbase wrote nothing there: inspect it by hand before you run git in it`);
      renameSync(file, aside.to);
    }
    else if (st !== undefined) rmSync(file, { force: true });
    writeFileSync(file, content, { flag: 'wx' });
  }
}

/** How long a git of the end of a run may take over the agent's worktree before it is stopped and said. */
const AFTER_RUN_MS = 120_000;

/** Clean: nothing changed, and no submodule in it (their own state is not looked at; git would not remove it anyway). */
export async function isClean(repo: Repo, w: Worktree): Promise<boolean> {
  if ((await capture(statusCommand(repo.git, w.path, driversIn(repo, w.path)), undefined, AFTER_RUN_MS)).trim() !== '') return false;
  return !(await capture(git(repo.git, w.path, ['ls-files', '--stage', '-z']), undefined, AFTER_RUN_MS)).split('\0').some((l) => l.startsWith('160000 '));
}

/** After the run, on every way out: pointers, refs, lock; then a clean worktree goes (its branch stays). */
export async function finishWorktree(s: Started, warn: (m: string) => void, note: (m: string) => void, removeVolumes: (w: Worktree) => Promise<unknown>, stashbaseHome?: string): Promise<{ removed: boolean }> {
  // Nothing written or removed where a run going on above the repository can swap the worktree for a link (found in
  // review: git worktree remove emptied the folder it named): kept as it is, for agent worktrees list to judge later.
  const above = stashbaseHome === undefined ? [] : runsAbove(s.repo.root, stashbaseHome, '');
  if (above.length > 0) {
    warn(`worktree ${s.worktree.name} is kept as the run left it (its pointer files not put back, not removed): ${aboveWords(above)} can write where it lies; once that run ends, check it with stashbase agent worktrees list`);
    return { removed: false };
  }
  restorePointers(s.worktree);
  await capture(worktreeUnlockCommand(s.repo.git, s.repo.root, s.worktree.path), undefined, AFTER_RUN_MS);
  if (await isClean(s.repo, s.worktree)) {
    await capture(worktreeRemoveCommand(s.repo.git, s.repo.root, s.worktree.path, false, driversIn(s.repo, s.worktree.path)), undefined, AFTER_RUN_MS);
    await removeVolumes(s.worktree);
    note(`Worktree ${s.worktree.name} was clean and is removed; its branch ${s.worktree.branch} is kept (stashbase agent run --resume ${s.worktree.name} continues it).`);
    return { removed: true };
  }
  note(`Worktree ${s.worktree.name} has uncommitted changes and is kept: ${s.worktree.path}`);
  return { removed: false };
}
