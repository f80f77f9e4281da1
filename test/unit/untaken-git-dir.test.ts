// Why a checkout's .git folder gets no git directory of the run's own (lib/git/run-git-dir.ts untakenGitDirWhy): each
// reason git itself would not stop at, named; checkoutGit takes none of them.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, appendFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkoutGit, untakenGitDirWhy } from '../../lib/git/run-git-dir.js';

function repo(): { root: string; dotGit: string } {
  const root = mkdtempSync(join(tmpdir(), 'untaken-'));
  spawnSync('git', ['init', '-q', root]);
  return { root, dotGit: join(root, '.git') };
}

test('a .git it takes: its own reason is none of the others', () => {
  const { root, dotGit } = repo();
  assert.equal('gitDir' in (checkoutGit(root) ?? {}), true);
  assert.equal(untakenGitDirWhy(dotGit), 'is not a git directory stashbase reads');
  rmSync(root, { recursive: true });
});

const cases: Array<[string, (dotGit: string) => void, string]> = [
  ['objects linked elsewhere', (g) => { renameSync(join(g, 'objects'), `${g}-objects`); symlinkSync(`${g}-objects`, join(g, 'objects')); }, 'has objects as a symbolic link'],
  ['refs linked elsewhere', (g) => { renameSync(join(g, 'refs'), `${g}-refs`); symlinkSync(`${g}-refs`, join(g, 'refs')); }, 'has refs as a symbolic link'],
  ['HEAD a link', (g) => { renameSync(join(g, 'HEAD'), `${g}-HEAD`); symlinkSync(`${g}-HEAD`, join(g, 'HEAD')); }, 'has HEAD as a symbolic link'],
  ['HEAD a folder', (g) => { rmSync(join(g, 'HEAD')); mkdirSync(join(g, 'HEAD')); }, 'has HEAD as no file'],
  ['no refs', (g) => rmSync(join(g, 'refs'), { recursive: true }), 'has no refs'],
  ['a commondir', (g) => writeFileSync(join(g, 'commondir'), '.\n'), "has a commondir, which only a linked worktree's admin folder has"],
];
for (const [what, make, why] of cases) {
  test(`${what}: not taken, and said why`, () => {
    const { root, dotGit } = repo();
    make(dotGit);
    assert.equal(checkoutGit(root), null);
    assert.equal(untakenGitDirWhy(dotGit), why);
    rmSync(root, { recursive: true });
    rmSync(`${dotGit}-objects`, { recursive: true, force: true });
    rmSync(`${dotGit}-refs`, { recursive: true, force: true });
    rmSync(`${dotGit}-HEAD`, { force: true });
  });
}

test('refs in the reftable format: taken as a checkout, and said why the run makes none of its own', () => {
  const { root, dotGit } = repo();
  appendFileSync(join(dotGit, 'config'), '[extensions]\n\trefStorage = reftable\n');
  assert.equal(untakenGitDirWhy(dotGit), 'keeps its refs in the reftable format, which stashbase does not import');
  rmSync(root, { recursive: true });
});
