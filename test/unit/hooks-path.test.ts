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
