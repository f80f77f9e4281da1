// TLS interception and secret bindings, against a real HTTPS server on
// loopback with its own test CA, through the real proxy, with curl as the client.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import tls from 'node:tls';
import { Interceptor } from '../../lib/proxy/intercept.js';
import { createProxy, hostHeaderProblem } from '../../lib/proxy/server.js';
import type { BoundSecret } from '../../lib/proxy/secrets.js';
import { createRunCa } from '../../lib/tls/ca.js';
import { LeafCache } from '../../lib/tls/leaves.js';
import { mkdirSync } from 'node:fs';
import { cli, listen, needs, postInPieces, refusingPort, REPO, tempHome } from '../helpers.js';
import { testCa } from '../upstream-ca.js';
import { frame, messages, readFrames } from '../ws-util.js';

const REAL = 'ghp_realRealRealRealRealRealReal0123456';
const PH = 'ghp_SBPHplaceholderPlaceholderPlace01';
const secrets: BoundSecret[] = [{ name: 'GITHUB_TOKEN', placeholder: PH, real: REAL, hosts: ['api.test'], inQuery: true, allowPlaintext: false }];

function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(cmd, args, opts);
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += String(d)));
    c.stderr.on('data', (d: Buffer) => (stderr += String(d)));
    c.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const curl = (args: string[]) => run('curl', ['-sS', '--max-time', '10', ...args]);

