// A name for stashbase to move something aside to, where nothing is.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { freeName } from '../../lib/paths/free-name.js';

test('the first name free: the plain one, then numbered, each ending in the suffix', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fn-'));
  try {
    const p = join(dir, '.envrc');
    assert.deepEqual(freeName(p, '.q'), { to: `${p}.q` });
    mkdirSync(`${p}.q`);
    writeFileSync(`${p}-2.q`, '');
    assert.deepEqual(freeName(p, '.q'), { to: `${p}-3.q` });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("(review, round 34) a name too long to take the suffix is shortened (its first bytes, on a whole character, and a hash of the whole), so that it can be moved: it was left in place, said to have every name taken; control: the plain name is too long to make", () => {
  const dir = mkdtempSync(join(tmpdir(), 'fn-'));
  try {
    for (const name of [`test_${'a'.repeat(230)}.py`, `${'é'.repeat(120)}`]) {
      const p = join(dir, name);
      writeFileSync(p, 'x');
      const free = freeName(p, '.stashbase-quarantine');
      assert.ok('to' in free, JSON.stringify(free));
      const to = (free as { to: string }).to;
      assert.ok(to.endsWith('.stashbase-quarantine') && Buffer.byteLength(basename(to)) <= 255, to);
      assert.notEqual(basename(to).slice(0, 20), '');
      assert.ok(basename(to).startsWith(name.slice(0, 20)));
      renameSync(p, to);
      // Control: the plain name cannot be made.
      assert.throws(() => writeFileSync(`${p}.stashbase-quarantine`, 'x'), { code: 'ENAMETOOLONG' });
    }
    // Two long names sharing their first bytes get names of their own.
    const a = freeName(join(dir, `${'b'.repeat(240)}1`), '.q');
    const b = freeName(join(dir, `${'b'.repeat(240)}2`), '.q');
    assert.notDeepEqual(a, b);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
