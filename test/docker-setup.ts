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

/**
 * The address of an engine's default bridge on its host, from `network inspect bridge` (its IPAM config's format
 * string given to `inspect`). An engine started again over an existing docker0 lists the subnet without the gateway:
 * the bridge's own address is then the subnet's first, as Docker assigns it.
 */
export function bridgeGatewayOf(inspect: (format: string) => string): string {
  const gateway = inspect('{{range .IPAM.Config}}{{.Gateway}}{{end}}').trim();
  if (gateway !== '') return gateway;
  const subnet = inspect('{{range .IPAM.Config}}{{.Subnet}}{{end}}').trim();
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/\d+$/.exec(subnet);
  if (!m) return '';
  const n = ((Number(m[1]) << 24) | (Number(m[2]) << 16) | (Number(m[3]) << 8) | Number(m[4])) + 1;
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}