describe('TLS interception and secrets (real HTTPS upstream, curl)', () => {
  const t = tempHome();
  const seen: Array<{ path: string; host?: string; auth?: string; ae?: string }> = [];
  /** Every request body byte the upstream received. */
  let received = '';
  const audit: Array<Record<string, unknown>> = [];
  let upstream: tls.Server & Server;
  let proxy: Server;
  let upPort = 0;
  let proxyUrl = '';
  let caFile = '';
  /** The proxies' CA in this file (the install-wide one before: one CA, one file curl trusts). */
  let ca: ReturnType<typeof createRunCa>;
  let interceptor: Interceptor;

  let upCaFile = '';
  before(async () => {
    const upCa = testCa();
    upCaFile = join(t.dir, 'upstream-ca.pem');
    writeFileSync(upCaFile, upCa.certPem);
    const leaf = new LeafCache(upCa).get('api.test');
    const otherLeaf = new LeafCache(upCa).get('other.test');
    const https = await import('node:https');
    upstream = https.createServer({ key: leaf.keyPem, cert: leaf.certPem, SNICallback: (name, cb) => cb(null, tls.createSecureContext(name === 'other.test' ? { key: otherLeaf.keyPem, cert: otherLeaf.certPem } : { key: leaf.keyPem, cert: leaf.certPem })) }, (req, res) => {
      seen.push({ path: req.url ?? '', host: req.headers.host, auth: req.headers.authorization, ae: req.headers['accept-encoding'] as string });
      req.setEncoding('latin1').on('data', (d: string) => (received += d));
      // Answers before the body is in (a server that streams its answer at once).
      if (req.url === '/early') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('early\n');
        return void req.on('end', () => res.end());
      }
      // Answers once the whole body is in, as most servers do for a POST.
      req.on('end', () => {
        if (req.url === '/redirect') {
          res.writeHead(302, { Location: `https://other.test:${upPort}/landed` });
          return void res.end();
        }
        res.setHeader('X-Echo-Auth', req.headers.authorization ?? '');
        res.end(`you sent ${req.headers.authorization ?? ''} ${req.url}\n`);
      });
    }) as never;
    upPort = await listen(upstream);
    ca = createRunCa(['api.test', 'free.test', 'plain.test', 'ws.test', '*.test', 'localhost', '127.0.0.1'], 'test');
    mkdirSync(join(t.sbHome, 'agents'), { recursive: true });
    caFile = join(t.dir, 'stashbase-ca.pem');
    writeFileSync(caFile, ca.certPem);
    interceptor = new Interceptor({ leaves: new LeafCache(ca), secrets, upstreamCa: [...tls.rootCertificates, upCa.certPem], audit: (e) => audit.push(e) }, hostHeaderProblem);
    const mapped = { 'api.test': `127.0.0.1:${upPort}`, 'other.test': `127.0.0.1:${upPort}` };
    proxy = createProxy({ policy: { egressHosts: ['api.test', 'other.test'], denyHosts: [], mapped }, audit: (e) => audit.push(e), interceptor });
    proxyUrl = `http://127.0.0.1:${await listen(proxy)}`;
  });
  after(() => {
    interceptor.close();
    proxy.close();
    upstream.close();
    t.cleanup();
  });

  const via = (url: string, extra: string[] = []) => curl(['--proxy', proxyUrl, '--suppress-connect-headers', '--cacert', caFile, ...extra, url]);

  test('the placeholder becomes the real value toward the bound host, and the real value never comes back', async () => {
    seen.length = 0;
    const r = await via(`https://api.test:${upPort}/user`, ['-H', `Authorization: Bearer ${PH}`, '-D', '-']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(seen, [{ path: '/user', host: `api.test:${upPort}`, auth: `Bearer ${REAL}`, ae: 'identity' }], r.stdout + r.stderr);
    assert.match(r.stdout, new RegExp(`\\r\\nx-echo-auth: Bearer ${PH}\\r\\n`, 'i'));
    assert.match(r.stdout, new RegExp(`you sent Bearer ${PH} /user\\n$`));
    assert.doesNotMatch(r.stdout, new RegExp(REAL));
    const e = audit.find((x) => x.path === '/user' && x.decision === 'allow');
    assert.deepEqual(e?.injected, ['GITHUB_TOKEN']);
    assert.doesNotMatch(JSON.stringify(audit), new RegExp(REAL));
  });

  test("Python's urllib through the proxy, trusting the CA by SSL_CERT_FILE", async () => {
    seen.length = 0;
    const py = `import urllib.request; r = urllib.request.urlopen(urllib.request.Request("https://api.test:${upPort}/py", headers={"Authorization": "token ${PH}"})); print(r.read().decode(), end="")`;
    const r = await run('python3', ['-c', py], { env: { PATH: process.env.PATH, HTTPS_PROXY: proxyUrl, SSL_CERT_FILE: caFile } });
    assert.equal(r.stdout + r.stderr, `you sent token ${PH} /py\n`);
    assert.deepEqual(seen.map((x) => x.auth), [`token ${REAL}`]);
  });

  test('redirects are passed back, never followed by the proxy', async () => {
    seen.length = 0;
    const r = await via(`https://api.test:${upPort}/redirect`, ['-D', '-']);
    assert.match(r.stdout, /^HTTP\/1\.1 302 Found\r\nlocation: https:\/\/other\.test:\d+\/landed\r\n/i);
    assert.deepEqual(seen.map((x) => x.path), ['/redirect']);
  });

  test('Basic credentials are decoded, substituted and re-encoded', async () => {
    seen.length = 0;
    const r = await via(`https://api.test:${upPort}/basic`, ['-u', `x-access-token:${PH}`]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(seen[0]?.auth, `Basic ${Buffer.from(`x-access-token:${REAL}`).toString('base64')}`);
  });

  test('query strings are substituted where the profile opts in', async () => {
    seen.length = 0;
    await via(`https://api.test:${upPort}/q?token=${PH}`);
    assert.equal(seen[0]?.path, `/q?token=${REAL}`);
  });

  test('the real value headed to another (allowed) host is blocked and audited; a placeholder there is inert: passed on unchanged, never substituted, audited', async () => {
    seen.length = 0;
    const r = await via(`https://other.test:${upPort}/steal`, ['-H', `X-Token: ${REAL}`, '-D', '-']);
    assert.match(r.stdout, /^HTTP\/1\.1 403 Forbidden\r\n/);
    const basic = await via(`https://other.test:${upPort}/steal`, ['-u', `u:${REAL}`, '-D', '-']);
    assert.match(basic.stdout, /^HTTP\/1\.1 403 Forbidden\r\n/);
    const url = await via(`https://other.test:${upPort}/steal?t=${REAL}`, ['-D', '-']);
    assert.match(url.stdout, /^HTTP\/1\.1 403 Forbidden\r\n/);
    assert.equal(seen.length, 0);
    const blocked = audit.filter((x) => x.exfiltration === true);
    assert.deepEqual(blocked.map((x) => x.rule), [
      'the real value of GITHUB_TOKEN headed to other.test (X-Token), which it is not bound to',
      'the real value of GITHUB_TOKEN headed to other.test (Authorization: Basic), which it is not bound to',
      'the real value of GITHUB_TOKEN in the URL headed to other.test, which it is not bound to',
    ]);
    // The placeholder, in a header, Basic credentials and the query (in_query is on): the upstream gets it as it was.
    const ph = await via(`https://other.test:${upPort}/inert?t=${PH}`, ['-H', `Authorization: Bearer ${PH}`, '-D', '-']);
    assert.match(ph.stdout, /^HTTP\/1\.1 200 OK\r\n/);
    const phBasic = await via(`https://other.test:${upPort}/inert-basic`, ['-u', `u:${PH}`]);
    assert.equal(phBasic.code, 0);
    assert.deepEqual(seen.map((x) => [x.path, x.auth]), [[`/inert?t=${PH}`, `Bearer ${PH}`], ['/inert-basic', `Basic ${Buffer.from(`u:${PH}`).toString('base64')}`]]);
    const inert = audit.filter((x) => String(x.path).startsWith('/inert'));
    assert.deepEqual(inert.map((x) => [x.decision, x.injected, x.inert]), [['allow', [], ['GITHUB_TOKEN']], ['allow', [], ['GITHUB_TOKEN']]]);
    assert.doesNotMatch(JSON.stringify(audit), new RegExp(REAL));
  });

  test('request bodies: the real value headed to an unbound host is refused before it leaves; a placeholder there passes unchanged, as to the bound host', async () => {
    seen.length = 0;
    received = '';
    const audited = audit.length;
    const r = await via(`https://other.test:${upPort}/steal`, ['--data-binary', `token=${REAL}`, '-D', '-']);
    assert.match(r.stdout, /^HTTP\/1\.1 403 Forbidden\r\n/, r.stdout + r.stderr);
    assert.deepEqual([seen, received], [[], '']);
    // A value deep in a large body, split across many chunks: the upstream may see the start, never the value.
    const big = join(t.dir, 'big-body');
    writeFileSync(big, 'a'.repeat(300_000) + REAL + 'b'.repeat(1000));
    await via(`https://other.test:${upPort}/steal`, ['--data-binary', `@${big}`]);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(received.includes(REAL), false);
    assert.equal(received.includes(REAL.slice(0, 12)), false);
    assert.deepEqual(audit.slice(audited).filter((x) => x.exfiltration === true).map((x) => x.rule), [
      'the real value of GITHUB_TOKEN headed to other.test (request body), which it is not bound to',
      'the real value of GITHUB_TOKEN headed to other.test (request body), which it is not bound to',
    ]);
    // A conversation's history carrying the placeholder (a tool printed `env`) goes to any allowed host as it is.
    received = '';
    const other = await via(`https://other.test:${upPort}/history`, ['--data-binary', `tool said: GITHUB_TOKEN=${PH}`]);
    assert.equal(other.stdout, 'you sent  /history\n');
    assert.equal(received, `tool said: GITHUB_TOKEN=${PH}`);
    received = '';
    const ok = await via(`https://api.test:${upPort}/post`, ['--data-binary', `token=${PH}`]);
    assert.equal(ok.stdout, 'you sent  /post\n');
    assert.equal(received, `token=${PH}`);
  });

  test('(review, round 38) request bodies written in pieces: a value whose end waits unread (fewer bytes than the window) when the agent goes is refused and audited, and one the 2 ms release finds is answered 403 without another byte; control: the same pieces to the bound host pass whole', async () => {
    /** A POST in an intercepted tunnel to `host`, its body in pieces; then `close` or listening (test/helpers.ts). */
    const pieces = (host: string, body: string[], close: boolean) => new Promise<string>((resolve, reject) => {
      const raw = netConnect(Number(new URL(proxyUrl).port), '127.0.0.1', () => raw.write(`CONNECT ${host}:${upPort} HTTP/1.1\r\nHost: ${host}:${upPort}\r\n\r\n`));
      raw.once('data', () => {
        const s = tls.connect({ socket: raw, servername: host, ca: [readFileSync(caFile, 'utf8')] }, () => {
          resolve(postInPieces(s, (n) => `POST /pieces HTTP/1.1\r\nHost: ${host}:${upPort}\r\nContent-Length: ${n}\r\n\r\n`, body, close));
        });
        s.once('error', reject);
      });
    });
    const refusals = () => audit.filter((x) => x.exfiltration === true).length;
    received = '';
    // The window is the value's length less one: 40 bytes and the value's first 20 are read at once, its last 19 wait.
    let before = refusals();
    await pieces('other.test', [`${'x'.repeat(40)}${REAL.slice(0, 20)}`, REAL.slice(20)], true);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(refusals() - before, 1, 'the value waiting unread when the agent went is audited as refused');
    assert.equal(received.includes(REAL.slice(0, 12)), false);
    before = refusals();
    const found = await pieces('other.test', [`${'x'.repeat(40)}${REAL.slice(0, 20)}`, `${REAL.slice(20)}\n`], false);
    assert.match(found, /^HTTP\/1\.1 403 Forbidden\r\n/);
    assert.equal(refusals() - before, 1);
    assert.equal(received.includes(REAL.slice(0, 12)), false);
    // Control: to the host it is bound to, the same pieces go whole (the value is the agent's there).
    received = '';
    const bound = await pieces('api.test', [`${'x'.repeat(40)}${REAL.slice(0, 20)}`, `${REAL.slice(20)}\n`], false);
    assert.match(bound, /^HTTP\/1\.1 200 OK\r\n/);
    assert.equal(received, `${'x'.repeat(40)}${REAL}\n`);
  });

  test('(review, round 38, second pass) a chunked body of two hundred chunks each holding the value, in one write, toward a host that answered at once: refused and audited once (the rest of the read, parsed still, was refused chunk by chunk: 131 audit lines for one request); control: one chunk, one line', async () => {
    for (const n of [200, 1]) {
      const before = audit.filter((x) => x.exfiltration === true).length;
      received = '';
      let sentValue = false;
      await new Promise<void>((resolve, reject) => {
        const raw = netConnect(Number(new URL(proxyUrl).port), '127.0.0.1', () => raw.write(`CONNECT other.test:${upPort} HTTP/1.1\r\nHost: other.test:${upPort}\r\n\r\n`));
        raw.once('data', () => {
          const s = tls.connect({ socket: raw, servername: 'other.test', ca: [readFileSync(caFile, 'utf8')] }, () => {
            s.write(`POST /early HTTP/1.1\r\nHost: other.test:${upPort}\r\nTransfer-Encoding: chunked\r\n\r\n`);
            s.once('data', () => {
              // The answer has begun: now n chunks, each with the value, in one write.
              const c = `${'x'.repeat(40)}${REAL}${'y'.repeat(40)}`;
              sentValue = true;
              s.write(Array.from({ length: n }, () => `${c.length.toString(16)}\r\n${c}\r\n`).join(''));
              setTimeout(() => { s.destroy(); resolve(); }, 400);
            });
          });
          // Before the answer began, a failure; after, the proxy cuts the connection (the refusal of a begun answer).
          s.on('error', (e) => (sentValue ? undefined : reject(e)));
        });
      });
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(audit.filter((x) => x.exfiltration === true).length - before, 1, `${n} chunks`);
      assert.equal(received.includes(REAL.slice(0, 12)), false);
    }
  });

  test("Node's undici with EnvHttpProxyAgent through the proxy, trusting the CA by NODE_EXTRA_CA_CERTS", async () => {
    seen.length = 0;
    const js = `const { fetch, EnvHttpProxyAgent } = require('undici');
      fetch('https://api.test:${upPort}/undici', { headers: { authorization: 'token ${PH}' }, dispatcher: new EnvHttpProxyAgent() })
        .then(async (r) => process.stdout.write(r.status + ' ' + r.headers.get('x-echo-auth') + ' ' + (await r.text())), (e) => { console.error(e); process.exit(1); });`;
    const r = await run(process.execPath, ['-e', js], { cwd: REPO, env: { PATH: process.env.PATH, HTTPS_PROXY: proxyUrl, NODE_EXTRA_CA_CERTS: caFile } });
    assert.equal(r.stdout + r.stderr, `200 token ${PH} you sent token ${PH} /undici\n`);
    assert.deepEqual(seen.map((x) => [x.path, x.auth]), [['/undici', `token ${REAL}`]]);
  });

  test("Go's net/http through the proxy, trusting the run's name-constrained CA by SSL_CERT_FILE", needs('go'), async () => {
    seen.length = 0;
    const dir = join(t.dir, 'go-fetch');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'main.go'), [
      'package main',
      'import ("fmt"; "io"; "net/http"; "os")',
      'func main() {',
      '\treq, _ := http.NewRequest("GET", os.Args[1], nil)',
      '\treq.Header.Set("Authorization", os.Args[2])',
      '\tres, err := http.DefaultClient.Do(req)',
      '\tif err != nil { fmt.Fprintln(os.Stderr, err); os.Exit(1) }',
      '\tbody, _ := io.ReadAll(res.Body)',
      '\tfmt.Printf("%d %s %s", res.StatusCode, res.Header.Get("X-Echo-Auth"), body)',
      '}',
      '',
    ].join('\n'));
    const goEnv = { PATH: process.env.PATH, HOME: t.home, GOCACHE: join(dir, 'cache'), GO111MODULE: 'off' };
    const built = await run('go', ['build', '-o', 'fetch', 'main.go'], { cwd: dir, env: goEnv });
    assert.equal(built.code, 0, built.stderr);
    const r = await run(join(dir, 'fetch'), [`https://api.test:${upPort}/go`, `token ${PH}`], { env: { PATH: process.env.PATH, HTTPS_PROXY: proxyUrl, SSL_CERT_FILE: caFile } });
    assert.equal(r.stdout + r.stderr, `200 token ${PH} you sent token ${PH} /go\n`);
    assert.deepEqual(seen.map((x) => [x.path, x.auth]), [['/go', `token ${REAL}`]]);
    // The control: without the run's CA, Go's own trust refuses the leaf.
    const refused = await run(join(dir, 'fetch'), [`https://api.test:${upPort}/go`, 'x'], { env: { PATH: process.env.PATH, HTTPS_PROXY: proxyUrl, SSL_CERT_FILE: upCaFile } });
    assert.match(refused.stderr, /x509: certificate signed by unknown authority/);
  });

  test('inside a tunnel: a different Host, absolute-form and duplicate Authorization are refused', async () => {
    seen.length = 0;
    const host = await via(`https://api.test:${upPort}/h`, ['-H', 'Host: other.test', '-D', '-', '-H', `Authorization: Bearer ${PH}`]);
    assert.match(host.stdout, /^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*Host header differs from the request target/);
    const abs = await via(`https://api.test:${upPort}/x`, ['--request-target', `https://api.test:${upPort}/x`, '-D', '-']);
    assert.match(abs.stdout, /^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*absolute-form request inside a tunnel/);
    const dup = await via(`https://api.test:${upPort}/d`, ['-H', 'Authorization: a', '-H', 'Authorization: b', '-D', '-']);
    assert.match(dup.stdout, /^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*duplicate Authorization header/);
    assert.deepEqual(seen, []);
  });

  /** Raw bytes through an intercepted tunnel to api.test; resolves with all the proxy answered before closing (or 1.5 s of quiet). */
  const inTunnel = (bytes: string) => new Promise<string>((resolve, reject) => {
    const raw = netConnect(Number(new URL(proxyUrl).port), '127.0.0.1', () => raw.write(`CONNECT api.test:${upPort} HTTP/1.1\r\nHost: api.test:${upPort}\r\n\r\n`));
    raw.once('data', () => {
      const s = tls.connect({ socket: raw, servername: 'api.test', ca: [readFileSync(caFile, 'utf8')] }, () => s.write(bytes));
      let out = '';
      let quiet: NodeJS.Timeout | undefined;
      const done = () => { clearTimeout(quiet); s.destroy(); resolve(out); };
      s.setEncoding('latin1').on('data', (d: string) => { out += d; clearTimeout(quiet); quiet = setTimeout(done, 1500); });
      s.on('end', done);
      s.on('close', done);
      s.on('error', reject);
    });
  });

  test('inside a tunnel: smuggling shapes, TRACE and a duplicate Host get refused and reach no upstream; every request on a kept-alive tunnel is judged', async () => {
    seen.length = 0;
    received = '';
    const h = `Host: api.test:${upPort}\r\n`;
    const shapes: Array<[string, RegExp]> = [
      [`POST /s1 HTTP/1.1\r\n${h}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, /^HTTP\/1\.1 400 /],
      [`POST /s2 HTTP/1.1\r\n${h}Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd`, /^HTTP\/1\.1 400 /],
      [`GET /s3 HTTP/1.1\r\n${h}X-Folded: a\r\n b\r\n\r\n`, /^HTTP\/1\.1 400 /],
      [`GET /s4 HTTP/1.1\n${h}\n`, /^HTTP\/1\.1 400 /],
      [`TRACE /s5 HTTP/1.1\r\n${h}\r\n`, /^HTTP\/1\.1 403 Forbidden\r\n[\s\S]*TRACE is refused/],
      [`GET /s6 HTTP/1.1\r\n${h}${h}\r\n`, /^HTTP\/1\.1 400 /],
    ];
    for (const [bytes, expected] of shapes) assert.match(await inTunnel(bytes), expected, JSON.stringify(bytes));
    assert.deepEqual([seen, received], [[], '']);
    // First request allowed, the second on the same connection carries the placeholder's Host elsewhere.
    const both = await inTunnel(`GET /k1 HTTP/1.1\r\n${h}\r\nGET /k2 HTTP/1.1\r\nHost: other.test:${upPort}\r\nAuthorization: Bearer ${PH}\r\n\r\n`);
    assert.match(both, /^HTTP\/1\.1 200 OK\r\n[\s\S]*HTTP\/1\.1 400 Bad Request\r\n[\s\S]*Host header differs from the request target/);
    assert.deepEqual(seen.map((x) => x.path), ['/k1']);
    // A whole request and bytes no parser takes, in one read: the request is answered, then 400 and the end.
    const garbage = await inTunnel(`GET /k3 HTTP/1.1\r\n${h}\r\n\x01GARBAGE\r\n\r\n`);
    assert.match(garbage, /^HTTP\/1\.1 200 OK\r\n[\s\S]*HTTP\/1\.1 400 Bad Request\r\n/);
    assert.deepEqual(seen.map((x) => x.path), ['/k1', '/k3']);
  });

  test('the leaf is for the CONNECT target, whatever SNI the client sends; only http/1.1 is offered', async () => {
    const proxyPort = Number(new URL(proxyUrl).port);
    const cert = await new Promise<{ san: string; alpn: string | false | null }>((resolve, reject) => {
      const raw = netConnect(proxyPort, '127.0.0.1', () => raw.write(`CONNECT api.test:${upPort} HTTP/1.1\r\nHost: api.test:${upPort}\r\n\r\n`));
      raw.once('data', () => {
        const s = tls.connect({ socket: raw, servername: 'other.test', ALPNProtocols: ['h2', 'http/1.1'], rejectUnauthorized: false }, () => {
          resolve({ san: new X509Certificate(s.getPeerCertificate(true).raw).subjectAltName ?? '', alpn: s.alpnProtocol });
          s.destroy();
        });
        s.on('error', reject);
      });
    });
    assert.deepEqual(cert, { san: 'DNS:api.test', alpn: 'http/1.1' });
  });

  test('through agent run: the sandboxed agent holds the placeholder, the bound host gets the real value', needs('bwrap'), async () => {
    writeFileSync(join(t.sbHome, 'agents', 'gh.toml'), [
      '[network]',
      'egress_hosts = ["api.test", "other.test"]',
      `upstream_ca_file = "${upCaFile}"`,
      '[network.hosts]',
      `"api.test" = "127.0.0.1:${upPort}"`,
      `"other.test" = "127.0.0.1:${upPort}"`,
      '[secrets.GITHUB_TOKEN]',
      'source = "REAL_GH"',
      'hosts = ["api.test"]',
    ].join('\n') + '\n');
    seen.length = 0;
    const script = [
      `curl -sS https://api.test:${upPort}/user -H "Authorization: Bearer $GITHUB_TOKEN"`,
      `curl -sS -o /dev/null -w '%{http_code}\\n' https://other.test:${upPort}/x -H "Authorization: Bearer $GITHUB_TOKEN"`,
      'env | grep -c ghp_realReal',
      'echo "$GITHUB_TOKEN"',
    ].join('; ');
    const r = await cli(['agent', 'run', '--profile', 'gh', '--silent', '--', 'sh', '-c', script], { env: { ...t.env, REAL_GH: REAL }, cwd: t.dir });
    const [body, code, leaked, ph] = r.stdout.split('\n');
    assert.match(ph ?? '', /^ghp_SBPH[A-Za-z0-9]{31}$/, r.stderr);
    assert.equal(body, `you sent Bearer ${ph} /user`);
    // Another host gets the placeholder as it is (inert), never the real value.
    assert.equal(code, '200');
    assert.equal(leaked, '0');
    assert.deepEqual(seen.map((x) => [x.path, x.auth]), [['/user', `Bearer ${REAL}`], ['/x', `Bearer ${ph}`]]);
  });

  test('through the Docker backend: the container holds the placeholder, the bound host gets the real value', needs('docker'), async () => {
    writeFileSync(join(t.sbHome, 'agents', 'gh-docker.toml'), [
      '[sandbox]',
      'backend = "docker"',
      '[network]',
      'egress_hosts = ["api.test", "other.test"]',
      `upstream_ca_file = "${upCaFile}"`,
      '[network.hosts]',
      `"api.test" = "127.0.0.1:${upPort}"`,
      `"other.test" = "127.0.0.1:${upPort}"`,
      '[secrets.GITHUB_TOKEN]',
      'source = "REAL_GH"',
      'hosts = ["api.test"]',
    ].join('\n') + '\n');
    seen.length = 0;
    const script = [
      `curl -sS https://api.test:${upPort}/user -H "Authorization: Bearer $GITHUB_TOKEN"`,
      `curl -sS -o /dev/null -w '%{http_code}\\n' https://other.test:${upPort}/x -H "Authorization: Bearer $GITHUB_TOKEN"`,
      'grep -c ghp_realReal /proc/1/environ',
      'echo "$GITHUB_TOKEN"',
    ].join('; ');
    const r = await cli(['agent', 'run', '--profile', 'gh-docker', '--silent', '--', 'sh', '-c', script], { env: { ...t.env, REAL_GH: REAL }, cwd: t.dir, timeoutMs: 90_000 });
    const [body, code, leaked, ph] = r.stdout.split('\n');
    assert.match(ph ?? '', /^ghp_SBPH[A-Za-z0-9]{31}$/, r.stderr);
    assert.equal(body, `you sent Bearer ${ph} /user`);
    // Another host gets the placeholder as it is (inert), never the real value.
    assert.equal(code, '200');
    assert.equal(leaked, '0');
    assert.deepEqual(seen.map((x) => [x.path, x.auth]), [['/user', `Bearer ${REAL}`], ['/x', `Bearer ${ph}`]]);
  });

  test('an unreachable upstream: the 502, the proxy\'s stderr and the audit carry neither the real value nor the placeholder', async () => {
    const dead = await refusingPort();
    const deadPort = dead.port;
    const events: unknown[] = [];
    const audit = (e: unknown) => events.push(e);
    const i3 = new Interceptor({ leaves: new LeafCache(ca), secrets, upstreamCa: [...tls.rootCertificates], audit }, hostHeaderProblem);
    const p3 = createProxy({ policy: { egressHosts: ['api.test'], denyHosts: [], mapped: { 'api.test': `127.0.0.1:${deadPort}` } }, audit, interceptor: i3, secrets });
    await new Promise<void>((r) => p3.listen(0, '127.0.0.1', r));
    const stderr: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((d: string | Uint8Array) => (stderr.push(String(d)), true)) as typeof process.stderr.write;
    try {
      const proxyUrl = `http://127.0.0.1:${(p3.address() as AddressInfo).port}`;
      const tlsRun = await curl(['--proxy', proxyUrl, '--suppress-connect-headers', '--cacert', caFile, '-D', '-', `https://api.test/x?t=${PH}`, '-H', `Authorization: Bearer ${PH}`, '-d', `token=${PH}`]);
      const plain = await curl(['--proxy', proxyUrl, '-D', '-', 'http://api.test/x', '-H', `Authorization: Bearer ${PH}`]);
      assert.match(tlsRun.stdout, /^HTTP\/1\.1 502 Bad Gateway\r\n[\s\S]*\r\n\r\nstashbase proxy: upstream api\.test: ECONNREFUSED\n$/);
      // In plain HTTP (allow_plaintext is off) the placeholder is inert: not substituted, so only it could have gone out.
      assert.match(plain.stdout, /^HTTP\/1\.1 502 Bad Gateway\r\n/);
      const seenText = [tlsRun.stdout, tlsRun.stderr, plain.stdout, plain.stderr, stderr.join(''), JSON.stringify(events)].join('\n');
      assert.equal(seenText.includes(REAL), false, seenText);
      assert.equal([tlsRun.stdout, plain.stdout].join('').includes(PH), false);
    } finally {
      process.stderr.write = write;
      dead.release();
      i3.close();
      p3.close();
    }
  });

  test('an upstream whose certificate does not verify gets nothing', async () => {
    const strict = new Interceptor({ leaves: new LeafCache(ca), secrets, upstreamCa: [...tls.rootCertificates], audit: () => {} }, hostHeaderProblem);
    const p2 = createProxy({ policy: { egressHosts: ['api.test'], denyHosts: [], mapped: { 'api.test': `127.0.0.1:${upPort}` } }, audit: () => {}, interceptor: strict });
    await new Promise<void>((r) => p2.listen(0, '127.0.0.1', r));
    seen.length = 0;
    const r = await curl(['--proxy', `http://127.0.0.1:${(p2.address() as AddressInfo).port}`, '--suppress-connect-headers', '--cacert', caFile, '-D', '-', `https://api.test:${upPort}/x`, '-H', `Authorization: Bearer ${PH}`]);
    strict.close();
    p2.close();
    assert.match(r.stdout, /^HTTP\/1\.1 502 Bad Gateway\r\n[\s\S]*upstream api\.test: TLS failure (UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY): [^\r]*network\.upstream_ca_file\r\n/);
    assert.deepEqual(seen, []);
  });
});

