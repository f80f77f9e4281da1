// `agent docker <build|doctor|status|cleanup|shell>`: one file per command,
// loaded only when it runs.
type Main = (argv: string[]) => Promise<number>;

const load = (f: () => Promise<{ main: Main }>): Main => async (argv) => (await f()).main(argv);

export const mains: Record<string, Main> = {
  build: load(() => import('./agent-docker-build.js')),
  doctor: load(() => import('./agent-docker-doctor.js')),
  status: load(() => import('./agent-docker-status.js')),
  cleanup: load(() => import('./agent-docker-cleanup.js')),
  shell: load(() => import('./agent-docker-shell.js')),
};
