// deny_write links put back at the end of a run (lib/paths/protected-links.ts).
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

test('deny_write links put back: by their folder\'s real path, and never where a link of the agent\'s now leads (its folder swapped for a link: nothing touched there)', async () => {
  const { noteLinks, restoreLinks } = await import('../../lib/paths/protected-links.js');
  const fs = await import('node:fs');
  const { mkdtempSync, mkdirSync, readFileSync, readlinkSync, renameSync, symlinkSync, writeFileSync, realpathSync } = fs;
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'sblinks-')));
  mkdirSync(join(root, 'a'));
  mkdirSync(join(root, 'victim'));
  writeFileSync(join(root, 'victim', '.envrc'), 'yours\n');
  symlinkSync('../env/real', join(root, 'a', '.envrc'));
  const links = noteLinks([join(root, 'a', '.envrc'), join(root, 'absent'), join(root, 'victim', '.envrc')]);
  assert.deepEqual(links, [{ path: join(root, 'a', '.envrc'), target: '../env/real', folder: join(root, 'a') }]);
  // The folder swapped for a link to another of yours.
  renameSync(join(root, 'a'), join(root, 'a-moved'));
  symlinkSync(join(root, 'victim'), join(root, 'a'));
  assert.deepEqual(restoreLinks(links), [`the folder of ${join(root, 'a', '.envrc')}, a symbolic link deny_write protects, is not where it was when the run started (now ${join(root, 'victim')}): nothing was touched there; look at it before your tools read it`]);
  assert.equal(readFileSync(join(root, 'victim', '.envrc'), 'utf8'), 'yours\n');
  assert.equal(fs.existsSync(join(root, 'victim', '.envrc.stashbase-quarantine')), false);
  // Control: the folder as it was, the replaced link is put back.
  fs.rmSync(join(root, 'a'));
  renameSync(join(root, 'a-moved'), join(root, 'a'));
  fs.rmSync(join(root, 'a', '.envrc'));
  writeFileSync(join(root, 'a', '.envrc'), 'planted\n');
  assert.equal(restoreLinks(links).length, 1);
  assert.equal(readlinkSync(join(root, 'a', '.envrc')), '../env/real');
  assert.equal(readFileSync(join(root, 'a', '.envrc.stashbase-quarantine'), 'utf8'), 'planted\n');
  fs.rmSync(root, { recursive: true, force: true });
});
