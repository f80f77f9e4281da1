import { type FlagSpec, flagBool, parseCommand } from '../lib/util/argv.js';
import { UsageError } from '../lib/errors.js';
import { approve } from '../lib/util/prompt.js';
import { type AgentWork, discard, inventory, merged, untouchable } from '../lib/worktree/inventory.js';
import { findRepo } from '../lib/worktree/layout.js';
import { removeWorktreeVolumes } from '../lib/worktree/volumes.js';

export const flags: FlagSpec[] = [
  { name: 'all', kind: 'bool', help: 'Also remove unmerged work and uncommitted changes (asks first)' },
  { name: 'yes', kind: 'bool', help: 'Skip the confirmation of --all' },
];
const spec = {
  name: 'agent worktrees clean',
  usage: 'stashbase agent worktrees clean [--all] [--yes]',
  summary: 'Remove merged agent worktrees and branches.',
  flags,
  notes: 'Running, locked and UNSAFE worktrees are never touched, even with --all.',
};

/** What discarding it would lose, in words. */
function whatIsLost(w: AgentWork): string[] {
  return [...(w.status === 'dirty' ? ['uncommitted changes'] : []), ...(w.unmerged > 0 ? [`${w.unmerged} unmerged commit(s)`] : []), ...w.held];
}

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.positionals.length > 0 || p.rest !== null) throw new UsageError('agent worktrees clean takes no arguments');
  const out = (s: string) => process.stdout.write(s + '\n');
  const repo = findRepo(process.cwd(), process.env, 'agent worktrees clean');
  const all = flagBool(p, 'all') === true;
  const done: AgentWork[] = [];
  const unmerged: AgentWork[] = [];
  for (const w of inventory(repo)) {
    if (untouchable(w)) out(`skipping ${w.name}: ${w.status}`);
    else if ((w.status === 'clean' || w.status === 'branch only') && w.held.length === 0 && merged(repo, w.branch)) done.push(w);
    else if (all) unmerged.push(w);
    else out(`keeping ${w.name}: ${whatIsLost(w).join(', ') || 'no merged history'} (${w.held.length > 0 ? 'agent worktrees remove asks first' : 'merge it, or clean --all'})`);
  }
  if (unmerged.length > 0) {
    for (const w of unmerged) out(`would discard ${w.name}: ${whatIsLost(w).join(', ') || 'no merged history'}`);
    const what = `${unmerged.length} agent worktree(s) with unmerged work`;
    if (await approve(`Discard ${what}?`, { yes: flagBool(p, 'yes') === true, refusal: `${what}: confirm in a terminal or pass --yes; nothing was removed` })) done.push(...unmerged);
    else if (done.length > 0) out('Keeping the unmerged ones; removing only merged work.');
  }
  if (done.length === 0) return (out('Nothing to clean.'), 0);
  for (const w of done) {
    await discard(repo, w, false, (x) => removeWorktreeVolumes(x, process.env));
    out(`removed ${w.name}${w.path === null ? ' (branch)' : ' (worktree and branch)'}`);
  }
  return 0;
}
