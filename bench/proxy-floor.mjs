// The floor under bench/proxy.mjs: what a TLS-terminating proxy written with
// Node's own modules costs at best, with no policy, scrubbing or sandbox. Three
// processes on loopback (client, proxy, upstream), keep-alive HTTPS through a
// CONNECT tunnel, one request at a time, against the same client straight to
// the upstream, in the same run. The proxy's variants:
//   raw    after TLS termination, bytes passed both ways (no HTTP at all);
//   lean   both sides parsed with the HTTP parser Node's server and client use
//          (_http_common's HTTPParser), heads written by the proxy itself, one
//          upstream TLS socket per tunnel: no http.Server, no ServerResponse;
//   llhttp Node's HTTP server for requests, one upstream TLS socket per tunnel,
//          responses parsed with that parser and written through the
//          ServerResponse;
//   agent  Node's HTTP server and https.request with a keep-alive agent (what
//          lib/proxy/intercept.ts did before session 10);
//   stashbase  (or stashbase:DIR, the build in DIR) stashbase's own proxy (lib/proxy/), run as the sandbox's run
//          runs it (one secret bound to the host and substituted, its audit
//          log written), but with the client on the host: the proxy's code
//          without the sandbox around the client.
// Prints JSON and a table.
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { createServer as httpServer } from 'node:http';
import { Agent, createServer as httpsServer, request as httpsRequest } from 'node:https';
import { createRequire } from 'node:module';
import { connect, createServer as netServer } from 'node:net';
import { connect as tlsConnect, createSecureContext, TLSSocket } from 'node:tls';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [role, mode, upArg, keyPem, certPem] = process.argv.slice(2);
// Stopped by the bench: an orderly exit, so that a CPU profile is written.
if (role === 'proxy') process.on('SIGTERM', () => process.exit(0));
const N = Number(process.env.REQUESTS ?? 4000);
// As long as the real value (as stashbase makes its placeholders), so that the answer keeps its Content-Length.
const PLACEHOLDER = 'ghp_SBPHplaceholderPlaceholderPlace0123';
const body = JSON.stringify({ id: 'msg_01', type: 'message', content: [{ type: 'text', text: 'ok' }] });

