// What a repository of yours in the tree would act on or hide later (lib/git/hidden-state.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { hiddenState } from '../../lib/git/hidden-state.js';

const all = () => true;

test("git init's own exclude (comments alone) says nothing; a line in it, attributes, a paused rebase, a hidden file that is there: each named", () => {
  const root = mkdtempSync(join(tmpdir(), 'hidden-'));
  const git = (...a: string[]) => spawnSync('git', ['-C', root, '-c', 'user.name=u', '-c', 'user.email=u@x', ...a], { encoding: 'utf8' });
  git('init', '-q');
  writeFileSync(join(root, 'a.py'), 'x\n');
  git('add', 'a.py');
  git('commit', '-qm', 'one');
  const g = join(root, '.git');
  assert.equal(hiddenState(g, root, all), null, 'a fresh repository: nothing');
  appendFileSync(join(g, 'info', 'exclude'), 'helper.py\n');
  assert.match(hiddenState(g, root, all) ?? '', /^info\/exclude \(what your git ignores/);
  assert.equal(hiddenState(g, root, (p) => !p.endsWith('exclude')), null, 'not written in the run: not judged');
  git('update-index', '--skip-worktree', 'a.py');
  assert.match(hiddenState(g, root, (p) => p.endsWith('index')) ?? '', /^index \(it hides a\.py from git status/);
  // A sparse checkout's file that is not there: nothing hidden.
  rmSync(join(root, 'a.py'));
  assert.equal(hiddenState(g, root, (p) => p.endsWith('index')), null);
  spawnSync('mkdir', [join(g, 'rebase-merge')]);
  assert.match(hiddenState(g, root, all) ?? '', /^rebase-merge \(work your git resumes with --continue/);
  rmSync(root, { recursive: true });
});
