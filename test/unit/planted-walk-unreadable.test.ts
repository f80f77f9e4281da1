// The end-of-run walk (lib/git/planted-repos.ts) as a user who is not root: a
// folder of yours closed to you (the agent writes as you, and can chmod its
// own) hides what lies below, so the walk fails, said, rather than pass it by;
// another user's folder you cannot read is not the agent's and is passed by.
// Control: the same tree open, the planted pointer is found. Real processes
// under setpriv as nobody; needs root to set them up.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { needsRoot } from '../helpers.js';

const NOBODY = 65534;
const walker = new URL('../../lib/git/planted-repos.js', import.meta.url).pathname;
const walk = (root: string) => spawnSync('setpriv', ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', process.execPath, '--input-type=module', '-e',
  `import(${JSON.stringify(walker)}).then((m) => { try { console.log(JSON.stringify(m.dotGitsUnder(process.argv[1]).found)); } catch (e) { console.log('threw ' + e.message); } })`, root], { encoding: 'utf8' });

test('a folder of yours closed to you fails the walk, named; another user\'s is passed by; open, the pointer below is found', needsRoot('the walk as nobody needs its folders made for two users'), () => {
  const root = mkdtempSync('/tmp/sb-walk-');
  try {
    const deep = join(root, 'a', 'b');
    mkdirSync(deep, { recursive: true });
    writeFileSync(join(deep, '.git'), 'gitdir: /elsewhere/.git\n');
    for (const p of [root, join(root, 'a'), deep, join(deep, '.git')]) chownSync(p, NOBODY, NOBODY);
    // Control: open, the planted pointer is found.
    assert.equal(walk(root).stdout.trim(), JSON.stringify([join(deep, '.git')]));
    chmodSync(join(root, 'a'), 0o111);
    assert.equal(walk(root).stdout.trim(), `threw ${join(root, 'a')} cannot be read (EACCES), so what lies below it is unchecked`);
    // Another user's (root's) folder closed to nobody: not the agent's doing, passed by.
    chownSync(join(root, 'a'), 0, 0);
    chmodSync(join(root, 'a'), 0o700);
    assert.equal(walk(root).stdout.trim(), '[]');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
