// Your index after an import moved HEAD without the sandbox's index
// (lib/git/index-follow.ts), against real git: the plan is written with git
// update-index as the import writes it, and git status judges the result.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { followHead, treeHolds } from '../../lib/git/index-follow.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const ENV = { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@b', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@b' };

function repo(format: 'sha1' | 'sha256' = 'sha1') {
  const dir = mkdtempSync(join(tmpdir(), 'stashbase-follow-'));
  dirs.push(dir);
  const git = (args: string[], input?: string) => {
    const r = spawnSync('git', ['-C', dir, ...args], { encoding: 'utf8', env: { ...ENV, HOME: dir }, ...(input !== undefined ? { input } : {}) });
    assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  git(['init', '-q', `--object-format=${format}`]);
  const write = (path: string, text: string) => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  return { dir, git, write };
}

/**
 * The agent's commit: made from a scratch index (as the sandbox's own git directory would), HEAD moved to it, your
 * index and working tree left as the test sets them. Returns the plan followHead makes.
 */
function commitAsAgent(r: ReturnType<typeof repo>, entries: string, format: 'sha1' | 'sha256' = 'sha1') {
  const before = r.git(['rev-parse', 'HEAD']).trim();
  const scratch = join(r.dir, '.git', 'agent-index');
  const env = { ...ENV, HOME: r.dir, GIT_INDEX_FILE: scratch };
  const g = (args: string[], input?: string) => {
    const x = spawnSync('git', ['-C', r.dir, ...args], { encoding: 'utf8', env, ...(input !== undefined ? { input } : {}) });
    assert.equal(x.status, 0, `git ${args.join(' ')}: ${x.stderr}`);
    return x.stdout;
  };
  g(['read-tree', 'HEAD']);
  g(['update-index', '-z', '--index-info'], entries);
  const tree = g(['write-tree']).trim();
  const commit = g(['commit-tree', tree, '-p', before, '-m', 'agent']).trim();
  r.git(['update-ref', 'HEAD', commit]);
  rmSync(scratch);
  const plan = followHead(r.git(['ls-files', '-s', '-t', '-z']), r.git(['diff-tree', '-r', '-z', '--no-renames', before, commit]), treeHolds(r.dir, format));
  return plan;
}

const blob = (r: ReturnType<typeof repo>, text: string) => r.git(['hash-object', '-w', '--stdin'], text).trim();
const status = (r: ReturnType<typeof repo>) => r.git(['status', '--porcelain=v1', '-uno']).split('\n').filter(Boolean).sort();

test("the paths the agent's commits changed follow the new HEAD where your tree holds its files; a config the run kept from the agent stays as your tree holds it; what you staged yourself is kept", () => {
  const r = repo();
  r.write('a.txt', 'a\n');
  r.write('gone.txt', 'gone\n');
  r.write('.npmrc', 'registry=mine\n');
  r.write('b.txt', 'b\n');
  r.write('run.sh', 'echo hi\n');
  r.git(['add', '.']);
  r.git(['commit', '-qm', 'start']);
  // Yours: b.txt staged with other content before the run.
  r.write('b.txt', 'b mine\n');
  r.git(['add', 'b.txt']);
  // The agent's work in the tree: a.txt changed, new.txt added, gone.txt removed; .npmrc (read-only) and run.sh's mode it could not change.
  r.write('a.txt', 'a agent\n');
  r.write('new.txt', 'new\n');
  rmSync(join(r.dir, 'gone.txt'));
  const z = '0'.repeat(40);
  const plan = commitAsAgent(r, [
    `100644 ${blob(r, 'a agent\n')}\ta.txt`, `100644 ${blob(r, 'new\n')}\tnew.txt`, `0 ${z}\tgone.txt`,
    `100644 ${blob(r, 'script-shell=/tmp/evil\n')}\t.npmrc`, `100644 ${blob(r, 'b agent\n')}\tb.txt`,
    // Not in the list of the review: a mode change alone, on a file the tree keeps as it was.
    `100755 ${blob(r, 'echo hi\n')}\trun.sh`,
  ].map((l) => `${l}\0`).join(''));
  assert.ok(!('why' in plan), JSON.stringify(plan));
  if ('why' in plan) return;
  assert.deepEqual({ moved: plan.moved, kept: plan.kept, asTree: plan.asTree.sort() }, { moved: 3, kept: ['b.txt'], asTree: ['.npmrc', 'run.sh'] });
  // The control: your index as it was shows the agent's whole commit staged in reverse.
  assert.deepEqual(status(r), ['AD gone.txt', 'D  new.txt', 'M  .npmrc', 'M  b.txt', 'M  run.sh', 'MM a.txt']);
  r.git(['update-index', '-z', '--index-info'], plan.input);
  // Afterwards: the agent's changes are HEAD's and your tree's; the kept config and the mode show reversed, as the tree holds them; your b.txt stays staged.
  assert.deepEqual(status(r), ['M  .npmrc', 'M  b.txt', 'M  run.sh']);
  assert.equal(r.git(['show', ':b.txt']), 'b mine\n');
  assert.equal(r.git(['show', ':.npmrc']), 'registry=mine\n');
});

test('links and the sha256 format: a link the tree holds follows; a link the tree does not is kept as the tree holds it', () => {
  const r = repo('sha256');
  r.write('t1', 'x\n');
  symlinkSync('t1', join(r.dir, 'l1'));
  symlinkSync('t1', join(r.dir, 'l2'));
  r.git(['add', '.']);
  r.git(['commit', '-qm', 'start']);
  rmSync(join(r.dir, 'l1'));
  symlinkSync('elsewhere', join(r.dir, 'l1'));
  const linkBlob = (target: string) => r.git(['hash-object', '-w', '--stdin'], target).trim();
  const plan = commitAsAgent(r, `120000 ${linkBlob('elsewhere')}\tl1\x00120000 ${linkBlob('/etc/passwd')}\tl2\x00`, 'sha256');
  assert.ok(!('why' in plan));
  if ('why' in plan) return;
  assert.deepEqual({ moved: plan.moved, kept: plan.kept, asTree: plan.asTree }, { moved: 1, kept: [], asTree: ['l2'] });
  r.git(['update-index', '-z', '--index-info'], plan.input);
  assert.deepEqual(status(r), ['M  l2']);
});

test('names with a newline and a tab are written back whole (-z)', () => {
  const r = repo();
  r.write('x', 'x\n');
  r.git(['add', '.']);
  r.git(['commit', '-qm', 'start']);
  const name = 'odd\nname\there';
  r.write(name, 'agent\n');
  const plan = commitAsAgent(r, `100644 ${blob(r, 'agent\n')}\t${name}\0`);
  assert.ok(!('why' in plan));
  if ('why' in plan) return;
  r.git(['update-index', '-z', '--index-info'], plan.input);
  assert.deepEqual(status(r), []);
});

test('nothing is written when a file the commits add sits where your index has a folder of files you staged, or git listings cannot be read', () => {
  const r = repo();
  r.write('x', 'x\n');
  r.git(['add', '.']);
  r.git(['commit', '-qm', 'start']);
  r.write('d/mine', 'mine\n');
  r.git(['add', 'd/mine']);
  chmodSync(join(r.dir, 'd'), 0o755);
  const plan = commitAsAgent(r, `100644 ${blob(r, 'agent\n')}\td\0`);
  assert.deepEqual(plan, { why: 'a file the commits add sits where your index has a folder of files' });
  assert.deepEqual(followHead('garbage', '', () => false), { why: "git's listing of it could not be read" });
  // (Review, round 30) A sparse checkout is left alone.
  assert.deepEqual(followHead(`S 100644 ${'1'.repeat(40)} 0\tx\0`, '', () => false), { why: 'your checkout is sparse (entries marked skip-worktree), which stashbase does not rewrite' });
  assert.deepEqual(followHead('', ':100644 100644 abc', () => false), { why: "git's listing of it could not be read" });
});

test("(review, round 30) a file that runs code, or a submodule's commit, follows only where your tree holds the new one: your own untracked .npmrc (neither side) and a submodule moved to the agent's commit keep your index; control: an ordinary file in the same state follows", () => {
  const r = repo();
  r.write('a.txt', 'a\n');
  r.write('notes.txt', 'n\n');
  r.git(['add', '.']);
  r.git(['update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},sub`]);
  r.git(['commit', '-qm', 'start']);
  // Yours, in the tree: an untracked .npmrc, and an edit of notes.txt you did not stage.
  r.write('.npmrc', 'registry=https://mine.example/\n');
  r.write('notes.txt', 'my edit\n');
  const plan = commitAsAgent(r, [
    `100644 ${blob(r, 'script-shell=/tmp/evil.sh\n')}\t.npmrc`, `100644 ${blob(r, 'agent\n')}\tnotes.txt`, `160000 ${'2'.repeat(40)}\tsub`,
  ].map((l) => `${l}\0`).join(''));
  assert.ok(!('why' in plan), JSON.stringify(plan));
  if ('why' in plan) return;
  // Without the guard (what the first version did), the .npmrc follows too.
  const unguarded = followHead(r.git(['ls-files', '-s', '-t', '-z']), r.git(['diff-tree', '-r', '-z', '--no-renames', 'HEAD~1', 'HEAD']), treeHolds(r.dir, 'sha1'));
  assert.ok(!('why' in unguarded) && unguarded.asTree.includes('sub') && !unguarded.asTree.includes('.npmrc'), JSON.stringify(unguarded));
  const guarded = followHead(r.git(['ls-files', '-s', '-t', '-z']), r.git(['diff-tree', '-r', '-z', '--no-renames', 'HEAD~1', 'HEAD']), treeHolds(r.dir, 'sha1'), (p) => p === '.npmrc');
  assert.ok(!('why' in guarded));
  if ('why' in guarded) return;
  assert.deepEqual({ moved: guarded.moved, asTree: guarded.asTree.sort(), kept: guarded.kept }, { moved: 1, asTree: ['.npmrc', 'sub'], kept: [] });
  r.git(['update-index', '-z', '--index-info'], guarded.input);
  // git restore . then writes nothing of the agent's over your .npmrc (the control: notes.txt, followed, takes HEAD's).
  r.git(['restore', '.']);
  assert.equal(readFileSync(join(r.dir, '.npmrc'), 'utf8'), 'registry=https://mine.example/\n');
  assert.equal(readFileSync(join(r.dir, 'notes.txt'), 'utf8'), 'agent\n');
  assert.equal(r.git(['ls-files', '-s', 'sub']).split(' ')[1], '1'.repeat(40));
});
