// Issue 28, item 1: a profile's deny_read used to replace the built-in
// denials, so every recipe of docs/agents.md (deny_read = ["~/.ssh",
// "~/.aws"]) gave back ~/.npmrc, ~/.docker/config.json and the shell history.
// Each profile recipe, as the page has it, runs on the native backend and
// reads a file of each kind; the control reads them outside.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { hostKeysFor, recipe } from '../agent-recipes.js';
import { cli, needs, tempHome, writeFile } from '../helpers.js';

/** One of each kind the built-in list names, and one a profile lifts. */
const FILES = ['.ssh/id_ed25519', '.aws/credentials', '.npmrc', '.docker/config.json', '.bash_history', '.config/gh/hosts.yml', '.pgpass', '.mozilla/firefox/cookies.sqlite'];

describe("every profile recipe keeps the built-in denials (real bwrap)", needs('bwrap'), () => {
  const t = tempHome();
  after(() => t.cleanup());
  for (const f of FILES) writeFile(join(t.home, f), `secret of ${f}\n`);
  const proj = join(t.home, 'proj');
  writeFile(join(proj, 'README'), 'x\n');
  const script = FILES.map((f) => `cat "$HOME/${f}" >/dev/null 2>&1 && echo "READ ${f}" || echo "DENIED ${f}"`).join('; ');

  test('the control: outside the sandbox every file reads', () => {
    const r = spawnSync('sh', ['-c', script], { env: { ...t.env, HOME: t.home }, encoding: 'utf8' });
    assert.deepEqual(r.stdout.trim().split('\n'), FILES.map((f) => `READ ${f}`));
  });

  for (const name of ['claude', 'codex', 'claude-subscription', 'claude-and-codex']) {
    test(`recipe ${name}: none of them reads inside`, async () => {
      const toml = recipe(name);
      writeFile(join(t.sbHome, 'agents', `${name}.toml`), toml);
      const r = await cli(['agent', 'run', '--silent', '--profile', name, '--', 'sh', '-c', script], { env: { ...t.env, ...hostKeysFor(toml) }, cwd: proj });
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(r.stdout.trim().split('\n'), FILES.map((f) => `DENIED ${f}`));
    });
  }

  test('allow_read lifts exactly the built-in denial it names, and the run says it is weaker', async () => {
    writeFile(join(t.sbHome, 'agents', 'lift.toml'), `${recipe('claude')}\n[filesystem]\nallow_read = ["~/.docker"]\n`);
    const r = await cli(['agent', 'run', '--profile', 'lift', '--', 'sh', '-c', script], { env: { ...t.env, ...hostKeysFor(recipe('claude')) }, cwd: proj });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n'), FILES.map((f) => (f.startsWith('.docker/') ? `READ ${f}` : `DENIED ${f}`)));
    assert.match(r.stderr, /allow_read "~\/\.docker" is weaker: a built-in denial \(container registries: Docker, Podman\/Buildah\/Skopeo \(containers-auth\.json\), Helm repository credentials\) is lifted, so the sandbox reads it/);
    const v = await cli(['agent', 'validate', '--profile', 'lift'], { env: { ...t.env, ...hostKeysFor(recipe('claude')) }, cwd: proj });
    assert.match(v.stdout, /\n  deny_read: {2}\d+ built-in credential stores and histories \(of \d+; allow_read lifts ~\/\.docker\)\n  deny_write: 14 built-in shell start-up files and git settings\n/);
  });
});
