// Runs the compiled tests with node's test runner. `node test/run.mjs unit`
// runs only the unit tests, `node test/run.mjs integration/x.test.js` one file.
// In CI (CI=true) integration tests that lack bwrap, git or Docker fail instead
// of skipping.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { AGENTS_IMAGE, agentsImageReady, buildAgentsImage } from './agents-image.mjs';

const root = new URL('../dist/test/', import.meta.url).pathname;
const only = process.argv[2];
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) walk(full);
    else if (name.endsWith('.test.js')) files.push(full);
  }
};
const start = only ? join(root, only) : root;
if (start.endsWith('.test.js')) files.push(start);
else walk(start);

// The Docker tests need the default sandbox image. Where it is missing it is
// built here, by the CLI itself, offline from the local test base image
// (scripts/build-test-image.sh) and without the agent installers.
if (only !== 'unit' && spawnSync('docker', ['info'], { stdio: 'ignore' }).status === 0) {
  if (spawnSync('docker', ['image', 'inspect', 'stashbase-sandbox:latest'], { stdio: 'ignore' }).status !== 0) {
    const home = mkdtempSync(join(tmpdir(), 'sbtest-build-'));
    const env = { ...process.env, HOME: home, STASHBASE_HOME: join(home, '.stashbase'), STASHBASE_SANDBOX_BASE_IMAGE: 'stashbase-test-base:latest', STASHBASE_SANDBOX_INSTALL_AGENTS: '0' };
    const b = spawnSync(process.execPath, [new URL('../bin/stashbase.cjs', import.meta.url).pathname, 'agent', 'docker', 'build'], { stdio: 'inherit', env });
    rmSync(home, { recursive: true, force: true });
    if (b.status !== 0) process.exit(b.status ?? 1);
  }
  // The real agents on the Docker backend run an image with them inside (test/agents-image.mjs).
  if (files.some((f) => /(real-agents-docker|real-agents-remote|docker-commands)\.test\.js$/.test(f)) && !agentsImageReady()) {
    const status = buildAgentsImage();
    if (status !== 0) process.exit(status);
  }
  // The remote runs' engine (scripts/start-remote-engine.sh) gets the images built above, the agents' one where its tests run.
  if (files.some((f) => /(remote-run|real-agents-remote)\.test\.js$/.test(f))) {
    const extra = files.some((f) => /real-agents-remote\.test\.js$/.test(f)) ? [AGENTS_IMAGE] : [];
    const status = spawnSync('bash', [new URL('../scripts/start-remote-engine.sh', import.meta.url).pathname, ...extra], { stdio: 'inherit' }).status;
    if (status !== 0) process.exit(status ?? 1);
  }
}
const r = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...files], { stdio: 'inherit' });
process.exit(r.status ?? 1);