describe('git over HTTPS through interception: clone and push with a bound token in Basic', needs('git'), () => {
  const t = tempHome();
  let server: import('node:https').Server;
  let proxy: Server;
  let interceptor: Interceptor;
  let port = 0;
  let proxyUrl = '';
  let caFile = '';
  const auths: string[] = [];
  const root = join(t.dir, 'srv');

  before(async () => {
    const upCa = testCa();
    const leaf = new LeafCache(upCa).get('git.test');
    mkdirSync(root, { recursive: true });
    spawnSync('git', ['init', '-q', '--bare', join(root, 'repo.git')]);
    spawnSync('git', ['-C', join(root, 'repo.git'), 'config', 'http.receivepack', 'true']);
    const https = await import('node:https');
    // A smart-HTTP server: git http-backend as CGI, behind Basic auth with the real token.
    server = https.createServer({ key: leaf.keyPem, cert: leaf.certPem }, (req, res) => {
      const auth = req.headers.authorization ?? '';
      auths.push(auth);
      if (auth !== `Basic ${Buffer.from(`x-access-token:${REAL}`).toString('base64')}`) {
        res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' });
        return void res.end();
      }
      const u = new URL(req.url ?? '/', 'https://git.test');
      const cgi = spawn('git', ['http-backend'], {
        env: { PATH: process.env.PATH, GIT_PROJECT_ROOT: root, GIT_HTTP_EXPORT_ALL: '1', REQUEST_METHOD: req.method, PATH_INFO: u.pathname, QUERY_STRING: u.search.slice(1), CONTENT_TYPE: req.headers['content-type'] ?? '', REMOTE_USER: 'agent', GIT_HTTP_MAX_REQUEST_BUFFER: '100M' },
      });
      req.pipe(cgi.stdin);
      let head = Buffer.alloc(0);
      let sent = false;
      cgi.stdout.on('data', (d: Buffer) => {
        if (sent) return void res.write(d);
        head = Buffer.concat([head, d]);
        const end = head.indexOf('\r\n\r\n');
        if (end === -1) return;
        const lines = head.subarray(0, end).toString().split('\r\n');
        let status = 200;
        for (const l of lines) {
          const [k, ...v] = l.split(':');
          if (k!.toLowerCase() === 'status') status = Number(v.join(':').trim().split(' ')[0]);
          else res.setHeader(k!, v.join(':').trim());
        }
        res.writeHead(status);
        sent = true;
        res.write(head.subarray(end + 4));
      });
      cgi.on('close', () => res.end());
    });
    port = await listen(server);
    // Constrained to the one name the run may reach, as a run's is: git's TLS (GnuTLS on Debian) takes it.
    const ca = createRunCa(['git.test'], 'test');
    caFile = join(t.dir, 'ca.pem');
    writeFileSync(caFile, ca.certPem);
    interceptor = new Interceptor({ leaves: new LeafCache(ca), secrets: [{ ...secrets[0]!, hosts: ['git.test'] }], upstreamCa: [upCa.certPem], audit: () => {} }, hostHeaderProblem);
    proxy = createProxy({ policy: { egressHosts: ['git.test'], denyHosts: [], mapped: { 'git.test': `127.0.0.1:${port}` } }, audit: () => {}, interceptor });
    proxyUrl = `http://127.0.0.1:${await listen(proxy)}`;
  });
  after(() => {
    interceptor.close();
    proxy.close();
    server.close();
    t.cleanup();
  });

  test('the agent clones and pushes with only the placeholder; the server saw the real token', async () => {
    const env = { PATH: process.env.PATH, HOME: t.home, HTTPS_PROXY: proxyUrl, GIT_SSL_CAINFO: caFile, GIT_TERMINAL_PROMPT: '0', GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@x', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@x' };
    const git = (args: string[], cwd = t.dir) => run('git', args, { env, cwd });
    const clone = await git(['clone', '-q', `https://x-access-token:${PH}@git.test:${port}/repo.git`, 'work']);
    assert.equal(clone.code, 0, clone.stderr);
    writeFileSync(join(t.dir, 'work', 'f.txt'), 'hello\n');
    assert.equal((await git(['add', 'f.txt'], join(t.dir, 'work'))).code, 0);
    assert.equal((await git(['commit', '-q', '-m', 'agent commit'], join(t.dir, 'work'))).code, 0);
    const push = await git(['push', '-q', 'origin', 'HEAD:main'], join(t.dir, 'work'));
    assert.equal(push.code, 0, push.stderr);
    const log = spawnSync('git', ['-C', join(root, 'repo.git'), 'log', '--format=%s', 'main'], { encoding: 'utf8' });
    assert.equal(log.stdout, 'agent commit\n');
    const good = `Basic ${Buffer.from(`x-access-token:${REAL}`).toString('base64')}`;
    assert.ok(auths.includes(good));
    assert.deepEqual(auths.filter((a) => a !== '' && a !== good), []);
  });
});

