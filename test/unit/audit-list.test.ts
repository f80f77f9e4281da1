import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { symlinkSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { AuditLog } from '../../lib/run/audit.js';
import { formatList, listLogs, pruneLogs } from '../../lib/run/audit-list.js';
import { tempHome } from '../helpers.js';

const t = tempHome();
after(() => t.cleanup());

test('agent audit --list: newest first, from each log\'s first and last lines; a profile name the agent could not choose is quoted anyway; --prune removes by age only', () => {
  const a = new AuditLog(t.sbHome, 'ags_aaaaaaaaaaaaaaaa');
  a.write({ type: 'start', profile: 'claude', backend: 'native', cwd: '/work/a' });
  for (let i = 0; i < 2000; i++) a.write({ type: 'proxy', method: 'GET', host: `h${i}.test`, port: 443, path: '/', decision: 'allow', rule: 'r', status: 200 });
  a.write({ type: 'end', exitCode: 4, durationMs: 3 });
  const b = new AuditLog(t.sbHome, 'ags_bbbbbbbbbbbbbbbb');
  b.write({ type: 'start', profile: 'default', backend: 'docker', cwd: '/work/b c' });
  b.flush();
  const old = Date.now() / 1000 - 40 * 86_400;
  utimesSync(join(t.sbHome, 'audit', 'ags_aaaaaaaaaaaaaaaa.jsonl'), old, old);
  const logs = listLogs(t.sbHome);
  assert.deepEqual(logs.map((l) => [l.session, l.start?.profile, l.end?.exitCode ?? null]), [['ags_bbbbbbbbbbbbbbbb', 'default', null], ['ags_aaaaaaaaaaaaaaaa', 'claude', 4]]);
  const lines = formatList(logs).trimEnd().split('\n');
  // Aligned: every column starts where its heading does.
  const at = (line: string, i: number) => line.split(/(?<=\S) {2,}/)[i];
  assert.deepEqual(lines[0]!.split(/ {2,}/), ['SESSION', 'STARTED', 'ENDED', 'PROFILE', 'SIZE', 'DIRECTORY']);
  for (const col of ['STARTED', 'ENDED', 'PROFILE', 'SIZE', 'DIRECTORY']) {
    const x = lines[0]!.indexOf(col);
    for (const l of lines.slice(1)) assert.equal(l.slice(x - 2, x), '  ', `${col} in ${l}`);
  }
  assert.deepEqual([at(lines[1]!, 0), at(lines[1]!, 2), at(lines[1]!, 3), at(lines[1]!, 4), at(lines[1]!, 5)], ['ags_bbbbbbbbbbbbbbbb', 'running or killed', '"default" docker', '1 KB', '"/work/b c"']);
  assert.deepEqual([at(lines[2]!, 0), at(lines[2]!, 2), at(lines[2]!, 3), at(lines[2]!, 5)], ['ags_aaaaaaaaaaaaaaaa', 'exit 4', '"claude" native', '"/work/a"']);
  assert.deepEqual(pruneLogs(t.sbHome, 30), ['ags_aaaaaaaaaaaaaaaa']);
  assert.deepEqual(listLogs(t.sbHome).map((l) => l.session), ['ags_bbbbbbbbbbbbbbbb']);
  assert.deepEqual(pruneLogs(t.sbHome, 30), []);
  // By size: the oldest go until the rest fit; one written in the last hour stays whatever its size.
  for (const [id, hoursAgo] of [['ags_cccccccccccccccc', 5], ['ags_dddddddddddddddd', 3]] as const) {
    const l = new AuditLog(t.sbHome, id);
    for (let i = 0; i < 50; i++) l.write({ type: 'proxy', method: 'GET', host: `h${i}.test`, port: 443, path: '/', decision: 'deny', rule: 'r', status: 403 });
    l.write({ type: 'end', exitCode: 0, durationMs: 1 });
    const when = Date.now() / 1000 - hoursAgo * 3600;
    utimesSync(join(t.sbHome, 'audit', `${id}.jsonl`), when, when);
  }
  assert.deepEqual(pruneLogs(t.sbHome, 30, Date.now(), 1), ['ags_cccccccccccccccc', 'ags_dddddddddddddddd']);
  assert.deepEqual(listLogs(t.sbHome).map((l) => l.session), ['ags_bbbbbbbbbbbbbbbb']);
  // A link or a FIFO named like a log is no log: never read (a FIFO hung --list), never counted.
  spawnSync('mkfifo', [join(t.sbHome, 'audit', 'ags_eeeeeeeeeeeeeeee.jsonl')]);
  symlinkSync('/etc/hostname', join(t.sbHome, 'audit', 'ags_ffffffffffffffff.jsonl'));
  assert.deepEqual(listLogs(t.sbHome).map((l) => l.session), ['ags_bbbbbbbbbbbbbbbb']);
});

test('quoted(): C1 controls, bidirectional overrides and zero-width characters are shown as escapes, as the C0 ones are', async () => {
  const { quoted } = await import('../../lib/run/audit-read.js');
  assert.equal(quoted('x\u202egpj.exe\u009b2J\u200b\u001b'), '"x\\u{202e}gpj.exe\\x9b2J\\u{200b}\\u001b"');
});
