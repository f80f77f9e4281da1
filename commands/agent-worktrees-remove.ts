import { type FlagSpec, flagBool, parseCommand } from '../lib/util/argv.js';
import { StashbaseError, UsageError } from '../lib/errors.js';
import { approve } from '../lib/util/prompt.js';
import { type AgentWork, discard, inventory, named, untouchable } from '../lib/worktree/inventory.js';
import { findRepo } from '../lib/worktree/layout.js';
import { removeWorktreeVolumes } from '../lib/worktree/volumes.js';

export const flags: FlagSpec[] = [
  { name: 'keep-branch', kind: 'bool', help: 'Remove only the worktree, so the run can be resumed' },
  { name: 'all', kind: 'bool', help: 'Every agent worktree (always asks first)' },
  { name: 'yes', kind: 'bool', help: 'Skip the confirmation' },
];

/** What removing this would lose, in words; empty when nothing. */
function losses(w: AgentWork, keepBranch: boolean): string[] {
  const l: string[] = [];
  if (w.status === 'dirty') l.push(`uncommitted changes in ${w.path}`);
  if (!keepBranch && w.unmerged > 0) l.push(`${w.unmerged} commit(s) on ${w.branch} not in your current branch`);
  if (w.path !== null) l.push(...w.held);
  return l;
}

export async function main(argv: string[], alias = 'remove'): Promise<number> {
  const spec = {
    name: `agent worktrees ${alias}`,
    usage: `stashbase agent worktrees ${alias} <name> [--keep-branch] | --all [--yes]`,
    summary: `Discard an agent's worktree and branch${alias === 'remove' ? ' (alias: delete)' : ' (alias of remove)'}.`,
    flags,
    notes: 'Asks first when unmerged commits or uncommitted changes would be lost. Running, locked and UNSAFE worktrees are never touched.',
  };
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  const all = flagBool(p, 'all') === true;
  if (p.rest !== null || (all ? p.positionals.length > 0 : p.positionals.length !== 1)) {
    throw new UsageError(`agent worktrees ${alias} takes one worktree name, or --all`);
  }
  const keepBranch = flagBool(p, 'keep-branch') === true;
  const yes = flagBool(p, 'yes') === true;
  const out = (s: string) => process.stdout.write(s + '\n');
  const repo = findRepo(process.cwd(), process.env, `agent worktrees ${alias}`);
  let targets: AgentWork[];
  if (all) {
    targets = [];
    for (const w of inventory(repo)) {
      if (untouchable(w)) out(`skipping ${w.name}: ${w.status}`);
      else if (!(keepBranch && w.path === null)) targets.push(w);
    }
    if (targets.length === 0) return (out('Nothing to remove.'), 0);
    for (const w of targets) out(`${w.name}: ${losses(w, keepBranch).join(', ') || 'nothing unmerged'}`);
    const what = `${targets.length} agent worktree(s)${keepBranch ? '' : ' and their branches'}`;
    if (!(await approve(`Discard ${what}?`, { yes, refusal: `${what}: confirm in a terminal or pass --yes; nothing was removed` }))) return (out('Nothing removed.'), 1);
  } else {
    const w = named(repo, p.positionals[0]!);
    if (untouchable(w)) {
      const why = w.status === 'running' ? 'a run is still using it' : w.status === 'locked' ? `you locked it (git worktree unlock ${w.path} first)` : `its git pointer files are not what git wrote: inspect ${w.path} by hand`;
      throw new StashbaseError(`${w.name} is ${w.status}: ${why}; nothing was removed`, 1);
    }
    if (keepBranch && w.path === null) return (out(`${w.name} has no worktree; its branch ${w.branch} is kept.`), 0);
    const lost = losses(w, keepBranch);
    if (lost.length > 0) {
      const what = `${w.name} (${lost.join('; ')})`;
      if (!(await approve(`Discard ${what}?`, { yes, refusal: `removing ${what} loses work: confirm in a terminal or pass --yes; nothing was removed` }))) return (out('Nothing removed.'), 1);
    }
    targets = [w];
  }
  for (const w of targets) {
    await discard(repo, w, keepBranch, (x) => removeWorktreeVolumes(x, process.env));
    out(keepBranch ? `removed worktree ${w.name}; branch ${w.branch} kept (stashbase agent run --resume ${w.name} recreates it)` : `removed ${w.name}${w.path === null ? ' (branch)' : ' (worktree and branch)'}`);
  }
  return 0;
}
