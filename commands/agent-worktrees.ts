import type { FlagSpec } from '../lib/argv.js';
import { stubMain, type Stub } from './not-built.js';
import { JSON_FLAG } from './shared-flags.js';

const YES: FlagSpec = { name: 'yes', kind: 'bool', help: 'Skip the confirmation' };
const ALL: FlagSpec = { name: 'all', kind: 'bool', help: 'Every agent worktree' };
const remove: Stub = { name: 'agent worktrees remove', usage: 'stashbase agent worktrees remove <name> [--keep-branch] | --all [--yes]', summary: "Discard an agent's worktree and branch (alias: delete).", flags: [{ name: 'keep-branch', kind: 'bool', help: 'Remove only the worktree, so the run can be resumed' }, ALL, YES] };

export const stubs: Record<string, Stub> = {
  list: { name: 'agent worktrees list', usage: 'stashbase agent worktrees list [--json]', summary: 'Agent worktrees and branches: status and unmerged commits.', flags: [JSON_FLAG] },
  merge: { name: 'agent worktrees merge', usage: 'stashbase agent worktrees merge <name> [--squash] [-m <message>] [--keep]', summary: "Merge an agent's branch into your current branch.", flags: [{ name: 'squash', kind: 'bool', help: 'One squashed commit' }, { name: 'message', kind: 'value', value: 'text', help: 'Commit message' }, { name: 'keep', kind: 'bool', help: 'Keep the worktree and branch afterwards' }, YES] },
  clean: { name: 'agent worktrees clean', usage: 'stashbase agent worktrees clean [--all] [--yes]', summary: 'Remove merged agent worktrees and branches.', flags: [ALL, YES] },
  remove,
  delete: { ...remove, name: 'agent worktrees delete' },
};

export const mains = Object.fromEntries(Object.entries(stubs).map(([k, s]) => [k, stubMain(s)]));
