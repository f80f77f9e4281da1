// `agent worktrees <list|merge|clean|remove|delete>`: one file per command,
// loaded only when it runs.
type Main = (argv: string[]) => Promise<number>;

const load = (f: () => Promise<{ main: Main }>): Main => async (argv) => (await f()).main(argv);
const remove = load(() => import('./agent-worktrees-remove.js'));

export const mains: Record<string, Main> = {
  list: load(() => import('./agent-worktrees-list.js')),
  merge: load(() => import('./agent-worktrees-merge.js')),
  clean: load(() => import('./agent-worktrees-clean.js')),
  remove,
  delete: async (argv) => (await import('./agent-worktrees-remove.js')).main(argv, 'delete'),
};
