// [hooks.dependency_check]: defaults, and every wrong key or value named by
// file, line and key path like the rest of the profile.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { settingsFromEnv, settingsToEnv } from '../../lib/deps/settings.js';
import { defaultProfile } from '../../lib/profile/default.js';
import { loadProfile } from '../../lib/profile/load.js';
import { tempHome, writeFile } from '../helpers.js';

const t = tempHome();
after(() => t.cleanup());
const label = 'home/.stashbase/agents/p.toml';

function load(toml: string) {
  writeFile(join(t.sbHome, 'agents', 'p.toml'), toml);
  return loadProfile({ name: 'p', source: 'global', cwd: t.dir, env: t.env }).profile;
}
function problem(toml: string): string {
  try {
    load(toml);
    return 'ok';
  } catch (e) {
    return (e as Error).message;
  }
}

test('defaults: 7 days, distance 2, unchecked asks; in the built-in profile too', () => {
  const expected = { minAgeDays: 7, typosquatDistance: 2, onUnchecked: 'ask' };
  assert.deepEqual(load('description = "x"\n').hooks.dependencyCheck, expected);
  assert.deepEqual(load('[hooks.dependency_check]\n').hooks.dependencyCheck, expected);
  assert.deepEqual(defaultProfile().hooks.dependencyCheck, expected);
});

test('values are taken as written', () => {
  assert.deepEqual(load('[hooks.dependency_check]\nmin_age_days = 0\ntyposquat_distance = 3\non_unchecked = "allow"\n').hooks.dependencyCheck, { minAgeDays: 0, typosquatDistance: 3, onUnchecked: 'allow' });
});

test('unknown keys and wrong types name file, line and key path', () => {
  assert.equal(problem('[hooks]\nsecret = 1\n'), `${label}:2 hooks.secret: unknown key (known here: dependency_check)`);
  assert.equal(problem('[hooks.dependency_check]\nmin_age = 3\n'), `${label}:2 hooks.dependency_check.min_age: unknown key (known here: min_age_days, typosquat_distance, on_unchecked)`);
  assert.equal(problem('[hooks.dependency_check]\nmin_age_days = "7"\n'), `${label}:2 hooks.dependency_check.min_age_days: expected a whole number, got a string ("7")`);
  assert.equal(problem('[hooks.dependency_check]\nmin_age_days = 1.5\n'), `${label}:2 hooks.dependency_check.min_age_days: 1.5 is not allowed: it must be a whole number from 0 to 3650`);
  assert.equal(problem('[hooks.dependency_check]\ntyposquat_distance = 4\n'), `${label}:2 hooks.dependency_check.typosquat_distance: 4 is not allowed: it must be a whole number from 0 to 3`);
  assert.equal(problem('[hooks.dependency_check]\ntyposquat_distance = -1\n'), `${label}:2 hooks.dependency_check.typosquat_distance: -1 is not allowed: it must be a whole number from 0 to 3`);
  assert.equal(problem('[hooks.dependency_check]\non_unchecked = "warn"\n'), `${label}:2 hooks.dependency_check.on_unchecked: "warn" is not one of "ask", "deny", "allow"`);
  assert.equal(problem('hooks = "x"\n'), `${label}:1 hooks: expected a table, got a string ("x")`);
});

test('the settings travel to a check inside a run as one variable, read strictly', () => {
  const s = { minAgeDays: 3, typosquatDistance: 1, onUnchecked: 'deny' as const };
  assert.deepEqual(settingsFromEnv({ STASHBASE_DEPENDENCY_CHECK: settingsToEnv(s) }), s);
  assert.deepEqual(settingsFromEnv({}), { minAgeDays: 7, typosquatDistance: 2, onUnchecked: 'ask' });
  assert.throws(() => settingsFromEnv({ STASHBASE_DEPENDENCY_CHECK: '{"min_age_days":-1}' }), /min_age_days: must be a whole number/);
  assert.throws(() => settingsFromEnv({ STASHBASE_DEPENDENCY_CHECK: '{"x":1}' }), /unknown key "x"/);
  assert.throws(() => settingsFromEnv({ STASHBASE_DEPENDENCY_CHECK: 'nope' }), /not JSON/);
});
