// agent status (issue 28, item 7): the runs in progress, native included
// (there was no status of native runs), aligned, with profile and directory;
// a run killed before it cleaned up shows as killed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { BIN, cli, needs, tempHome, writeFile } from '../helpers.js';
import { writeSession } from '../../lib/run/session.js';

describe('agent status (real bwrap)', needs('bwrap'), () => {
  const t = tempHome();
  after(() => t.cleanup());
  const proj = join(t.home, 'my proj');
  writeFile(join(proj, 'README'), 'x\n');

  test('a native run in progress and a killed one, aligned, newest first; --json too', async () => {
    const child = spawn(process.execPath, [BIN, 'agent', 'run', '--silent', '--', 'sh', '-c', 'echo up; sleep 30'], { env: t.env, cwd: proj });
    await new Promise<void>((res) => child.stdout.once('data', () => res()));
    // A run killed before it cleaned up (written once this one started: a starting run settles such records).
    writeSession(t.sbHome, { id: 'ags_aaaaaaaaaaaaaaaa', pid: 2 ** 22 + 12345, backend: 'docker', mechanism: 'docker', profile: 'claude', cwd: '/old', argv: ['claude'], startedAt: '2026-01-01T00:00:00.000Z' });
    try {
      const r = await cli(['agent', 'status'], { env: t.env });
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.trimEnd().split('\n');
      assert.deepEqual(lines[0]!.split(/ {2,}/), ['SESSION', 'STATE', 'BACKEND', 'PROFILE', 'STARTED', 'DIRECTORY', 'COMMAND']);
      assert.match(lines[1]!, new RegExp(`^ags_[a-z2-7]{16}  running  native   "default"  \\S+ \\S+Z  "${proj}"  "sh -c echo up; sleep 30"$`));
      assert.match(lines[2]!, /^ags_aaaaaaaaaaaaaaaa {2}killed {3}docker {3}"claude" {3}2026-01-01 00:00:00Z {2}"\/old" +"claude"$/);
      const json = JSON.parse((await cli(['agent', 'status', '--json'], { env: t.env })).stdout) as Array<{ state: string; backend: string; cwd: string }>;
      assert.deepEqual(json.map((x) => [x.state, x.backend]), [['running', 'native'], ['killed', 'docker']]);
    } finally {
      child.kill('SIGTERM');
      await new Promise((res) => child.once('exit', res));
    }
  });

  test('agent audit --follow stops for a run killed without an end event (it would have waited forever)', async () => {
    const { AuditLog } = await import('../../lib/run/audit.js');
    const log = new AuditLog(t.sbHome, 'ags_kkkkkkkkkkkkkkkk');
    log.write({ type: 'start', profile: 'p', backend: 'native', cwd: '/x' });
    log.close();
    const f = await cli(['agent', 'audit', 'ags_kkkkkkkkkkkkkkkk', '--follow'], { env: t.env, timeoutMs: 10_000 });
    assert.equal(f.code, 0, f.stderr);
    assert.match(f.stdout, /\n\(the run is no longer running and its log has no end \(killed: the next run settles it\)\)\n0 proxy decisions: 0 allowed, 0 denied, 0 errors\n$/);
  });

  test('agent audit --follow shows a live run\'s events as they come, and stops at its end', async () => {
    writeFile(join(t.sbHome, 'agents', 'narrow.toml'), '[network]\negress_hosts = ["a.test"]\n');
    const child = spawn(process.execPath, [BIN, 'agent', 'run', '--silent', '--profile', 'narrow', '--', 'sh', '-c', 'echo up; sleep 1; curl -s -o /dev/null https://late.test/; sleep 1'], { env: t.env, cwd: proj });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += String(d)));
    const exited = new Promise((res) => child.once('exit', res));
    await Promise.race([new Promise<void>((res) => child.stdout.once('data', () => res())), exited.then(() => assert.fail(`the run ended before it started: ${err}`))]);
    const f = await cli(['agent', 'audit', '--follow'], { env: t.env, timeoutMs: 20_000 });
    await exited;
    assert.equal(f.code, 0, f.stderr);
    const lines = f.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^Audit session: ags_[a-z2-7]{16} \(following; Ctrl\+C stops\)$/);
    assert.match(lines[1]!, /  start  profile narrow, native/);
    assert.match(f.stdout, /  DENY   CONNECT "late\.test:443"|  DENY   CONNECT late\.test:443/);
    assert.match(lines.at(-2)!, /  end    exit code 0, \d+ ms$/);
    assert.equal(lines.at(-1), '1 proxy decisions: 0 allowed, 1 denied, 0 errors');
  });
});
