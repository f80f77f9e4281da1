// Runs the compiled tests with node's test runner. `node test/run.mjs unit`
// runs only the unit tests. In CI (CI=true) integration tests that lack bwrap,
// git or Docker fail instead of skipping.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

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
walk(only ? join(root, only) : root);
const r = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...files], { stdio: 'inherit' });
process.exit(r.status ?? 1);
