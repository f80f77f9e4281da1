// An upstream whose certificate comes from a CA the proxy does not know (the
// everyday case of a missing network.upstream_ca_file): through a real
// `agent run`, the agent's requests get 502, the run prints the first failure
// once on stderr (even with --silent) naming the host and the profile key, and
// `agent audit` shows every failed request with the fix. With the CA named the
// same requests go through. A WebSocket upgrade to it is reported the same way.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import { type AddressInfo, connect as netConnect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import tls from 'node:tls';
import { writeFileSync } from 'node:fs';
import { Interceptor } from '../../lib/proxy/intercept.js';
import { createProxy, hostHeaderProblem } from '../../lib/proxy/server.js';
import type { TlsFailure } from '../../lib/proxy/tls-failure.js';
import { createRunCa } from '../../lib/tls/ca.js';
import { LeafCache } from '../../lib/tls/leaves.js';
import { cli, needs, tempHome, writeFile } from '../helpers.js';
import { testCa } from '../upstream-ca.js';

describe('an upstream TLS failure is visible: stderr once, the audit every time', () => {
  const t = tempHome();
  const hits: string[] = [];
  let stub: Server;
  let port = 0;
  let caFile = '';

  before(async () => {
    const ca = testCa();
    caFile = join(t.dir, 'their-ca.pem');
    writeFileSync(caFile, ca.certPem);
    const leaf = new LeafCache(ca).get('api.test');
    stub = createServer({ key: leaf.keyPem, cert: leaf.certPem }, (req, res) => {
      hits.push(req.url ?? '');
      res.end('ok\n');
    });
    stub.on('upgrade', (req, socket) => {
      hits.push(`upgrade ${req.url}`);
      socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
    });
    await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
    port = (stub.address() as AddressInfo).port;
    const profile = (extra: string) => `[network]\negress_hosts = ["api.test"]\n${extra}[network.hosts]\n"api.test" = "127.0.0.1:${port}"\n[secrets.API_TOKEN]\nsource = "REAL_TOKEN"\nhosts = ["api.test"]\n`;
    writeFile(join(t.sbHome, 'agents', 'untrusted.toml'), profile(''));
    writeFile(join(t.sbHome, 'agents', 'trusted.toml'), profile(`upstream_ca_file = "${caFile}"\n`));
  });
  after(() => {
    stub.close();
    t.cleanup();
  });

  const curls = (n: number) => Array.from({ length: n }, (_, i) => `curl -sS -o /dev/null -w '%{http_code}\\n' -H "Authorization: Bearer $API_TOKEN" https://api.test:${port}/r${i}`).join('; ');

  test('agent run: 502s, one line on stderr naming the host and network.upstream_ca_file; agent audit lists each with the fix', needs('bwrap'), async () => {
    const env = { ...t.env, REAL_TOKEN: 'tok_realRealRealRealRealReal0123' };
    const r = await cli(['agent', 'run', '--profile', 'untrusted', '--silent', '--', 'sh', '-c', curls(2)], { env, cwd: t.dir, timeoutMs: 60_000 });
    assert.equal(r.stdout, '502\n502\n', r.stderr);
    assert.deepEqual(hits, []);
    const lines = r.stderr.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /TLS connection to api\.test failed \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)\), so the agent's requests to it are answered 502: .*name its PEM file in the profile's network\.upstream_ca_file/);
    const audit = await cli(['agent', 'audit'], { env, cwd: t.dir });
    assert.equal(audit.code, 0, audit.stderr);
    const failures = audit.stdout.split('\n').filter((l) => /TLS failure/.test(l));
    assert.equal(failures.length, 2, audit.stdout);
    for (const l of failures) assert.match(l, /error\s+GET api\.test:\d+ "\/r\d"\s+upstream api\.test: TLS failure \w+: .*network\.upstream_ca_file/);
    assert.match(audit.stdout, /2 errors/);

    const ok = await cli(['agent', 'run', '--profile', 'trusted', '--silent', '--', 'sh', '-c', curls(1)], { env, cwd: t.dir, timeoutMs: 60_000 });
    assert.deepEqual([ok.stdout, ok.stderr], ['200\n', '']);
    assert.deepEqual(hits, ['/r0']);
  });

  test('a WebSocket upgrade to it: 502, and the run is told', async () => {
    const ca = createRunCa(['api.test', 'free.test', 'plain.test', 'ws.test', '*.test', 'localhost', '127.0.0.1'], 'test');
    const told: TlsFailure[] = [];
    const interceptor = new Interceptor({ leaves: new LeafCache(ca), secrets: [], upstreamCa: [...tls.rootCertificates], audit: () => {}, onUpstreamTls: (f) => told.push(f) }, hostHeaderProblem);
    const proxy = createProxy({ policy: { egressHosts: ['api.test'], denyHosts: [], mapped: { 'api.test': `127.0.0.1:${port}` } }, audit: () => {}, interceptor, secrets: [] });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const proxyPort = (proxy.address() as AddressInfo).port;
    try {
      const out = await new Promise<string>((resolve, reject) => {
        const raw = netConnect(proxyPort, '127.0.0.1', () => raw.write(`CONNECT api.test:${port} HTTP/1.1\r\nHost: api.test:${port}\r\n\r\n`));
        raw.once('data', () => {
          const s = tls.connect({ socket: raw, servername: 'api.test', ca: ca.certPem }, () => {
            s.write(`GET /ws HTTP/1.1\r\nHost: api.test:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
          });
          let text = '';
          s.on('data', (d: Buffer) => (text += d.toString('latin1')));
          s.on('end', () => resolve(text));
          s.on('error', reject);
        });
      });
      assert.match(out, /^HTTP\/1\.1 502 Bad Gateway\r\n/);
      assert.deepEqual(told.map((f) => [f.host, /upstream_ca_file/.test(f.hint)]), [['api.test', true]]);
      assert.equal(hits.filter((h) => h.startsWith('upgrade')).length, 0);
    } finally {
      interceptor.close();
      proxy.close();
    }
  });
});
