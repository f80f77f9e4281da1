// Folders for a run's Unix sockets: the socket's path must fit a socket
// address (108 bytes), measured in bytes.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { socketDir } from '../../lib/util/socket-dir.js';

test("(review, round 34) a preferred folder whose path is short in characters but long in bytes (40 CJK characters) is not used: a private short one is; control: one as many characters long in ASCII is", () => {
  const base = mkdtempSync(join(tmpdir(), 'sd-'));
  try {
    const wide = join(base, '中'.repeat(30));
    const narrow = join(base, 'x'.repeat(30));
    assert.ok(join(wide, 'proxy.sock').length <= 100 && Buffer.byteLength(join(wide, 'proxy.sock')) > 100, 'the case: fits in characters, not in bytes');
    const got = socketDir(wide, 'sd-test-');
    assert.notEqual(got, wide);
    assert.ok(Buffer.byteLength(join(got, 'proxy.sock')) <= 100);
    assert.equal(existsSync(wide), false);
    rmSync(got, { recursive: true, force: true });
    // Control: the same length in ASCII fits, and is used.
    assert.equal(socketDir(narrow, 'sd-test-'), narrow);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
