import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveBackend } from '../../lib/run/backend.js';
import { defaultProfile } from '../../lib/profile/default.js';

const native = defaultProfile();
const docker = { ...native, sandbox: { ...native.sandbox, backend: 'docker' as const } };

test('the profile decides unless --docker-sandbox overrides', () => {
  assert.deepEqual(resolveBackend(native, {}), { backend: 'native', notes: [] });
  assert.deepEqual(resolveBackend(docker, {}), { backend: 'docker', notes: [] });
  assert.equal(resolveBackend(native, { dockerSandbox: 'true' }).backend, 'docker');
  assert.equal(resolveBackend(docker, { dockerSandbox: 'false' }).backend, 'native');
});

test('--docker-image and --docker-dockerfile imply Docker', () => {
  assert.equal(resolveBackend(native, { dockerImage: 'x' }).backend, 'docker');
  assert.equal(resolveBackend(native, { dockerDockerfile: 'x' }).backend, 'docker');
});

test('conflicts are usage errors', () => {
  assert.throws(() => resolveBackend(native, { dockerImage: 'a', dockerDockerfile: 'b' }), { name: 'UsageError', message: '--docker-image and --docker-dockerfile cannot be used together' });
  assert.throws(() => resolveBackend(native, { dockerImage: 'a', dockerSandbox: 'false' }), { message: '--docker-image implies the Docker backend and cannot be used with --docker-sandbox false' });
  assert.throws(() => resolveBackend(native, { dockerSandbox: 'yes' }), { message: '--docker-sandbox takes true or false, not "yes"' });
});

test('memory, cpus and isolated paths do not imply Docker', () => {
  assert.deepEqual(resolveBackend(native, { dockerMemory: '2g', dockerCpus: '1', dockerIsolatedPaths: 'node_modules' }), {
    backend: 'native',
    notes: ['--docker-memory has no effect on the native backend', '--docker-cpus has no effect on the native backend', '--docker-isolated-paths has no effect on the native backend'],
  });
  assert.deepEqual(resolveBackend(docker, { dockerMemory: '2g' }), { backend: 'docker', notes: [] });
});

test('--backend native|docker is --docker-sandbox by name; the two disagreeing, or another name, are usage errors', () => {
  assert.deepEqual(resolveBackend(native, { backend: 'docker' }), { backend: 'docker', notes: [] });
  assert.deepEqual(resolveBackend(docker, { backend: 'native' }), { backend: 'native', notes: [] });
  assert.deepEqual(resolveBackend(native, { backend: 'docker', dockerSandbox: 'true' }), { backend: 'docker', notes: [] });
  assert.throws(() => resolveBackend(native, { backend: 'docker', dockerSandbox: 'false' }), { name: 'UsageError', message: '--backend docker and --docker-sandbox false disagree' });
  assert.throws(() => resolveBackend(native, { backend: 'vm' }), { name: 'UsageError', message: '--backend takes native or docker, not "vm"' });
});
