// An engine that is not this machine's makes a run a remote one (docs/remote.md),
// and what this machine alone can refuse is refused before the engine is
// contacted: here a folder that is no repository (a remote run takes your
// commits). Named by DOCKER_HOST, by DOCKER_CONTEXT, and by the config's
// current context (addresses never dialled); the control: this machine's socket
// named alike runs, locally.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cli, needs, tempHome, writeFile } from '../helpers.js';

describe('Docker backend: an engine not this machine\'s makes a remote run, refused before contact outside a repository (real CLI)', needs('docker'), () => {
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

  test('DOCKER_HOST over ssh, DOCKER_CONTEXT and the current context naming another machine: said to be a remote run, refused in a folder that is no repository, nothing run; control: this machine\'s socket by DOCKER_HOST runs', async () => {
    for (const [env, from, host] of [
      [{ DOCKER_HOST: 'ssh://build-box.invalid' }, 'DOCKER_HOST', 'ssh://build-box.invalid'],
      [{ DOCKER_CONTEXT: 'far' }, 'the context "far"', 'tcp://192.0.2.10:2375'],
    ] as const) {
      const r = await run(env);
      assert.notEqual(r.code, 0);
      assert.equal(r.code, 4, r.stderr);
      assert.ok(r.stderr.includes(`warning: the Docker engine ${host} (${from}) is not this machine's: a remote run (docs/remote.md)`), r.stderr);
      assert.ok(r.stderr.includes(`stashbase: a remote run takes your repository's commits to the engine, and ${proj} is in no git repository; run it from a repository, or run locally; nothing was run`), r.stderr);
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
