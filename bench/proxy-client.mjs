// The client side of bench/proxy.mjs, run as is (direct) or inside a native
// sandbox (through the intercepting proxy): keep-alive HTTPS
// requests on one connection, each timed until its whole response is read
// (Content-Length or chunked), then an event stream's lateness. Prints JSON.
// Node built-ins only: it runs from the checkout, read-only, inside the sandbox.
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { readFileSync } from 'node:fs';

const [mode, port, n] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4] ?? 2000)];
const host = 'api.test';
// Requests before the timed ones, on the same connection: both sides' code warmed up alike.
const WARM = Number(process.argv[5] ?? 500);
const ca = readFileSync(process.env.BENCH_CA ?? process.env.NODE_EXTRA_CA_CERTS, 'utf8');

async function open() {
  let raw;
  if (mode === 'direct') {
    raw = connect(port, '127.0.0.1');
  } else {
    const proxy = new URL(process.env.HTTPS_PROXY);
    const auth = Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64');
    raw = connect(Number(proxy.port), proxy.hostname);
    raw.write(`CONNECT ${host}:443 HTTP/1.1\r\nHost: ${host}:443\r\nProxy-Authorization: Basic ${auth}\r\n\r\n`);
    await new Promise((resolve) => raw.once('data', resolve));
  }
  raw.setNoDelay(true);
  const s = tlsConnect({ socket: raw, servername: host, ca });
  await new Promise((resolve, reject) => { s.once('secureConnect', resolve); s.once('error', reject); });
  s.setNoDelay(true);
  return s;
}

/** Reads responses off the socket: resolves each when its body is complete. */
function responses(s) {
  let buf = Buffer.alloc(0);
  let waiter = null;
  const complete = () => {
    const end = buf.indexOf('\r\n\r\n');
    if (end === -1) return -1;
    const head = buf.subarray(0, end).toString('latin1');
    const cl = /\r\ncontent-length: (\d+)/i.exec(head);
    if (cl) return buf.length >= end + 4 + Number(cl[1]) ? end + 4 + Number(cl[1]) : -1;
    const last = buf.indexOf('\r\n0\r\n\r\n', end);
    return last === -1 ? -1 : last + 7;
  };
  s.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    const at = complete();
    if (at !== -1 && waiter) {
      buf = buf.subarray(at);
      const w = waiter;
      waiter = null;
      w();
    }
  });
  return () => new Promise((resolve) => { waiter = resolve; });
}

async function keepAlive(path) {
  const s = await open();
  const next = responses(s);
  const auth = `Authorization: Bearer ${process.env.BENCH_TOKEN ?? 'none'}\r\n`;
  const lat = [];
  for (let i = 0; i < n + WARM; i++) {
    const t0 = process.hrtime.bigint();
    const done = next();
    s.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${auth}\r\n`);
    await done;
    if (i >= WARM) lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  s.destroy();
  const total = lat.reduce((a, b) => a + b, 0) / 1000;
  lat.sort((a, b) => a - b);
  // The stalls: requests over 1 ms, and their share of the whole time.
  const slow = lat.filter((v) => v > 1);
  const slowShare = slow.reduce((a, b) => a + b, 0) / 1000 / total;
  return { rps: Math.round(n / total), p50_ms: +lat[Math.floor(n / 2)].toFixed(3), p99_ms: +lat[Math.floor(n * 0.99)].toFixed(3), over_1ms: slow.length, over_1ms_time_share: +slowShare.toFixed(2) };
}

async function sse() {
  const s = await open();
  const late = [];
  s.on('data', (d) => {
    const at = Date.now();
    for (const m of d.toString('latin1').matchAll(/"t":(\d+)/g)) late.push(at - Number(m[1]));
  });
  s.write(`GET /sse?n=20&every=50 HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${process.env.BENCH_TOKEN ?? 'none'}\r\n\r\n`);
  await new Promise((resolve) => { const t = setInterval(() => { if (late.length >= 20) { clearInterval(t); resolve(); } }, 10); });
  s.destroy();
  late.sort((a, b) => a - b);
  return { events: late.length, median_ms: late[10], max_ms: late.at(-1) };
}

const out = { cl: await keepAlive('/cl'), chunked: await keepAlive('/chunked'), sse: await sse() };
process.stdout.write(JSON.stringify(out) + '\n');
process.exit(0);
