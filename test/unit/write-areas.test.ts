// What the native sandbox shows again under its private temp folders.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkedWriteAreas, reexposed } from '../../lib/native/write-areas.js';

test("under a private /tmp, the home and stashbase's own files (a clone in /tmp) are shown again read-only, once, unless a bind shows them", () => {
  const binds = [{ src: '/tmp/proj', dest: '/tmp/proj', ro: false }];
  assert.deepEqual(reexposed(['/tmp', '/var/tmp'], ['/tmp/h', '/tmp/clone', '/tmp/clone/node', '/usr/local', '/tmp/proj/sub', '/tmp'], binds), [
    { src: '/tmp/h', dest: '/tmp/h', ro: true },
    { src: '/tmp/clone', dest: '/tmp/clone', ro: true },
  ]);
  assert.deepEqual(reexposed([], ['/tmp/clone'], []), []);
});

test('(review) where the end-of-run check counts writes outside the tree: a pattern whose walk an agent can stop at its bound (filling its own folder, met first) counts all below its fixed part; otherwise what it matches, plain paths and the agents\' state folders', () => {
  const root = mkdtempSync(join(tmpdir(), 'stashbase-areas-'));
  try {
    mkdirSync(join(root, 'api', 'node_modules'), { recursive: true });
    mkdirSync(join(root, 'web'), { recursive: true });
    const cwd = join(root, 'web');
    const entries = ['../**/node_modules', '~/.cache/pip'];
    assert.deepEqual(checkedWriteAreas(entries, '/home/u', cwd, ['/home/u/.claude'], 20), ['/home/u/.claude', join(root, 'api', 'node_modules'), '/home/u/.cache/pip']);
    // The agent's folder, walked first (names are read in order, the last first), past the bound.
    mkdirSync(join(root, 'zflood'));
    for (let i = 0; i < 30; i++) writeFileSync(join(root, 'zflood', `f${i}`), '');
    assert.deepEqual(checkedWriteAreas(entries, '/home/u', cwd, [], 20), [root, '/home/u/.cache/pip']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
