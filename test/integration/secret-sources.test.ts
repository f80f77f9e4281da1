// Issue 28, item 2: a secret's value from a file, a program or the keyring,
// never from your shell's environment. Each kind for real, on the native
// backend: the agent holds a placeholder, the bound host (a local HTTPS
// server with its own CA) gets the real value, and nothing of it is in any
// environment. The keyring is GNOME Keyring's Secret Service, headless in a
// D-Bus session of the test's own, read by secret-tool.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync } from 'node:fs';
import type { Server } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { LeafCache } from '../../lib/tls/leaves.js';
import { BIN, cli, listen, needs, tempHome, writeFile } from '../helpers.js';
import { testCa } from '../upstream-ca.js';

const REAL = 'ghp_fromAnywhereButTheShell0123456789ab';

describe("a secret's value from a file, a program or the keyring (real bwrap)", needs('bwrap'), () => {
  const t = tempHome();
  let upstream: Server;
  let upPort = 0;
  const seen: string[] = [];
  const proj = join(t.home, 'proj');
  writeFile(join(proj, 'README'), 'x\n');
  let upCaFile = '';

  before(async () => {
    const ca = testCa();
    upCaFile = writeFile(join(t.dir, 'up-ca.pem'), ca.certPem);
    const leaf = new LeafCache(ca).get('api.test');
    const https = await import('node:https');
    upstream = https.createServer({ key: leaf.keyPem, cert: leaf.certPem }, (req, res) => {
      seen.push(req.headers.authorization ?? '');
      res.end('ok\n');
    });
    upPort = await listen(upstream as never);
  });
  after(() => {
    upstream.close();
    t.cleanup();
  });

  const profile = (name: string, source: string) =>
    writeFile(join(t.sbHome, 'agents', `${name}.toml`), [
      '[network]', 'egress_hosts = ["api.test"]', `upstream_ca_file = "${upCaFile}"`,
      '[network.hosts]', `"api.test" = "127.0.0.1:${upPort}"`,
      '[secrets.GITHUB_TOKEN]', `source = '${source}'`, 'hosts = ["api.test"]',
    ].join('\n') + '\n');
  // The placeholder the agent holds, whether the real value is in its environment, and what the bound host got.
  const script = () => `curl -sS https://api.test:${upPort}/ -H "Authorization: Bearer $GITHUB_TOKEN" >/dev/null || echo CURL-FAILED >&2; env | grep -c fromAnywhere; echo "$GITHUB_TOKEN"`;
  const check = (r: { code: number | null; stdout: string; stderr: string }) => {
    assert.equal(r.code, 0, r.stderr);
    const [count, ph] = r.stdout.trim().split('\n');
    assert.equal(count, '0');
    assert.match(ph ?? '', /^ghp_SBPH[A-Za-z0-9]{31}$/);
    assert.deepEqual(seen.splice(0), [`Bearer ${REAL}`], r.stderr);
  };

  test('file: a file only you can read, its one line; one others can read is refused, naming chmod', async () => {
    const file = writeFile(join(t.home, '.config', 'tok'), `${REAL}\n`);
    chmodSync(file, 0o600);
    profile('file', 'file:~/.config/tok');
    check(await cli(['agent', 'run', '--silent', '--profile', 'file', '--', 'sh', '-c', script()], { env: t.env, cwd: proj }));
    // The file itself is no more the agent's to read than the value (a review read it straight: the placeholder was pointless); control: outside it reads.
    const cat = await cli(['agent', 'run', '--silent', '--profile', 'file', '--', 'cat', file], { env: t.env, cwd: proj });
    assert.doesNotMatch(cat.stdout, /fromAnywhere/);
    assert.match(cat.stderr, /Permission denied|No such file/);
    assert.equal(spawnSync('cat', [file], { encoding: 'utf8' }).stdout, `${REAL}\n`);
    chmodSync(file, 0o644);
    const r = await cli(['agent', 'run', '--profile', 'file', '--', 'true'], { env: t.env, cwd: proj });
    assert.equal(r.code, 2);
    assert.match(r.stderr, new RegExp(`secrets\\.GITHUB_TOKEN\\.source: ${t.home}/\\.config/tok can be read or written by others \\(mode 644\\); chmod 600 it`));
    chmodSync(file, 0o600);
  });

  test('command: a program, no shell; its failure names it', async () => {
    // It answers only with its arguments as given and run from your home, not the repository (whose files could choose what a program loads).
    const prog = writeFile(join(t.dir, 'bin', 'give-token'), `#!/bin/sh\n[ "$1" = "--for" ] && [ "$2" = "a b" ] && [ "$(pwd)" = "$HOME" ] && echo ${REAL}\n`);
    chmodSync(prog, 0o755);
    profile('cmd', `command:["${prog}", "--for", "a b"]`);
    check(await cli(['agent', 'run', '--silent', '--profile', 'cmd', '--', 'sh', '-c', script()], { env: t.env, cwd: proj }));
    profile('cmd-bad', `command:["${prog}", "--for", "a;b"]`);
    const r = await cli(['agent', 'validate', '--profile', 'cmd-bad'], { env: t.env, cwd: proj });
    assert.match(r.stdout, new RegExp(`\\n  FAIL secrets: .*cmd-bad\\.toml: secrets\\.GITHUB_TOKEN\\.source: \\["${prog}","--for","a;b"\\] exited 1\\n`));
    // --no-secrets checks the profile without any value (a variable not even set).
    profile('unset', 'NOT_SET_ANYWHERE');
    const v = await cli(['agent', 'validate', '--no-secrets', '--profile', 'unset'], { env: t.env, cwd: proj });
    assert.doesNotMatch(v.stdout, /secrets|not set/);
    assert.equal((await cli(['agent', 'validate', '--profile', 'unset'], { env: t.env, cwd: proj })).code, 2);
  });

  test('a repository profile that is not trusted runs no program of its own: not at load, not by validate', async () => {
    const marker = join(t.dir, 'ran');
    const repo = join(t.home, 'repo');
    spawnSync('git', ['init', '-q', repo]);
    writeFile(join(repo, '.stashbase', 'agents', 'evil.toml'), `[network]\negress_hosts = ["api.test"]\n[secrets.T]\nsource = 'command:["touch", "${marker}"]'\nhosts = ["api.test"]\n`);
    const v = await cli(['agent', 'validate', '--profile', 'evil'], { env: t.env, cwd: repo });
    assert.match(v.stdout, /\n {2}FAIL secrets: not read until the profile is trusted\n/);
    const r = await cli(['agent', 'run', '--profile', 'evil', '--', 'true'], { env: t.env, cwd: repo });
    assert.equal(r.code, 3, r.stderr);
    assert.equal(spawnSync('test', ['-e', marker]).status, 1, 'the program ran');
  });

  test("the repository's profiles are read-only in a run: an agent cannot rewrite the profile it will be trusted by next (control: outside, it can)", async () => {
    const repo = join(t.home, 'repo-ro');
    spawnSync('git', ['init', '-q', repo]);
    const own = writeFile(join(repo, '.stashbase', 'agents', 'mine.toml'), '[network]\negress_hosts = ["api.test"]\n');
    const r = await cli(['agent', 'run', '--silent', '--', 'sh', '-c', `echo '[secrets.X]' >> ${own}; mkdir ${repo}/.stashbase/agents/more; echo done`], { env: t.env, cwd: repo });
    assert.equal(r.stdout, 'done\n');
    assert.equal(r.stderr.match(/Read-only file system|Permission denied/g)?.length, 2, r.stderr);
    assert.equal(spawnSync('sh', ['-c', `echo '# mine' >> ${own}`]).status, 0);
  });

  test('keyring: the Secret Service (GNOME Keyring, headless) through secret-tool', needs('keyring'), async () => {
    profile('kr', 'keyring:sbtest-github/me');
    const krHome = join(t.dir, 'kr-home');
    const inner = [
      'printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1',
      `printf %s '${REAL}' | secret-tool store --label=t service sbtest-github account me`,
      `exec "${process.execPath}" "${BIN}" agent run --silent --profile kr -- sh -c '${script().replace(/'/g, `'\\''`)}'`,
    ].join('; ');
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const c = spawn('dbus-run-session', ['--', 'sh', '-c', inner], { env: { ...t.env, XDG_DATA_HOME: join(krHome, 'data'), XDG_RUNTIME_DIR: join(krHome, 'run') }, cwd: proj });
      let stdout = '';
      let stderr = '';
      c.stdout.on('data', (d: Buffer) => (stdout += String(d)));
      c.stderr.on('data', (d: Buffer) => (stderr += String(d)));
      c.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    check(r);
  });
});
