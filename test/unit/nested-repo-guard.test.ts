// The nested-repository check is itself something the agent attacks: it must
// not rename anything outside the repository (a submodule path that is a link
// out of it), nor hang on a FIFO planted where a pointer file should be.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { checkNestedRepos } from '../../lib/git/nested-repo-guard.js';

const base = mkdtempSync(join(tmpdir(), 'stashbase-guard-'));
after(() => rmSync(base, { recursive: true, force: true }));
const env = { PATH: process.env.PATH, HOME: base };
const git = (dir: string, ...a: string[]) => {
  const r = spawnSync('git', ['-C', dir, '-c', 'user.name=a', '-c', 'user.email=a@b', ...a], { env, encoding: 'utf8' });
  assert.equal(r.status, 0, `git ${a.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};
const repo = (name: string) => {
  const d = join(base, name);
  mkdirSync(d, { recursive: true });
  git(d, 'init', '-q');
  git(d, 'commit', '-q', '--allow-empty', '-m', 'init');
  return d;
};
const register = (root: string, path: string, sha: string) => git(root, 'update-index', '--add', '--cacheinfo', `160000,${sha},${path}`);

test('a submodule path that links out of the repository: nothing outside is renamed', () => {
  const root = repo('r1');
  const other = repo('yours'); // another repository of yours, its config just changed
  git(other, 'config', 'core.editor', 'vim');
  symlinkSync(other, join(root, 'evil'));
  register(root, 'evil', git(other, 'rev-parse', 'HEAD'));
  assert.deepEqual(checkNestedRepos(root, env, 0), []);
  assert.equal(existsSync(join(other, '.git', 'config')), true);
  assert.equal(existsSync(join(other, '.git.stashbase-quarantine')), false);
});

test('a FIFO as the pointer file or as commondir does not hang the check', () => {
  const root = repo('r2');
  mkdirSync(join(root, 'fifo1'));
  assert.equal(spawnSync('mkfifo', [join(root, 'fifo1', '.git')]).status, 0);
  register(root, 'fifo1', '1'.repeat(40));
  const inner = repo('r2/fifo2');
  register(root, 'fifo2', git(inner, 'rev-parse', 'HEAD'));
  assert.equal(spawnSync('mkfifo', [join(inner, '.git', 'commondir')]).status, 0);
  const t = Date.now();
  const warnings = checkNestedRepos(root, env, 0);
  // And the repository's own index replaced by a FIFO.
  const r4 = repo('r4');
  rmSync(join(r4, '.git', 'index'), { force: true });
  assert.equal(spawnSync('mkfifo', [join(r4, '.git', 'index')]).status, 0);
  assert.deepEqual(checkNestedRepos(r4, env, 0), []);
  assert.ok(Date.now() - t < 5000);
  // fifo2's own config (written now, by git init) holds only harmless keys; its commondir (a FIFO, never read) moves it aside.
  assert.equal(warnings.length, 1);
  assert.match(warnings[0] as string, /fifo2, in a subfolder, .*: its git directory \S+\/fifo2\/\.git has a commondir, whose repository your git in that folder would work on\. Its \.git was renamed/);
});

test('a pointer file to a git directory outside the repository: only the pointer, inside, is renamed', () => {
  const root = repo('r3');
  const outside = repo('planted-outside');
  git(outside, 'config', 'core.fsmonitor', 'touch /nonexistent/x');
  mkdirSync(join(root, 'evil'));
  writeFileSync(join(root, 'evil', '.git'), `gitdir: ${join(outside, '.git')}\n`);
  register(root, 'evil', git(outside, 'rev-parse', 'HEAD'));
  const [w, ...rest] = checkNestedRepos(root, env, 0);
  assert.deepEqual(rest, []);
  assert.match(w ?? '', /core\.fsmonitor\. Its \.git was renamed .*r3\/evil\/\.git\.stashbase-quarantine/);
  assert.deepEqual([existsSync(join(root, 'evil', '.git')), existsSync(join(outside, '.git', 'config'))], [false, true]);
});

test("a submodule's git directory that was never checked out, planted or given a hook: moved aside and named; an untouched one is left", () => {
  const root = repo('r-modules');
  const plant = join(root, '.git', 'modules', 'lib');
  const quiet = join(root, '.git', 'modules', 'docs', 'site');
  for (const d of [plant, quiet]) git(base, 'init', '-q', '--bare', d);
  assert.deepEqual(checkNestedRepos(root, env, Date.now() + 60_000), [], 'nothing written after the mark: nothing to do');
  git(base, '--git-dir', plant, 'config', 'core.fsmonitor', 'touch /tmp/pwn');
  writeFileSync(join(plant, 'hooks', 'post-checkout'), '#!/bin/sh\ntouch /tmp/pwn\n');
  // Both were written after this mark; only the planted one would run anything.
  const warnings = checkNestedRepos(root, env, Date.now() - 10_000);
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0]!, new RegExp(`submodule's git directory ${plant.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} whose files would run programs .*core\\.fsmonitor.*post-checkout: a hook. It was renamed .*lib\\.stashbase-quarantine; review it, then restore it with: mv `));
  assert.deepEqual([existsSync(plant), existsSync(`${plant}.stashbase-quarantine`), existsSync(quiet)], [false, true, true]);
});

