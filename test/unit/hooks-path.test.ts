// core.hooksPath as git reads it from a config file, and where it points.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { coreHooksPath, gitConfigTargets } from '../../lib/git/repo.js';

test('core.hooksPath: key case, quotes, comments, the last one wins, other sections ignored', () => {
  assert.equal(coreHooksPath('[core]\n\thooksPath = .husky\n'), '.husky');
  assert.equal(coreHooksPath('[CORE]\n  HooksPath=".git hooks" ; mine\n'), '.git hooks');
  assert.equal(coreHooksPath('[core]\nhookspath = a\n[core]\nhookspath = b # later\n'), 'b');
  assert.equal(coreHooksPath('[alias]\nhookspath = x\n[core]\n\tbare = false\n'), null);
  assert.equal(coreHooksPath('[core "sub"]\nhookspath = y\n'), 'y');
  assert.equal(coreHooksPath(''), null);
});

const base = mkdtempSync(join(tmpdir(), 'stashbase-hooks-'));
after(() => rmSync(base, { recursive: true, force: true }));

test('targets: the repository config relative to its top, the global ones with ~ and absolute paths', () => {
  const home = join(base, 'home');
  const repo = join(base, 'repo');
  mkdirSync(join(repo, '.git'), { recursive: true });
  mkdirSync(join(repo, 'sub'), { recursive: true });
  mkdirSync(join(home, '.config', 'git'), { recursive: true });
  writeFileSync(join(repo, '.git', 'config'), '[core]\n\thooksPath = .husky\n');
  writeFileSync(join(home, '.gitconfig'), '[core]\n\thooksPath = ~/.githooks\n');
  writeFileSync(join(home, '.config', 'git', 'config'), '[core]\n\thooksPath = /opt/hooks\n');
  assert.deepEqual(gitConfigTargets(join(repo, 'sub'), home, {}).paths, [join(home, '.githooks'), '/opt/hooks', join(repo, '.husky')]);
  assert.deepEqual(gitConfigTargets(join(repo, 'sub'), home, { XDG_CONFIG_HOME: join(base, 'nowhere') }).paths, [join(home, '.githooks'), join(repo, '.husky')]);
});

test('targets: a hooksPath set in an included file is found as git computes it', () => {
  const home = join(base, 'home-inc');
  const repo = join(base, 'repo-inc');
  mkdirSync(home, { recursive: true });
  const g = (...a: string[]) => spawnSync('git', ['-C', repo, ...a], { env: { PATH: process.env.PATH, HOME: home } });
  mkdirSync(repo);
  g('init', '-q');
  writeFileSync(join(home, '.gitconfig-hooks'), '[core]\n\thooksPath = tools/hooks\n');
  writeFileSync(join(home, '.gitconfig'), `[include]\n\tpath = ${join(home, '.gitconfig-hooks')}\n`);
  // The folder, and the config files git read it from (the agent must not add to them either).
  assert.deepEqual(gitConfigTargets(repo, home, { PATH: process.env.PATH }), { paths: [join(repo, 'tools', 'hooks'), join(home, '.gitconfig'), join(home, '.gitconfig-hooks')], files: [join(home, '.gitconfig-hooks')], madeAside: [], links: [] });
  assert.deepEqual(gitConfigTargets(repo, home, {}), { paths: [], files: [], madeAside: [], links: [] }, 'without git, the files alone do not say it');
});

test("(review, round 34) a hook that runs python -m: the modules its Python imports are names the agent may not make at the top; the Python a hook names (INSTALL_PYTHON, here one in the tree the agent could write) is never run by stashbase, its site-packages read instead; control: run, that program does its harm", () => {
  const repo = join(base, 'py-m');
  const home = join(base, 'py-m-home');
  mkdirSync(home, { recursive: true });
  mkdirSync(repo, { recursive: true });
  assert.equal(spawnSync('git', ['init', '-q'], { cwd: repo }).status, 0);
  const marker = join(base, 'PWNED-install-python');
  const env = join(repo, 'venv');
  mkdirSync(join(env, 'bin'), { recursive: true });
  mkdirSync(join(env, 'lib', 'python3.11', 'site-packages', 'cfgv.dist-info'), { recursive: true });
  writeFileSync(join(env, 'lib', 'python3.11', 'site-packages', 'cfgv.py'), '');
  writeFileSync(join(env, 'bin', 'python'), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
  writeFileSync(join(repo, '.git', 'hooks', 'pre-commit'), `#!/usr/bin/env bash\nINSTALL_PYTHON=${join(env, 'bin', 'python')}\nARGS=(hook-impl)\nexec "$INSTALL_PYTHON" -mpre_commit "\${ARGS[@]}"\n`, { mode: 0o755 });
  const t = gitConfigTargets(repo, home, { PATH: process.env.PATH });
  assert.equal(spawnSync('test', ['-e', marker]).status, 1, 'stashbase ran nothing the hook names');
  for (const name of ['cfgv.py', 'json.py', 'json/__init__.py']) assert.ok(t.madeAside.includes(join(repo, name)), name);
  assert.ok(!t.madeAside.includes(join(repo, 'cfgv.dist-info.py')));
  // Control: run, the named Python is the agent's program.
  spawnSync(join(env, 'bin', 'python'), ['-c', '1']);
  assert.equal(spawnSync('test', ['-e', marker]).status, 0);
});

test("(review, round 34, of the third pass) a hook that is a FIFO holds nothing at the run's start (read without waiting, a regular file alone); a framework entry running python -m makes the module names the agent may not make at the top; control: the FIFO read plainly would wait", () => {
  const repo = join(base, 'fifo-hook');
  const home = join(base, 'fifo-home');
  mkdirSync(join(repo, '.githooks'), { recursive: true });
  mkdirSync(home, { recursive: true });
  assert.equal(spawnSync('git', ['init', '-q'], { cwd: repo }).status, 0);
  assert.equal(spawnSync('git', ['config', 'core.hooksPath', '.githooks'], { cwd: repo }).status, 0);
  assert.equal(spawnSync('mkfifo', [join(repo, '.githooks', 'pre-commit')]).status, 0);
  writeFileSync(join(repo, 'lefthook.yml'), 'pre-commit:\n  commands:\n    lint:\n      run: python3 -m tools.lint {staged_files}\n');
  const t0 = Date.now();
  const t = gitConfigTargets(repo, home, { PATH: process.env.PATH });
  assert.ok(Date.now() - t0 < 5000);
  assert.ok(t.madeAside.includes(join(repo, 'argparse.py')), 'a module the framework\'s python -m imports');
  assert.ok(t.madeAside.includes(join(repo, 'tools', '__main__.py')) || t.madeAside.includes(join(repo, 'tools', 'lint.py')));
  // Control: a plain read of the FIFO waits (cut short here).
  assert.equal(spawnSync('cat', [join(repo, '.githooks', 'pre-commit')], { timeout: 300 }).signal, 'SIGTERM');
});
