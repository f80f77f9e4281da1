// The rule set travels as a file of its own beside the CLI's bundle and is
// read only when a scan runs: start-up (agent run, --version, help) never pays
// for it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO } from '../helpers.js';

const probe = (steps: string) => spawnSync(process.execPath, ['-e', `
const loaded = () => Object.keys(require.cache).filter((k) => k.endsWith('secretlint.cjs')).length;
const cli = require(${JSON.stringify(join(REPO, 'bin', 'bundle-loader.cjs'))}).load();
(async () => { ${steps} })();
`], { encoding: 'utf8', cwd: REPO, env: { ...process.env, HOME: '/nonexistent' } });

test('the bundle requires the rule set lazily; the rule set file has no profiler, debug or node-forge', () => {
  const cli = readFileSync(join(REPO, 'dist', 'bundle', 'cli.cjs'), 'utf8');
  assert.match(cli, /require\("\.\/secretlint\.cjs"\)/);
  assert.doesNotMatch(cli, /StructuredSource|PerformanceObserver/);
  const rules = readFileSync(join(REPO, 'dist', 'bundle', 'secretlint.cjs'), 'utf8');
  assert.match(rules, /^\/\/ @secretlint\/core 11\.\d+\.\d+ and @secretlint\/secretlint-rule-preset-recommend 11\.\d+\.\d+ \(MIT, azu\)/);
  assert.doesNotMatch(rules, /PerformanceObserver|Digital Bazaar|DEBUG_COLORS/);
});

test('loading the CLI and printing help loads no rule set; a scan does', () => {
  const r = probe(`
    const out = process.stdout.write.bind(process.stdout); process.stdout.write = () => true;
    await cli.main(['scan', '--help']); await cli.main(['agent', 'run', '--help']);
    const before = loaded();
    await cli.main(['scan', '--max-size', '10', 'package.json']);
    out(JSON.stringify([before, loaded()]));
  `);
  assert.equal(r.stdout, '[0,1]', r.stderr);
});
