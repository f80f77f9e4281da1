// The intercepting proxy against a hostile upstream and a hostile client, in
// process (issue 16, one test per item): no real value ever comes back in any
// form, policy holds after an upgrade, streams are not delayed, a short body
// or a stall is answered at once, slow heads time out, floods stay bounded,
// and real clients get what they sent for.
import assert from 'node:assert/strict';
import { connect as netConnect, createServer as createTcp, type Server as TcpServer } from 'node:net';
import type { Server } from 'node:http';
import { readFileSync, statSync } from 'node:fs';
import tls from 'node:tls';
import { gunzipSync, gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { AuditLog } from '../../lib/run/audit.js';
import { Interceptor } from '../../lib/proxy/intercept.js';
import { scrubPairs } from '../../lib/proxy/scrub.js';
import { ScrubStream } from '../../lib/proxy/scrub-stream.js';
import { createProxy, hostHeaderProblem } from '../../lib/proxy/server.js';
import type { BoundSecret } from '../../lib/proxy/secrets.js';
import { createRunCa } from '../../lib/tls/ca.js';
import { LeafCache } from '../../lib/tls/leaves.js';
import { listen, tempHome } from '../helpers.js';
import { leaks } from '../leak-check.js';
import { reader, text, toProxy, tunnel } from '../proxy-client.js';
import { type Stub, startStub } from '../proxy-stubs.js';
import { frame, messages, readFrames } from '../ws-util.js';

/** An HTTP/1.1 message's chunked body, joined (the head and anything not chunked are returned as they are). */
function dechunked(message: string): string {
  const at = message.indexOf('\r\n\r\n');
  if (at < 0 || !/\r\nTransfer-Encoding: chunked\r\n/i.test(message.slice(0, at + 2))) return message;
  let rest = message.slice(at + 4);
  let body = '';
  for (;;) {
    const eol = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, eol), 16);
    if (!(size > 0)) break;
    body += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
  return message.slice(0, at + 4) + body;
}

// Reserved characters, so that its percent-encoded form differs from it.
const REAL = 'sk-ant-api03-R3al/Va1ue+Secret=0123456789abcdefXYZ';
const PH = 'sk-ant-api03-SBPHplaceholderPlaceholder0123456789Z';
assert.equal(PH.length, REAL.length);

