import { type FlagSpec, flagBool, flagString, parseCommand } from '../lib/util/argv.js';
import { UsageError } from '../lib/errors.js';
import { approve } from '../lib/util/prompt.js';
import { discard, named } from '../lib/worktree/inventory.js';
import { findRepo } from '../lib/worktree/layout.js';
import { alreadyMerged, mergeTarget, reviewTarget, runMerge } from '../lib/worktree/merge.js';
import { formatReview } from '../lib/worktree/review.js';
import { removeWorktreeVolumes } from '../lib/worktree/volumes.js';
import { printable } from '../lib/util/style.js';

export const flags: FlagSpec[] = [
  { name: 'squash', kind: 'bool', help: 'One squashed commit instead of a merge commit' },
  { name: 'message', short: 'm', kind: 'value', value: 'text', help: 'Commit message' },
  { name: 'keep', kind: 'bool', help: 'Keep the worktree and branch afterwards' },
  { name: 'yes', kind: 'bool', help: 'Merge without asking about the files listed for review (they are still listed)' },
];
const spec = {
  name: 'agent worktrees merge',
  usage: 'stashbase agent worktrees merge <name> [--squash] [-m <message>] [--keep] [--yes]',
  summary: "Merge an agent's branch into your current branch.",
  flags,
  notes: "Refuses while your checkout or the agent's worktree has uncommitted changes. Files in the branch that can run code on your machine (git hooks, .envrc, editor tasks, install scripts, build files, CI, git attributes, new executables and symlinks) are listed first, and the merge waits for your yes. On a conflict it stops and keeps both sides. Afterwards the worktree and branch are removed unless --keep; a running run's worktree is kept, and only its committed work is merged.",
};

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.positionals.length !== 1 || p.rest !== null) throw new UsageError('agent worktrees merge takes one worktree name (see stashbase agent worktrees list)');
  // File names are the agent's: shown printable, so none can clear or rewrite the review above your yes.
  const out = (s: string) => process.stdout.write(printable(s) + '\n');
  const repo = findRepo(process.cwd(), process.env, 'agent worktrees merge');
  const work = named(repo, p.positionals[0]!);
  const target = mergeTarget(repo, work);
  const inUse = work.status === 'running' || work.status === 'locked'; // UNSAFE was refused above
  if (alreadyMerged(repo, target)) {
    out(`Nothing to merge: ${work.branch} is already in ${target.into}.`);
  } else {
    const findings = await reviewTarget(repo, target);
    if (findings.length > 0) {
      out(formatReview(work.branch, findings));
      const refusal = `${work.branch} changes files that can run code on your machine: confirm in a terminal or pass --yes; nothing was merged`;
      if (!(await approve(`Merge ${work.branch} into ${target.into}?`, { yes: flagBool(p, 'yes') === true, refusal }))) {
        out('Nothing merged.');
        return 1;
      }
    }
    if (work.status === 'running') out(`${work.name} is still running: merging its committed work (${target.oid.slice(0, 12)}) only.`);
    await runMerge(repo, work, target, { squash: flagBool(p, 'squash') === true, message: flagString(p, 'message') });
    out(`Merged ${work.branch} (${target.oid.slice(0, 12)}) into ${target.into}${flagBool(p, 'squash') ? ' as one squashed commit' : ''}.`);
  }
  if (flagBool(p, 'keep')) return 0;
  if (inUse) {
    out(`Worktree ${work.name} is ${work.status === 'running' ? 'in use by a run' : 'locked'}: kept, with its branch.`);
    return 0;
  }
  // Merged, the branch's commits are yours; what the worktree alone holds is not removed without asking (review, round 35).
  if (work.path !== null && work.held.length > 0) {
    out(`Worktree ${work.name} is kept, with its branch: it holds ${work.held.join('; ')}. Keep what you need, then stashbase agent worktrees remove ${work.name} (it asks first).`);
    return 0;
  }
  await discard(repo, work, false, (w) => removeWorktreeVolumes(w, process.env));
  out(work.path === null ? `Removed branch ${work.branch}.` : `Removed worktree ${work.name} and branch ${work.branch}.`);
  return 0;
}
