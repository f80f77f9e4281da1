// stashbase installed inside the agent's working tree (a project's
// node_modules): what of it runs (bin/, dist/: the bundle on the host, the
// relay in a sealed container) stays read-only in every run, so one run cannot
// change what the next executes, in that project or any other (found in
// review). Control: outside a run the same files are writable.
import assert from 'node:assert/strict';
import { accessSync, constants, cpSync, existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { needs, REPO, tempHome, writeFile } from '../helpers.js';

/** What of stashbase's package a run uses (package.json, bin/, the bundle, the relay), copied to `pkg`. */
function copyPackage(pkg: string): void {
  mkdirSync(join(pkg, 'dist'), { recursive: true });
  cpSync(join(REPO, 'package.json'), join(pkg, 'package.json'));
  cpSync(join(REPO, 'bin'), join(pkg, 'bin'), { recursive: true });
  cpSync(join(REPO, 'dist', 'bundle'), join(pkg, 'dist', 'bundle'), { recursive: true });
  cpSync(join(REPO, 'dist', 'relay'), join(pkg, 'dist', 'relay'), { recursive: true });
}

describe("stashbase's own package inside the working tree (real bwrap, real Docker)", needs('bwrap'), () => {
  const t = tempHome();
  after(() => t.cleanup());
  const proj = join(t.dir, 'proj');
  const pkg = join(proj, 'node_modules', 'stashbase');
  copyPackage(pkg);
  symlinkSync(join(REPO, 'node_modules'), join(pkg, 'node_modules'));
  writeFile(join(proj, 'README'), 'x\n');
  const relay = join(pkg, 'dist', 'relay', `linux-${process.arch === 'arm64' ? 'arm64' : 'amd64'}`, 'stashbase-relay');
  const targets = [join(pkg, 'dist', 'bundle', 'cli.cjs'), join(pkg, 'bin', 'stashbase.cjs'), relay];
  const before = targets.map((f) => readFileSync(f));
  const attack = targets.map((f, i) => `(echo evil > ${f}) 2>/dev/null && echo wrote-${i} || echo refused-${i}`).join('; ') + `; (echo x > ${join(pkg, 'bin', 'planted')}) 2>/dev/null && echo planted || echo not-planted`;

  for (const [name, flags] of [['native', ['--docker-sandbox', 'false']], ['Docker, sealed', ['--docker-sandbox', 'true', '--docker-network', 'sealed']]] as const) {
    test(`${name}: the agent cannot rewrite the bundle, the entry or the relay, nor plant a file in bin/; control: outside a run they are writable`, { ...(name === 'native' ? {} : needs('docker')) }, async () => {
      // The copy's own CLI runs the run: its package is the one in the tree.
      const { spawnSync } = await import('node:child_process');
      const run = spawnSync(process.execPath, [join(pkg, 'bin', 'stashbase.cjs'), 'agent', 'run', '--silent', ...flags, '--', 'sh', '-c', attack], { env: t.env, cwd: proj, encoding: 'utf8', timeout: 120_000 });
      assert.equal(run.status, 0, run.stderr);
      assert.equal(run.stdout, 'refused-0\nrefused-1\nrefused-2\nnot-planted\n');
      targets.forEach((f, i) => assert.deepEqual(readFileSync(f), before[i], f));
      for (const f of targets) accessSync(f, constants.W_OK);
    });
  }
});

// Found in review (rounds 12 and 13): the packages the CLI used were loaded from node_modules at run time, where Node
// looks first in folders an agent may write (picocolors rewritten beside it; a package planted in stashbase's own
// node_modules, ahead of the one kept read-only): the host ran the agent's code. The bundle holds every package it
// uses now (scripts/bundle.mjs fails a build that would load one), so a plant anywhere Node looks is never loaded.
describe("packages planted wherever Node would look for the CLI's (real bwrap)", needs('bwrap'), () => {
  const t = tempHome();
  after(() => t.cleanup());
  const proj = join(t.dir, 'proj');
  const modules = join(proj, 'node_modules');
  const pkg = join(modules, 'stashbase');
  copyPackage(pkg);
  // Hoisted, as npm installs a dependency's dependencies: beside it.
  const deps = ['picocolors', 'toml', 'which', 'proper-lockfile'];
  for (const dep of [...deps, 'isexe', 'graceful-fs', 'retry', 'signal-exit']) cpSync(join(REPO, 'node_modules', dep), join(modules, dep), { recursive: true });
  writeFile(join(proj, 'README'), 'x\n');
  const marker = join(t.dir, 'PWNED');
  const evil = (name: string) => `require("fs").appendFileSync(${JSON.stringify(marker)}, "${name}\\n"); module.exports = require(${JSON.stringify(join(REPO, 'node_modules', name))});`;
  // In stashbase's own node_modules (searched first), and, not named, appended to the hoisted copies.
  const plant = deps.map((d) => `mkdir -p ${pkg}/node_modules/${d} && printf '%s' '{"name":"${d}","main":"index.js"}' > ${pkg}/node_modules/${d}/package.json && printf '%s' '${evil(d)}' > ${pkg}/node_modules/${d}/index.js`).join(' && ') +
    ` && { printf '%s' '${evil('picocolors').split(';')[0]};' >> ${modules}/picocolors/picocolors.js; } 2>/dev/null; echo planted`;

  test('the agent plants each package the CLI uses where Node looks first: the CLI that runs next (a run, its audit, validate) loads none; control: Node resolving from the bundle\'s folder finds the plants and runs them', async () => {
    const { spawnSync } = await import('node:child_process');
    const cli0 = (args: string[]) => spawnSync(process.execPath, [join(pkg, 'bin', 'stashbase.cjs'), ...args], { env: t.env, cwd: proj, encoding: 'utf8', timeout: 120_000 });
    // Kept where the agent leaves it (a run's changes to node_modules are moved aside otherwise): the CLI must not load it even so.
    writeFile(join(t.sbHome, 'agents', 'keepdeps.toml'), '[filesystem]\nkeep_executables = ["node_modules"]\n');
    const run = cli0(['agent', 'run', '--silent', '--profile', 'keepdeps', '--', 'sh', '-c', plant]);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, 'planted\n');
    for (const [args, code] of [[['agent', 'run', '--', 'true'], 0], [['agent', 'audit'], 0], [['agent', 'validate'], 0]] as const) {
      const r = cli0([...args]);
      assert.equal(r.status, code, `${args.join(' ')}: ${r.stderr}`);
    }
    assert.equal(existsSync(marker), false, existsSync(marker) ? readFileSync(marker, 'utf8') : '');
    // Control: Node's own resolution from where the bundle lies takes the plants, and loading one runs it.
    const from = createRequire(join(pkg, 'dist', 'bundle', 'cli.cjs'));
    for (const d of deps) assert.equal(from.resolve(d), join(pkg, 'node_modules', d, 'index.js'), d);
    from('picocolors');
    assert.equal(readFileSync(marker, 'utf8'), 'picocolors\n');
  });
});
