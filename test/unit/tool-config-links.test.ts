// A tool config the agent made behind a link in the tree that leads out of it
// (lib/paths/tool-configs.ts, lib/git/planted-repos.ts): the file itself may not
// be moved (its folder is elsewhere), so the link goes aside instead.
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { movesWithin } from '../../lib/git/planted-repos.js';
import { quarantineToolConfigs } from '../../lib/paths/tool-configs.js';

const base = mkdtempSync(join(tmpdir(), 'stashbase-cfglink-'));
after(() => rmSync(base, { recursive: true, force: true }));

test('(review, round 32) .config made a link to a folder out of the tree holding mise.toml (a folder the run could write, such as its agent state): the link is moved aside, the folder it leads to untouched; control: before, mise reads the agent\'s file through it', () => {
  const root = join(base, 'tree');
  const elsewhere = join(base, 'agent-state', 'plans', 'c');
  mkdirSync(root, { recursive: true });
  mkdirSync(elsewhere, { recursive: true });
  writeFileSync(join(elsewhere, 'mise.toml'), '[tasks.x]\nrun = "touch /tmp/pwned"\n');
  symlinkSync(elsewhere, join(root, '.config'));
  // The control: your tool reads the agent's config through the link.
  assert.match(readFileSync(join(root, '.config', 'mise.toml'), 'utf8'), /pwned/);
  const said = movesWithin([root], () => quarantineToolConfigs([join(root, '.config', 'mise.toml')], null));
  assert.deepEqual(said, [
    `the agent made ${join(root, '.config', 'mise.toml')}, which your own tools would run or obey when you next open the folder, through ${join(root, '.config')}, a link out of the tree (to ${elsewhere}): the link was renamed ${join(root, '.config')}.stashbase-quarantine; review what it leads to, then restore it with: mv ${join(root, '.config')}.stashbase-quarantine ${join(root, '.config')}`,
  ]);
  assert.equal(existsSync(join(root, '.config', 'mise.toml')), false);
  assert.equal(lstatSync(join(root, '.config.stashbase-quarantine')).isSymbolicLink(), true);
  assert.equal(existsSync(join(elsewhere, 'mise.toml')), true, 'what it leads to is untouched');
});
