// The proxy's cost: keep-alive HTTPS requests through the intercepting proxy
// (one secret substituted per request) against the same client talking straight
// to the same local HTTPS server, and a plain CONNECT tunnel (no interception)
// as a second baseline; p50/p99 latency; the time to mint a new host's
// certificate; memory under a flood of 10,000 unique hosts. All on loopback.
import { generateKeyPairSync } from 'node:crypto';
import { Agent, createServer, request } from 'node:https';
import { connect } from 'node:net';
import { rootCertificates } from 'node:tls';
import tls from 'node:tls';
import { setup } from './lib.mjs';

const { Interceptor } = await import('../dist/lib/proxy/intercept.js');
const { createProxy, hostHeaderProblem } = await import('../dist/lib/proxy/server.js');
const { loadOrCreateCa } = await import('../dist/lib/tls/ca.js');
const { LeafCache } = await import('../dist/lib/tls/leaves.js');
const { buildCertificate, toPem } = await import('../dist/lib/tls/x509.js');

const { home } = setup(1);
const N = Number(process.env.REQUESTS ?? 2000);
const REAL = 'ghp_realRealRealRealRealRealReal0123456';
const PH = 'ghp_SBPHplaceholderPlaceholderPlace01';

// Upstream with its own test CA.
const k = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const now = new Date();
const upCaPem = toPem(buildCertificate({ subjectCN: 'bench CA', issuerCN: 'bench CA', org: 'bench', publicKey: k.publicKey, signingKey: k.privateKey, issuerPublicKey: k.publicKey, notBefore: new Date(+now - 3600e3), notAfter: new Date(+now + 864e5), ca: true }));
const upLeaf = new LeafCache({ name: { cn: 'bench CA', org: 'bench' }, key: k.privateKey, publicKey: k.publicKey, certPem: upCaPem, certFile: '' }).get('api.test');
let upConns = 0;
const upstream = createServer({ key: upLeaf.keyPem, cert: upLeaf.certPem }, (req, res) => res.end('ok'));
upstream.on('secureConnection', () => upConns++);
await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
const upPort = upstream.address().port;

const ca = await loadOrCreateCa(`${home}/.stashbase`);
const secrets = [{ name: 'T', placeholder: PH, real: REAL, hosts: ['api.test'], inQuery: false, allowPlaintext: false }];
const policy = { egressHosts: ['api.test'], denyHosts: [], mapped: { 'api.test': `127.0.0.1:${upPort}` } };
const interceptor = new Interceptor({ leaves: new LeafCache(ca), secrets, upstreamCa: [...rootCertificates, upCaPem], audit: () => {} }, hostHeaderProblem);
const intercepting = createProxy({ policy, audit: () => {}, interceptor });
const tunnelling = createProxy({ policy, audit: () => {} });
for (const s of [intercepting, tunnelling]) await new Promise((r) => s.listen(0, '127.0.0.1', r));

/** A TLS socket to api.test: direct, or through a proxy's CONNECT. */
function tlsTo(proxyPort, caList) {
  return new Promise((resolve, reject) => {
    const done = (raw) => {
      const s = tls.connect({ socket: raw, servername: 'api.test', ca: caList }, () => resolve(s));
      s.on('error', reject);
    };
    if (proxyPort === null) return done(connect(upPort, '127.0.0.1'));
    const raw = connect(proxyPort, '127.0.0.1', () => raw.write(`CONNECT api.test:${upPort} HTTP/1.1\r\nHost: api.test:${upPort}\r\n\r\n`));
    raw.once('data', () => done(raw));
  });
}

async function run(name, proxyPort, caList) {
  const socket = await tlsTo(proxyPort, caList);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  agent.createConnection = () => socket;
  const lat = [];
  const one = () => new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = request({ host: 'api.test', port: upPort, path: '/', agent, headers: { authorization: `Bearer ${PH}` } }, (res) => {
      res.resume();
      res.on('end', () => { lat.push(Number(process.hrtime.bigint() - t0) / 1e6); resolve(); });
    });
    req.on('error', reject);
    req.end();
  });
  for (let i = 0; i < 100; i++) await one(); // warm-up
  lat.length = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) await one();
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  socket.destroy();
  lat.sort((a, b) => a - b);
  return { subject: name, rps: Math.round(N / secs), p50_ms: +lat[Math.floor(lat.length * 0.5)].toFixed(3), p99_ms: +lat[Math.floor(lat.length * 0.99)].toFixed(3) };
}

const c0 = upConns;
const direct = await run('direct to the HTTPS server', null, [upCaPem]);
const tunnel = await run('plain CONNECT tunnel', tunnelling.address().port, [upCaPem]);
const c1 = upConns;
const mitm = await run('intercepted, one secret substituted', intercepting.address().port, [ca.certPem]);
console.error('upstream TLS connections during the intercepted run:', upConns - c1, 'direct+tunnel:', c1 - c0);
const rows = [direct, tunnel, mitm].map((r) => ({ ...r, ratio: +(r.rps / direct.rps).toFixed(2), added_p50_ms: +(r.p50_ms - direct.p50_ms).toFixed(3) }));

// A new host's certificate, and memory under 10,000 unique hosts.
const leaves = new LeafCache(ca);
const mints = [];
for (let i = 0; i < 200; i++) { const t0 = process.hrtime.bigint(); leaves.get(`h${i}.mint.test`); mints.push(Number(process.hrtime.bigint() - t0) / 1e6); }
mints.sort((a, b) => a - b);
global.gc?.();
const before = process.memoryUsage().heapUsed;
for (let i = 0; i < 10000; i++) leaves.get(`flood${i}.test`);
global.gc?.();
const afterFlood = process.memoryUsage().heapUsed;
const out = { benchmark: 'proxy', requests: N, rows, mint_p50_ms: +mints[100].toFixed(3), flood: { hosts: 10000, cached: leaves.size, heap_growth_mb: +((afterFlood - before) / 2 ** 20).toFixed(1) } };
console.log(JSON.stringify(out, null, 2));
console.log('\nsubject                                rps   ratio  p50 ms  p99 ms  added p50');
for (const r of rows) console.log(`${r.subject.padEnd(37)} ${String(r.rps).padStart(5)}  ${String(r.ratio).padStart(5)}  ${String(r.p50_ms).padStart(6)}  ${String(r.p99_ms).padStart(6)}  ${r.added_p50_ms}`);
console.log(`new host certificate: ${out.mint_p50_ms} ms (median); 10,000-host flood: ${leaves.size} cached, heap +${out.flood.heap_growth_mb} MB`);
interceptor.close();
for (const s of [intercepting, tunnelling, upstream]) s.close();
process.exit(0);
