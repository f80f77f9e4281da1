import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultProfile } from '../../lib/profile/default.js';
import type { Profile } from '../../lib/profile/types.js';
import { envDecision, globMatch } from '../../lib/run/env-policy.js';

const env = {
  PATH: '/usr/bin', HOME: '/home/u', LANG: 'C.UTF-8', LC_ALL: 'C', TERM: 'xterm', EDITOR: 'vi',
  GITHUB_TOKEN: 'ghp_x', AWS_SECRET_ACCESS_KEY: 's', DATABASE_URL: 'postgres://app:hunter2@db/app', MY_SETTING: 'on',
  STASHBASE_API_KEY: 'k', HTTPS_PROXY: 'http://corp:3128', OPENAI_API_KEY: 'sk-real',
};
const profile = (environment: Partial<Profile['environment']>, extra: Partial<Profile> = {}): Profile => ({ ...defaultProfile(), ...extra, environment: { inherit: 'all', include: [], exclude: [], ...environment } });

test('inherit = "all" (the default): everything but stashbase\'s own, the secrets\' sources, proxy settings and what looks like a credential, which is named', () => {
  const d = envDecision(profile({}), env);
  assert.deepEqual(d.removed, ['STASHBASE_API_KEY', 'HTTPS_PROXY', 'AWS_SECRET_ACCESS_KEY', 'DATABASE_URL', 'GITHUB_TOKEN', 'OPENAI_API_KEY']);
  assert.deepEqual(d.droppedCredentials, ['AWS_SECRET_ACCESS_KEY', 'DATABASE_URL', 'GITHUB_TOKEN', 'OPENAI_API_KEY']);
  assert.deepEqual(d.inheritedCredentials, []);
});

test('include passes a name back (a credential then said as inherited); exclude drops more; a secret\'s source never passes, whatever include says', () => {
  const withSecret = profile({ include: ['GITHUB_*', 'OPENAI_API_KEY'], exclude: ['MY_*'] }, { secrets: { OPENAI_API_KEY: { source: 'OPENAI_API_KEY', from: { kind: 'env', variable: 'OPENAI_API_KEY' }, hosts: ['api.openai.com'], inQuery: false, allowPlaintext: false } } });
  const d = envDecision(withSecret, env);
  assert.deepEqual(d.removed, ['STASHBASE_API_KEY', 'OPENAI_API_KEY', 'HTTPS_PROXY', 'AWS_SECRET_ACCESS_KEY', 'DATABASE_URL', 'MY_SETTING']);
  assert.deepEqual(d.inheritedCredentials, ['GITHUB_TOKEN']);
});

test('inherit = "core": a shell\'s own variables only; "none": nothing but include', () => {
  const core = envDecision(profile({ inherit: 'core' }), env);
  assert.deepEqual(Object.keys(env).filter((n) => !core.removed.includes(n)).sort(), ['EDITOR', 'HOME', 'LANG', 'LC_ALL', 'PATH', 'TERM']);
  const none = envDecision(profile({ inherit: 'none', include: ['PATH', 'HOME'] }), env);
  assert.deepEqual(Object.keys(env).filter((n) => !none.removed.includes(n)).sort(), ['HOME', 'PATH']);
});

test('credentials by more names than the obvious, and by value whatever the name (a review found these passing)', () => {
  const more = { BW_SESSION: 'x', OP_SESSION_my: 'x', CI_JOB_JWT: 'x', MYSQL_PWD: 'x', DB_PASS: 'x', LDAP_BIND_PW: 'x', SENTRY_DSN: 'https://k@o.test/1', SLACK_WEBHOOK_URL: 'https://h.test/x', GOOGLE_CLOUD_KEYFILE_JSON: '{}', ORG_GRADLE_PROJECT_signingKey: 'x', KRB5CCNAME: '/tmp/k', GITHUB_PAT_2: 'x',
    REPO_URL: 'https://ghp_abcdefghijklmnopqrstuvwxyz0123@github.com/x', MY_OPENAI: 'sk-proj-abcdefghijkl', DEPLOY: '-----BEGIN OPENSSH PRIVATE KEY-----', AZURE_STORAGE: 'DefaultEndpointsProtocol=https;AccountName=a;AccountKey=zzz',
    // (Review, session 37) a token inside a value, as git's http.extraHeader takes one; an authorization's credentials.
    GIT_CONFIG_VALUE_0: 'Authorization: Bearer ghp_abcdefghijklmnopqrstuvwxyz0123456789', EXTRA_HEADER: 'AUTHORIZATION: Basic dXNlcjpwYXNzd29yZDEyMw==', CURL_ARGS: '-H "X-Key: glpat-abcdefghijklmnop"' };
  const ordinary = { PATH: '/usr/bin:/home/sk-user/bin', PWD: '/x', OLDPWD: '/y', AUTHOR: 'me', PASSIVE: '1', REPO: 'ssh://git@github.com/x/y', NODE_OPTIONS: '--max-old-space-size=4096', DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/0/bus', KEYMAP: 'us', TZ: 'Asia/Tokyo', MOTD: 'Bearer of good news', GIT_CONFIG_KEY_0: 'http.extraHeader' };
  const d = envDecision(profile({}), { ...more, ...ordinary });
  assert.deepEqual(d.droppedCredentials, Object.keys(more).sort());
  assert.deepEqual(d.removed.sort(), Object.keys(more).sort());
});

test('globs: * and ? over the whole name, case-sensitive, nothing else special', () => {
  assert.equal(globMatch('LC_*', 'LC_ALL'), true);
  assert.equal(globMatch('LC_*', 'XLC_ALL'), false);
  assert.equal(globMatch('A?C', 'ABC'), true);
  assert.equal(globMatch('a*', 'ABC'), false);
  assert.equal(globMatch('A.C', 'ABC'), false);
});
