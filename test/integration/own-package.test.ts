// stashbase installed inside the agent's working tree (a project's
// node_modules): what of it runs (bin/, dist/: the bundle on the host, the
// relay in a sealed container) stays read-only in every run, so one run cannot
// change what the next executes, in that project or any other (found in
// review). Control: outside a run the same files are writable.
import assert from 'node:assert/strict';
import { accessSync, constants, cpSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
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

// Found in review: the packages the bundle loads at run time (picocolors, on the first warning after the agent's
// container is gone) sat beside stashbase in the project's node_modules, writable: the host ran the agent's code.
// Every package of its run-time closure is read-only too, wherever require finds it.
describe("stashbase's run-time packages beside it in the project's node_modules (real bwrap, real Docker)", needs('bwrap'), () => {
  const t = tempHome();
  after(() => t.cleanup());
  const proj = join(t.dir, 'proj');
  const modules = join(proj, 'node_modules');
  const pkg = join(modules, 'stashbase');
  copyPackage(pkg);
  // Hoisted, as npm installs a dependency's dependencies: beside it.
  for (const dep of ['picocolors', 'toml', 'which', 'isexe', 'proper-lockfile', 'graceful-fs', 'retry', 'signal-exit']) cpSync(join(REPO, 'node_modules', dep), join(modules, dep), { recursive: true });
  writeFile(join(proj, 'README'), 'x\n');
  // picocolors (loaded after the run, on its first warning), stashbase's package.json (which names them: emptied, the
  // next run left them writable, found in review) and, not named, graceful-fs (proper-lockfile's dependency).
  const targets = [join(modules, 'picocolors', 'picocolors.js'), join(pkg, 'package.json'), join(modules, 'graceful-fs', 'graceful-fs.js')];
  const before = targets.map((f) => readFileSync(f));
  const attack = targets.map((f, i) => `(echo 'require("fs").writeFileSync("/tmp/pwned")' >> ${f}) 2>/dev/null && echo wrote-${i} || echo refused-${i}`).join('; ');

  for (const [name, flags] of [['native', ['--docker-sandbox', 'false']], ['Docker', ['--docker-sandbox', 'true']]] as const) {
    test(`${name}: the agent cannot change a package stashbase loads, nor one of their dependencies; control: outside a run they are writable`, { ...(name === 'native' ? {} : needs('docker')) }, async () => {
      const { spawnSync } = await import('node:child_process');
      const run = spawnSync(process.execPath, [join(pkg, 'bin', 'stashbase.cjs'), 'agent', 'run', '--silent', ...flags, '--', 'sh', '-c', attack], { env: t.env, cwd: proj, encoding: 'utf8', timeout: 120_000 });
      assert.equal(run.status, 0, run.stderr);
      assert.equal(run.stdout, 'refused-0\nrefused-1\nrefused-2\n');
      targets.forEach((f, i) => assert.deepEqual(readFileSync(f), before[i], f));
      for (const f of targets) accessSync(f, constants.W_OK);
    });
  }
});
