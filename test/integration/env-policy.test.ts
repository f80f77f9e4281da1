// Issue 28, item 2: the native agent inherited every credential-looking
// variable of your shell, with only a warning. [environment] decides now, and
// by default such a variable is dropped and named. Real runs on bwrap; the
// control is the same shell outside, which has them all.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cli, needs, tempHome, writeFile } from '../helpers.js';

describe('what of your environment a native agent inherits (real bwrap)', needs('bwrap'), () => {
  const t = tempHome();
  after(() => t.cleanup());
  const proj = join(t.home, 'proj');
  writeFile(join(proj, 'README'), 'x\n');
  const shellEnv = { ...t.env, GITHUB_TOKEN: 'ghp_hostHostHostHost0123', DATABASE_URL: 'postgres://app:hunter2@db/app', MY_SETTING: 'on', LC_ALL: 'C' };
  const names = 'for v in GITHUB_TOKEN DATABASE_URL MY_SETTING LC_ALL PATH; do eval "x=\\${$v-}"; [ -n "$x" ] && echo "$v"; done; true';
  const run = async (profile: string | null, env = shellEnv) => cli(['agent', 'run', ...(profile ? ['--profile', profile] : []), '--', 'sh', '-c', names], { env, cwd: proj });

  test('the control: the shell outside has them all', () => {
    assert.equal(spawnSync('sh', ['-c', names], { env: shellEnv, encoding: 'utf8' }).stdout, 'GITHUB_TOKEN\nDATABASE_URL\nMY_SETTING\nLC_ALL\nPATH\n');
  });

  test('the default: credential-looking variables (by name, or a URL with a password) are not passed, and the run names them', async () => {
    const r = await run(null);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'MY_SETTING\nLC_ALL\nPATH\n');
    assert.match(r.stderr, /not passed to the agent, as they look like credentials: DATABASE_URL, GITHUB_TOKEN \(bind one under \[secrets\] to use it through the proxy, or name it in \[environment\] include to pass it as it is\)\n/);
  });

  test('include passes one back (said weaker); inherit = "core" keeps a shell\'s own; "none" keeps only include', async () => {
    writeFile(join(t.sbHome, 'agents', 'inc.toml'), '[environment]\ninclude = ["GITHUB_*"]\n');
    const inc = await run('inc');
    assert.equal(inc.stdout, 'GITHUB_TOKEN\nMY_SETTING\nLC_ALL\nPATH\n');
    assert.match(inc.stderr, /GITHUB_TOKEN looks like a credential and is inherited by the agent, as \[environment\] include names it/);
    writeFile(join(t.sbHome, 'agents', 'core.toml'), '[environment]\ninherit = "core"\n');
    assert.equal((await run('core')).stdout, 'LC_ALL\nPATH\n');
    writeFile(join(t.sbHome, 'agents', 'none.toml'), '[environment]\ninherit = "none"\ninclude = ["PATH", "MY_*"]\n');
    assert.equal((await run('none')).stdout, 'MY_SETTING\nPATH\n');
  });
});
