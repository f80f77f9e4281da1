// The run's hook endpoints as a hostile agent uses them, with the real
// confined host side (bwrap): the Docker dependency check must run nothing
// the agent's folder holds (a module Python would import from the folder it
// runs in), an oversized body gets its 413, and a run cannot pile up
// requests (past four at once: 503).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { createServer as createTcpServer, connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_DEPENDENCY_CHECK } from '../../lib/deps/settings.js';
import { hookEndpoints } from '../../lib/hooks/endpoints.js';
import type { Profile } from '../../lib/profile/types.js';
import { needs, tempHome } from '../helpers.js';

const TOKEN = 'hooktoken-0123456789';
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('hook endpoints under a hostile agent (real confinement)', needs('bwrap'), () => {
  const t = tempHome();
  const project = join(t.home, 'proj');
  let tripwire: ReturnType<typeof createTcpServer>;
  let tripPort = 0;
  let tripped = 0;
  let server: Server;
  let port = 0;

  before(async () => {
    mkdirSync(project, { recursive: true });
    tripwire = createTcpServer((s) => {
      tripped++;
      s.destroy();
    });
    await new Promise<void>((r) => tripwire.listen(0, '127.0.0.1', r));
    tripPort = (tripwire.address() as AddressInfo).port;
    // What Python imports first of all, in the folder the check would run in: calls the tripwire, then is json enough to go on.
    writeFileSync(join(project, 'json.py'), `import socket\nsocket.create_connection(("127.0.0.1", ${tripPort})).close()\ndef dumps(o): return "{}"\n`);
    const profile = { allowHooks: ['dependency_check', 'secret_scan'], secrets: {} } as unknown as Profile;
    const handler = hookEndpoints({
      token: TOKEN, profile, env: process.env, workTree: project, mounts: [{ host: project, sandbox: project }], hidden: () => [], audit: () => {},
      agentHooks: { cwd: project, proxyEnv: { HTTPS_PROXY: 'http://127.0.0.1:9', HTTP_PROXY: 'http://127.0.0.1:9', NO_PROXY: '', no_proxy: '' }, registryEnv: {}, readable: [], settings: DEFAULT_DEPENDENCY_CHECK },
    });
    server = createServer(handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.close();
    tripwire.close();
    t.cleanup();
  });

  const post = (path: string, body: string): Promise<{ status: number; text: string }> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: `/__stashbase/hooks${path}`, method: 'POST', headers: { Authorization: `Bearer ${TOKEN}` } }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(body);
    });

  test("the Docker dependency check asks pip for its index without importing the agent's json.py (the control: run in the folder, Python does)", { timeout: 60_000 }, async () => {
    const control = spawnSync('python3', ['-c', 'import json'], { cwd: project });
    assert.equal(control.status, 0);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(tripped, 1, 'the control: Python in that folder runs json.py');
    tripped = 0;
    const body = JSON.stringify({ args_b64: ['agent', 'hooks', 'deps', 'check', '--ecosystem', 'pypi', 'requests'].map(b64), stdin_b64: '' });
    const r = await post('/agent-hooks', body);
    assert.equal(r.status, 200, r.text);
    assert.match(r.text, /^\{"exit":\d+,"stdout_b64":/);
    await new Promise((res) => setTimeout(res, 300));
    assert.equal(tripped, 0, 'the host side ran nothing of the folder');
  });

  test('a scan body past 64 KiB gets its 413 (not a dropped connection); past four requests at once, 503', { timeout: 30_000 }, async () => {
    const big = await post('/scan', JSON.stringify({ args: ['--staged'], cwd: project, pad: 'x'.repeat(70 * 1024) }));
    assert.deepEqual([big.status, big.text], [413, 'stashbase: the request body is too large\n']);
    // Four requests whose bodies never end hold their places; the fifth is turned away at once.
    const held = await Promise.all([0, 1, 2, 3].map(() => new Promise<ReturnType<typeof connect>>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.write(`POST /__stashbase/hooks/scan HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 1000\r\n\r\n{`);
        resolve(s);
      });
    })));
    await new Promise((r) => setTimeout(r, 200));
    const fifth = await post('/scan', JSON.stringify({ args: ['--staged'], cwd: project }));
    assert.deepEqual([fifth.status, fifth.text], [503, 'stashbase: 4 hook requests of this run are already waiting or running\n']);
    for (const s of held) s.destroy();
    await new Promise((r) => setTimeout(r, 200));
    const again = await post('/agent-hooks/report', JSON.stringify({ events: [] }));
    assert.equal(again.status, 200, 'the places come back when those clients leave');
  });

  test('(review, round 26) a scan body that is JSON but no object (null, a number) is refused as a scan request, not a 500', { timeout: 30_000 }, async () => {
    for (const body of ['null', '7']) {
      const r = await post('/scan', body);
      assert.equal(r.status, 200, `${body}: ${r.text}`);
      assert.equal(JSON.parse(r.text).exit, 2, r.text);
    }
  });
});