if (role === 'up') {
  const up = httpsServer({ key: keyPem, cert: certPem }, (_req, res) => res.end(body));
  up.listen(0, '127.0.0.1', () => console.log(up.address().port));
} else if (role === 'proxy' && mode.startsWith('stashbase')) {
  // stashbase:DIR runs the build in DIR instead (another build's dist, for an A/B in one run).
  const dist = mode.includes(':') ? `${mode.slice(mode.indexOf(':') + 1)}/` : '../dist/';
  const { rootCertificates } = await import('node:tls');
  const { Interceptor } = await import(`${dist}lib/proxy/intercept.js`);
  const { createProxy, hostHeaderProblem } = await import(`${dist}lib/proxy/server.js`);
  const { createRunCa } = await import(`${dist}lib/tls/ca.js`);
  const { LeafCache } = await import(`${dist}lib/tls/leaves.js`);
  const { AuditLog } = await import(`${dist}lib/run/audit.js`);
  const home = mkdtempSync(join(tmpdir(), 'sb-floor-'));
  const audit = new AuditLog(home, 'floor');
  const ca = createRunCa(['api.test', '*.test'], 'bench');
  const secrets = [{ name: 'BENCH_TOKEN', placeholder: PLACEHOLDER, real: 'ghp_realRealRealRealRealRealReal0123456', hosts: ['api.test'], inQuery: false, allowPlaintext: false }];
  const audit1 = (e) => audit.write(e);
  const interceptor = new Interceptor({ leaves: new LeafCache(ca), secrets, upstreamCa: [...rootCertificates, certPem], audit: audit1 }, hostHeaderProblem);
  const proxy = createProxy({ policy: { egressHosts: ['api.test'], denyHosts: [], mapped: { 'api.test': `127.0.0.1:${upArg}` } }, audit: audit1, interceptor, secrets });
  proxy.listen(0, '127.0.0.1', () => console.log(proxy.address().port));
  // The client trusts this proxy's CA: written where it reads it.
  writeFileSync(join(process.env.FLOOR_DIR, 'sb-ca.pem'), ca.certPem);
} else if (role === 'proxy') {
  const upPort = Number(upArg);
  const trust = createSecureContext({ ca: certPem });
  const own = createSecureContext({ key: keyPem, cert: certPem });
  const dial = () => {
    const u = tlsConnect({ host: '127.0.0.1', port: upPort, servername: 'api.test', secureContext: trust });
    u.setNoDelay(true);
    return u;
  };
  const { HTTPParser, methods } = createRequire(import.meta.url)('_http_common');
  /** Node's HTTP parser (strict) on a stream's bytes, with the three callbacks a proxy needs. */
  const parse = (kind, stream, onHead, onBody, onDone) => {
    const p = new HTTPParser();
    p.initialize(kind, {}, 16384, 0);
    p[HTTPParser.kOnHeadersComplete] = onHead;
    p[HTTPParser.kOnBody] = onBody;
    p[HTTPParser.kOnMessageComplete] = onDone;
    stream.on('data', (d) => p.execute(d));
  };
  const serialize = (start, headers) => {
    let h = `${start}\r\n`;
    for (let i = 0; i < headers.length; i += 2) h += `${headers[i]}: ${headers[i + 1]}\r\n`;
    return `${h}\r\n`;
  };
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const head = (req) => serialize(`${req.method} ${req.url} HTTP/1.1`, req.rawHeaders);
  const inner = httpServer((req, res) => {
    if (mode === 'llhttp') {
      const u = req.socket.upstream;
      u.waiting.push(res);
      return void u.write(head(req));
    }
    const u = httpsRequest({ host: '127.0.0.1', port: upPort, path: req.url, method: req.method, headers: req.rawHeaders, servername: 'api.test', agent, secureContext: trust });
    u.on('response', (r) => {
      res.writeHead(r.statusCode, r.rawHeaders);
      r.on('data', (d) => res.write(d));
      r.on('end', () => res.end());
    });
    u.end();
  });
  const front = netServer((sock) => {
    sock.setNoDelay(true);
    sock.once('data', () => {
      sock.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      const t = new TLSSocket(sock, { isServer: true, secureContext: own });
      if (mode === 'raw') {
        const u = dial();
        t.on('data', (x) => u.write(x));
        u.on('data', (x) => t.write(x));
        return;
      }
      if (mode === 'lean') {
        const u = dial();
        parse(HTTPParser.REQUEST, t, (_vM, _vm, headers, method, url) => void u.write(serialize(`${methods[method]} ${url} HTTP/1.1`, headers)), (b) => u.write(b), () => {});
        let out = null;
        parse(
          HTTPParser.RESPONSE, u,
          (_vM, _vm, headers, _method, _url, status, message) => void (out = [Buffer.from(serialize(`HTTP/1.1 ${status} ${message}`, headers), 'latin1')]),
          (b) => out.push(Buffer.from(b)),
          () => {
            t.write(Buffer.concat(out));
            out = null;
          },
        );
        return;
      }
      if (mode === 'leanserver') {
        parse(HTTPParser.REQUEST, t, (_vM, _vm, headers, method, url) => {
          const u = httpsRequest({ host: '127.0.0.1', port: upPort, path: url, method: methods[method], headers, servername: 'api.test', agent, secureContext: trust });
          u.on('response', (r) => {
            t.cork();
            t.write(serialize(`HTTP/1.1 ${r.statusCode} ${r.statusMessage}`, r.rawHeaders), 'latin1');
            r.on('data', (d) => t.write(d));
            r.on('end', () => t.uncork());
          });
          u.end();
        }, () => {}, () => {});
        return;
      }
      if (mode === 'llhttp') {
        const u = dial();
        u.waiting = [];
        parse(
          HTTPParser.RESPONSE, u,
          (_vM, _vm, headers, _method, _url, status, message) => void u.waiting[0].writeHead(status, message, headers),
          (b) => u.waiting[0].write(b),
          () => u.waiting.shift().end(),
        );
        t.upstream = u;
      }
      inner.emit('connection', t);
    });
  });
  front.listen(0, '127.0.0.1', () => console.log(front.address().port));
} else {
  const { LeafCache } = await import('../dist/lib/tls/leaves.js');
  const { buildCertificate, toPem } = await import('../dist/lib/tls/x509.js');
  const k = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const now = new Date();
  const caPem = toPem(buildCertificate({ subjectCN: 'floor CA', issuerCN: 'floor CA', org: 'bench', publicKey: k.publicKey, signingKey: k.privateKey, issuerPublicKey: k.publicKey, notBefore: new Date(+now - 3600e3), notAfter: new Date(+now + 864e5), ca: true }));
  const leaf = new LeafCache({ name: { cn: 'floor CA', org: 'bench' }, key: k.privateKey, publicKey: k.publicKey, certPem: caPem, constrained: null, notAfter: new Date(Date.now() + 864e5) }).get('api.test');
  const start = (args) =>
    new Promise((resolve) => {
      // CPU_PROF=dir: a V8 CPU profile of each proxy, written to dir when it is stopped.
      const prof = process.env.CPU_PROF && args[0] === 'proxy' ? ['--cpu-prof', `--cpu-prof-dir=${process.env.CPU_PROF}`] : [];
      const c = spawn(process.execPath, [...prof, new URL(import.meta.url).pathname, ...args, leaf.keyPem, `${leaf.certPem}${caPem}`], { stdio: ['ignore', 'pipe', 'inherit'] });
      c.stdout.once('data', (d) => resolve({ c, port: Number(String(d)) }));
    });
  process.env.FLOOR_DIR = mkdtempSync(join(tmpdir(), 'floor-'));
  const open = async (port, tunnel, ca = caPem) => {
    const raw = connect(port, '127.0.0.1');
    raw.setNoDelay(true);
    if (tunnel) {
      raw.write('CONNECT api.test:443 HTTP/1.1\r\nHost: api.test:443\r\n\r\n');
      await new Promise((r) => raw.once('data', r));
    }
    const s = tlsConnect({ socket: raw, servername: 'api.test', ca });
    await new Promise((r) => s.once('secureConnect', r));
    return s;
  };
  // Through stashbase: its CA trusted, and the placeholder it substitutes sent with each request.
  const series = async (port, tunnel, n, sb = false) => {
    const s = await open(port, tunnel, sb ? readFileSync(join(process.env.FLOOR_DIR, 'sb-ca.pem'), 'utf8') : caPem);
    const request = `GET /cl HTTP/1.1\r\nHost: api.test\r\n${sb ? `Authorization: Bearer ${PLACEHOLDER}\r\n` : ''}\r\n`;
    let buf = '';
    let waiter = null;
    s.on('data', (d) => {
      buf += d;
      const end = buf.indexOf('\r\n\r\n');
      const cl = /content-length: (\d+)/i.exec(buf);
      if (end !== -1 && cl && buf.length >= end + 4 + Number(cl[1])) {
        buf = '';
        waiter?.();
      }
    });
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      const done = new Promise((r) => (waiter = r));
      s.write(request);
      await done;
    }
    s.destroy();
    return Math.round(n / (Number(process.hrtime.bigint() - t0) / 1e9));
  };
  const up = await start(['up', '-', '0']);
  const rows = [];
  // The client and upstream warmed up first: the first series ran slower, whatever its proxy.
  await series(up.port, false, 5000);
  for (const m of (process.env.MODES ?? 'raw,lean,leanserver,llhttp,agent').split(',')) {
    const proxy = await start(['proxy', m, String(up.port)]);
    await series(up.port, false, 1000);
    const sb = m.startsWith('stashbase');
    await series(proxy.port, true, 1000, sb);
    const direct = await series(up.port, false, N);
    const proxied = await series(proxy.port, true, N, sb);
    rows.push({ proxy: m, direct_rps: direct, proxied_rps: proxied, ratio: +(proxied / direct).toFixed(2) });
    proxy.c.kill();
  }
  up.c.kill();
  console.log(JSON.stringify({ benchmark: 'proxy-floor', date: new Date().toISOString(), requests: N, rows }, null, 2));
  console.log('\nproxy    direct rps  proxied rps  ratio');
  for (const r of rows) console.log(`${r.proxy.padEnd(7)}  ${String(r.direct_rps).padStart(10)}  ${String(r.proxied_rps).padStart(11)}  ${r.ratio}`);
  process.exit(0);
}
