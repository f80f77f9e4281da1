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
import { cli, needs, tempHome, withIsolatedVolumes, writeFile } from '../helpers.js';

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
  test('(review, round 31) agent docker cleanup --isolated-paths --remote names another engine: refused, this machine\'s isolated-path volumes untouched (it removed them); control: without --remote it lists them', async () => {
    const volume = `stashbase-isolated-test-${process.pid}`;
    await withIsolatedVolumes(async () => {
      assert.equal(spawnSync('docker', ['volume', 'create', '--label', 'stashbase.isolated-path=/x/node_modules', '--label', 'stashbase.repo=/x', volume]).status, 0);
      try {
        const env = { ...t.env, DOCKER_CONFIG: dockerConfig };
        const r = await cli(['agent', 'docker', 'cleanup', '--isolated-paths', '--remote', 'far', '--yes'], { env, cwd: proj, timeoutMs: 60_000 });
        assert.deepEqual([r.code, r.stderr], [2, "stashbase: isolated-path volumes belong to this machine's engine (remote runs make none): run agent docker cleanup --isolated-paths without --remote\n"]);
        assert.equal(spawnSync('docker', ['volume', 'inspect', volume]).status, 0, 'still there');
        const listed = await cli(['agent', 'docker', 'cleanup', '--isolated-paths'], { env, cwd: proj, timeoutMs: 60_000, input: 'n\n' });
        assert.match(listed.stdout, new RegExp(`^${volume}\t`, 'm'));
      } finally {
        spawnSync('docker', ['volume', 'rm', '-f', volume]);
      }
    });
  });
  test("(review, round 31) agent docker doctor runs no program an engine's runtime names by a relative path (\"./runsc\" ran a file of the working directory here); control: an absolute one on this machine's engine is asked its version", async () => {
    const { createServer } = await import('node:http');
    const dir = join(t.dir, 'doctor');
    mkdirSync(dir, { recursive: true });
    const marker = join(dir, 'marker');
    writeFile(join(dir, 'runsc'), `#!/bin/sh\necho ran > ${marker}\necho "runsc version 1"\n`);
    spawnSync('chmod', ['+x', join(dir, 'runsc')]);
    const doctorWith = async (path: string) => {
      const server = createServer((req, res) => {
        const u = (req.url ?? '').replace(/^\/v[0-9.]+/, '');
        const json = (status: number, v: unknown) => (res.writeHead(status, { 'Content-Type': 'application/json', 'Api-Version': '1.41' }), res.end(JSON.stringify(v)));
        if (u.startsWith('/_ping')) return (res.writeHead(200, { 'Api-Version': '1.41', 'Content-Type': 'text/plain' }), res.end(req.method === 'HEAD' ? undefined : 'OK'));
        if (u.startsWith('/version')) return json(200, { Version: '20.10.24', ApiVersion: '1.41', MinAPIVersion: '1.12', Os: 'linux', Arch: 'amd64', Components: [] });
        if (u.startsWith('/info')) return json(200, { ServerVersion: '20.10.24', OperatingSystem: 'Fake', OSType: 'linux', Architecture: 'x86_64', DefaultRuntime: 'runc', Runtimes: { runc: { path: 'runc' }, fast: { path, runtimeArgs: ['--oci-seccomp'] } } });
        if (u.startsWith('/images/')) return json(404, { message: `No such image: ${decodeURIComponent(u.split('/')[2] ?? '')}` });
        return json(404, { message: 'not here' });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      try {
        const port = (server.address() as { port: number }).port;
        return await cli(['agent', 'docker', 'doctor'], { env: { ...t.env, DOCKER_HOST: `tcp://127.0.0.1:${port}` }, cwd: dir, timeoutMs: 60_000 });
      } finally {
        server.close();
      }
    };
    const relative = await doctorWith('./runsc');
    assert.match(relative.stdout, /^ {2}info fast: gVisor, with --oci-seccomp: runtime = "fast" runs sealed under it$/m, relative.stderr);
    assert.equal(existsSync(marker), false, 'the relative path ran nothing');
    const absolute = await doctorWith(join(dir, 'runsc'));
    assert.match(absolute.stdout, /info fast: gVisor, with --oci-seccomp: runtime = "fast" runs sealed under it; could not read \S+runsc's version/, absolute.stderr);
    assert.equal(existsSync(marker), true, 'control: an absolute path on this machine\'s engine is asked');
  });
});
