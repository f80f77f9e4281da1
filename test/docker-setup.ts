// Helpers for the Docker integration tests: the docker CLI, and what a given
// run left in the engine (tests run side by side, so always by session).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

export function docker(args: string[]): string {
  const r = spawnSync('docker', args, { encoding: 'utf8' });
  assert.equal(r.status, 0, `docker ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** The session id a run announced on stderr. */
export function sessionOf(stderr: string): string {
  const m = /^Agent session: (ags_[a-z2-7]{16})$/m.exec(stderr);
  assert.ok(m, `no session announced in: ${stderr}`);
  return m[1] as string;
}

/** Containers and networks labelled with the session: empty once a run cleaned up. */
export function leftoversOf(session: string): string[] {
  const label = `label=stashbase.session=${session}`;
  const containers = docker(['ps', '--all', '--filter', label, '--format', '{{.Names}}']);
  const networks = docker(['network', 'ls', '--filter', label, '--format', '{{.Name}}']);
  return [...containers.split('\n'), ...networks.split('\n')].filter(Boolean);
}

/**
 * The Docker battery's mode (SBTEST_DOCKER_MODE, set by the files that run a
 * battery again: docker-fs-sealed.test.ts, docker-fs-runsc.test.ts): the
 * flags every run of it gets, and its name for the titles.
 */
export const DOCKER_MODE = ((): { name: string; flags: string[]; gvisor: boolean } => {
  const mode = process.env.SBTEST_DOCKER_MODE ?? 'firewall';
  if (mode === 'sealed') return { name: 'sealed network', flags: ['--docker-network', 'sealed'], gvisor: false };
  if (mode === 'runsc') return { name: 'sealed network under runsc', flags: ['--docker-runtime', 'runsc'], gvisor: true };
  return { name: 'firewall', flags: [], gvisor: false };
})();
