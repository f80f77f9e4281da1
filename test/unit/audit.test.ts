import assert from 'node:assert/strict';
import { statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { AuditLog } from '../../lib/run/audit.js';
import { formatAudit, latestSession, readAudit } from '../../lib/run/audit-read.js';
import { tempHome } from '../helpers.js';

const t = tempHome();
after(() => t.cleanup());

test('audit logs: written as JSON lines, read back, the latest found, denials marked', () => {
  const older = new AuditLog(t.sbHome, 'ags_aaaaaaaaaaaaaaaa');
  older.write({ type: 'start', profile: 'p', backend: 'native', mechanism: 'bwrap', argv: ['x'], cwd: '/w' });
  utimesSync(older.file, new Date(1000), new Date(1000));
  const log = new AuditLog(t.sbHome, 'ags_bbbbbbbbbbbbbbbb');
  log.write({ type: 'start', profile: 'default', backend: 'native', mechanism: 'bwrap', argv: ['claude'], cwd: '/w' });
  log.write({ type: 'proxy', method: 'CONNECT', host: 'api.anthropic.com', port: 443, path: null, decision: 'allow', rule: 'egress_hosts "api.anthropic.com"', status: 200 });
  log.write({ type: 'proxy', method: 'GET', host: 'evil.test', port: 80, path: '/x', decision: 'deny', rule: 'not in egress_hosts', status: 403 });
  log.write({ type: 'end', exitCode: 0, durationMs: 12 });
  assert.equal(latestSession(t.sbHome), 'ags_bbbbbbbbbbbbbbbb');
  const events = readAudit(t.sbHome, 'ags_bbbbbbbbbbbbbbbb');
  assert.equal(events.length, 4);
  assert.deepEqual(Object.keys(events[2]!), ['time', 'session', 'type', 'method', 'host', 'port', 'path', 'decision', 'rule', 'status']);
  const text = formatAudit(events, (s) => `[${s.trim()}]`).split('\n');
  assert.match(text[0]!, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ  start  profile default, native \(bwrap\), in \/w: \["claude"\]$/);
  assert.match(text[1]!, /  allow  CONNECT api\.anthropic\.com:443  egress_hosts "api\.anthropic\.com"  \(200\)$/);
  assert.match(text[2]!, /  \[DENY\]  GET evil\.test:80 "\/x"  not in egress_hosts  \(403\)$/);
  assert.match(text[3]!, /  end    exit code 0, 12 ms$/);
  assert.equal(text[4], '2 proxy decisions: 1 allowed, 1 denied, 0 errors');
});

test('the Docker start line names the image; errors and upgrades are counted and shown', () => {
  const events = [
    { type: 'start', time: '2026-12-03T10:00:00.000Z', profile: 'p', backend: 'docker', image: 'stashbase-sandbox:latest', argv: ['x'], cwd: '/w' },
    { type: 'proxy', time: '2026-12-03T10:00:01.000Z', method: 'GET', host: 'ws.test', port: 443, path: '/ws', decision: 'allow', rule: 'egress_hosts "ws.test"', upgrade: 'websocket', status: 101 },
    { type: 'proxy', time: '2026-12-03T10:00:02.000Z', method: 'GET', host: 'api.test', port: 443, path: '/', decision: 'error', rule: 'upstream api.test: ECONNRESET' },
  ];
  assert.deepEqual(formatAudit(events).split('\n'), [
    '2026-12-03 10:00:00Z  start  profile p, docker (image stashbase-sandbox:latest), in /w: ["x"]',
    '2026-12-03 10:00:01Z  allow  GET ws.test:443 "/ws"  egress_hosts "ws.test"  upgrade "websocket"  (101)',
    '2026-12-03 10:00:02Z  error  GET api.test:443 "/"  upstream api.test: ECONNRESET',
    '2 proxy decisions: 1 allowed, 0 denied, 1 errors',
    '',
  ]);
});

test('a denial repeated is written once and counted; long values are cut; past its size the log says so once and keeps only the end', () => {
  const log = new AuditLog(t.sbHome, 'ags_dddddddddddddddd', 4096);
  const deny = (path: string) => log.write({ type: 'proxy', method: 'GET', host: 'evil.test', port: 80, path, decision: 'deny', rule: 'not in egress_hosts', status: 403 });
  for (let i = 0; i < 1000; i++) deny(`/${'x'.repeat(30_000)}${i}`);
  log.write({ type: 'proxy', method: 'GET', host: 'ok.test', port: 80, path: '/', decision: 'allow', rule: 'egress_hosts "ok.test"', status: 200 });
  log.flush();
  let events = readAudit(t.sbHome, 'ags_dddddddddddddddd');
  assert.deepEqual(events.map((e) => e.type), ['proxy', 'proxy', 'repeated']);
  assert.equal(events[0]!.path, `/${"x".repeat(2047)}… (30002 characters)`);
  assert.deepEqual({ ...events[2], time: 0 }, { time: 0, session: 'ags_dddddddddddddddd', type: 'repeated', method: 'GET', host: 'evil.test', port: 80, rule: 'not in egress_hosts', decision: 'deny', count: 999 });
  // Distinct allowed decisions until their share: one line says so, and they stop there.
  for (let i = 0; i < 100; i++) log.write({ type: 'proxy', method: 'GET', host: `h${i}.test`, port: 80, path: '/', decision: 'allow', rule: 'r', status: 200 });
  events = readAudit(t.sbHome, 'ags_dddddddddddddddd');
  const share = events.findIndex((e) => e.type === 'audit-full');
  assert.ok(share > 3);
  assert.deepEqual({ ...events[share], time: 0 }, { time: 0, session: 'ags_dddddddddddddddd', type: 'audit-full', maxBytes: 4096, reserved: 512, kept: 'denials, exfiltration, limits and errors' });
  assert.ok(statSync(log.file).size <= 4096 - 512 + 300);
  // The reserve: an exfiltration attempt after the flood is still written; then distinct denials until their own share.
  const exfil = (host: string) => log.write({ type: 'proxy', method: 'POST', host, port: 443, path: '/', decision: 'deny', rule: `the real value of T headed to ${host} (request body), which it is not bound to`, exfiltration: true, status: 403 });
  exfil('leak.test');
  for (let i = 0; i < 40; i++) log.write({ type: 'proxy', method: 'GET', host: `d${i}.test`, port: 80, path: '/', decision: 'deny', rule: 'not in egress_hosts', status: 403 });
  events = readAudit(t.sbHome, 'ags_dddddddddddddddd');
  assert.equal(events[share + 1]?.host, 'leak.test');
  const denials = events.findIndex((e) => e.type === 'audit-full' && e.kept === 'exfiltration attempts');
  assert.ok(denials > share + 1);
  assert.deepEqual({ ...events[denials], time: 0 }, { time: 0, session: 'ags_dddddddddddddddd', type: 'audit-full', maxBytes: 4096, reserved: 256, kept: 'exfiltration attempts' });
  log.write({ type: 'end', exitCode: 0, durationMs: 1 });
  events = readAudit(t.sbHome, 'ags_dddddddddddddddd');
  assert.deepEqual(events.slice(denials).map((e) => e.type), ['audit-full', 'end']);
  assert.equal(events.at(-1)!.dropped, 100 - (share - 3) + 40 - (denials - share - 2));
  assert.ok(statSync(log.file).size < 4096 + 400);
  const text = formatAudit(events);
  assert.match(text, /  audit  allowed decisions reached their share of the log \(4096 bytes, less 512 kept for denials, exfiltration, limits and errors\): later allowed decisions were not written\n/);
  assert.match(text, /  audit  denials, limits and errors reached their share of the log \(4096 bytes, less 256 kept for exfiltration attempts\): later ones were not written\n/);
  assert.match(text, /  audit  denials, limits and errors reached their share of the log \(4096 bytes, less 256 kept for exfiltration attempts\): later ones were not written\n.*end    exit code 0, 1 ms; \d+ events past the log's size limit were not written\n/);
});

test('a flood of distinct denials (each a request of its own, past the count of repeats kept) leaves room for exfiltration attempts after it; only those reach the whole limit', () => {
  const log = new AuditLog(t.sbHome, 'ags_kkkkkkkkkkkkkkkk', 64 * 1024);
  const exfil = (host: string) => log.write({ type: 'proxy', method: 'POST', host, port: 443, path: '/', decision: 'deny', rule: `the real value of T headed to ${host} (request body), which it is not bound to`, exfiltration: true, status: 403 });
  for (let i = 0; i < 2000; i++) log.write({ type: 'proxy', method: 'GET', host: `${'d'.repeat(200)}${i}.test`, port: 443, path: '/', decision: 'deny', rule: 'not in egress_hosts', status: 403 });
  for (let i = 0; i < 500; i++) log.write({ type: 'limit', rule: `more than 16 requests pipelined on one connection: it was closed (${i})` });
  exfil('leak.test');
  exfil('leak2.test');
  for (let i = 0; i < 100; i++) exfil(`more${i}.test`);
  log.write({ type: 'end', exitCode: 4, durationMs: 1 });
  const events = readAudit(t.sbHome, 'ags_kkkkkkkkkkkkkkkk');
  const at = events.findIndex((e) => e.kept === 'exfiltration attempts');
  assert.ok(at > 100);
  assert.deepEqual(events.slice(at + 1, at + 3).map((e) => e.host), ['leak.test', 'leak2.test']);
  assert.ok(events.filter((e) => e.exfiltration === true).length > 5);
  assert.deepEqual(events.slice(-2).map((e) => e.type), ['audit-full', 'end']);
  assert.ok(statSync(log.file).size <= 64 * 1024 + 400);
});

test('an allowed decision repeated is written once and counted; its path is cut; quoted in the text output, an Upgrade value padded to look like an entry reads as the quoted value it is', () => {
  const log = new AuditLog(t.sbHome, 'ags_hhhhhhhhhhhhhhhh');
  for (let i = 0; i < 50; i++) log.write({ type: 'proxy', method: 'GET', host: 'api.test', port: 443, path: '/same', decision: 'allow', rule: 'r', status: 200 });
  log.write({ type: 'proxy', method: 'GET', host: 'api.test', port: 443, path: `/${'p'.repeat(2000)}`, decision: 'allow', rule: 'r', status: 200 });
  const fake = `${' '.repeat(60)}2026-12-05 10:00:00Z  allow  GET api.bound.test:443/repos/x (200)`;
  log.write({ type: 'proxy', method: 'GET', host: 'api.test', port: 443, path: '/ws', decision: 'allow', rule: 'r', status: 101, upgrade: fake });
  log.flush();
  const events = readAudit(t.sbHome, 'ags_hhhhhhhhhhhhhhhh');
  assert.deepEqual(events.map((e) => e.type), ['proxy', 'proxy', 'proxy', 'repeated']);
  assert.equal(events[1]!.path, `/${'p'.repeat(255)}… (2001 characters)`);
  assert.deepEqual({ ...events[3], time: 0 }, { time: 0, session: 'ags_hhhhhhhhhhhhhhhh', type: 'repeated', method: 'GET', host: 'api.test', port: 443, path: '/same', rule: 'r', decision: 'allow', status: 200, count: 49 });
  const lines = formatAudit(events).split('\n');
  assert.match(lines[2]!, /^\S+ \S+  allow  GET api\.test:443 "\/ws"  r  upgrade "<60 spaces>2026-12-05 10:00:00Z<2 spaces>allow<2 spaces>GET api\.bound\.test:443\/repos\/x \(200\)"  \(101\)$/);
  assert.equal(lines[3], `${lines[3]!.slice(0, 20)}  allow  GET api.test:443 "/same"  r  (200)  (the same 49 more times)`);
  assert.equal(lines.at(-2), '52 proxy decisions: 52 allowed, 0 denied, 0 errors');
});

test('a bad or unknown session id is an error', () => {
  assert.throws(() => readAudit(t.sbHome, '../etc'), { name: 'UsageError', message: '"../etc" is not a session id (ags_ and 16 letters or digits 2-7)' });
  assert.throws(() => readAudit(t.sbHome, 'ags_cccccccccccccccc'), { name: 'ConfigError', message: `no audit log for ags_cccccccccccccccc in ${join(t.sbHome, 'audit')}` });
});

test('dependency decisions: one line each, blocks marked, a count at the end', () => {
  const log = new AuditLog(t.sbHome, 'ags_eeeeeeeeeeeeeeee');
  log.write({ type: 'dependency', agent: 'claude', ecosystem: 'npm', package: 'sb-made-up', spec: 'sb-made-up', decision: 'block', answer: 'deny', reasons: ['does not exist in the npm registry'] });
  log.write({ type: 'dependency', agent: 'claude', ecosystem: 'pypi', package: 'reqeusts', spec: 'reqeusts', version: '0.1', decision: 'warn', answer: 'ask', reasons: ['its name is one edit away from "requests"'], reportedBy: 'sandbox' });
  const text = formatAudit(readAudit(t.sbHome, 'ags_eeeeeeeeeeeeeeee'), (s) => `[${s}]`).split('\n');
  assert.match(text[0]!, /  \[BLOCK\]  npm "sb-made-up"  agent told: deny  "does not exist in the npm registry"$/);
  assert.match(text[1]!, /  warn   pypi "reqeusts" "0\.1"  agent told: ask \(reported from inside the sandbox\)  "its name is one edit away from \\"requests\\""$/);
  assert.equal(text[2], '0 proxy decisions: 0 allowed, 0 denied, 0 errors');
  assert.equal(text[3], '2 dependency decisions: 1 blocked, 1 warned, 0 unchecked, 0 ok');
});

test("the proxy's decisions: batched while the run lives, written by the end event, and at once after it (a response cut at teardown is decided then)", async () => {
  const log = new AuditLog(t.sbHome, 'ags_cccccccccccccccc');
  log.write({ type: 'start', profile: 'p', backend: 'native', mechanism: 'bwrap', argv: ['x'], cwd: '/w' });
  log.write({ type: 'proxy', method: 'GET', host: 'a.test', port: 443, path: '/', decision: 'allow', rule: 'r', status: 200 });
  assert.deepEqual(readAudit(t.sbHome, 'ags_cccccccccccccccc').map((e) => e.type), ['start']);
  await new Promise((res) => setTimeout(res, 150));
  assert.deepEqual(readAudit(t.sbHome, 'ags_cccccccccccccccc').map((e) => e.type), ['start', 'proxy']);
  log.write({ type: 'proxy', method: 'GET', host: 'b.test', port: 443, path: '/', decision: 'allow', rule: 'r', status: 200 });
  log.write({ type: 'end', exitCode: 0, durationMs: 1 });
  log.write({ type: 'proxy', method: 'GET', host: 'slow.test', port: 443, path: '/', decision: 'error', rule: 'upstream slow.test: the response stopped short' });
  assert.deepEqual(readAudit(t.sbHome, 'ags_cccccccccccccccc').map((e) => `${e.type} ${e.host ?? ''}`), ['start ', 'proxy a.test', 'proxy b.test', 'end ', 'proxy slow.test']);
});

test('audit logs: each line says its time to the millisecond, as toISOString would (the text is made once per second)', (c) => {
  const log = new AuditLog(t.sbHome, 'ags_ffffffffffffffff');
  const base = Date.UTC(2026, 11, 4, 16, 0, 27, 0);
  const times = [base, base + 5, base + 5, base + 95, base + 999, base + 1000, base + 1042, base + 61_000 + 7, Date.UTC(2027, 0, 1, 0, 0, 0, 100)];
  let now = 0;
  c.mock.method(Date, 'now', () => now);
  for (const [i, ms] of times.entries()) {
    now = ms;
    log.write({ type: 'proxy', method: 'GET', host: 'api.test', port: 443, path: `/${i}`, decision: 'allow', rule: 'r', status: 200 });
  }
  log.close();
  c.mock.restoreAll();
  assert.deepEqual(readAudit(t.sbHome, 'ags_ffffffffffffffff').map((e) => e.time), times.map((ms) => new Date(ms).toISOString()));
});

test('the size limit counts bytes on disk: Latin-1 header text past 0x7f (two bytes each in UTF-8) cannot take the log past it', () => {
  const log = new AuditLog(t.sbHome, 'ags_ffffffffffffffff', 4096);
  for (let i = 0; i < 200; i++) log.write({ type: 'proxy', method: 'GET', host: 'ok.test', port: 443, path: '/', upgrade: `\u00e9${'\u00ff'.repeat(300)}${i}`, decision: 'allow', rule: 'r', status: 101 });
  log.write({ type: 'end', exitCode: 0, durationMs: 1 });
  const events = readAudit(t.sbHome, 'ags_ffffffffffffffff');
  assert.deepEqual(events.slice(-2).map((e) => e.type), ['audit-full', 'end']);
  assert.ok(statSync(log.file).size < 4096 + 400, `${statSync(log.file).size} bytes`);
});

test('a repeated denial with long values: its count line shows them cut short (the run keeps no more of them)', () => {
  const log = new AuditLog(t.sbHome, 'ags_gggggggggggggggg');
  const host = `${'h'.repeat(30_000)}.test`;
  for (let i = 0; i < 3; i++) log.write({ type: 'proxy', method: 'CONNECT', host, port: 443, path: null, decision: 'deny', rule: `invalid host ${host}`, status: 400 });
  log.flush();
  const events = readAudit(t.sbHome, 'ags_gggggggggggggggg');
  assert.deepEqual(events.map((e) => e.type), ['proxy', 'repeated']);
  assert.equal(events[0]!.host, `${'h'.repeat(2048)}… (30005 characters)`);
  assert.deepEqual({ ...events[1], time: 0 }, { time: 0, session: 'ags_gggggggggggggggg', type: 'repeated', method: 'CONNECT', host: `${'h'.repeat(256)}… (30005 characters)`, port: 443, rule: `invalid host ${'h'.repeat(243)}… (30018 characters)`, decision: 'deny', count: 2 });
});

test('(review, round 26) what an agent sends in arrays cannot crowd denials out of the audit: values cut at every depth, the agent\'s own reports in the routine share; control: the denial is there', async () => {
  const { AuditLog } = await import('../../lib/run/audit.js');
  const { mkdtempSync, readFileSync: read } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join: j } = await import('node:path');
  const home = mkdtempSync(j(tmpdir(), 'audit-deep-'));
  const log = new AuditLog(home, `ags_${'a'.repeat(16)}`, 4 << 20);
  const ev = { type: 'dependency', agent: null, ecosystem: 'npm', package: 'x', spec: 'x', decision: 'ok', answer: 'none', reasons: Array(32).fill('r'.repeat(4000)), reportedBy: 'sandbox' };
  for (let i = 0; i < 200; i++) log.write(ev);
  log.write({ type: 'hook', path: '/scan', hook: 'secret_scan', decision: 'refused', exit: 2, args: [Array(40).fill('q'.repeat(5000))] });
  log.write({ type: 'proxy', decision: 'deny', method: 'CONNECT', host: 'evil.example', port: 443, rule: 'x' });
  log.write({ type: 'end', exitCode: 0 });
  log.flush();
  const text = read(log.file, 'utf8');
  assert.ok(text.includes('evil.example'), 'the denial is in the log');
  const lines = text.trim().split('\n');
  assert.ok(lines.every((l) => l.length < 20_000), `longest line ${Math.max(...lines.map((l) => l.length))}`);
  const reported = JSON.parse(lines[0] as string);
  assert.equal(reported.reasons.length, 17);
  assert.equal(reported.reasons[16], '… (32 items)');
});
