// The secret scan travels in files of its own beside the CLI's bundle
// (scripts/bundle.mjs), each read only when used: start-up (agent run,
// --version, help) never pays for them, and they share the bundle's error
// classes, so their usage errors still exit 2.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO } from '../helpers.js';

const bundle = (name: string) => readFileSync(join(REPO, 'dist', 'bundle', name), 'utf8');

const probe = (steps: string) => spawnSync(process.execPath, ['-e', `
const loaded = () => ['scan.cjs', 'secretlint.cjs', 'host-scan.cjs'].filter((f) => Object.keys(require.cache).some((k) => k.endsWith('/' + f))).join(',');
const cli = require(${JSON.stringify(join(REPO, 'bin', 'bundle-loader.cjs'))}).load();
(async () => { ${steps} })();
`], { encoding: 'utf8', cwd: REPO, env: { ...process.env, HOME: '/nonexistent' } });

test('the bundle holds none of the scan; the scan file requires the rule set and the bundle; the rule set has no profiler, debug or node-forge', () => {
  const cli = bundle('cli.cjs');
  assert.match(cli, /require\("\.\/scan\.cjs"\)/);
  assert.doesNotMatch(cli, /StructuredSource|PerformanceObserver|stashbase-scan-hook|secretlint\.cjs/);
  // Nor the dependency check's commands and its 160 KB of popular names: they load when the check runs.
  for (const f of ['deps-check', 'deps-install', 'host-agent-hooks']) assert.match(cli, new RegExp(`require\\("\\./${f}\\.cjs"\\)`), f);
  assert.doesNotMatch(cli, /semver ansi-styles debug minimatch/);
  assert.match(bundle('deps-check.cjs'), /require\("\.\/popular-npm\.cjs"\)/);
  const scan = bundle('scan.cjs');
  assert.match(scan, /require\("\.\/secretlint\.cjs"\)/);
  assert.match(scan, /require\("\.\/cli\.cjs"\)/);
  assert.doesNotMatch(scan, /class StashbaseError/);
  assert.doesNotMatch(bundle('host-scan.cjs'), /class StashbaseError|secretlint\.cjs/);
  const rules = bundle('secretlint.cjs');
  assert.match(rules, /^\/\/ @secretlint\/core 11\.\d+\.\d+ and @secretlint\/secretlint-rule-preset-recommend 11\.\d+\.\d+ \(MIT, azu\)/);
  assert.doesNotMatch(rules, /PerformanceObserver|Digital Bazaar|DEBUG_COLORS/);
});

test('help and agent run load nothing of the scan; scan --help its commands only; a scan the rule set; its usage errors exit 2', () => {
  const r = probe(`
    const out = process.stdout.write.bind(process.stdout); process.stdout.write = () => true; process.stderr.write = () => true;
    const seen = [];
    await cli.main(['--help']); await cli.main(['agent', 'run', '--help']); seen.push(loaded());
    await cli.main(['scan', '--help']); seen.push(loaded());
    seen.push(await cli.main(['scan', '--range', 'x..y']));
    await cli.main(['scan', '--max-size', '10', 'package.json']); seen.push(loaded());
    out(JSON.stringify(seen));
  `);
  assert.equal(r.stdout, '["","scan.cjs",2,"scan.cjs,secretlint.cjs"]', r.stderr);
});
