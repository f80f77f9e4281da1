// The sandbox's pid 1 is bwrap itself. Its environment, /proc/1/environ, is
// readable by the agent wherever Landlock does not stop it (writes =
// "deny-list", or a kernel without Landlock): bwrap must start with none of
// yours, or the real values of the secrets' source variables are there
// (found in review). Control: a bwrap started the old way, with your
// environment, shows them to the process inside.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cli, needs, tempHome, writeFile } from '../helpers.js';

const REAL = 'ghp_realValueOfTheSourceVariable0123456';

describe("the sandbox's pid 1 holds none of your environment (real bwrap)", needs('bwrap'), () => {
  const t = tempHome();
  after(() => t.cleanup());
  const proj = join(t.dir, 'proj');
  writeFile(join(proj, 'README'), 'x\n');
  writeFile(join(t.sbHome, 'agents', 'denylist.toml'), ['[filesystem]', 'writes = "deny-list"', '[secrets.GITHUB_TOKEN]', 'source = "GITHUB_TOKEN"', 'hosts = ["api.github.com"]'].join('\n') + '\n');
  const probe = `tr '\\0' '\\n' < /proc/1/environ > /dev/null && echo readable; tr '\\0' '\\n' < /proc/1/environ 2>/dev/null | grep -c '${REAL}'; tr '\\0' '\\n' < /proc/1/environ 2>/dev/null | grep -c '^HOST_ONLY='; true`;

  test('writes = "deny-list" (no Landlock): /proc/1/environ is readable, and holds neither a secret\'s real value nor a variable of yours; control: bwrap started with your environment shows both', async () => {
    const env = { ...t.env, GITHUB_TOKEN: REAL, HOST_ONLY: 'x' };
    const r = await cli(['agent', 'run', '--silent', '--profile', 'denylist', '--', 'sh', '-c', probe], { env, cwd: proj, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'readable\n0\n0\n');
    const ctl = spawnSync('bwrap', ['--dev-bind', '/', '/', '--unshare-pid', '--proc', '/proc', '--', 'sh', '-c', probe], { env: { ...process.env, GITHUB_TOKEN: REAL, HOST_ONLY: 'x' }, encoding: 'utf8' });
    assert.equal(ctl.stdout, 'readable\n1\n1\n', ctl.stderr);
  });
});
