// core.worktree as stashbase reads it from a config the agent may have written
// (lib/git/run-git-dir.ts coreWorktree): it must never give an answer git does
// not, only "cannot tell" (undefined), which the callers take as the worst.
// Found in review: `[core] worktree = /x` (a key on the header's own line),
// which git reads and the old reader passed by. Each text is held against git.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { coreWorktree } from '../../lib/git/run-git-dir.js';

const CASES: Array<[string, string | null | undefined]> = [
  ['[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ../../../sub\n', '../../../sub'],
  ['[core]\n\tbare = false\n', null],
  ['[extensions]\n\tworktreeConfig = true\n[core]\n\tbare = false\n', null],
  ['[core]\n\tworktree = /a\n\tworktree = "/b"\n', '/b'],
  ['[CORE]\n\tWorkTree = /c\n', '/c'],
  // Found in review: the key on the header's line.
  ['[core]\n\tworktree = /tmp/in\n[core] worktree = /tmp/outside\n', undefined],
  // (Not named) the same in other spellings git reads.
  ['[core]\n\tworktree = /tmp/in\n[core]worktree=/tmp/outside\n', undefined],
  ['[core]\n\tbare = false \\\n\n\tworktree = /tmp/in\n', '/tmp/in'],
  ['[core]\n\tworktree = /tmp/in\\\nside\n', undefined],
  ['[core]\n\tworktree = "/tmp/a\\"b"\n', undefined],
  ['[core]\n\tworktree = /tmp/in ; comment\n', undefined],
  ['[core "x"]\n\tworktree = /tmp/sub\n', undefined],
  ['[include]\n\tpath = other.cfg\n[core]\n\tworktree = /tmp/in\n', undefined],
  ['[includeIf "gitdir:/"]\n\tpath = other.cfg\n', undefined],
  ['[remote "origin"]\n\turl = /srv/worktree.git\n', null],
  // From the next review: whitespace git reads otherwise than JavaScript's \s.
  ['[core]\n\tworktree = /tmp/home\tx\n', undefined],
  ['[core]\n\tworktree = /tmp/home\u00a0\n', undefined],
  ['[core]\n\tworktree = /tmp/home\v\n', undefined],
  ['[core]\n\f\tworktree = /tmp/in\n', undefined],
];

test('core.worktree: the value git reads, or "cannot tell", never another value', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stashbase-corewt-'));
  try {
    writeFileSync(join(dir, 'other.cfg'), '[core]\n\tworktree = /tmp/included\n');
    for (const [i, [text, expected]] of CASES.entries()) {
      const f = join(dir, `c${i}`);
      writeFileSync(f, text);
      const r = spawnSync('git', ['config', '--file', f, '--includes', '--get', 'core.worktree'], { encoding: 'utf8' });
      const gits = r.status === 0 ? r.stdout.replace(/\n$/, '') : null;
      const ours = coreWorktree(text);
      assert.equal(ours, expected, `case ${i}: ${JSON.stringify(text)} (git reads ${JSON.stringify(gits)})`);
      if (ours !== undefined) assert.equal(ours, gits, `case ${i}: ${JSON.stringify(text)}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
