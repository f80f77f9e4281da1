// The proxy's plain-HTTP path against a real upstream on loopback.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { createProxy, hostHeaderProblem } from '../../lib/proxy/server.js';

let upstream: Server;
let proxy: Server;
let upPort = 0;
let proxyPort = 0;
const seen: string[] = [];
const audit: Array<Record<string, unknown>> = [];

before(async () => {
  upstream = createServer((req, res) => {
    seen.push(`${req.method} ${req.url} host=${req.headers.host}`);
    res.end('UPSTREAM\n');
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upPort = (upstream.address() as AddressInfo).port;
  proxy = createProxy({ policy: { egressHosts: ['ok.test'], denyHosts: [], mapped: { 'ok.test': `127.0.0.1:${upPort}` } }, audit: (e) => audit.push(e) });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyPort = (proxy.address() as AddressInfo).port;
});
after(() => {
  upstream.close();
  proxy.close();
});

function raw(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(proxyPort, '127.0.0.1', () => s.write(request));
    let out = '';
    s.setEncoding('utf8').on('data', (d: string) => (out += d));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
}

test('an allowed host goes through, with its own Host', async () => {
  seen.length = 0;
  const r = await raw(`GET http://ok.test:${upPort}/a?b=1 HTTP/1.1\r\nHost: ok.test:${upPort}\r\nConnection: close\r\n\r\n`);
  assert.match(r, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(r, /\r\n\r\nUPSTREAM\n$/);
  assert.deepEqual(seen, [`GET /a?b=1 host=ok.test:${upPort}`]);
});

test('a Host header that differs from the target is refused and reaches no upstream', async () => {
  seen.length = 0;
  const r = await raw(`GET http://ok.test:${upPort}/ HTTP/1.1\r\nHost: evil.test\r\nConnection: close\r\n\r\n`);
  assert.match(r, /^HTTP\/1\.1 400 Bad Request\r\n/);
  assert.match(r, /\r\nX-Stashbase-Denied: Host header differs from the request target\r\n/);
  assert.match(r, new RegExp(`stashbase proxy refused ok\\.test:${upPort}: Host header differs from the request target\\n$`));
  assert.deepEqual(seen, []);
});

test('a duplicate Host header is refused', async () => {
  seen.length = 0;
  const r = await raw(`GET http://ok.test:${upPort}/ HTTP/1.1\r\nHost: ok.test:${upPort}\r\nHost: ok.test:${upPort}\r\nConnection: close\r\n\r\n`);
  assert.match(r, /^HTTP\/1\.1 400 /);
  assert.deepEqual(seen, []);
});

test('a host outside egress_hosts gets 403 naming the rule, for plain HTTP and CONNECT alike', async () => {
  const plain = await raw('GET http://nope.test/ HTTP/1.1\r\nHost: nope.test\r\nConnection: close\r\n\r\n');
  const tunnel = await raw('CONNECT nope.test:443 HTTP/1.1\r\nHost: nope.test:443\r\n\r\n');
  for (const r of [plain, tunnel]) {
    assert.match(r, /^HTTP\/1\.1 403 Forbidden\r\n/);
    assert.match(r, /\r\nX-Stashbase-Denied: not in egress_hosts\r\n/);
  }
  assert.match(plain, /stashbase proxy refused nope\.test:80: not in egress_hosts\n$/);
  assert.match(tunnel, /stashbase proxy refused nope\.test:443: not in egress_hosts\n$/);
});

test('TRACE is refused', async () => {
  seen.length = 0;
  const r = await raw(`TRACE http://ok.test:${upPort}/ HTTP/1.1\r\nHost: ok.test:${upPort}\r\nConnection: close\r\n\r\n`);
  assert.match(r, /^HTTP\/1\.1 403 Forbidden\r\n/);
  assert.deepEqual(seen, []);
});

test('hostHeaderProblem: default ports, case, brackets', () => {
  assert.equal(hostHeaderProblem(['Host', 'OK.test'], 'ok.test', 80), null);
  assert.equal(hostHeaderProblem(['host', 'ok.test:80'], 'ok.test', 80), null);
  assert.equal(hostHeaderProblem(['Host', 'ok.test:8080'], 'ok.test', 80), 'Host header differs from the request target');
  assert.equal(hostHeaderProblem(['Host', '[::1]:8080'], '[::1]', 8080), null);
  assert.equal(hostHeaderProblem([], 'ok.test', 80), null);
});
