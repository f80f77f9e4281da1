// The index reader against indexes real git writes: versions 2, 3 and 4,
// SHA-1 and SHA-256, long paths; a split index is left to git.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { gitlinksOfIndex, hiddenPathsOfIndex } from '../../lib/git/git-index.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function repo(format: 'sha1' | 'sha256'): { dir: string; git: (...a: string[]) => string } {
  const dir = mkdtempSync(join(tmpdir(), 'stashbase-index-'));
  dirs.push(dir);
  const git = (...a: string[]) => {
    const r = spawnSync('git', ['-C', dir, ...a], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1' } });
    assert.equal(r.status, 0, `git ${a.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  git('init', '-q', `--object-format=${format}`);
  const zero = format === 'sha1' ? '1'.repeat(40) : '1'.repeat(64);
  writeFileSync(join(dir, 'a.txt'), 'a\n');
  writeFileSync(join(dir, 'b.txt'), 'b\n');
  git('add', 'a.txt', 'b.txt');
  for (const p of ['sub/one', 'sub/two', `deep/${'x'.repeat(300)}/mod`, 'zz']) git('update-index', '--add', '--cacheinfo', `160000,${zero},${p}`);
  return { dir, git };
}

const expected = ['deep/' + 'x'.repeat(300) + '/mod', 'sub/one', 'sub/two', 'zz'];

for (const format of ['sha1', 'sha256'] as const) {
  test(`gitlinks of a ${format} index, versions 2, 3 and 4, as git lists them`, () => {
    const { dir, git } = repo(format);
    const oid = format === 'sha1' ? 20 : 32;
    writeFileSync(join(dir, 'c.txt'), 'c\n');
    const fromGit = () => git('ls-files', '--stage').split('\n').filter((l) => l.startsWith('160000 ')).map((l) => l.split('\t')[1]);
    for (const version of ['2', '3', '4']) {
      git('update-index', '--index-version', version);
      if (version === '3') git('add', '--intent-to-add', 'c.txt'); // an entry with extended flags
      const buf = readFileSync(join(dir, '.git', 'index'));
      assert.equal(buf.readUInt32BE(4), Number(version));
      assert.deepEqual(gitlinksOfIndex(buf, oid), expected, `version ${version}`);
      assert.deepEqual(gitlinksOfIndex(buf, oid), fromGit());
    }
  });
}

test('a split index, or something that is not an index, is left to git (null)', () => {
  const { dir, git } = repo('sha1');
  git('update-index', '--split-index');
  assert.equal(gitlinksOfIndex(readFileSync(join(dir, '.git', 'index'))), null);
  assert.equal(gitlinksOfIndex(Buffer.from('not an index at all')), null);
  assert.equal(gitlinksOfIndex(Buffer.from('DIRC\0\0\0\x07\0\0\0\0', 'latin1')), null);
});

for (const format of ['sha1', 'sha256'] as const) {
  test(`paths hidden from git status in a ${format} index (assume-unchanged, skip-worktree), versions 2 to 4, as git lists them`, () => {
    const { dir, git } = repo(format);
    for (const version of ['2', '3', '4']) {
      git('update-index', '--index-version', version);
      git('update-index', '--no-assume-unchanged', 'a.txt');
      if (version !== '2') git('update-index', '--no-skip-worktree', 'b.txt');
      assert.deepEqual(hiddenPathsOfIndex(readFileSync(join(dir, '.git', 'index'))), [], `version ${version}, none`);
      git('update-index', '--assume-unchanged', 'a.txt');
      // skip-worktree is an extended flag: git itself moves the index to version 3 for it.
      git('update-index', '--skip-worktree', 'b.txt');
      const buf = readFileSync(join(dir, '.git', 'index'));
      const fromGit = git('ls-files', '-v').split('\n').filter((l) => /^[a-zS] /.test(l)).map((l) => l.slice(2)).sort();
      assert.deepEqual(hiddenPathsOfIndex(buf), ['a.txt', 'b.txt'], `version ${version}`);
      assert.deepEqual(hiddenPathsOfIndex(buf), fromGit);
    }
    assert.equal(hiddenPathsOfIndex(Buffer.from('DIRC\0\0\0\x02\0\0\0\x05garbage'.padEnd(60, 'x'), 'latin1')), null, 'a file that is not a whole index');
  });
}
