// What a native run's check sends to the run's proxy (lib/hooks/report.ts),
// what a Docker run's host-side check is told of the registries
// (lib/deps/registry-vars.ts), and how the audit shows hook requests.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { formatAudit } from '../../lib/run/audit-read.js';
import { registryVars } from '../../lib/deps/registry-vars.js';
import { HOOK_PREFIX, HOOK_TOKEN_VAR, HOOK_URL_VAR } from '../../lib/hooks/hook-env.js';
import { type DependencyEvent, reportEvents } from '../../lib/hooks/report.js';

const event: DependencyEvent = { type: 'dependency', agent: 'claude', ecosystem: 'npm', package: 'left-pad', spec: 'left-pad', decision: 'ok', answer: 'none', reasons: [] };

test('a report goes to the report endpoint beneath the hook prefix, with the bearer token', async () => {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization} ${body}`);
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${HOOK_PREFIX}`;
  try {
    for (const url of [base, `${base}/`]) await reportEvents([event], { [HOOK_URL_VAR]: url, [HOOK_TOKEN_VAR]: 'tok' });
    await reportEvents([event], { [HOOK_URL_VAR]: base }); // no token: nothing sent
    await reportEvents([event], { [HOOK_URL_VAR]: base.replace('http:', 'https:'), [HOOK_TOKEN_VAR]: 'tok' }); // not plain http: nothing sent
  } finally {
    server.close();
  }
  const line = `POST /__stashbase/hooks/agent-hooks/report Bearer tok ${JSON.stringify({ events: [event] })}`;
  assert.deepEqual(seen, [line, line]);
});

test("a Docker run's host-side check gets the registry variables of config_env, and nothing else of it", () => {
  assert.deepEqual(registryVars({
    npm_config_registry: 'http://r.test/npm/', PIP_INDEX_URL: 'http://r.test/simple', GOPROXY: 'http://r.test/go,direct', STASHBASE_OSV_URL: 'http://r.test/osv',
    NODE_OPTIONS: '--require /x.js', PIP_CONFIG_FILE: '/home/agent/pip.conf', CARGO_HOME: '/home/agent/.cargo', EDITOR: 'vi',
  }), { npm_config_registry: 'http://r.test/npm/', PIP_INDEX_URL: 'http://r.test/simple', GOPROXY: 'http://r.test/go,direct', STASHBASE_OSV_URL: 'http://r.test/osv' });
});

test('the audit shows hook requests, refusals marked, and no control character from the sandbox or a registry', () => {
  const time = '2026-12-03T10:00:00.000Z';
  const lines = formatAudit([
    { type: 'hook', time, path: '/scan', hook: 'secret_scan', decision: 'found', exit: 1, args: ['--staged'] },
    { type: 'hook', time, path: '/agent-hooks', hook: 'dependency_check', decision: 'deny', rule: 'wrong hook token', status: 403 },
    { type: 'hook', time, path: '/agent-hooks', hook: 'dependency_check', decision: 'refused', exit: 2, args: ['agent', 'hooks', 'x\u001b[2J'] },
    { type: 'hook', time, path: '/agent-hooks/report', hook: 'dependency_check', decision: 'reported', events: 2 },
    { type: 'dependency', time, ecosystem: 'npm', package: 'evil\u001b]0;pwned\u0007', decision: 'block', answer: 'deny', reasons: ['bad\u009b31m'], reportedBy: 'sandbox' },
  ], (s) => `[${s.trim()}]`).split('\n');
  assert.deepEqual(lines, [
    '2026-12-03 10:00:00Z  hook   /scan  found (exit 1)  ["--staged"]',
    '2026-12-03 10:00:00Z  [DENY]  /agent-hooks  wrong hook token (403)',
    '2026-12-03 10:00:00Z  hook   /agent-hooks  refused (exit 2)  ["agent","hooks","x?[2J"]',
    '2026-12-03 10:00:00Z  hook   /agent-hooks/report  reported (2 decisions)',
    '2026-12-03 10:00:00Z  [BLOCK]  npm "evil?]0;pwned?"  agent told: deny (reported from inside the sandbox)  "bad?31m"',
    '0 proxy decisions: 0 allowed, 0 denied, 0 errors',
    '1 dependency decisions: 1 blocked, 0 warned, 0 unchecked, 0 ok',
    '',
  ]);
});
