// `agent run --worktree`: the worktree made (or resumed) and locked before the
// backend starts, the protections handed to the backend, and the after-run
// checks on every way out. A dry run only shows the git steps around the plan.
import { join } from 'node:path';
import { commandStep, internalStep, type Plan } from '../../templates/plan.js';
import { lockReason, worktreeAddCommand, worktreeCheckoutCommand, worktreeLockCommand } from '../../templates/git.js';
import type { Profile } from '../profile/types.js';
import { driversIn, findRepo, protectedPaths, type Worktree, worktreeOf } from './layout.js';
import { finishWorktree, type Started, startWorktree } from './lifecycle.js';
import { stashbaseHome } from '../home.js';
import { removeWorktreeVolumes } from './volumes.js';

/** What the Docker backend mounts for a worktree run instead of the working directory (its git directory is the run's own: lib/git/run-git-dir.ts). */
export interface DockerWorktree {
  path: string;
  /** The run's own branch, in full: refs/heads/stashbase/<name>. */
  branch: string;
  /** Bound read-only onto itself: the worktree's `.git` pointer file. */
  pointer: string;
}

export interface WorktreeRun {
  cwd: string;
  /** The worktree's top: all of it is the run's to write, on every backend (cwd may be a folder in it). */
  top: string;
  /** Native: what the run keeps read-only besides the profile's deny_write (the checkout, the worktree's pointer file). */
  denyWrite: string[];
  /** Native: what stays writable under the read-only checkout: the worktree. */
  writable: string[];
  /** The run's own branch, in full. */
  branch: string;
  docker: DockerWorktree;
  wrapPlan: (plan: Plan) => Plan;
  finish: () => Promise<void>;
}

export async function prepareWorktreeRun(o: {
  cwd: string; env: NodeJS.ProcessEnv; session: string; profile: Profile; resume?: string; dryRun: boolean; docker: boolean; warn: (m: string) => void; note: (m: string) => void;
}): Promise<WorktreeRun> {
  const repo = findRepo(o.cwd, o.env);
  let started: Started | null = null;
  let w: Worktree;
  if (o.dryRun) {
    w = worktreeOf(repo, o.resume ?? '<name>');
  } else {
    started = await startWorktree(repo, { session: o.session, resume: o.resume, warn: o.warn, stashbaseHome: stashbaseHome(o.env) });
    w = started.worktree;
    o.note(`Worktree: ${w.path} (branch ${w.branch})`);
  }
  const prot = protectedPaths(repo, w);
  const wrapPlan = (plan: Plan, drivers = driversIn(repo)): Plan => ({
    title: `${plan.title}, worktree ${w.name}`,
    steps: [
      commandStep('worktree-add', worktreeAddCommand(repo.git, repo.root, w.path, w.name, o.resume === undefined ? 'HEAD' : null, drivers)),
      ...(o.resume === undefined ? [commandStep('worktree-checkout', worktreeCheckoutCommand(repo.git, w.path, drivers))] : []),
      commandStep('worktree-lock', worktreeLockCommand(repo.git, repo.root, w.path, lockReason(o.session, process.pid))),
      ...plan.steps,
      internalStep('worktree-finish', `after the run and the import of its git work: restore ${w.path}/.git, unlock, and remove the worktree if it is clean (its branch ${w.branch} stays)`),
    ],
  });
  return {
    cwd: join(w.path, repo.subdir),
    top: w.path,
    denyWrite: [prot.pointer, ...prot.checkout],
    writable: [w.path],
    docker: { path: w.path, branch: `refs/heads/${w.branch}`, pointer: join(w.path, '.git') },
    branch: `refs/heads/${w.branch}`,
    wrapPlan,
    finish: async () => {
      // Only a Docker run makes isolated-path volumes; a native run does not pay for the docker CLI.
      const volumes = async (wt: Worktree) => (o.docker ? removeWorktreeVolumes(wt, o.env) : []);
      if (started) await finishWorktree(started, o.warn, o.note, volumes, stashbaseHome(o.env));
    },
  };
}
