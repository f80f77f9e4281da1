// Where a worktree run makes its worktree, and puts its pointers back: an
// agent (of an earlier run, or of another run still going in the same
// repository) can make `.stashbase` a link, or swap a worktree for one. Found
// in review: git checked the worktree out in the folder the link named, and
// the end of the run removed another repository's .git through it. Real git;
// each attack with its control (what the same steps do without the check).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { restorePointers, startWorktree } from '../../lib/worktree/lifecycle.js';
import { findRepo } from '../../lib/worktree/layout.js';
import { gitRepos } from '../git-repos.js';

const base = mkdtempSync(join(tmpdir(), 'stashbase-wtlinks-'));
after(() => rmSync(base, { recursive: true, force: true }));
const env = { PATH: process.env.PATH, HOME: base, GIT_CONFIG_NOSYSTEM: '1' };
const { git, repo: bare } = gitRepos(base, env);
const repo = (name: string) => bare(name, { 'f.txt': 'mine\n' });

test('.stashbase a link out of the repository: the worktree run is refused before git writes anything there; control: git worktree add through it checks out into the folder it names', async () => {
  const root = repo('r1');
  const victim = join(base, 'victim1');
  mkdirSync(victim);
  symlinkSync(victim, join(root, '.stashbase'));
  await assert.rejects(startWorktree(findRepo(root, env), { session: 'ags_test', warn: () => {} }), {
    message: `${join(root, '.stashbase')} is reached through a link (it leads to ${victim}), where stashbase makes its worktrees: remove the link (an agent may have left it); nothing was run`,
  });
  assert.deepEqual(readdirSync(victim), []);
  // Control: git follows it.
  git(root, 'worktree', 'add', '-q', join(root, '.stashbase', 'worktrees', 'x'));
  assert.equal(existsSync(join(victim, 'worktrees', 'x', 'f.txt')), true);
});

test('a worktree swapped for a link to another repository before the run ends: its pointers are not put back through it, said UNSAFE, the other .git kept; control: the same steps through the link remove it', async () => {
  const root = repo('r2');
  const other = repo('other2');
  const started = await startWorktree(findRepo(root, env), { session: 'ags_test', warn: () => {} });
  const w = started.worktree;
  renameSync(w.path, `${w.path}.real`);
  symlinkSync(other, w.path);
  assert.throws(() => restorePointers(w), { message: `worktree ${w.name} is UNSAFE: ${w.path} is no longer the folder git made (it leads to ${other}); stashbase wrote nothing there: inspect it by hand before you run git in it` });
  assert.equal(statSync(join(other, '.git')).isDirectory(), true);
  assert.equal(git(other, 'log', '--format=%s'), 'init');
  // Control: removing the .git found there and writing the pointer, through the link, takes the other repository's history.
  const ctl = repo('other2-control');
  const link = join(base, 'link2');
  symlinkSync(ctl, link);
  rmSync(join(link, '.git'), { recursive: true, force: true });
  writeFileSync(join(link, '.git'), `gitdir: ${w.adminDir}\n`);
  assert.equal(statSync(join(ctl, '.git')).isFile(), true);
});

test('(not named) the worktree\'s .git pointer itself a link to a file outside: removed as a link, the pointer written anew, the file outside unchanged', async () => {
  const root = repo('r3');
  const started = await startWorktree(findRepo(root, env), { session: 'ags_test', warn: () => {} });
  const w = started.worktree;
  const outside = join(base, 'outside3');
  writeFileSync(outside, 'keep me\n');
  rmSync(join(w.path, '.git'));
  symlinkSync(outside, join(w.path, '.git'));
  restorePointers(w);
  assert.equal(spawnSync('cat', [outside], { encoding: 'utf8' }).stdout, 'keep me\n');
  assert.equal(statSync(join(w.path, '.git')).isFile(), true);
  assert.equal(git(w.path, 'rev-parse', '--abbrev-ref', 'HEAD'), `stashbase/${w.name}`);
});

test('(found in review) the repository\'s .stashbase/worktrees is made before any run, where missing, never through a link; control: missing, an agent could make it and race a worktree run in it', async () => {
  const { ensureWorktreesFolder } = await import('../../lib/worktree/lifecycle.js');
  const root = repo('r4');
  ensureWorktreesFolder(root);
  assert.equal(statSync(join(root, '.stashbase', 'worktrees')).isDirectory(), true);
  // Idempotent, and git status shows nothing of it.
  ensureWorktreesFolder(root);
  assert.equal(git(root, 'status', '--porcelain'), '');
  // A .stashbase that is a link: nothing made through it.
  const linked = repo('r5');
  const victim = join(base, 'victim5');
  mkdirSync(victim);
  symlinkSync(victim, join(linked, '.stashbase'));
  ensureWorktreesFolder(linked);
  assert.deepEqual(readdirSync(victim), []);
});

test('(round 12) a run going on in a folder above the repository (its agent can write the repository\'s .stashbase): a worktree run is refused; one already going keeps its worktree as it is at its end; control: without that run both go ahead', async () => {
  const { finishWorktree } = await import('../../lib/worktree/lifecycle.js');
  const outer = join(base, 'outer6');
  const root = repo('outer6/inner');
  const home = join(base, 'sbhome6');
  mkdirSync(join(home, 'sessions'), { recursive: true });
  const record = { id: 'ags_aaaaaaaaaaaaaaaa', pid: process.pid, backend: 'native', mechanism: 'bwrap', profile: 'default', cwd: outer, argv: ['sh'], startedAt: new Date().toISOString() };
  // Control: no run above, the worktree is made, and removed clean at its end.
  const started = await startWorktree(findRepo(root, env), { session: 'ags_test', warn: () => {}, stashbaseHome: home });
  writeFileSync(join(home, 'sessions', `${record.id}.json`), JSON.stringify(record));
  await assert.rejects(startWorktree(findRepo(root, env), { session: 'ags_test2', warn: () => {}, stashbaseHome: home }), {
    message: `a run going on in ${outer} (session ${record.id}, pid ${process.pid}), whose agent can write ${join(root, '.stashbase', 'worktrees')}, where the worktree would be made: start the worktree run once it ends, or from a repository no run's tree holds; nothing was run`,
  });
  const said: string[] = [];
  const kept = await finishWorktree(started, (m) => said.push(m), () => {}, async () => [], home);
  assert.deepEqual(kept, { removed: false });
  assert.deepEqual(said, [`worktree ${started.worktree.name} is kept as the run left it (its pointer files not put back, not removed): a run going on in ${outer} (session ${record.id}, pid ${process.pid}), whose agent can write where it lies; once that run ends, check it with stashbase agent worktrees list`]);
  assert.equal(statSync(started.worktree.path).isDirectory(), true);
  rmSync(join(home, 'sessions', `${record.id}.json`));
  assert.deepEqual(await finishWorktree(started, () => {}, () => {}, async () => [], home), { removed: true });
});
