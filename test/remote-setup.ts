// The second Docker engine the remote-run tests use: a Docker engine in a
// container on this machine, over tcp:// and ssh:// (scripts/start-remote-engine.sh).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { requirement } from './helpers.js';

export interface RemoteEngine {
  tcp: string;
  ssh: string;
  /** A folder whose `ssh` has the engine's key and host key: put first on PATH for ssh://. */
  sshPath: string;
}

const STATE = process.env.STASHBASE_REMOTE_STATE ?? '/var/lib/stashbase-remote-engine';

export function remoteEngine(): { engine: RemoteEngine | null; options: { skip?: string } } {
  let env: Record<string, string> = {};
  try {
    env = Object.fromEntries(readFileSync(`${STATE}/env`, 'utf8').split('\n').filter(Boolean).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  } catch {
    // not started
  }
  const tcp = env.STASHBASE_REMOTE_TCP;
  const ok = tcp !== undefined && spawnSync('docker', ['version'], { env: { ...process.env, DOCKER_HOST: tcp }, stdio: 'ignore' }).status === 0;
  const options = requirement(ok, 'the remote-run tests need the engine in a container (run scripts/start-remote-engine.sh)');
  return { engine: ok ? { tcp: tcp!, ssh: env.STASHBASE_REMOTE_SSH!, sshPath: env.STASHBASE_REMOTE_SSH_PATH! } : null, options };
}

/** A docker command against the remote engine. */
export function onEngine(e: RemoteEngine, args: string[]): { code: number | null; out: string } {
  const r = spawnSync('docker', args, { env: { ...process.env, DOCKER_HOST: e.tcp }, encoding: 'utf8' });
  return { code: r.status, out: (r.stdout ?? '') + (r.status === 0 ? '' : r.stderr ?? '') };
}
