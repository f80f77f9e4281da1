// The proxy's plain-HTTP path against a real upstream on loopback.
import assert from 'node:assert/strict';
import { formatAudit } from '../../lib/run/audit-read.js';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { createProxy, hostHeaderProblem } from '../../lib/proxy/server.js';
import { postInPieces } from '../helpers.js';

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
  assert.match(plain, /stashbase proxy refused nope\.test:80: not in egress_hosts\. This sandbox reaches only the hosts its profile allows; if the task needs this one, ask the user to add it to the profile's \[network\] egress_hosts\.\n$/);
  assert.match(tunnel, /stashbase proxy refused nope\.test:443: not in egress_hosts\. This sandbox/);
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

test('request-smuggling shapes get 400 and reach no upstream', async () => {
  const target = `http://ok.test:${upPort}/`;
  const host = `Host: ok.test:${upPort}\r\n`;
  const shapes = {
    'CL+TE': `POST ${target} HTTP/1.1\r\n${host}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    'duplicate Content-Length': `POST ${target} HTTP/1.1\r\n${host}Content-Length: 4\r\nContent-Length: 5\r\n\r\nabcde`,
    'obs-fold': `GET ${target} HTTP/1.1\r\n${host}X-A: a\r\n b\r\n\r\n`,
    'bare LF': `GET ${target} HTTP/1.1\n${host}\n`,
    'space before colon': `GET ${target} HTTP/1.1\r\n${host}Content-Length : 0\r\n\r\n`,
  };
  for (const [name, request] of Object.entries(shapes)) {
    seen.length = 0;
    const r = await raw(request);
    assert.match(r, /^HTTP\/1\.1 400 Bad Request\r\n/, name);
    assert.deepEqual(seen, [], name);
  }
});

test('every request on a kept-alive connection is judged, not only the first', async () => {
  seen.length = 0;
  const r = await raw(
    `GET http://ok.test:${upPort}/one HTTP/1.1\r\nHost: ok.test:${upPort}\r\n\r\n` +
      `GET http://nope.test/two HTTP/1.1\r\nHost: nope.test\r\nConnection: close\r\n\r\n`,
  );
  assert.match(r, /^HTTP\/1\.1 200 OK\r\n[\s\S]*UPSTREAM\n[\s\S]*HTTP\/1\.1 403 Forbidden\r\n/);
  assert.deepEqual(seen, [`GET /one host=ok.test:${upPort}`]);
});

test('an oversized head is refused (431)', async () => {
  const r = await raw(`GET http://ok.test:${upPort}/ HTTP/1.1\r\nHost: ok.test:${upPort}\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`);
  assert.match(r, /^HTTP\/1\.1 431 /);
});

test('a client too slow with its head is cut off; others are served meanwhile', async () => {
  const slow = createProxy({ policy: { egressHosts: ['ok.test'], denyHosts: [], mapped: { 'ok.test': `127.0.0.1:${upPort}` } }, audit: () => {}, limits: { headTimeoutMs: 300 } });
  await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
  const port = (slow.address() as AddressInfo).port;
  const started = Date.now();
  const closed = new Promise<number>((resolve) => {
    const s = connect(port, '127.0.0.1', () => s.write('GET http://ok.test/ HTTP/1.1\r\nHost: ok'));
    s.resume(); // reads, as a client does: its end comes after what it was sent
    s.on('close', () => resolve(Date.now() - started));
    s.on('error', () => {});
  });
  const fast = await new Promise<string>((resolve) => {
    const s = connect(port, '127.0.0.1', () => s.write(`GET http://ok.test:${upPort}/ HTTP/1.1\r\nHost: ok.test:${upPort}\r\nConnection: close\r\n\r\n`));
    let out = '';
    s.setEncoding('utf8').on('data', (d: string) => (out += d));
    s.on('end', () => resolve(out));
  });
  assert.match(fast, /UPSTREAM/);
  const after = await closed;
  slow.close();
  assert.ok(after < 10_000, `closed after ${after} ms`);
});

test('malformed input and resets do not take the proxy down', async () => {
  for (let i = 0; i < 20; i++) {
    await new Promise<void>((resolve) => {
      const s = connect(proxyPort, '127.0.0.1', () => {
        s.write(i % 2 ? '\x00\xff garbage\r\n\r\n' : 'CONNECT ok.test');
        s.destroy();
        resolve();
      });
      s.on('error', () => resolve());
    });
  }
  const r = await raw(`GET http://ok.test:${upPort}/alive HTTP/1.1\r\nHost: ok.test:${upPort}\r\nConnection: close\r\n\r\n`);
  assert.match(r, /UPSTREAM/);
});

/** Listens with the proxy; each call sends one raw request on a new connection and gives back all it got until the close. */
async function sender(p: import('node:net').Server): Promise<(req: string) => Promise<string>> {
  await new Promise<void>((r) => p.listen(0, '127.0.0.1', r));
  const port = (p.address() as AddressInfo).port;
  return (req) =>
    new Promise<string>((resolve) => {
      const s = connect(port, '127.0.0.1', () => s.write(req));
      let out = '';
      s.setEncoding('utf8').on('data', (d: string) => (out += d));
      s.on('close', () => resolve(out));
    });
}

test('resolution happens once, after the policy, and refused addresses are never dialled (DNS rebinding, metadata)', async () => {
  const asked: string[] = [];
  const answers: Record<string, string[]> = { 'meta.test': ['169.254.169.254'], 'sneaky.test': ['127.0.0.1'], 'mixed.test': ['10.0.0.1', 'fd00::1'] };
  const p = createProxy({
    policy: { egressHosts: ['*.test'], denyHosts: ['denied.test'], mapped: {} },
    audit: () => {},
    resolve: async (host) => {
      asked.push(host);
      return answers[host] ?? [];
    },
  });
  const send = await sender(p);
  try {
    const meta = await send('CONNECT meta.test:443 HTTP/1.1\r\nHost: meta.test:443\r\n\r\n');
    assert.match(meta, /^HTTP\/1\.1 403 Forbidden\r\n[\s\S]*meta\.test resolves only to refused addresses \(169\.254\.169\.254 is a loopback, link-local, private or reserved address\)/);
    const sneaky = await send('GET http://sneaky.test/ HTTP/1.1\r\nHost: sneaky.test\r\nConnection: close\r\n\r\n');
    assert.match(sneaky, /^HTTP\/1\.1 403 Forbidden\r\n[\s\S]*sneaky\.test resolves only to refused addresses \(127\.0\.0\.1 is a loopback/);
    const mixed = await send('CONNECT mixed.test:443 HTTP/1.1\r\nHost: mixed.test:443\r\n\r\n');
    assert.match(mixed, /^HTTP\/1\.1 403 Forbidden\r\n/);
    const denied = await send('CONNECT denied.test:443 HTTP/1.1\r\nHost: denied.test:443\r\n\r\n');
    assert.match(denied, /X-Stashbase-Denied: deny_hosts "denied\.test"\r\n/);
    const port22 = await send('CONNECT meta.test:22 HTTP/1.1\r\nHost: meta.test:22\r\n\r\n');
    assert.match(port22, /^HTTP\/1\.1 403 Forbidden\r\n/);
    // each allowed name is resolved exactly once; a denied name or port never
    assert.deepEqual(asked, ['meta.test', 'sneaky.test', 'mixed.test']);
  } finally {
    p.close();
  }
});

test('an allowed name the resolver cannot answer for is an error (502), audited and counted as one, never a denial; CONNECT and plain HTTP', async () => {
  const events: Array<Record<string, unknown>> = [];
  const p = createProxy({
    policy: { egressHosts: ['*.test'], denyHosts: [], mapped: {} },
    audit: (e) => events.push(e),
    resolve: async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    },
  });
  const send = await sender(p);
  try {
    assert.match(await send('CONNECT gone.test:443 HTTP/1.1\r\nHost: gone.test:443\r\n\r\n'), /^HTTP\/1\.1 502 Bad Gateway\r\n[\s\S]*stashbase proxy could not reach gone\.test:443: cannot resolve gone\.test: ENOTFOUND\n$/);
    assert.match(await send('GET http://gone.test/ HTTP/1.1\r\nHost: gone.test\r\nConnection: close\r\n\r\n'), /^HTTP\/1\.1 502 Bad Gateway\r\n/);
    assert.deepEqual(events.map((e) => [e.method, e.decision, e.status, e.rule]), [['CONNECT', 'error', 502, 'cannot resolve gone.test: ENOTFOUND'], ['GET', 'error', 502, 'cannot resolve gone.test: ENOTFOUND']]);
    assert.match(formatAudit(events.map((e) => ({ time: '2026-12-05T00:00:00.000Z', ...e }))), /2 proxy decisions: 0 allowed, 0 denied, 2 errors/);
  } finally {
    p.close();
  }
});

test('the body guard: a value split across chunks is found before any of it is passed on; other bytes pass unchanged', async () => {
  const { BodyGuard, BodyRefused } = await import('../../lib/proxy/body-guard.js');
  const needle = Buffer.from('SECRETVALUE');
  const feed = async (chunks: string[]) => {
    const g = new BodyGuard([{ needle, rule: 'the rule', suspect: 'S' }]);
    const out: string[] = [];
    g.on('data', (d: Buffer) => out.push(String(d)));
    const done = new Promise<Error | null>((resolve) => {
      g.on('error', resolve);
      g.on('end', () => resolve(null));
    });
    for (const c of chunks) g.write(c);
    g.end();
    return { err: await done, out: out.join('') };
  };
  const hit = await feed(['aaaa SECR', 'ETVA', 'LUE zzz']);
  assert.ok(hit.err instanceof BodyRefused);
  assert.deepEqual([(hit.err as InstanceType<typeof BodyRefused>).rule, hit.out.includes('SECR')], ['the rule', false]);
  assert.deepEqual(await feed(['aaaa SECRE', 'T VALUE', ' SECRETVALU']), { err: null, out: 'aaaa SECRET VALUE SECRETVALU' });
});

test('(review, round 38) plain HTTP, a body in pieces: a value whose end waits unread when the agent goes is refused and audited; one the 2 ms release finds is answered 403 without another byte; control: with no secret to look for, the same pieces go whole', async (t) => {
  const REAL = 'ghp_realRealRealRealRealRealReal0123456';
  const secrets = [{ name: 'GITHUB_TOKEN', placeholder: 'ghp_SBPHplaceholderPlaceholderPlace01', real: REAL, hosts: ['bound.test'], inQuery: false, allowPlaintext: false }];
  let got = '';
  const up = createServer((req, res) => {
    req.setEncoding('latin1').on('data', (d: string) => (got += d));
    req.on('end', () => res.end('UPSTREAM\n'));
  });
  await new Promise<void>((r) => up.listen(0, '127.0.0.1', r));
  const mapped = { 'ok.test': `127.0.0.1:${(up.address() as AddressInfo).port}` };
  const local: Array<Record<string, unknown>> = [];
  const guarded = createProxy({ policy: { egressHosts: ['ok.test'], denyHosts: [], mapped }, audit: (e) => local.push(e), secrets });
  const open = createProxy({ policy: { egressHosts: ['ok.test'], denyHosts: [], mapped }, audit: () => {} });
  const portOf = async (p: Server) => {
    await new Promise<void>((r) => p.listen(0, '127.0.0.1', r));
    return (p.address() as AddressInfo).port;
  };
  const [gPort, oPort] = [await portOf(guarded), await portOf(open)];
  /** A POST whose body goes in pieces; then the agent goes (`close`) or listens (test/helpers.ts). */
  const post = (port: number, body: string[], close: boolean) => {
    const s = connect(port, '127.0.0.1');
    return postInPieces(s, (n) => `POST http://ok.test/x HTTP/1.1\r\nHost: ok.test\r\nContent-Length: ${n}\r\n\r\n`, body, close);
  };
  const refusals = () => local.filter((e) => e.exfiltration === true).length;
  t.after(() => {
    for (const p of [guarded, open, up]) {
      p.closeAllConnections();
      p.close();
    }
  });
  await post(gPort, [`${'x'.repeat(40)}${REAL.slice(0, 20)}`, REAL.slice(20)], true);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(refusals(), 1, 'the value waiting unread when the agent went is audited as refused');
  const found = await post(gPort, [`${'x'.repeat(40)}${REAL.slice(0, 20)}`, `${REAL.slice(20)}\n`], false);
  assert.match(found, /^HTTP\/1\.1 403 Forbidden\r\n/);
  assert.equal(refusals(), 2);
  assert.equal(got.includes(REAL.slice(0, 12)), false);
  got = '';
  const whole = await post(oPort, [`${'x'.repeat(40)}${REAL.slice(0, 20)}`, `${REAL.slice(20)}\n`], false);
  assert.match(whole, /^HTTP\/1\.1 200 OK\r\n/);
  assert.equal(got, `${'x'.repeat(40)}${REAL}\n`);
});

test('plain HTTP: the real value in a request body headed to an unbound host is refused and reaches no upstream; its placeholder passes inert', async () => {
  const PH = 'ghp_SBPHplaceholderPlaceholderPlace01';
  const REAL = 'ghp_realRealRealRealRealRealReal0123456';
  const local: Array<Record<string, unknown>> = [];
  const secrets = [{ name: 'GITHUB_TOKEN', placeholder: PH, real: REAL, hosts: ['bound.test'], inQuery: false, allowPlaintext: false }];
  const p = createProxy({ policy: { egressHosts: ['ok.test'], denyHosts: [], mapped: { 'ok.test': `127.0.0.1:${upPort}` } }, audit: (e) => local.push(e), secrets });
  await new Promise<void>((r) => p.listen(0, '127.0.0.1', r));
  const port = (p.address() as AddressInfo).port;
  const post = (body: string) => new Promise<string>((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.write(`POST http://ok.test/x HTTP/1.1\r\nHost: ok.test\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`));
    let text = '';
    s.setEncoding('utf8').on('data', (d: string) => (text += d));
    s.on('end', () => resolve(text));
    s.on('error', reject);
  });
  seen.length = 0;
  const out = await post(`token=${REAL}`);
  assert.match(out, /^HTTP\/1\.1 403 Forbidden\r\n/);
  assert.match(out, /\r\n\r\nstashbase proxy refused ok\.test:80: the real value of GITHUB_TOKEN headed to ok\.test \(request body\), which it is not bound to\n$/);
  assert.deepEqual(seen, []);
  assert.deepEqual(local.filter((e) => e.exfiltration === true).map((e) => [e.decision, e.secret]), [['deny', 'GITHUB_TOKEN']]);
  const inert = await post(`token=${PH}`);
  p.close();
  assert.match(inert, /^HTTP\/1\.1 200 OK\r\n/);
  assert.equal(seen.length, 1);
});
