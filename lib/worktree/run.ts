// `agent run --worktree`: the worktree made (or resumed) and locked before the
// backend starts, the protections handed to the backend, and the after-run
// checks on every way out. A dry run only shows the git steps around the plan.
import { join } from 'node:path';
import { commandStep, internalStep, type Plan } from '../../templates/plan.js';
import { lockReason, worktreeAddCommand, worktreeLockCommand } from '../../templates/git.js';
import type { Profile } from '../profile/types.js';
import { findRepo, ownProtectedFiles, protectedPaths, type Worktree, worktreeOf, writableGitDirs } from './layout.js';
import { finishWorktree, type Started, startWorktree } from './lifecycle.js';
import { removeWorktreeVolumes } from './volumes.js';

/** What the Docker backend mounts for a worktree run instead of the working directory. */
export interface DockerWorktree {
  path: string;
  /** Mounted read-only, with `writable` bound read-write inside it. */
  gitDir: string;
  writable: string[];
  /** Bound read-only onto themselves (the worktree's own pointer files and config.worktree). */
  readOnly: string[];
  /** Other worktrees' metadata: an empty directory over each. */
  hidden: string[];
}

export interface WorktreeRun {
  cwd: string;
  /** Native: the profile with the protected paths added to deny_write. */
  profile: Profile;
  /** Native: what stays writable under the read-only checkout and .git (those parts of .git, the worktree). */
  writable: string[];
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
    started = await startWorktree(repo, { session: o.session, resume: o.resume, warn: o.warn });
    w = started.worktree;
    o.note(`Worktree: ${w.path} (branch ${w.branch})`);
  }
  const prot = protectedPaths(repo, w);
  const profile: Profile = {
    ...o.profile,
    filesystem: { ...o.profile.filesystem, denyWrite: [...o.profile.filesystem.denyWrite, ...prot.gitFiles, ...prot.checkout] },
  };
  const wrapPlan = (plan: Plan): Plan => ({
    title: `${plan.title}, worktree ${w.name}`,
    steps: [
      commandStep('worktree-add', worktreeAddCommand(repo.git, repo.root, w.path, w.name, o.resume === undefined ? 'HEAD' : null)),
      commandStep('worktree-lock', worktreeLockCommand(repo.git, repo.root, w.path, lockReason(o.session, process.pid))),
      internalStep('refs-snapshot', 'record every branch and tag (git for-each-ref) to check them after the run'),
      ...plan.steps,
      internalStep('worktree-finish', `after the run: restore ${w.path}/.git and the worktree's files under .git/worktrees, put back its config.worktree as it was, check every branch and tag against the record, unlock, and remove the worktree if it is clean (its branch ${w.branch} stays)`),
    ],
  });
  const writable = writableGitDirs(repo, w, !o.dryRun);
  return {
    cwd: join(w.path, repo.subdir),
    profile,
    writable: [...writable, w.path],
    docker: { path: w.path, gitDir: repo.gitDir, writable, readOnly: ownProtectedFiles(w), hidden: prot.otherWorktrees },
    wrapPlan,
    finish: async () => {
      // Only a Docker run makes isolated-path volumes; a native run does not pay for the docker CLI.
      const volumes = async (wt: Worktree) => (o.docker ? removeWorktreeVolumes(wt, o.env) : []);
      if (started) await finishWorktree(started, o.warn, o.note, volumes);
    },
  };
}