test('a repository of 10,000 files in 50 nested folders: a plant five levels down is found, a nested repository made before the mark is left', () => {
  const root = repo('r-big');
  for (let d = 0; d < 50; d++) {
    const dir = join(root, `a${d % 5}`, `b${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 200; f++) writeFileSync(join(dir, `f${f}`), '');
  }
  const yours = join(root, 'a1', 'b1', 'vendored');
  mkdirSync(yours);
  git(yours, 'init', '-q');
  git(yours, 'config', 'core.pager', 'less');
  const mark = Date.now() + 30;
  while (Date.now() < mark + 20) { /* file times after the mark */ }
  const deep = join(root, 'a3', 'b8', 'x', 'y', 'z');
  mkdirSync(deep, { recursive: true });
  git(deep, 'init', '-q');
  git(deep, 'config', 'core.fsmonitor', 'touch /tmp/pwn');
  const warnings = checkNestedRepos(root, env, mark);
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0]!, /in a subfolder, .*core\.fsmonitor/);
  assert.deepEqual([existsSync(join(deep, '.git')), existsSync(join(yours, '.git'))], [false, true]);
});

test('an old folder moved into a nested repository already there, holding a hard link and a link out of the tree: judged whole, moved aside (found in review: its entries kept their old times); control: your git appends through the hard link', async () => {
  const root = repo('r9');
  const sub = repo('r9/sub');
  const store = join(base, 'store-r9');
  mkdirSync(store, { recursive: true });
  writeFileSync(join(store, 'index.js'), 'console.log("store file")\n');
  mkdirSync(join(root, 'node_modules', 'pkg'), { recursive: true });
  spawnSync('ln', [join(store, 'index.js'), join(root, 'node_modules', 'pkg', 'index.js')]);
  symlinkSync(join(store, 'index.js'), join(root, 'node_modules', 'pkg', 'out.js'));
  await new Promise((res) => setTimeout(res, 30));
  const since = Date.now();
  await new Promise((res) => setTimeout(res, 30));
  spawnSync('mv', [join(root, 'node_modules', 'pkg'), join(sub, '.git', 'logs', 'refs', 'heads', 'pkgdir')]);
  const warnings = checkNestedRepos(root, env, since);
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0] as string, /sub\/\.git holds logs\/refs\/heads\/pkgdir\/(index|out)\.js \(a (hard|symbolic) link.*\), through which git writes elsewhere\. Its \.git was renamed/);
  // Control: the same layout left in place, your git appends its reflog line to the store's file through the hard link.
  const ctl = repo('r9-control');
  mkdirSync(join(ctl, '.git', 'logs', 'refs', 'heads', 'pkgdir'), { recursive: true });
  spawnSync('ln', [join(store, 'index.js'), join(ctl, '.git', 'logs', 'refs', 'heads', 'pkgdir', 'index.js')]);
  git(ctl, 'update-ref', '-m', 'user commit', 'refs/heads/pkgdir/index.js', 'HEAD');
  assert.match((await import('node:fs')).readFileSync(join(store, 'index.js'), 'utf8'), /user commit/);
});