describe('the intercepting proxy against a hostile upstream (issue 16)', () => {
  const t = tempHome();
  let api: Stub; // a secret is bound to it
  let free: Stub; // allowed, nothing bound
  let plain: Stub; // plain HTTP, reached by CONNECT to port 80
  let proxy: Server;
  let interceptor: Interceptor;
  let port = 0;
  let caPem = '';
  let audit: AuditLog;
  const secrets = (): BoundSecret[] => [{ name: 'ANTHROPIC_API_KEY', placeholder: PH, real: REAL, hosts: ['api.test'], inQuery: true, allowPlaintext: false }];

  before(async () => {
    api = await startStub('api.test');
    free = await startStub('free.test');
    plain = await startStub('plain.test', true);
    const ca = createRunCa(['api.test', 'free.test', 'plain.test', 'ws.test', '*.test', 'localhost', '127.0.0.1'], 'test');
    caPem = ca.certPem;
    audit = new AuditLog(t.sbHome, 'ags_hhhhhhhhhhhhhhhh', 1024 * 1024);
    const limits = { headTimeoutMs: 1000, maxConnections: 200, upstreamSocketsPerHost: 4, auditMaxBytes: 1024 * 1024, mcpBodiesMaxBytes: 64 << 20 };
    interceptor = new Interceptor({ leaves: new LeafCache(ca), secrets: secrets(), upstreamCa: [api.caPem, free.caPem], audit: (e) => audit.write(e), limits }, hostHeaderProblem);
    const mapped = { 'api.test': `127.0.0.1:${api.port}`, 'free.test': `127.0.0.1:${free.port}`, 'plain.test': `127.0.0.1:${plain.port}` };
    proxy = createProxy({ policy: { egressHosts: ['api.test', 'free.test', 'plain.test'], denyHosts: [], mapped }, audit: (e) => audit.write(e), interceptor, secrets: secrets(), limits });
    port = await listen(proxy);
  });
  after(async () => {
    interceptor.close();
    proxy.close();
    // Connections the last test cut are audited as they close; then the batch goes out before its folder does.
    await new Promise((res) => setTimeout(res, 150));
    audit.close();
    for (const s of [api, free, plain]) s.close();
    t.cleanup();
  });

  const open = (host: string, o: { plain?: boolean } = {}) => tunnel(port, host, host === 'plain.test' ? 80 : 443, { caPem, plain: o.plain });
  const get = (path: string, host: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${extra}\r\n`;

  test('1: after an Upgrade the 101 head and every frame are scrubbed: an echoed subprotocol, an echoed header, a message', async () => {
    const s = await open('api.test');
    const r = reader(s);
    s.write(get('/ws', 'api.test', `Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: ${PH}\r\nSec-WebSocket-Extensions: permessage-deflate\r\nAuthorization: Bearer ${PH}\r\n`));
    await r.until(`hello Bearer ${PH}`);
    s.write(frame(`say ${PH}`));
    const wsMessages = (all: Buffer) => messages(readFrames(all.subarray(all.indexOf('\r\n\r\n') + 4)).frames);
    await r.until((all) => wsMessages(all).includes(`echo:say ${PH}`));
    s.destroy();
    const head = text(r.all()).split('\r\n\r\n')[0]!;
    assert.match(head, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
    assert.match(head, new RegExp(`\r\nSec-WebSocket-Protocol: ${PH}\r\n`));
    assert.doesNotMatch(head, /Sec-WebSocket-Extensions/i, 'no extension negotiated');
    assert.deepEqual(leaks(r.all(), REAL), []);
    // The upstream got the real value (and no offer of compression it could have taken up).
    assert.ok(api.log.auths.includes(`Bearer ${REAL}`));
    const body = r.all().subarray(r.all().indexOf('\r\n\r\n') + 4);
    assert.deepEqual(messages(readFrames(body).frames), [`hello Bearer ${PH}`, `echo:say ${PH}`]);
  });

  test("5: a 101's Upgrade is the value the agent offered, whatever letter case the upstream spelled it in; control: straight from the host it is the upstream's", async () => {
    const ws = 'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n';
    const s = await open('api.test');
    const r = reader(s);
    s.write(get('/ws-case', 'api.test', ws));
    await r.until('\r\n\r\n');
    s.destroy();
    assert.match(text(r.all()), /^HTTP\/1\.1 101 Switching Protocols\r\n(?:.*\r\n)*Upgrade: websocket\r\n/);
    assert.doesNotMatch(text(r.all()), /wEBsOCkeT/);
    const direct = await new Promise<string>((resolve, reject) => {
      const c = tls.connect({ host: '127.0.0.1', port: api.port, servername: 'api.test', ca: api.caPem }, () => c.write(get('/ws-case', 'api.test', ws)));
      c.once('data', (d: Buffer) => {
        resolve(d.toString('latin1'));
        c.destroy();
      }).on('error', reject);
    });
    assert.match(direct, /\r\nUpgrade: wEBsOCkeT\r\n/);
  });

  test('1: an upstream that answers an Upgrade with a plain 200 echoing headers is scrubbed too, and then the connection ends (4)', async () => {
    const before = api.log.requests.length;
    const s = await open('api.test');
    const r = reader(s);
    s.write(get('/upgrade-200', 'api.test', `Upgrade: websocket\r\nConnection: Upgrade\r\nAuthorization: Bearer ${PH}\r\n`));
    await r.until('"url"');
    // Item 4: what follows on the same connection never reaches the upstream.
    s.write(get('/again', 'evil.example'));
    s.write(`GET https://evil.example/abs HTTP/1.1\r\nHost: evil.example\r\n\r\n`);
    await r.closed;
    assert.match(text(r.all()), /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(text(r.all()), new RegExp(`X-Echo-Auth: Bearer ${PH}\r\n`));
    assert.deepEqual(leaks(r.all(), REAL), []);
    assert.deepEqual(api.log.smuggled, []);
    assert.deepEqual(api.log.requests.slice(before), ['GET api.test /upgrade-200']);
  });

  test('4: after a WebSocket upgrade, HTTP written into the stream never reaches the upstream: the connection is closed', async () => {
    const before = api.log.requests.length;
    const s = await open('api.test');
    const r = reader(s);
    s.write(get('/ws', 'api.test', 'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n'));
    await r.until('hello');
    s.write(`GET /smuggled HTTP/1.1\r\nHost: evil.example\r\n\r\n`);
    await r.closed;
    await new Promise((res) => setTimeout(res, 100));
    assert.deepEqual(api.log.smuggled, []);
    assert.deepEqual(api.log.requests.slice(before), ['GET api.test /ws']);
  });

  test('4: a refusal is the connection\'s last words: an upgrade written in the same packet behind a refused request reaches no upstream', async () => {
    for (const [host, stub] of [['plain.test', plain], ['api.test', api]] as const) {
      const before = stub.log.requests.length;
      const s = await open(host);
      const r = reader(s);
      s.write(get('/', 'evil.example') + get(`/ws-after-refusal-${host}`, host, `Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${PH}\r\n`));
      await r.closed;
      await new Promise((res) => setTimeout(res, 100));
      assert.match(text(r.all()), /^HTTP\/1\.1 400 Bad Request\r\n[^]*Connection: close\r\n/, host);
      assert.equal([...text(r.all()).matchAll(/HTTP\/1\.1 /g)].length, 1, `${host}: one answer, the refusal`);
      assert.deepEqual(stub.log.requests.slice(before), [], host);
    }
    // Not even tried: an upstream request cut before it went out would still be in the audit.
    audit.flush();
    await new Promise((res) => setTimeout(res, 150));
    assert.equal(readFileSync(audit.file, 'utf8').includes('/ws-after-refusal-'), false, 'the upgrade was taken up');
  });

  test('1: an upstream that takes up an extension it was not offered, and an upgrade to another protocol, get no raw pipe', async () => {
    const s = await open('api.test');
    const r = reader(s);
    s.write(get('/ws-deflate', 'api.test', 'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n'));
    await r.closed;
    assert.match(text(r.all()), /^HTTP\/1\.1 502 Bad Gateway\r\n/);
    // h2c is not in network.allow_upgrades: the request goes on as a plain one.
    const before = api.log.requests.length;
    const h = await open('api.test');
    const hr = reader(h);
    h.write(get('/h2c', 'api.test', 'Upgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n'));
    await hr.until('ok /h2c');
    h.destroy();
    assert.match(text(hr.all()), /^HTTP\/1\.1 200 OK\r\n/);
    assert.deepEqual(api.log.requests.slice(before), ['GET api.test /h2c'], 'as a plain request: no upgrade handler ran');
  });

  test('2: a compressed answer (gzip, br) from a bound host is decoded, scrubbed and passed on plain; an encoding nobody can decode is refused', async () => {
    for (const path of ['/gzip', '/br']) {
      const s = await open('api.test');
      const r = reader(s);
      s.write(get(path, 'api.test', `Authorization: Bearer ${PH}\r\nAccept-Encoding: gzip, br\r\nConnection: close\r\n`));
      await r.closed;
      const all = text(r.all());
      assert.match(all, /^HTTP\/1\.1 200 OK\r\n/, path);
      assert.doesNotMatch(all.split('\r\n\r\n')[0]!, /content-encoding/i, path);
      // The body as the agent's client reads it: chunks joined (the window goes on its own timer, in a chunk of its own).
      assert.match(dechunked(all), new RegExp(`"auth":"Bearer ${PH}"`), path);
      assert.deepEqual(leaks(r.all(), REAL), [], path);
    }
    const s = await open('api.test');
    const r = reader(s);
    s.write(get('/odd-encoding', 'api.test', `Authorization: Bearer ${PH}\r\nConnection: close\r\n`));
    await r.closed;
    assert.match(text(r.all()), /^HTTP\/1\.1 502 Bad Gateway\r\nContent-Type: text\/plain; charset=utf-8\r\nX-Stashbase-Denied: the upstream sent a body in content-encoding the proxy does not know, which the proxy cannot scrub\r\n/);
    assert.deepEqual(leaks(r.all(), REAL), []);
  });

  test('2: a stored value read back in byte ranges (unnamed: each range a message of its own, scrubbed alone): Range never reaches the host, the whole answer comes scrubbed; control: straight from the host, two ranges give the value', async () => {
    const s = await open('api.test');
    const r = reader(s);
    s.write(get('/store', 'api.test', `Authorization: Bearer ${PH}\r\nX-Note: ${PH}\r\nConnection: close\r\n`));
    await r.closed;
    const half = REAL.length >> 1;
    const parts: string[] = [];
    for (const range of [`bytes=0-${half - 1}`, `bytes=${half}-${REAL.length}`]) {
      const f = await open('free.test');
      const fr = reader(f);
      f.write(get('/stored', 'free.test', `Range: ${range}\r\nIf-Range: "x"\r\nConnection: close\r\n`));
      await fr.closed;
      assert.match(text(fr.all()), /^HTTP\/1\.1 200 OK\r\n/);
      assert.ok(dechunked(text(fr.all())).endsWith(`\r\n\r\n${PH}\n`), text(fr.all()));
      parts.push(text(fr.all()));
    }
    assert.deepEqual(leaks(Buffer.from(parts.join(''), 'latin1'), REAL), []);
    const direct = async (range: string) => new Promise<string>((resolve, reject) => {
      const c = tls.connect({ host: '127.0.0.1', port: free.port, servername: 'free.test', ca: free.caPem }, () => c.end(get('/stored', 'free.test', `Range: ${range}\r\nConnection: close\r\n`)));
      const got: Buffer[] = [];
      c.on('data', (d: Buffer) => got.push(d)).on('end', () => resolve(dechunked(Buffer.concat(got).toString('latin1')).split('\r\n\r\n')[1] ?? '')).on('error', reject);
    });
    assert.equal(`${await direct(`bytes=0-${half - 1}`)}${await direct(`bytes=${half}-${REAL.length}`)}`, `${REAL}\n`);
  });

  test('2: a value the upstream splits with a pause longer than the release (unnamed: the agent can make one by reading slowly) still comes back whole as the placeholder; control: straight from the host the first write holds its first part', async () => {
    const s = await open('api.test');
    const r = reader(s);
    s.write(get('/split-echo', 'api.test', `Authorization: token ${PH}\r\nConnection: close\r\n`));
    await r.closed;
    assert.ok(dechunked(text(r.all())).endsWith(`{"auth":"token ${PH}"}`), text(r.all()));
    assert.deepEqual(leaks(r.all(), REAL), []);
    // The part after the public prefix the two share.
    assert.equal(text(r.all()).includes(REAL.slice(13, 20)), false);
    const first = await new Promise<string>((resolve, reject) => {
      const c = tls.connect({ host: '127.0.0.1', port: api.port, servername: 'api.test', ca: api.caPem }, () => c.write(get('/split-echo', 'api.test', `Authorization: token ${REAL}\r\n`)));
      c.once('data', (d: Buffer) => {
        resolve(d.toString('latin1'));
        c.destroy();
      }).on('error', reject);
    });
    assert.ok(first.includes(REAL.slice(0, 20)) && !first.includes(REAL), first);
  });

  test("(review, round 37) the value named in a bound host's error as frameworks escape it (.NET's JSON `\\u002B`, Go's html/template `&#43;`), written 7 bytes at a time with pauses past the release: it comes back as the placeholder, and no decoding of what the agent read gives the value; control: straight from the host, decoding its answer gives it", async () => {
    const s = await open('api.test');
    const r = reader(s);
    s.write(get('/escaped-error', 'api.test', `Authorization: token ${PH}\r\nConnection: close\r\n`));
    await r.closed;
    const body = dechunked(text(r.all()));
    assert.ok(body.endsWith(`{"error":"invalid key ${PH}"}\n<p>The key <code>${PH}</code> is not valid.</p>\n`), body);
    assert.deepEqual(leaks(r.all(), REAL), []);
    const direct = await new Promise<string>((resolve, reject) => {
      const c = tls.connect({ host: '127.0.0.1', port: api.port, servername: 'api.test', ca: api.caPem }, () => c.write(get('/escaped-error', 'api.test', `Authorization: token ${REAL}\r\nConnection: close\r\n`)));
      const got: Buffer[] = [];
      c.on('data', (d: Buffer) => got.push(d)).on('end', () => resolve(dechunked(Buffer.concat(got).toString('latin1')))).on('error', reject);
    });
    assert.ok(direct.includes('\\u002BSecret') && direct.includes('&#43;Secret'), direct);
    assert.deepEqual(leaks(direct, REAL), ['escaped']);
  });

  test("2: a value a bound host stored comes back scrubbed from another allowed host no secret is bound to: gzip (the agent asked for it), straddling byte 16,384, plain; control: the same answer straight from the host holds it", async () => {
    const s = await open('api.test');
    const r = reader(s);
    s.write(get('/store', 'api.test', `Authorization: Bearer ${PH}\r\nX-Note: ${PH}\r\nConnection: close\r\n`));
    await r.closed;
    for (const path of ['/stored?gzip', '/stored?at=16384', '/stored?at=65536', '/stored']) {
      const f = await open('free.test');
      const fr = reader(f);
      f.write(get(path, 'free.test', 'Accept-Encoding: gzip, br\r\nConnection: close\r\n'));
      await fr.closed;
      const all = text(fr.all());
      assert.match(all, /^HTTP\/1\.1 200 OK\r\n/, path);
      assert.doesNotMatch(all.split('\r\n\r\n')[0]!, /content-encoding/i, path);
      assert.ok(dechunked(all).includes(`${PH}\n`), path);
      assert.deepEqual(leaks(fr.all(), REAL), [], path);
    }
    // The control: what the host itself serves holds the real value (the stub kept what the proxy substituted).
    const direct = await new Promise<Buffer>((resolve, reject) => {
      const c = tls.connect({ host: '127.0.0.1', port: free.port, servername: 'free.test', ca: free.caPem }, () => c.end(get('/stored?gzip', 'free.test', 'Connection: close\r\n')));
      const got: Buffer[] = [];
      c.on('data', (d: Buffer) => got.push(d)).on('end', () => resolve(Buffer.concat(got))).on('error', reject);
    });
    const joined = dechunked(direct.toString('latin1'));
    assert.ok(gunzipSync(Buffer.from(joined.slice(joined.indexOf('\r\n\r\n') + 4), 'latin1')).toString('latin1').includes(REAL));
  });

  test("1: the proxy's own words never repeat what a bound host sent: a Content-Encoding, a transfer-coding and a 101's Upgrade that carry the value are refused without it, in the answer and the audit", async () => {
    const answers: Buffer[] = [];
    for (const path of ['/echo-encoding', '/te-gzip']) {
      const s = await open('api.test');
      const r = reader(s);
      s.write(get(path, 'api.test', `Authorization: Bearer ${PH}\r\nConnection: close\r\n`));
      await r.closed;
      answers.push(r.all());
    }
    const u = await open('api.test');
    const ur = reader(u);
    u.write(get('/ws-echo-upgrade', 'api.test', `Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${PH}\r\n`));
    await ur.closed;
    answers.push(ur.all());
    const [encoding, transfer, upgrade] = answers.map((a) => text(a).split('\r\n\r\n')[0]!.split('\r\n').find((l) => l.startsWith('X-Stashbase-Denied: ')));
    assert.equal(encoding, 'X-Stashbase-Denied: the upstream sent a body in content-encoding the proxy does not know, which the proxy cannot scrub');
    assert.equal(transfer, 'X-Stashbase-Denied: the upstream sent a body in transfer-encoding "gzip, chunked", which the proxy does not pass on');
    assert.equal(upgrade, 'X-Stashbase-Denied: the upstream switched protocols on terms the proxy did not offer (it offered "websocket" without extensions)');
    for (const a of answers) {
      assert.match(text(a), /^HTTP\/1\.1 502 Bad Gateway\r\n/);
      assert.deepEqual(leaks(a, REAL), []);
      // Lower-cased, as a coding's name is read: not a form scrubbing looks for, so never written at all.
      assert.equal(text(a).toLowerCase().includes(REAL.toLowerCase()), false);
    }
    assert.ok(api.log.auths.filter((x) => x === `Bearer ${REAL}`).length >= 3, 'the upstream got the real value each time');
    await new Promise((res) => setTimeout(res, 150));
    audit.flush();
    const log = readFileSync(audit.file, 'utf8');
    assert.equal(log.toLowerCase().includes(REAL.toLowerCase()), false, 'the audit log holds the value');
  });

  test('a WebSocket message carrying the real value toward a host it is not bound to: the frame never leaves, and the audit names it an exfiltration attempt, with the secret, as every other path does', async () => {
    const before = free.log.bodies.length;
    const s = await open('free.test');
    const r = reader(s);
    s.write(get('/ws', 'free.test', 'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n'));
    await r.until('101 Switching');
    s.write(frame(`leak ${REAL}`));
    await r.closed;
    assert.equal(free.log.bodies.slice(before).some((b) => b.includes(REAL)), false);
    await new Promise((res) => setTimeout(res, 150));
    audit.flush();
    const last = readFileSync(audit.file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => e.host === 'free.test' && e.path === '/ws').at(-1)!;
    assert.deepEqual([last.decision, last.exfiltration, last.secret, last.status], ['deny', true, 'ANTHROPIC_API_KEY', 101]);
    assert.match(String(last.rule), /^the real value of ANTHROPIC_API_KEY headed to free\.test/);
  });

  test('1: a value hidden in the status line (split by a control byte) or sent as a header name comes back as neither', async () => {
    const s = await open('api.test');
    const r = reader(s);
    s.write(get('/odd-head', 'api.test', `Authorization: Bearer ${PH}\r\n`));
    await r.until('ok');
    assert.ok(api.log.auths.includes(`Bearer ${REAL}`));
    assert.match(text(r.all()), /^HTTP\/1\.1 200 OK\r\n/);
    assert.deepEqual(leaks(r.all(), REAL), []);
    assert.ok(!r.all().includes(REAL.slice(6)), 'no piece of the value after the control byte');
    s.destroy();
  });

  test('(review, round 36) a placeholder spliced into what the bound host decodes is refused before it leaves: after a percent sign in the query, raw after Basic; control: straight to the host, the spliced value comes back decoded, a form of it no scrubber knows, and gives the value back', async () => {
    const sent = api.log.requests.length;
    for (const [path, extra, rule] of [
      [`/search?key=${PH}&q=%4${PH}`, '', 'the placeholder of ANTHROPIC_API_KEY headed to api.test (the query) is not where a credential stands'],
      [`/search?q=%26%23x4${PH}`, '', 'the placeholder of ANTHROPIC_API_KEY headed to api.test (the query) is not where a credential stands'],
      ['/basic', `Authorization: Basic ${PH}_\r\n`, 'the placeholder of ANTHROPIC_API_KEY headed to api.test (Authorization) is never replaced there'],
    ] as const) {
      const s = await open('api.test');
      const r = reader(s);
      s.write(get(path, 'api.test', `${extra}Connection: close\r\n`));
      await r.closed;
      assert.match(text(r.all()), /^HTTP\/1\.1 403 /, path);
      assert.ok(text(r.all()).includes(rule), text(r.all()));
    }
    assert.equal(api.log.requests.length, sent, 'nothing reached the host');
    // Control: the real value raw after Basic, straight to the host: the answer's decoded credentials, encoded again,
    // give the value back (Node's decoder takes '-' as base64url's '+'), and they are no form the scrubber looks for.
    const answer = await new Promise<string>((resolve, reject) => {
      const c = tls.connect({ host: '127.0.0.1', port: api.port, servername: 'api.test', ca: api.caPem }, () => c.end(get('/basic', 'api.test', `Authorization: Basic ${REAL}\r\nConnection: close\r\n`)));
      const parts: Buffer[] = [];
      c.on('data', (d: Buffer) => parts.push(d)).on('end', () => resolve(Buffer.concat(parts).toString('utf8'))).on('error', reject);
    });
    // The stub writes the decoded bytes as Latin-1 characters, in UTF-8.
    const decoded = / decoded ([^\n]*)\n/.exec(answer)?.[1] ?? '';
    assert.ok(Buffer.from(decoded, 'latin1').toString('base64').replaceAll('+', '-').startsWith('sk-ant-api03-R3al/Va1ue'), answer);
    assert.deepEqual(leaks(Buffer.from(decoded, 'latin1'), REAL), []);
  });

  test("(review, round 36) the Host goes upstream as the proxy judged it, whatever the agent spelled (soft hyphens, capitals, a port said aloud; unlisted: fullwidth letters, refused); control: the check alone takes each spelling as the target's", async () => {
    const spellings = ['api.te\xadst', 'A\xadPI.test', 'API.TEST', 'api.test:443', '\uff41pi.test'];
    for (const spelled of spellings.slice(0, 4)) assert.equal(hostHeaderProblem(['Host', spelled], 'api.test', 443), null, spelled);
    const before = api.log.requests.length;
    for (const spelled of spellings.slice(0, 4)) {
      const s = await open('api.test');
      const r = reader(s);
      s.write(Buffer.from(get('/echo', spelled, `Authorization: Bearer ${PH}\r\nConnection: close\r\n`), 'latin1'));
      await r.closed;
      assert.match(text(r.all()), /^HTTP\/1\.1 200 /, spelled);
    }
    assert.deepEqual(api.log.requests.slice(before).map((q) => q.split(' ')[1]), ['api.test', 'api.test', 'api.test', 'api.test']);
    // Unlisted: fullwidth letters, as UTF-8 bytes, are no spelling of it: refused.
    const s = await open('api.test');
    const r = reader(s);
    s.write(Buffer.from(get('/echo', spellings[4]!, 'Connection: close\r\n'), 'utf8'));
    await r.closed;
    assert.match(text(r.all()), /^HTTP\/1\.1 400 /);
  });

  test('3: a query value inserted percent-encoded comes back (Location, body) as the placeholder, and so does Basic at every alignment', async () => {
    const s = await open('api.test');
    const r = reader(s);
    s.write(get(`/location?key=${PH}`, 'api.test', 'Connection: close\r\n'));
    await r.closed;
    assert.ok(api.log.requests.some((q) => q.includes(`key=${encodeURIComponent(REAL)}`)), 'the upstream got the encoded real value');
    // The same form came back: percent-encoded, of the placeholder.
    const location = /\r\nLocation: (.*)\r\n/.exec(text(r.all()))?.[1] ?? '';
    assert.equal(decodeURIComponent(location), `https://elsewhere.test/landed?from=/location?key=${PH}`);
    assert.deepEqual(leaks(r.all(), REAL), []);
    for (const user of ['u', 'us', 'usr', 'user-name']) {
      const b = await open('api.test');
      const br = reader(b);
      b.write(get('/basic', 'api.test', `Authorization: Basic ${Buffer.from(`${user}:${PH}`).toString('base64')}\r\nConnection: close\r\n`));
      await br.closed;
      assert.ok(api.log.auths.includes(`Basic ${Buffer.from(`${user}:${REAL}`).toString('base64')}`), user);
      assert.match(text(br.all()), new RegExp(`decoded ${user}:${PH}\n`), user);
      assert.deepEqual(leaks(br.all(), REAL), [], user);
    }
  });

  test('5: an event stream from a bound host is not delayed: each event within 50 ms of being sent (the next is 200 ms away), the head at once', async () => {
    const s = await open('api.test');
    const r = reader(s);
    const sent = Date.now();
    s.write(get('/sse?n=5&every=200', 'api.test', `Authorization: Bearer ${PH}\r\n`));
    await r.until('"i":4');
    s.destroy();
    const head = r.chunks.find((c) => text(c.data).startsWith('HTTP/1.1 200'));
    assert.ok(head && head.at - sent < 150, `the head came ${head ? head.at - sent : '∞'} ms after the request, before the first event`);
    for (const c of r.chunks) {
      for (const m of text(c.data).matchAll(/"t":(\d+)/g)) assert.ok(c.at - Number(m[1]) <= 50, `an event ${c.at - Number(m[1])} ms late`);
    }
    assert.equal([...text(r.all()).matchAll(/"i":/g)].length, 5);
  });

  test('5: a host no secret is bound to is scrubbed with the same window, and its events still come at once', async () => {
    const s = await open('free.test');
    const r = reader(s);
    s.write(get('/sse?n=2&every=300', 'free.test'));
    await r.until('"i":0');
    const first = r.chunks.at(-1)!;
    const m = /"t":(\d+)/.exec(text(first.data));
    assert.ok(m && first.at - Number(m[1]) <= 50);
    s.destroy();
  });

  test('7: stalled and abandoned requests free their upstream sockets: the host still answers at once', async () => {
    const held: Array<{ destroy(): void }> = [];
    for (let i = 0; i < 12; i++) {
      const s = await open('api.test');
      s.write(get(i % 2 ? '/stall' : '/stream', 'api.test'));
      held.push(s);
    }
    await new Promise((res) => setTimeout(res, 200));
    for (const s of held) s.destroy();
    await new Promise((res) => setTimeout(res, 100));
    const s = await open('api.test');
    const r = reader(s);
    const t0 = Date.now();
    s.write(get('/echo', 'api.test', 'Connection: close\r\n'));
    await r.until('"url":"/echo"', 1000);
    assert.ok(Date.now() - t0 < 1000);
    s.destroy();
  });

  test('the proxy frames what it sends itself: a request hidden in a chunked body, chunk extensions and a trailer reach the upstream as one request, and the trailer never joins the next head', async () => {
    const before = api.log.requests.length;
    const hidden = `0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: api.test\r\n\r\n`;
    // The next head has 40 fields: past 32, the parser hands a head over in parts, the way trailers come too.
    const many = Array.from({ length: 40 }, (_, i) => `X-F${i}: ${i}\r\n`).join('');
    const s = await open('api.test');
    const r = reader(s);
    s.write(
      `POST /upload HTTP/1.1\r\nHost: api.test\r\nTransfer-Encoding: chunked\r\n\r\n` +
        `${hidden.length.toString(16)};ext=1\r\n${hidden}\r\n0\r\nCookie: injected=1\r\n\r\n` +
        `GET /echo HTTP/1.1\r\nHost: api.test\r\n${many}\r\n`,
    );
    await r.until('"url":"/echo"');
    assert.deepEqual(api.log.requests.slice(before), ['POST api.test /upload', 'GET api.test /echo']);
    assert.ok(api.log.bodies.some((b) => b.toString('latin1') === hidden), 'the body arrived whole');
    assert.match(text(r.all()), /"cookie":null/);
    s.destroy();
    // A line break inside a quoted extension: refused at once, the request abandoned, nothing hidden sent on.
    const q = await open('api.test');
    const qr = reader(q);
    const t0 = Date.now();
    q.write(`POST /upload HTTP/1.1\r\nHost: api.test\r\nTransfer-Encoding: chunked\r\n\r\n${hidden.length.toString(16)};ext="0\r\n"\r\n${hidden}\r\n0\r\n\r\n`);
    await qr.closed;
    assert.ok(Date.now() - t0 < 1000);
    assert.match(text(qr.all()), /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.ok(!api.log.requests.some((x) => x.includes('/smuggled')));
  });

  test('7: an upstream connection the upstream closes after its answer (Connection: close) is never handed to the next request', async () => {
    // Three of api.test's four upstream connections held by requests never answered; the fourth serves /close.
    const held = [];
    for (let i = 0; i < 3; i++) {
      const h = await open('api.test');
      h.write(get('/stall', 'api.test'));
      held.push(h);
    }
    const a = await open('api.test');
    const b = await open('api.test');
    const ar = reader(a);
    const br = reader(b);
    a.write(get('/close', 'api.test'));
    await new Promise((res) => setTimeout(res, 20));
    // Waiting for a connection when /close's ends.
    b.write(get('/echo', 'api.test'));
    await ar.until('closed');
    await br.until(/\r\n\r\n/);
    assert.match(text(br.all()), /^HTTP\/1\.1 200 OK\r\n/);
    for (const s of [...held, a, b]) s.destroy();
  });

  test('a body whose first part could begin a secret not bound to its host: its head and that part go upstream as any other would (no oracle); the rest completing it is refused', async () => {
    const before = free.log.requests.length;
    const s = await open('free.test');
    const r = reader(s);
    s.write(`POST /upload HTTP/1.1\r\nHost: free.test\r\nContent-Length: ${REAL.length}\r\n\r\n${REAL.slice(0, 10)}`);
    await new Promise((res) => setTimeout(res, 100));
    s.write(REAL.slice(10));
    await r.until(/\r\n\r\n/);
    assert.match(text(r.all()), /^HTTP\/1\.1 403 Forbidden\r\n/);
    // The head went at once; the body never ended there, and the whole value never reached it.
    assert.deepEqual(free.log.requests.slice(before), ['POST free.test /upload']);
    assert.equal(free.log.bodies.some((b) => b.includes(Buffer.from(REAL))), false);
    s.destroy();
  });

  test('8: an upstream that stops short ends the agent\'s response with an error within a second', async () => {
    const s = await open('api.test');
    const r = reader(s);
    const t0 = Date.now();
    s.write(get('/short', 'api.test'));
    const closedAt = await Promise.race([r.closed, new Promise<number>((res) => setTimeout(() => res(-1), 1500))]);
    assert.ok(closedAt > 0 && closedAt - t0 < 1000, 'closed within a second');
    const all = text(r.all());
    assert.match(all, /^HTTP\/1\.1 200 OK\r\n/);
    // Scrubbed, it goes on chunked (review, round 26): cut before its last chunk, the agent knows it is incomplete.
    assert.match(all, /\r\nTransfer-Encoding: chunked\r\n/);
    assert.doesNotMatch(all, /\r\nContent-Length:/);
    assert.equal(all.endsWith('\r\n0\r\n\r\n'), false, 'no last chunk');
    assert.ok(all.length - all.indexOf('\r\n\r\n') - 4 < 100000, 'the body is short');
  });

  test('9: a head trickled slowly is cut at the head deadline, on the proxy and inside a tunnel; a connection that sends nothing too', async () => {
    const plainConn = await toProxy(port);
    const inner = await open('api.test');
    const silent = await toProxy(port);
    const readers = [reader(plainConn), reader(inner), reader(silent)];
    const t0 = Date.now();
    plainConn.write('GET http://free.test/ HTTP/1.1\r\n');
    inner.write('GET /echo HTTP/1.1\r\n');
    const trickle = setInterval(() => {
      for (const c of [plainConn, inner]) if (!c.destroyed) c.write('X-Slow: 1\r\n');
    }, 300);
    const closed = await Promise.all(readers.map((r) => Promise.race([r.closed, new Promise<number>((res) => setTimeout(() => res(-1), 4000))])));
    clearInterval(trickle);
    for (const c of closed) assert.ok(c > 0 && c - t0 < 3000, `closed after ${c - t0} ms`);
    assert.match(text(readers[0]!.all()), /^HTTP\/1\.1 408 Request Timeout\r\n/);
    assert.match(text(readers[1]!.all()), /^HTTP\/1\.1 408 Request Timeout\r\n/);
  });

  test('10: a flood of unfinished heads stays bounded (the oldest waiting ones go) and a normal request is still answered', async () => {
    const rss0 = process.memoryUsage().rss;
    const flood = [];
    const partial = `GET http://free.test/ HTTP/1.1\r\nX-Pad: ${'a'.repeat(31 * 1024)}`;
    for (let i = 0; i < 1500; i++) {
      const c = await toProxy(port).catch(() => null);
      if (!c) continue;
      c.on('error', () => {});
      c.write(partial);
      flood.push(c);
    }
    const held = (proxy as unknown as { tracker: { size: number } }).tracker.size;
    assert.ok(held <= 200, `${held} connections held`);
    const s = await open('free.test');
    const r = reader(s);
    s.write(get('/echo', 'free.test', 'Connection: close\r\n'));
    await r.until('"url":"/echo"', 2000);
    const grown = (process.memoryUsage().rss - rss0) / 1024 / 1024;
    assert.ok(grown < 80, `rss grew ${grown.toFixed(0)} MB`);
    for (const c of flood) c.destroy();
  });

  test('10: denied requests with 30 KB paths: the audit log keeps one line and a count', async () => {
    const size0 = statSync(audit.file).size;
    const c = await toProxy(port);
    const r = reader(c);
    for (let i = 0; i < 300; i++) c.write(`GET http://denied.test/${'p'.repeat(30_000)}${i} HTTP/1.1\r\nHost: denied.test\r\n\r\n`);
    await r.until(/(X-Stashbase-Denied[^]*){1}/);
    await new Promise((res) => setTimeout(res, 300));
    c.destroy();
    audit.flush();
    const grown = statSync(audit.file).size - size0;
    assert.ok(grown < 20_000, `the audit log grew ${grown} bytes`);
    const lines = readFileSync(audit.file, 'utf8').split('\n').filter((l) => l.includes('denied.test'));
    assert.ok(lines.some((l) => /"type":"repeated".*"count":\d+/.test(l)), 'a repeated line with its count');
  });

  test('11: Basic credentials with no value of a secret pass byte for byte (not re-encoded); a scrubbed answer goes on without its Content-Length, GET and HEAD alike (review, round 26: whether its size could change told of the secret\'s bytes)', async () => {
    const raw = Buffer.from([0x75, 0x3a, 0xe9, 0xff, 0x80, 0x70]).toString('base64'); // "u:" and bytes that are not UTF-8
    const s = await open('api.test');
    const r = reader(s);
    s.write(get('/len', 'api.test', `Authorization: Basic ${raw}\r\n`));
    await r.until('"url":"/len"');
    assert.ok(api.log.auths.includes(`Basic ${raw}`));
    assert.doesNotMatch(text(r.all()), /\r\nContent-Length:/i);
    assert.match(text(r.all()), /\r\nTransfer-Encoding: chunked\r\n/);
    const before = r.all().length;
    s.write(`HEAD /len HTTP/1.1\r\nHost: api.test\r\n\r\n`);
    await new Promise((res) => setTimeout(res, 200));
    const head = text(r.all().subarray(before));
    assert.match(head, /^HTTP\/1\.1 200 OK\r\n/);
    assert.doesNotMatch(head, /\r\nContent-Length:/i);
    // And the connection still serves: the HEAD's answer had no body.
    const again = r.all().length;
    s.write(get('/len', 'api.test', `Authorization: Basic ${raw}\r\n`));
    await new Promise((res) => setTimeout(res, 200));
    assert.match(text(r.all().subarray(again)), /^HTTP\/1\.1 200 OK\r\n[^]*"url":"\/len"/);
    s.destroy();
  });

  test('11: CONNECT to port 80 speaks plain HTTP; 100 Continue comes from the upstream; a request without Host is refused', async () => {
    const s = await open('plain.test', { plain: true });
    const r = reader(s);
    s.write(get('/echo', 'plain.test:80', 'Connection: close\r\n'));
    await r.closed;
    assert.match(text(r.all()), /^HTTP\/1\.1 200 OK\r\n[^]*"url":"\/echo"/);
    // The upstream refuses the upload at once: the agent sees that, never a 100 of the proxy's.
    const u = await open('api.test');
    const ur = reader(u);
    u.write(`POST /refuse-upload HTTP/1.1\r\nHost: api.test\r\nExpect: 100-continue\r\nContent-Length: 1000000\r\n\r\n`);
    await ur.until('no thanks');
    assert.match(text(ur.all()), /^HTTP\/1\.1 403 Forbidden\r\n/);
    u.destroy();
    const ok = await open('api.test');
    const okr = reader(ok);
    ok.write(`POST /upload HTTP/1.1\r\nHost: api.test\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n`);
    await okr.until('HTTP/1.1 100 Continue');
    ok.write('hello');
    await okr.until('uploaded');
    ok.destroy();
    // HTTP/1.0 without Host: on the plain path and inside a tunnel.
    const p = await toProxy(port);
    const pr = reader(p);
    p.write('GET http://free.test/echo HTTP/1.0\r\n\r\n');
    await pr.closed;
    assert.match(text(pr.all()), /^HTTP\/1\.1 400 Bad Request\r\n[^]*X-Stashbase-Denied: a request without a Host header\r\n/);
    const n = await open('free.test');
    const nr = reader(n);
    n.write('GET /echo HTTP/1.0\r\n\r\n');
    await nr.closed;
    assert.match(text(nr.all()), /^HTTP\/1\.1 400 Bad Request\r\n[^]*X-Stashbase-Denied: a request without a Host header\r\n/);
  });
});

describe('a plain tunnel (no secrets): an upstream reset closes it, the proxy writes nothing into it', () => {
  let upstream: TcpServer;
  let proxy: Server;
  let port = 0;
  before(async () => {
    upstream = createTcp((sock) => {
      sock.once('data', () => {
        sock.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart');
        setTimeout(() => sock.resetAndDestroy(), 50);
      });
    });
    const upPort = await listen(upstream);
    proxy = createProxy({ policy: { egressHosts: ['reset.test'], denyHosts: [], mapped: { 'reset.test': `127.0.0.1:${upPort}` } }, audit: () => {} });
    port = await listen(proxy);
  });
  after(() => {
    proxy.close();
    upstream.close();
  });

  test('11: the agent reads the upstream\'s bytes, then the close; no 502', async () => {
    const s = await tunnel(port, 'reset.test', 443, { plain: true });
    const r = reader(s);
    s.write('GET / HTTP/1.1\r\nHost: reset.test\r\n\r\n');
    await r.closed;
    assert.equal(text(r.all()), 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart');
  });
});

describe('a raw upstream on a plain tunnel, a secret bound there (allow_plaintext), one upstream connection', () => {
  const t = tempHome();
  let up: TcpServer;
  let proxy: Server;
  let interceptor: Interceptor;
  let port = 0;
  const requests: string[] = [];
  // Compressed although identity was asked, larger than the decoder takes at once (16 KiB), smaller than one read (64 KiB), written in one go.
  const gz = gzipSync(Buffer.from(Array.from({ length: 6000 }, (_, i) => `${i.toString(36)}:${(i * 7919).toString(16)}`).join(',')));
  const CONTINUES = Buffer.from('HTTP/1.1 100 Continue\r\n\r\n'.repeat(2000));
  const events: Array<Record<string, unknown>> = [];

  const upSockets = new Set<import('node:net').Socket>();
  before(async () => {
    up = createTcp((s) => {
      upSockets.add(s);
      s.on('close', () => upSockets.delete(s));
      let buf = '';
      s.on('error', () => {});
      s.on('data', (d: Buffer) => {
        buf += d.toString('latin1');
        for (let end = buf.indexOf('\r\n\r\n'); end !== -1; end = buf.indexOf('\r\n\r\n')) {
          const head = buf.slice(0, end);
          const line = head.slice(0, head.indexOf('\r\n') === -1 ? head.length : head.indexOf('\r\n'));
          buf = buf.slice(end + 4);
          const auth = /\r\nAuthorization: \S+ (\S+)/i.exec(head)?.[1] ?? 'none';
          requests.push(line);
          // The credential it was sent, as its status line's reason phrase.
          if (line.includes('/stall')) continue; // never answered
          if (line.includes('/continue-flood')) {
            // 100 Continue without end (for a second), never a final answer.
            const flood = setInterval(() => (s.destroyed ? clearInterval(flood) : s.write(CONTINUES)), 5);
            setTimeout(() => clearInterval(flood), 1000);
            continue;
          }
          if (line.includes('/reason')) s.write(`HTTP/1.1 200 ${auth}\r\nContent-Length: 5\r\n\r\nsmall`);
          else if (line.includes('/gz')) s.write(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: ${gz.length}\r\n\r\n`), gz]));
          else s.write('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nsmall');
        }
      });
    });
    const upPort = await listen(up);
    const ca = createRunCa(['api.test', 'free.test', 'plain.test', 'ws.test', '*.test', 'localhost', '127.0.0.1'], 'test');
    const limits = { headTimeoutMs: 1000, maxConnections: 50, upstreamSocketsPerHost: 1, auditMaxBytes: 1024 * 1024, mcpBodiesMaxBytes: 64 << 20 };
    const secrets: BoundSecret[] = [{ name: 'ANTHROPIC_API_KEY', placeholder: PH, real: REAL, hosts: ['raw.test'], inQuery: false, allowPlaintext: true }];
    interceptor = new Interceptor({ leaves: new LeafCache(ca), secrets, upstreamCa: [], audit: (e) => events.push(e as Record<string, unknown>), limits }, hostHeaderProblem);
    const mapped = { 'raw.test': `127.0.0.1:${upPort}` };
    proxy = createProxy({ policy: { egressHosts: ['raw.test'], denyHosts: [], mapped }, audit: (e) => events.push(e as Record<string, unknown>), interceptor, secrets, limits });
    port = await listen(proxy);
  });
  after(() => {
    interceptor.close();
    proxy.close();
    up.close();
    // Still open: the stalled request at the front of the paused tunnel whose agent left (docs/proxy.md, not
    // covered: a paused connection notices its agent leaving only once it reads again). The file's process must end.
    for (const s of upSockets) s.destroy();
    t.cleanup();
  });

  test('7: the upstream connection, paused while its compressed answer is decoded for the agent, is not handed on paused: the next request is answered', async () => {
    const a = await tunnel(port, 'raw.test', 80, { plain: true });
    const ar = reader(a);
    a.write('GET /gz HTTP/1.1\r\nHost: raw.test\r\n\r\n');
    await ar.until('0\r\n\r\n');
    const b = await tunnel(port, 'raw.test', 80, { plain: true });
    const br = reader(b);
    b.write('GET /small HTTP/1.1\r\nHost: raw.test\r\n\r\n');
    await br.until('small', 1000);
    assert.deepEqual(requests, ['GET /gz HTTP/1.1', 'GET /small HTTP/1.1']);
    a.destroy();
    b.destroy();
  });

  test('1: on the plain-HTTP path the status line carries the standard reason phrase, never the upstream\'s (which echoed the value)', async () => {
    const c = await toProxy(port);
    const r = reader(c);
    c.write(`GET http://raw.test/reason HTTP/1.1\r\nHost: raw.test\r\nAuthorization: Bearer ${PH}\r\nConnection: close\r\n\r\n`);
    await r.closed;
    assert.match(text(r.all()), /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n5\r\nsmall\r\n0\r\n\r\n$/);
    assert.deepEqual(leaks(r.all(), REAL), []);
    assert.ok(requests.includes('GET /reason HTTP/1.1'));
  });

  const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));
  const closedWithin = (r: { closed: Promise<number> }, ms: number) => Promise.race([r.closed.then(() => true), sleep(ms).then(() => false)]);

  test('10: an upstream streaming 100 Continue without end, to an agent that does not read: one reaches the agent, in a tunnel and on the plain path', async () => {
    for (const via of ['tunnel', 'plain'] as const) {
      const c = via === 'tunnel' ? await tunnel(port, 'raw.test', 80, { plain: true }) : await toProxy(port);
      const target = via === 'tunnel' ? '/continue-flood' : 'http://raw.test/continue-flood';
      // Not read until the flood is over: each 100 written regardless would be held in memory.
      c.write(`POST ${target} HTTP/1.1\r\nHost: raw.test\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n`);
      await sleep(1200);
      const r = reader(c);
      await sleep(300);
      c.destroy();
      assert.equal([...text(r.all()).matchAll(/HTTP\/1\.1 100 Continue\r\n/g)].length, 1, via);
    }
  });

  test('10: a plain tunnel whose first read holds two requests still stops reading while they wait (a hostile agent cannot queue without end)', async () => {
    const c = await toProxy(port);
    c.on('error', () => {});
    c.write(`CONNECT raw.test:80 HTTP/1.1\r\nHost: raw.test:80\r\n\r\nGET /stall-a HTTP/1.1\r\nHost: raw.test\r\n\r\nGET /stall-b HTTP/1.1\r\nHost: raw.test\r\n\r\n`);
    const more = Buffer.from('GET /x HTTP/1.1\r\nHost: raw.test\r\n\r\n'.repeat(12 * 1024 * 1024 / 36));
    c.write(more);
    await sleep(1500);
    // What the kernel's buffers took (a few MB) aside, the rest waits in the agent's own socket.
    assert.ok(c.writableLength > 3 * 1024 * 1024, `the proxy read ${((more.length - c.writableLength) / 2 ** 20).toFixed(1)} MB of ${(more.length / 2 ** 20).toFixed(1)}`);
    c.destroy();
  });

  test('10: the plain-HTTP path: requests pipelined behind a stalled one go with an agent that leaves; past 16 on one connection it is closed', async () => {
    const pipeline = (n: number) => Array.from({ length: n }, (_, i) => `GET http://raw.test/stall-${i} HTTP/1.1\r\nHost: raw.test\r\n\r\n`).join('');
    let before = requests.length;
    const a = await toProxy(port);
    a.write(pipeline(10));
    await sleep(300);
    a.destroy();
    await sleep(500);
    // One upstream socket (this host's limit): the first request took it; those queued behind it were never sent.
    assert.deepEqual(requests.slice(before), ['GET /stall-0 HTTP/1.1']);
    before = requests.length;
    const c = await toProxy(port);
    const r = reader(c);
    c.write(pipeline(40));
    assert.equal(await closedWithin(r, 3000), true, 'the connection was not closed');
    assert.ok(events.some((e) => e.type === 'limit' && e.rule === 'more than 16 requests pipelined on one connection: it was closed'));
    await sleep(300);
    assert.deepEqual(requests.slice(before), []);
  });

  test('10 (review, round 26): a tunnel whose one read pipelines thousands of requests behind a stalled one: past 16 waiting it is closed, the rest never parsed into requests; control: 10 waiting keep it open', async () => {
    const pipeline = (n: number) => Array.from({ length: n }, (_, i) => `GET /stall-t${i} HTTP/1.1\r\nHost: raw.test\r\n\r\n`).join('');
    const plainTunnel = async () => {
      const s = await toProxy(port);
      s.on('error', () => {});
      const sr = reader(s);
      s.write(`CONNECT raw.test:80 HTTP/1.1\r\nHost: raw.test:80\r\n\r\n`);
      await sr.until('200 Connection Established\r\n\r\n');
      return { s, sr };
    };
    const { s: few, sr: fr } = await plainTunnel();
    few.write(pipeline(10));
    assert.equal(await closedWithin(fr, 1000), false, 'control: ten waiting requests keep the tunnel open');
    few.destroy();
    await sleep(300);
    const before = requests.length;
    const limits = events.filter((e) => e.type === 'limit').length;
    const { s: c, sr: r } = await plainTunnel();
    // One write of ~64 KiB: 1,800 requests the parser would turn into objects, all waiting on the first.
    c.write(pipeline(1800));
    assert.equal(await closedWithin(r, 3000), true, 'the connection was not closed');
    assert.deepEqual(events.filter((e) => e.type === 'limit').slice(limits).map((e) => e.rule), ['more than 16 requests pipelined on one connection: it was closed']);
    await sleep(300);
    // The first may have gone before the cut (then cancelled); none behind it ever did.
    const sent = requests.slice(before);
    assert.ok(sent.length <= 1 && sent.every((l) => l === 'GET /stall-t0 HTTP/1.1'), JSON.stringify(sent));
  });

  test('10: an upgrade refused (its last words written) frees its place even when the agent never closes its side', async () => {
    const held = (proxy as Server & { tracker: { size: number } }).tracker.size;
    // A client that never ends its side of its own accord (half-open allowed).
    const c = netConnect({ port, host: '127.0.0.1', allowHalfOpen: true });
    c.on('error', () => {});
    const r = reader(c);
    c.write('CONNECT raw.test:80 HTTP/1.1\r\nHost: raw.test:80\r\n\r\n');
    await r.until('200 Connection Established\r\n\r\n');
    c.write('GET /ws HTTP/1.1\r\nHost: other.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
    await r.until('400 Bad Request');
    // The proxy's count of its connections: this one, until the linger (2 s) is over.
    const tracker = (proxy as Server & { tracker: { size: number } }).tracker;
    assert.equal(tracker.size, held + 1);
    await sleep(2600);
    assert.equal(tracker.size, held, 'the proxy still holds the connection');
    c.destroy();
  });
});

describe('(review, round 35) an upgrade allowed by network.allow_upgrades, in a run with secrets', () => {
  const t = tempHome();
  let api: Stub; // a secret is bound to it
  let free: Stub; // allowed, nothing bound (another name of a service would be such a host)
  let proxy: Server;
  let bare: Server; // a run without secrets (MCP servers alone make one intercept)
  let interceptor: Interceptor;
  let bareInterceptor: Interceptor;
  let port = 0;
  let barePort = 0;
  let caPem = '';
  const events: Array<Record<string, unknown>> = [];
  const secrets = (): BoundSecret[] => [{ name: 'ANTHROPIC_API_KEY', placeholder: PH, real: REAL, hosts: ['api.test'], inQuery: false, allowPlaintext: false }];
  const H2C = 'Upgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n';

  before(async () => {
    api = await startStub('api.test');
    free = await startStub('free.test');
    const ca = createRunCa(['api.test', 'free.test'], 'test');
    caPem = ca.certPem;
    const limits = { headTimeoutMs: 1000, maxConnections: 200, upstreamSocketsPerHost: 4, auditMaxBytes: 1024 * 1024, mcpBodiesMaxBytes: 64 << 20 };
    const mapped = { 'api.test': `127.0.0.1:${api.port}`, 'free.test': `127.0.0.1:${free.port}` };
    const policy = { egressHosts: ['api.test', 'free.test'], denyHosts: [], mapped };
    interceptor = new Interceptor({ leaves: new LeafCache(ca), secrets: secrets(), upstreamCa: [api.caPem, free.caPem], audit: (e) => events.push(e as Record<string, unknown>), limits, allowUpgrades: ['h2c'] }, hostHeaderProblem);
    proxy = createProxy({ policy, audit: (e) => events.push(e as Record<string, unknown>), interceptor, secrets: secrets(), limits });
    port = await listen(proxy);
    bareInterceptor = new Interceptor({ leaves: new LeafCache(ca), secrets: [], upstreamCa: [api.caPem, free.caPem], audit: () => {}, limits, allowUpgrades: ['h2c'] }, hostHeaderProblem);
    bare = createProxy({ policy, audit: () => {}, interceptor: bareInterceptor, secrets: [], limits });
    barePort = await listen(bare);
  });
  after(() => {
    for (const i of [interceptor, bareInterceptor]) i.close();
    for (const p of [proxy, bare]) p.close();
    for (const s of [api, free]) s.close();
    t.cleanup();
  });

  const h2c = async (proxyPort: number, host: string) => {
    const s = await tunnel(proxyPort, host, 443, { caPem });
    const r = reader(s);
    s.write(`GET /h2c-echo HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${PH}\r\n${H2C}\r\n`);
    // (A switched stream's tail waits in the scrubber's window for a line break or the end: the head is enough here.)
    await Promise.race([r.until('ok /h2c-echo'), r.until('Switching Protocols\r\n')]);
    s.destroy();
    return text(r.all());
  };

  test("h2c goes on as a plain request, to the bound host and to any other (another name of the same service would hand a stored value back the same way); control: in a run without secrets the profile's h2c switches, and the bound host's framed echo through the byte scrubber gives the value back", async () => {
    const before = api.log.requests.length;
    const bound = await h2c(port, 'api.test');
    assert.match(bound, /^HTTP\/1\.1 200 OK\r\n/);
    assert.ok(!bound.includes(REAL));
    assert.deepEqual(api.log.requests.slice(before), ['GET api.test /h2c-echo'], 'as a plain request: no upgrade handler ran');
    assert.match(await h2c(port, 'free.test'), /^HTTP\/1\.1 200 OK\r\n/);
    // The controls: without secrets the upgrade is the profile's to allow.
    assert.match(await h2c(barePort, 'free.test'), /^HTTP\/1\.1 101 Switching Protocols\r\n/);
    // What the bound host sends once switched, through the byte scrubber the stream got before, holds the real value
    // once its frame header is taken out (what an h2c client does).
    const auth = Buffer.from(`Bearer ${REAL}`, 'latin1');
    const half = auth.length >> 1;
    const header = (n: number) => Buffer.from([0, n >> 8, n & 0xff, 0, 0, 0, 0, 0, 1]);
    const framed = Buffer.concat([header(half), auth.subarray(0, half), header(auth.length - half), auth.subarray(half)]);
    const scrubbed = await new Promise<Buffer>((resolve, reject) => {
      const z = new ScrubStream(scrubPairs(secrets()));
      const parts: Buffer[] = [];
      z.on('data', (b: Buffer) => parts.push(b));
      z.on('end', () => resolve(Buffer.concat(parts)));
      z.on('error', reject);
      z.end(framed);
    });
    const joined = Buffer.concat([scrubbed.subarray(9, 9 + half), scrubbed.subarray(9 + half + 9)]).toString('latin1');
    assert.equal(joined, `Bearer ${REAL}`);
  });
});


describe('(review, round 36) the plain-HTTP path writes a request head as the bytes it came as', () => {
  let up: TcpServer;
  let proxy: Server;
  let port = 0;
  const heads: Buffer[] = [];
  const REAL8 = 'Pässwörd-für-Intranet-2026!';
  const PH8 = 'SBPHplaceholder0123456789abcdef';
  before(async () => {
    up = createTcp((s) => s.once('data', (d: Buffer) => {
      heads.push(d);
      s.end('HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n');
    }));
    const upPort = await listen(up);
    const secrets: BoundSecret[] = [{ name: 'INTRANET', placeholder: PH8, real: REAL8, hosts: ['intra.test'], inQuery: false, allowPlaintext: true }];
    proxy = createProxy({ policy: { egressHosts: ['intra.test'], denyHosts: [], mapped: { 'intra.test': `127.0.0.1:${upPort}` } }, audit: () => {}, secrets });
    port = await listen(proxy);
  });
  after(() => {
    proxy.close();
    up.close();
  });

  test("a real value of non-ASCII characters reaches its host as its UTF-8 bytes, and an agent's byte past 0x7f as that byte; control: Node's flushHeaders writes each as two", async () => {
    const p = await toProxy(port);
    const r = reader(p);
    p.write(Buffer.from(`GET http://intra.test/x HTTP/1.1\r\nHost: intra.test\r\nX-Key: ${PH8}\r\nX-Obs: a\x85b\r\nConnection: close\r\n\r\n`, 'latin1'));
    await r.closed;
    assert.match(text(r.all()), /^HTTP\/1\.1 204 /);
    const head = heads.at(-1)!;
    assert.ok(head.includes(Buffer.from(`X-Key: ${REAL8}\r\n`, 'utf8')), head.toString('latin1'));
    assert.ok(head.includes(Buffer.from('X-Obs: a\x85b\r\n', 'latin1')), head.toString('latin1'));
    // Control: the same head through Node's client with flushHeaders.
    const { request } = await import('node:http');
    const c = request({ host: '127.0.0.1', port: (up.address() as import('node:net').AddressInfo).port, path: '/', headers: ['Host', 'intra.test', 'X-Obs', 'a\x85b'], setHost: false });
    c.on('error', () => {});
    c.flushHeaders();
    await new Promise((res) => setTimeout(res, 200));
    c.destroy();
    assert.ok(heads.at(-1)!.includes(Buffer.from('X-Obs: a\xc2\x85b\r\n', 'latin1')));
  });
});
