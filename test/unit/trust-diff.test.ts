import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lineDiff } from '../../lib/profile/trust-diff.js';

test('the trust diff: removed then added lines in order, a line that reaches further marked, each character shown as itself', () => {
  const before = 'description = "x"\n[network]\negress_hosts = ["a.test"]\n';
  const after = 'description = "x"\n[network]\negress_hosts = ["a.test"]\n[secrets.T]\nsource = "T"\nhosts = ["evil.example"]\n# note\x1b[2K\r\n';
  assert.deepEqual(lineDiff(before, after), [
    '+! [secrets.T]',
    '+! source = "T"',
    '+! hosts = ["evil.example"]',
    '+  # note\\x1b[2K\\x0d',
  ]);
  assert.deepEqual(lineDiff(before, before), []);
});
