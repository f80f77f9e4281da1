import { type FlagSpec, flagBool, parseCommand } from '../lib/util/argv.js';
import { asciiJson } from '../lib/util/printable.js';
import { UsageError } from '../lib/errors.js';
import { inventory } from '../lib/worktree/inventory.js';
import { findRepo } from '../lib/worktree/layout.js';
import { JSON_FLAG } from './shared-flags.js';
import { printable } from '../lib/util/style.js';
import { alignedRows } from '../lib/util/table.js';

export const flags: FlagSpec[] = [JSON_FLAG];
const spec = {
  name: 'agent worktrees list',
  usage: 'stashbase agent worktrees list [--json]',
  summary: 'Agent worktrees and branches: status and unmerged commits.',
  flags,
  notes: 'STATUS: running (a run is using it), locked (you locked it), UNSAFE (its git pointer files are not what git wrote: inspect it by hand), clean, dirty (uncommitted changes), with what only the worktree holds (+ submodules: their git directories; + commits on no branch: a detached HEAD), branch only (the worktree was removed; --resume recreates it). UNMERGED: commits not in your current branch.',
};

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.positionals.length > 0 || p.rest !== null) throw new UsageError('agent worktrees list takes no arguments');
  const repo = findRepo(process.cwd(), process.env, 'agent worktrees list');
  const all = inventory(repo);
  if (flagBool(p, 'json')) {
    process.stdout.write(asciiJson(all) + '\n');
    return 0;
  }
  if (all.length === 0) {
    process.stdout.write(`No agent worktrees or branches in ${repo.root}.\n`);
    return 0;
  }
  const rows = [['NAME', 'BRANCH', 'STATUS', 'UNMERGED', 'PATH'], ...all.map((w) => [w.name, w.branch, w.status + (w.staleLock ? ' (stale lock)' : '') + (w.heldTags.length > 0 ? ` (+ ${w.heldTags.join(', ')})` : ''), String(w.unmerged), w.path ?? '-'])];
  for (const line of alignedRows(rows)) process.stdout.write(printable(line) + '\n');
  return 0;
}