describe('WebSocket upgrades through interception', () => {
  const t = tempHome();
  const seen: string[] = [];
  let upstream: import('node:https').Server;
  let proxy: Server;
  let interceptor: Interceptor;
  let upPort = 0;
  let proxyPort = 0;
  let caPem = '';

  before(async () => {
    const upCa = testCa();
    const leaf = new LeafCache(upCa).get('ws.test');
    const otherLeaf = new LeafCache(upCa).get('other.test');
    const https = await import('node:https');
    const ctx = (l: { keyPem: string; certPem: string }) => tls.createSecureContext({ key: l.keyPem, cert: l.certPem });
    upstream = https.createServer({ key: leaf.keyPem, cert: leaf.certPem, SNICallback: (name, cb) => cb(null, ctx(name === 'other.test' ? otherLeaf : leaf)) });
    upstream.on('upgrade', (req, socket) => {
      seen.push(`${req.url} ${req.headers.authorization} ${req.headers.upgrade}`);
      socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
      let buf: Buffer = Buffer.alloc(0);
      socket.on('data', (d: Buffer) => {
        const r = readFrames(Buffer.concat([buf, d]));
        buf = r.rest;
        for (const m of messages(r.frames)) socket.write(frame(`echo:${m}`, { masked: false }));
      });
    });
    upPort = await listen(upstream);
    const ca = createRunCa(['ws.test', 'other.test'], 'test');
    caPem = ca.certPem;
    interceptor = new Interceptor({ leaves: new LeafCache(ca), secrets: [{ ...secrets[0]!, hosts: ['ws.test'] }], upstreamCa: [upCa.certPem], audit: () => {} }, hostHeaderProblem);
    const mapped = { 'ws.test': `127.0.0.1:${upPort}`, 'other.test': `127.0.0.1:${upPort}` };
    proxy = createProxy({ policy: { egressHosts: ['ws.test', 'other.test'], denyHosts: [], mapped }, audit: () => {}, interceptor });
    proxyPort = await listen(proxy);
  });
  after(() => {
    interceptor.close();
    proxy.close();
    upstream.close();
    t.cleanup();
  });

  function upgradeVia(host: string, token: string, hostHeader = `${host}:${upPort}`): Promise<string> {
    return new Promise((resolve, reject) => {
      const raw = netConnect(proxyPort, '127.0.0.1', () => raw.write(`CONNECT ${host}:${upPort} HTTP/1.1\r\nHost: ${host}:${upPort}\r\n\r\n`));
      raw.once('data', () => {
        const s = tls.connect({ socket: raw, servername: host, ca: caPem }, () => {
          s.write(`GET /ws HTTP/1.1\r\nHost: ${hostHeader}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nAuthorization: Bearer ${token}\r\n\r\n`);
          let out = '';
          let sent = false;
          s.on('data', (d: Buffer) => {
            out += d.toString('latin1');
            if (out.includes('\r\n\r\n') && out.startsWith('HTTP/1.1 101') && !sent) {
              sent = true;
              s.write(frame('ping'));
            }
            if (out.includes('echo:ping') || (!out.startsWith('HTTP/1.1 101') && out.includes('\n\n'.replace('\n\n', '\r\n\r\n')))) {
              setTimeout(() => {
                s.destroy();
                resolve(out);
              }, 50);
            }
          });
          s.on('end', () => resolve(out));
        });
        s.on('error', reject);
      });
    });
  }

  test('the upgrade gets the real value toward the bound host, and carries frames both ways', async () => {
    const out = await upgradeVia('ws.test', PH);
    assert.match(out, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
    assert.match(out, /echo:ping/);
    assert.deepEqual(seen, [`/ws Bearer ${REAL} websocket`]);
  });

  test('an upgrade carrying the real value to another host is refused; the placeholder there is inert', async () => {
    seen.length = 0;
    const out = await upgradeVia('other.test', PH);
    assert.match(out, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
    assert.deepEqual(seen, [`/ws Bearer ${PH} websocket`]);
    seen.length = 0;
    const real = await upgradeVia('other.test', REAL);
    assert.match(real, /^HTTP\/1\.1 403 Forbidden\r\nX-Stashbase-Denied: the real value of GITHUB_TOKEN headed to other\.test \(Authorization\), which it is not bound to\r\n/);
    // Tunnelled to ws.test, where the placeholder is bound, but addressed to other.test in its Host header.
    const host = await upgradeVia('ws.test', PH, `other.test:${upPort}`);
    assert.match(host, /^HTTP\/1\.1 400 Bad Request\r\nX-Stashbase-Denied: [^\r]*Host header differs from the request target/);
    assert.deepEqual(seen, []);
  });
});
