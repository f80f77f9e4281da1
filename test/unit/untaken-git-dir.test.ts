// Why a checkout's .git folder gets no git directory of the run's own (lib/git/run-git-dir.ts untakenGitDirWhy): each
// reason git itself would not stop at, named; checkoutGit takes none of them.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, appendFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { alternateStores, checkoutGit, moduleGitDirs, untakenGitDirWhy, untakenGitState } from '../../lib/git/run-git-dir.js';

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

test('a .git file read as git reads it (review): two newlines at its end, or padded past 4 KiB with them, still names its git directory', () => {
  for (const tail of ['\n\n', '\r\n\r\n', `${'\n'.repeat(5000)}`]) {
    const { root } = repo();
    spawnSync('git', ['init', '-q', '--separate-git-dir', join(root, '.gd'), root]);
    writeFileSync(join(root, '.git'), `gitdir: ${join(root, '.gd')}${tail}`);
    assert.equal(spawnSync('git', ['-C', root, 'rev-parse', '--absolute-git-dir'], { encoding: 'utf8' }).stdout, `${join(root, '.gd')}\n`, 'git follows it');
    assert.deepEqual(checkoutGit(root), { gitDir: join(root, '.gd'), admin: null, pointer: join(root, '.git') }, JSON.stringify(tail.slice(0, 4)));
    rmSync(root, { recursive: true });
  }
});

test('what a run that takes none keeps read-only: the .git entry, the git directory a pointer names, its commondir, and where every link in them leads', () => {
  const { root, dotGit } = repo();
  renameSync(join(dotGit, 'refs'), join(root, 'gitrefs'));
  symlinkSync('../gitrefs', join(dotGit, 'refs'));
  mkdirSync(join(root, 'logs-elsewhere'));
  rmSync(join(dotGit, 'info'), { recursive: true, force: true });
  symlinkSync(join(root, 'logs-elsewhere'), join(dotGit, 'info'));
  assert.deepEqual(untakenGitState(root).sort(), [dotGit, join(root, 'gitrefs'), join(root, 'logs-elsewhere')].sort());
  // A pointer to it instead: the pointer, and the same.
  renameSync(dotGit, join(root, '.gd'));
  writeFileSync(dotGit, `gitdir: .gd\n`);
  assert.deepEqual(untakenGitState(root).sort(), [dotGit, join(root, '.gd'), join(root, 'gitrefs'), join(root, 'logs-elsewhere')].sort());
  rmSync(root, { recursive: true });
});

test('a link leading nowhere, or a hard link outside the objects, in such a git directory refuses the run (where it leads, or its other name, may be the agent\'s)', () => {
  const { root, dotGit } = repo();
  symlinkSync(join(root, 'not-yet'), join(dotGit, 'COMMIT_EDITMSG'));
  symlinkSync(join(root, 'elsewhere'), join(dotGit, 'objects-link'));
  assert.throws(() => untakenGitState(root), /\.git holds (COMMIT_EDITMSG|objects-link), a symbolic link that leads nowhere: git would write where it leads/);
  rmSync(join(dotGit, 'COMMIT_EDITMSG'));
  rmSync(join(dotGit, 'objects-link'));
  writeFileSync(join(root, 'tree-file'), 'x');
  spawnSync('ln', [join(root, 'tree-file'), join(dotGit, 'description2')]);
  assert.throws(() => untakenGitState(root), /\.git holds description2 \(a hard link: the same file has another name, which the agent may be able to write\); nothing was run/);
  rmSync(root, { recursive: true });
});

test("(review) a .git file's path walked as the kernel walks it: lnk/../gd is gd beside where lnk leads, not beside lnk; git uses it, the run takes none, and keeps that one read-only", () => {
  const { root } = repo();
  rmSync(join(root, '.git'), { recursive: true });
  mkdirSync(join(root, 'sub', 'deep'), { recursive: true });
  spawnSync('git', ['init', '-q', '--separate-git-dir', join(root, 'sub', 'gd'), join(root, 'w')]);
  symlinkSync('sub/deep', join(root, 'lnk'));
  writeFileSync(join(root, '.git'), 'gitdir: lnk/../gd\n');
  assert.equal(spawnSync('git', ['-C', root, 'rev-parse', '--absolute-git-dir'], { encoding: 'utf8' }).stdout, `${join(root, 'sub', 'gd')}\n`, 'git uses sub/gd');
  assert.deepEqual(checkoutGit(root), { pointer: join(root, '.git') });
  assert.ok(untakenGitState(root).includes(join(root, 'sub', 'gd')), untakenGitState(root).join(' '));
  rmSync(root, { recursive: true });
});

test('(review) the stores objects/info/alternates names, and theirs in turn, as git reads them (relative to objects/, comments skipped); one in quotes refuses the run', () => {
  const { root, dotGit } = repo();
  mkdirSync(join(root, 'a', 'info'), { recursive: true });
  mkdirSync(join(root, 'b'), { recursive: true });
  writeFileSync(join(dotGit, 'objects', 'info', 'alternates'), `# mine\n../../a\n`);
  writeFileSync(join(root, 'a', 'info', 'alternates'), `${join(root, 'b')}\n`);
  assert.deepEqual(alternateStores(dotGit), [join(root, 'a'), join(root, 'b')]);
  writeFileSync(join(dotGit, 'objects', 'info', 'alternates'), `"${join(root, 'a')}"\n`);
  assert.throws(() => alternateStores(dotGit), /names a store in quotes, which stashbase does not read as git does; nothing was run/);
  rmSync(root, { recursive: true });
});

test("(second review) the git directories kept for submodules (modules/<name>, a name with slashes, theirs in turn), whose alternates your submodules' git reads as well", () => {
  const { root, dotGit } = repo();
  for (const m of ['modules/a', 'modules/x/y', 'modules/a/modules/b']) mkdirSync(join(dotGit, m, 'objects', 'info'), { recursive: true });
  assert.deepEqual(moduleGitDirs(dotGit).sort(), [join(dotGit, 'modules/a'), join(dotGit, 'modules/a/modules/b'), join(dotGit, 'modules/x/y')].sort());
  mkdirSync(join(root, 'refstore'));
  writeFileSync(join(dotGit, 'modules', 'x', 'y', 'objects', 'info', 'alternates'), `${join(root, 'refstore')}\n`);
  assert.deepEqual([dotGit, ...moduleGitDirs(dotGit)].flatMap(alternateStores), [join(root, 'refstore')]);
  rmSync(root, { recursive: true });
});
