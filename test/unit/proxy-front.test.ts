// The deferred listener in front of the proxy: nothing loads before the first
// connection, and what a client sends at once reaches the real server whole.
import assert from 'node:assert/strict';
import { connect, type AddressInfo } from 'node:net';
import { test } from 'node:test';
import { deferredServer } from '../../lib/proxy/front.js';
import { createProxy } from '../../lib/proxy/server.js';

function send(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.write(request));
    let out = '';
    s.setEncoding('utf8').on('data', (d: string) => (out += d));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
}

test('deferred proxy: loaded on the first connection only, once, and every request reaches it', async () => {
  let loads = 0;
  const audit: Array<Record<string, unknown>> = [];
  const front = deferredServer(async () => {
    loads++;
    await new Promise((r) => setTimeout(r, 50)); // the request is already waiting meanwhile
    return createProxy({ policy: { egressHosts: [], denyHosts: [], mapped: {} }, audit: (e) => audit.push(e) });
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  const port = (front.address() as AddressInfo).port;
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(loads, 0);
  const req = (host: string) => `GET http://${host}/x HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;
  const [a, b] = await Promise.all([send(port, req('one.test')), send(port, req('two.test'))]);
  assert.equal(loads, 1);
  for (const [out, host] of [[a, 'one.test'], [b, 'two.test']] as const) {
    assert.match(out, /^HTTP\/1\.1 403 Forbidden\r\n/);
    assert.match(out, new RegExp(`stashbase proxy refused ${host.replace('.', '\\.')}:80: `));
  }
  assert.deepEqual(audit.map((e) => [e.host, e.decision]).sort(), [['one.test', 'deny'], ['two.test', 'deny']]);
  await new Promise<void>((r) => front.close(() => r()));
});

test('deferred proxy: a loader that fails drops the connection, and the listener stays up', async () => {
  let loads = 0;
  const front = deferredServer(async () => {
    loads++;
    throw new Error('no');
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  const port = (front.address() as AddressInfo).port;
  assert.equal(await send(port, 'GET / HTTP/1.1\r\n\r\n'), '');
  assert.equal(await send(port, 'GET / HTTP/1.1\r\n\r\n'), '');
  assert.equal(loads, 1);
  await new Promise<void>((r) => front.close(() => r()));
});
