// What has git show another object under a name you trust, in a repository the run wrote (lib/git/forged-objects.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { dropCaches, forgedObject, substitutes } from '../../lib/git/forged-objects.js';

function repo(): { root: string; git: string } {
  const root = mkdtempSync(join(tmpdir(), 'forged-'));
  spawnSync('git', ['init', '-q', root]);
  spawnSync('git', ['-C', root, '-c', 'user.name=u', '-c', 'user.email=u@x', 'commit', '-q', '--allow-empty', '-m', 'one']);
  return { root, git: join(root, '.git') };
}
const all = () => true;
const none = () => false;

test('a replace ref the run wrote (loose, in an old folder; in packed-refs), info/grafts, an alternates file: named; ones it did not write: not', () => {
  const { root, git } = repo();
  mkdirSync(join(git, 'refs', 'replace'), { recursive: true });
  const head = spawnSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
  writeFileSync(join(git, 'refs', 'replace', head), `${head}\n`);
  const only = (p: string) => (q: string) => q === p;
  assert.equal(substitutes(git, only(join(git, 'refs', 'replace', head))), `refs/replace/${head} (a replace ref: git shows another object in place of the one it names)`);
  assert.equal(substitutes(git, none), null);
  writeFileSync(join(git, 'packed-refs'), `# pack-refs with: peeled\n${head} refs/replace/${head}\n`);
  assert.match(substitutes(git, only(join(git, 'packed-refs'))) ?? '', /^packed-refs \(it holds replace refs/);
  for (const rel of ['info/grafts', 'objects/info/alternates']) {
    writeFileSync(join(git, rel), 'x\n');
    assert.equal(substitutes(git, only(join(git, rel))), `${rel} (git reads other objects in place of yours through it)`);
  }
  rmSync(root, { recursive: true });
});

test('the caches the run wrote are removed (git works without them), others kept; objects as named pass', () => {
  const { root, git } = repo();
  spawnSync('git', ['-C', root, 'commit-graph', 'write', '--reachable']);
  assert.equal(existsSync(join(git, 'objects', 'info', 'commit-graph')), true);
  assert.deepEqual(dropCaches(git, none), { removed: [], left: [] });
  assert.deepEqual(dropCaches(git, all), { removed: ['objects/info/commit-graph'], left: [] });
  assert.equal(spawnSync('git', ['-C', root, 'log', '--oneline'], { encoding: 'utf8' }).status, 0);
  assert.equal(forgedObject('git', git, all), null, 'every object as named');
  rmSync(root, { recursive: true });
});
