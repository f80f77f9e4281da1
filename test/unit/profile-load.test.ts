import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { defaultProfile } from '../../lib/profile/default.js';
import { directorySearchPath, loadProfile } from '../../lib/profile/load.js';
import { tempHome, writeFile } from '../helpers.js';

const t = tempHome();
after(() => t.cleanup());
const repo = join(t.dir, 'repo');
const sub = join(repo, 'a', 'b');
mkdirSync(join(repo, '.git'), { recursive: true });
mkdirSync(sub, { recursive: true });
writeFile(join(repo, '.stashbase', 'agents', 'both.toml'), 'description = "directory"\n');
writeFile(join(t.sbHome, 'agents', 'both.toml'), 'description = "global"\n');
writeFile(join(t.sbHome, 'agents', 'only-global.toml'), 'description = "g"\n');
writeFile(join(repo, 'a', '.stashbase', 'agents', 'near.toml'), 'description = "near"\n');

const load = (name: string | undefined, source: 'auto' | 'global' | 'directory', cwd = sub) => loadProfile({ name, source, cwd, env: t.env });

test('no --profile selects the built-in default', () => {
  assert.deepEqual(load(undefined, 'auto').profile, defaultProfile());
});

test('auto looks in the repository first, then global', () => {
  assert.equal(load('both', 'auto').profile.description, 'directory');
  assert.equal(load('both', 'auto').profile.source, 'directory');
  assert.equal(load('both', 'global').profile.description, 'global');
  assert.equal(load('only-global', 'auto').profile.source, 'global');
  assert.equal(load('near', 'directory').profile.description, 'near');
});

test('the directory search stops at the repository root', () => {
  assert.deepEqual(directorySearchPath(sub), [
    join(sub, '.stashbase', 'agents'),
    join(repo, 'a', '.stashbase', 'agents'),
    join(repo, '.stashbase', 'agents'),
  ]);
  assert.deepEqual(directorySearchPath(t.home), [join(t.home, '.stashbase', 'agents')]);
});

test('a named profile that is missing is an error, never the default', () => {
  assert.throws(() => load('only-global', 'directory'), {
    name: 'ConfigError',
    message: `profile "only-global" not found; the profiles here: "both", "default", "near"; looked in:\n  ${join(sub, '.stashbase/agents/only-global.toml')}\n  ${join(repo, 'a/.stashbase/agents/only-global.toml')}\n  ${join(repo, '.stashbase/agents/only-global.toml')}`,
  });
  assert.throws(() => load('nope', 'global'), { message: `profile "nope" not found; the profiles here: "both", "default", "only-global"; looked in:\n  ${join(t.sbHome, 'agents/nope.toml')}` });
  // A misspelling is named with what it was near.
  assert.throws(() => load('Only-Globl', 'auto'), { message: new RegExp(`^profile "Only-Globl" not found \\(did you mean "only-global"\\?\\); the profiles here: "both", "default", "near", "only-global"; looked in:\n`) });
});

test('profile names cannot walk the filesystem: a name is looked up, a path must say it is one (a .toml file, trusted by its path)', () => {
  assert.throws(() => load('../x', 'auto'), { name: 'UsageError', message: '--profile "../x": a profile file\'s name ends in .toml' });
  assert.throws(() => load('x y', 'auto'), { name: 'UsageError', message: '--profile "x y" is not a profile name (letters, digits, ".", "_" and "-") nor a path to a .toml file' });
});
