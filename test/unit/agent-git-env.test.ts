// The run's own entries for the agent's git (lib/git/agent-git-env.ts): after those the environment has, never over them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentGitConfigEnv } from '../../lib/git/agent-git-env.js';

test('none before: entry 0', () => {
  assert.deepEqual(agentGitConfigEnv({ PATH: '/bin' }), { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.sharedRepository', GIT_CONFIG_VALUE_0: 'umask' });
});

test("(review) an entry the agent has only part of (its value dropped as a credential's) would fail every git: the run's entries stand alone, from 0", () => {
  const env = { GIT_CONFIG_COUNT: '2', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_KEY_1: 'a.b', GIT_CONFIG_VALUE_1: 'x' };
  assert.deepEqual(agentGitConfigEnv(env), { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.sharedRepository', GIT_CONFIG_VALUE_0: 'umask' });
});

test("two before (the profile's or yours): the run's is the third, theirs untouched", () => {
  assert.deepEqual(agentGitConfigEnv({ GIT_CONFIG_COUNT: '2', GIT_CONFIG_KEY_0: 'a.b', GIT_CONFIG_VALUE_0: '1', GIT_CONFIG_KEY_1: 'c.d', GIT_CONFIG_VALUE_1: '2' }), {
    GIT_CONFIG_COUNT: '3', GIT_CONFIG_KEY_2: 'core.sharedRepository', GIT_CONFIG_VALUE_2: 'umask',
  });
});

const entries = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [[`GIT_CONFIG_KEY_${i}`, `k.e${i}`], [`GIT_CONFIG_VALUE_${i}`, `v${i}`]]).flat());

test('a count as git reads it (strtoul: blanks and a plus sign before, nothing after; empty is 0): the run\'s entry after it', () => {
  for (const [count, n] of [[' 2', 2], ['+2', 2], ['\t007', 7], ['', 0]] as const) {
    assert.deepEqual(agentGitConfigEnv({ GIT_CONFIG_COUNT: count, ...entries(n) }), { GIT_CONFIG_COUNT: String(n + 1), [`GIT_CONFIG_KEY_${n}`]: 'core.sharedRepository', [`GIT_CONFIG_VALUE_${n}`]: 'umask' }, JSON.stringify(count));
  }
});

test('a count git refuses ("bogus count": not a number, negative, past INT_MAX, anything after the digits) is replaced by the run\'s own', () => {
  for (const bogus of ['x', '-1', '1e3', '2 ', '2147483648', '99999999999', ' ', '+', '2147483647', '1001']) {
    assert.deepEqual(agentGitConfigEnv({ GIT_CONFIG_COUNT: bogus }), { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.sharedRepository', GIT_CONFIG_VALUE_0: 'umask' }, JSON.stringify(bogus));
  }
});
