import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { test } from 'node:test';
import { stashbaseHome, userHome } from '../../lib/home.js';

test('userHome: an absolute HOME, normalised; an empty, relative or missing one falls back to the account', () => {
  const account = userInfo().homedir;
  assert.equal(userHome({ HOME: '/home/u/' }), '/home/u');
  assert.equal(userHome({ HOME: '/home//u/../v' }), '/home/v');
  for (const env of [{ HOME: '' }, { HOME: 'home/u' }, { HOME: './x' }, {}]) assert.equal(userHome(env), account, JSON.stringify(env));
  assert.equal(stashbaseHome({ HOME: '' }), `${account}/.stashbase`);
});
