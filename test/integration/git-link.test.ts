// A checkout whose .git is a symbolic link: the link is an entry of the
// working tree, and no mount keeps an entry that is a link from being removed,
// so an agent could put a repository of its own in its place, whose config
// your git obeys (found in review). Such a run is refused on both backends,
// with the fix; the control does the replacement outside, where your next
// `git status` runs the agent's command.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cli, needs, tempHome, writeFile } from '../helpers.js';

describe('a .git that is a symbolic link (real git)', needs('bwrap', 'git'), () => {
  const t = tempHome();
  after(() => t.cleanup());
  const proj = join(t.home, 'proj');
  const env = { ...t.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
  const git = (cwd: string, ...a: string[]) => execFileSync('git', ['-C', cwd, ...a], { env, encoding: 'utf8' });
  writeFile(join(proj, 'README'), 'x\n');
  git(proj, 'init', '-q');
  git(proj, 'add', '-A');
  git(proj, 'commit', '-qm', 'init');
  renameSync(join(proj, '.git'), join(t.home, 'store.git'));
  symlinkSync(join(t.home, 'store.git'), join(proj, '.git'));
  const why = `${join(proj, '.git')} is a symbolic link, which the agent could replace with a repository your git would then obey`;

  test('a run is refused, naming the link and the fix; nothing runs', async () => {
    const r = await cli(['agent', 'run', '--', 'sh', '-c', 'touch ran'], { env: t.env, cwd: proj });
    assert.notEqual(r.code, 0);
    assert.ok(r.stderr.includes(why), r.stderr);
    assert.match(r.stderr, /make it a gitdir file instead/);
    assert.equal(existsSync(join(proj, 'ran')), false);
  });

  test('the Docker backend refuses it too', needs('docker'), async () => {
    const r = await cli(['agent', 'run', '--docker-sandbox', 'true', '--', 'sh', '-c', 'touch ran'], { env: t.env, cwd: proj });
    assert.notEqual(r.code, 0);
    assert.ok(r.stderr.includes(why), r.stderr);
    assert.equal(existsSync(join(proj, 'ran')), false);
  });

  test('the control: outside, the link replaced by a repository of the agent\'s makes your next git status run its command', () => {
    const copy = join(t.home, 'copy');
    mkdirSync(copy);
    writeFile(join(copy, 'README'), 'x\n');
    symlinkSync(join(t.home, 'store.git'), join(copy, '.git'));
    execFileSync('sh', ['-c', `cd ${copy} && rm .git && git init -q && git config core.fsmonitor 'touch ${join(copy, 'marker')}; false'`], { env });
    git(copy, 'status', '--short');
    assert.equal(existsSync(join(copy, 'marker')), true);
  });
});
