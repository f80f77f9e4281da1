// A worktree run's before and after: create (or resume) the worktree on its own
// branch, lock it, snapshot the refs; afterwards restore its pointer files and
// config, check the refs, unlock, and remove it when clean.
import { appendFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { forEachRefCommand, git, LOCK_REASON_PREFIX, lockReason, statusCommand, updateRefCommand, WORKTREES_DIR, worktreeAddCommand, worktreeLockCommand, worktreeRemoveCommand, worktreeUnlockCommand } from '../../templates/git.js';
import { SandboxUnavailableError, UsageError } from '../errors.js';
import { capture, probe } from '../exec.js';
import { processAlive } from '../run/session.js';
import { branchExists, expectedPointers, locate, pointersIntact, type Repo, type Worktree, worktreeConfigFile, worktreeOf } from './layout.js';
import { freshName, NAME_PATTERN } from './names.js';
import { decideRefs, parseRefs, type RefDecision, type RefMap } from './refs.js';

export interface Started {
  repo: Repo;
  worktree: Worktree;
  snapshot: RefMap;
  resumed: boolean;
  /** The worktree's own config.worktree at start (null: there was none, and an empty one stands in while the run lasts). */
  worktreeConfig: string | null;
  /** The .git directory's entries at start, to name new ones afterwards. */
  gitEntries: Set<string>;
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

export async function snapshotRefs(repo: Repo): Promise<RefMap> {
  return parseRefs(await capture(forEachRefCommand(repo.git, repo.root)));
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
  // Your git reads the worktree's config.worktree when extensions.worktreeConfig
  // is on (an IDE following the agent runs git in its worktree all the time): it
  // exists, empty if need be, so that it can be held read-only during the run.
  const configFile = worktreeConfigFile(w);
  const worktreeConfig = existsSync(configFile) ? readFileSync(configFile, 'utf8') : null;
  if (worktreeConfig === null) writeFileSync(configFile, '');
  return { repo, worktree: w, snapshot: await snapshotRefs(repo), resumed, worktreeConfig, gitEntries: new Set(readdirSync(repo.gitDir)) };
}

/** Puts back what git wrote: the pointer files (the agent could aim them at code of its own) and the worktree config as it was. */
export function restorePointers(w: Worktree, worktreeConfig: string | null): void {
  const config = worktreeConfigFile(w);
  for (const { file, content } of [...expectedPointers(w), ...(worktreeConfig === null ? [] : [{ file: config, content: worktreeConfig }])]) {
    if (lstatSync(file, { throwIfNoEntry: false })?.isDirectory()) rmSync(file, { recursive: true, force: true });
    writeFileSync(file, content);
  }
  if (worktreeConfig === null) rmSync(config, { recursive: true, force: true });
}

function checkedOutBranches(repo: Repo, except: string): Set<string> {
  const r = probe(git(repo.git, repo.root, ['worktree', 'list', '--porcelain']));
  const out = new Set<string>();
  let path = '';
  for (const line of r.stdout.split('\n')) {
    if (line.startsWith('worktree ')) path = line.slice(9);
    if (line.startsWith('branch ') && path !== except) out.add(line.slice(7));
  }
  return out;
}

const short = (oid: string) => oid.slice(0, 12);

function describe(repo: Repo, d: RefDecision): string {
  switch (d.kind) {
    case 'restored':
      return `the agent deleted ${d.ref}; restored it at ${short(d.old)}`;
    case 'kept-new-ref':
      return `the agent created ${d.ref} at ${short(d.now)}; kept (undo: git update-ref -d ${d.ref})`;
    case 'kept-new-commits': {
      const log = probe(git(repo.git, repo.root, ['log', '--no-decorate', '--format=%h %s', `${d.old}..${d.now}`])).stdout.trimEnd();
      return `the agent added commits to ${d.ref}; kept (undo: git update-ref ${d.ref} ${d.old}):\n${log.split('\n').map((l) => `  ${l}`).join('\n')}`;
    }
    case 'reset':
      return `the agent rewrote ${d.ref} (${short(d.old)} -> ${short(d.now)}); reset it to ${short(d.old)} (undo: git update-ref ${d.ref} ${d.now})`;
    case 'left-checked-out':
      return `the agent rewrote ${d.ref} (${short(d.old)} -> ${short(d.now)}), which is checked out; left as it is (undo: git update-ref ${d.ref} ${d.old})`;
  }
}

export async function checkRefs(s: Started, warn: (m: string) => void): Promise<RefDecision[]> {
  const after = await snapshotRefs(s.repo);
  const decisions = decideRefs({
    before: s.snapshot,
    after,
    own: `refs/heads/${s.worktree.branch}`,
    checkedOut: checkedOutBranches(s.repo, s.worktree.path),
    isAncestor: (old, now) => probe(git(s.repo.git, s.repo.root, ['merge-base', '--is-ancestor', old, now])).code === 0,
  });
  for (const d of decisions) {
    if (d.kind === 'restored') await capture(updateRefCommand(s.repo.git, s.repo.root, d.ref, d.old, null));
    if (d.kind === 'reset') await capture(updateRefCommand(s.repo.git, s.repo.root, d.ref, d.old, d.now));
    warn(describe(s.repo, d));
  }
  return decisions;
}

/** New entries beside config and hooks (the sandbox keeps the agent from making them; your own git may have): left in place, named so you can look. */
function reportNewGitEntries(s: Started, warn: (m: string) => void): void {
  const fresh = readdirSync(s.repo.gitDir).filter((e) => !s.gitEntries.has(e)).sort();
  if (fresh.length === 0) return;
  warn(`new in ${s.repo.gitDir} since the run started: ${fresh.join(', ')}; if you did not make them (a git command of yours during the run may have), look at them before running git in your checkout`);
}

export async function isClean(repo: Repo, w: Worktree): Promise<boolean> {
  return (await capture(statusCommand(repo.git, w.path))).trim() === '';
}

/** After the run, on every way out: pointers, refs, lock; then a clean worktree goes (its branch stays). */
export async function finishWorktree(s: Started, warn: (m: string) => void, note: (m: string) => void, removeVolumes: (w: Worktree) => Promise<unknown>): Promise<{ removed: boolean }> {
  restorePointers(s.worktree, s.worktreeConfig);
  await checkRefs(s, warn);
  reportNewGitEntries(s, warn);
  await capture(worktreeUnlockCommand(s.repo.git, s.repo.root, s.worktree.path));
  if (await isClean(s.repo, s.worktree)) {
    await capture(worktreeRemoveCommand(s.repo.git, s.repo.root, s.worktree.path, false));
    await removeVolumes(s.worktree);
    note(`Worktree ${s.worktree.name} was clean and is removed; its branch ${s.worktree.branch} is kept (stashbase agent run --resume ${s.worktree.name} continues it).`);
    return { removed: true };
  }
  note(`Worktree ${s.worktree.name} has uncommitted changes and is kept: ${s.worktree.path}`);
  return { removed: false };
}
