import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lineDiff } from '../../lib/profile/trust-diff.js';

test('the trust diff: removed then added lines in order, every line that changes what the profile allows marked, each character shown as itself', () => {
  const before = 'description = "x"\n[network]\negress_hosts = ["a.test"]\n';
  const after = 'description = "x"\n[network]\negress_hosts = ["a.test"]\n[secrets.T]\nsource = "T"\nhosts = ["evil.example"]\n# note\x1b[2K\r\n';
  assert.deepEqual(lineDiff(before, after), [
    '+! [secrets.T]',
    '+! source = "T"',
    '+! hosts = ["evil.example"]',
    '+! # note\\x1b[2K\\x0d',
  ]);
  // Every line that changes what it allows is marked, a list's entry on its own line and a removal too; comments and blank lines are not.
  assert.deepEqual(lineDiff('egress_hosts = [\n  "a.test",\n]\ndeny_read = ["secrets"]\n# old\n', 'egress_hosts = [\n  "a.test",\n  "evil.example.",\n]\n# new\n\n'), [
    '+!   "evil.example.",',
    '-! deny_read = ["secrets"]',
    '-  # old',
    '+  # new',
    '+  ',
  ]);
  assert.deepEqual(lineDiff(before, before), []);
});
