// The README's first command, as a newcomer runs it: in a copy of this
// checkout under /tmp (what git tracks and what is new, as a clone would
// have it), with a fresh home and npm's global folder of the test's own. It
// must install, put `stashbase` on PATH, and run the command sandboxed: the
// echo prints, the key in ~/.ssh does not (the control: outside, it reads).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { needs, REPO, tempHome, writeFile } from '../helpers.js';

describe("the README's first command, in a copy under /tmp (real bwrap, npm)", needs('bwrap'), () => {
  const t = tempHome();
  after(() => t.cleanup());

  test('installs, puts stashbase on PATH and runs the command in the sandbox', { timeout: 300_000 }, () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const first = /```sh\n([^\n]+)\n```/.exec(readme)?.[1] ?? '';
    assert.match(first, /^bash scripts\/install\.sh && stashbase agent run -- /);
    const src = join(t.dir, 'stashbase');
    mkdirSync(src);
    execFileSync('sh', ['-c', `git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C '${src}'`], { cwd: REPO });
    const key = writeFile(join(t.home, '.ssh', 'id_ed25519'), 'PRIVATE KEY\n');
    const prefix = join(t.dir, 'npm-global');
    // npm's own settings as this machine has them (its registry, its cache), read from npm: the fresh home has none.
    const npm = (key: string) => execFileSync('npm', ['config', 'get', key], { encoding: 'utf8' }).trim();
    const env = {
      ...t.env, NPM_CONFIG_PREFIX: prefix, npm_config_cache: npm('cache'), NPM_CONFIG_USERCONFIG: npm('userconfig'), NPM_CONFIG_GLOBALCONFIG: npm('globalconfig'),
      PATH: `${join(prefix, 'bin')}:${process.env.PATH}`,
    };
    assert.notEqual(spawnSync('sh', ['-c', 'command -v stashbase'], { env }).status, 0, 'no stashbase on PATH before');
    const r = spawnSync('bash', ['-c', first], { cwd: src, env, encoding: 'utf8', timeout: 280_000 });
    assert.equal(r.stdout, 'hello from the sandbox\n', r.stderr);
    assert.match(r.stderr, new RegExp(`stashbase: ${prefix}/bin/stashbase -> ${src}/bin/stashbase\\.cjs\\n`));
    assert.match(r.stderr, /\nSandbox: native \(bwrap: /);
    assert.match(r.stderr, new RegExp(`cat: ${t.home}/\\.ssh/id_ed25519: (No such file or directory|Permission denied)\\n`));
    assert.equal(r.status, 1);
    assert.equal(realpathSync(join(prefix, 'bin', 'stashbase')), join(src, 'bin', 'stashbase.cjs'));
    assert.ok(existsSync(join(src, 'dist', 'bundle', 'cli.cjs')));
    // The control: the same cat outside reads the key.
    assert.equal(spawnSync('cat', [key], { encoding: 'utf8' }).stdout, 'PRIVATE KEY\n');
  });
});
