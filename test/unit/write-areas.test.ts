// What the native sandbox shows again under its private temp folders.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reexposed } from '../../lib/native/write-areas.js';

test("under a private /tmp, the home and stashbase's own files (a clone in /tmp) are shown again read-only, once, unless a bind shows them", () => {
  const binds = [{ src: '/tmp/proj', dest: '/tmp/proj', ro: false }];
  assert.deepEqual(reexposed(['/tmp', '/var/tmp'], ['/tmp/h', '/tmp/clone', '/tmp/clone/node', '/usr/local', '/tmp/proj/sub', '/tmp'], binds), [
    { src: '/tmp/h', dest: '/tmp/h', ro: true },
    { src: '/tmp/clone', dest: '/tmp/clone', ro: true },
  ]);
  assert.deepEqual(reexposed([], ['/tmp/clone'], []), []);
});
