// An engine that is not this machine's is refused before it is contacted: a
// run mounts this machine's paths by name, which there are another machine's
// (lib/docker/endpoint.ts). Named by DOCKER_HOST, by DOCKER_CONTEXT, and by the
// config's current context; the control: this machine's socket named alike runs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cli, needs, tempHome, writeFile } from '../helpers.js';

describe('Docker backend: a remote engine is refused until remote runs exist (real CLI)', needs('docker'), () => {
  const t = tempHome();
  after(() => t.cleanup());
  const proj = join(t.dir, 'proj');
  mkdirSync(proj, { recursive: true });
  const dockerConfig = join(t.dir, 'docker-config');
  mkdirSync(dockerConfig, { recursive: true });
  // A context naming an address of the documentation range: created, never dialled.
  const made = spawnSync('docker', ['context', 'create', 'far', '--docker', 'host=tcp://192.0.2.10:2375'], { env: { ...process.env, DOCKER_CONFIG: dockerConfig }, encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
  const run = (env: NodeJS.ProcessEnv) => cli(['agent', 'run', '--docker-sandbox', 'true', '--', 'sh', '-c', 'touch ran'], { env: { ...t.env, DOCKER_CONFIG: dockerConfig, ...env }, cwd: proj, timeoutMs: 60_000 });

  test('DOCKER_HOST over ssh, DOCKER_CONTEXT and the current context naming another machine: refused, naming which, nothing run; control: this machine\'s socket by DOCKER_HOST runs', async () => {
    for (const [env, from, host] of [
      [{ DOCKER_HOST: 'ssh://build-box.invalid' }, 'DOCKER_HOST', 'ssh://build-box.invalid'],
      [{ DOCKER_CONTEXT: 'far' }, 'the context "far"', 'tcp://192.0.2.10:2375'],
    ] as const) {
      const r = await run(env);
      assert.notEqual(r.code, 0);
      assert.ok(r.stderr.includes(`the Docker engine ${host} (${from}) is not this machine's: a run mounts this machine's paths by name`), r.stderr);
      assert.equal(existsSync(join(proj, 'ran')), false);
    }
    writeFile(join(dockerConfig, 'config.json'), JSON.stringify({ currentContext: 'far' }));
    const current = await run({});
    assert.ok(current.stderr.includes('the Docker engine tcp://192.0.2.10:2375 (the context "far") is not this machine\'s'), current.stderr);
    writeFile(join(dockerConfig, 'config.json'), '{}');
    const local = await run({ DOCKER_HOST: 'unix:///var/run/docker.sock' });
    assert.equal(local.code, 0, local.stderr);
    assert.equal(existsSync(join(proj, 'ran')), true);
  });
});
