// The client side of bench/proxy.mjs, run as is (direct) or inside a native
// sandbox (through the intercepting proxy). It opens one keep-alive HTTPS
// connection per kind of answer (Content-Length, chunked), warms each up, says
// "ready", then takes orders on stdin, one per line, and answers each with a
// line of JSON:
//   cl N | chunked N   N requests on that connection, each timed until its
//                      whole response is read: {rps, p50_ms, ...}
//   sse                an event stream's lateness: {events, median_ms, max_ms}
//   end                every timed request of each kind together, then exit
// The bench gives the two clients (direct, sandboxed) slices of requests in
// turn, so both are measured within the same second or so.
// Node built-ins only: it runs from the checkout, read-only, inside the sandbox.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { answers, open as openTls } from './tls-client.mjs';

const [mode, port] = [process.argv[2], Number(process.argv[3])];
// Untimed requests first on each connection: both sides' code warmed up alike.
const WARM = Number(process.argv[4] ?? 500);
const host = 'api.test';
const ca = readFileSync(process.env.BENCH_CA ?? process.env.NODE_EXTRA_CA_CERTS, 'utf8');
const auth = `Authorization: Bearer ${process.env.BENCH_TOKEN ?? 'none'}\r\n`;

const open = () => openTls(mode, { directPort: port, host, port: 443, ca });
const responses = answers;

/** A kept-alive connection for one path: `run(n)` times n requests on it. */
async function connection(path) {
  const s = await open();
  const next = responses(s);
  const request = `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${auth}\r\n`;
  const all = [];
  const run = async (n, timed = true) => {
    const lat = [];
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint();
      const done = next();
      s.write(request);
      await done;
      lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    if (timed) all.push(...lat);
    return lat;
  };
  return { run, all };
}

/** Requests/s, median and 99th percentile, and the stalls: requests over 1 ms and their share of the time. */
function summary(lat) {
  const n = lat.length;
  const total = lat.reduce((a, b) => a + b, 0) / 1000;
  const sorted = [...lat].sort((a, b) => a - b);
  const slow = sorted.filter((v) => v > 1);
  return {
    requests: n, rps: Math.round(n / total), p50_ms: +sorted[Math.floor(n / 2)].toFixed(3), p99_ms: +sorted[Math.floor(n * 0.99)].toFixed(3),
    over_1ms: slow.length, over_1ms_time_share: +(slow.reduce((a, b) => a + b, 0) / 1000 / total).toFixed(2),
  };
}

async function sse() {
  const s = await open();
  const late = [];
  s.on('data', (d) => {
    const at = Date.now();
    for (const m of d.toString('latin1').matchAll(/"t":(\d+)/g)) late.push(at - Number(m[1]));
  });
  s.write(`GET /sse?n=20&every=50 HTTP/1.1\r\nHost: ${host}\r\n${auth}\r\n`);
  await new Promise((resolve) => { const t = setInterval(() => { if (late.length >= 20) { clearInterval(t); resolve(); } }, 10); });
  s.destroy();
  late.sort((a, b) => a - b);
  return { events: late.length, median_ms: late[10], max_ms: late.at(-1) };
}

const kinds = { cl: await connection('/cl'), chunked: await connection('/chunked') };
for (const k of Object.values(kinds)) await k.run(WARM, false);
const say = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
say({ ready: true });
for await (const line of createInterface({ input: process.stdin })) {
  const [order, n] = line.split(' ');
  if (order === 'cl' || order === 'chunked') say(summary(await kinds[order].run(Number(n))));
  else if (order === 'sse') say(await sse());
  else if (order === 'end') {
    say({ cl: summary(kinds.cl.all), chunked: summary(kinds.chunked.all) });
    break;
  } else throw new Error(`unknown order: ${line}`);
}
process.exit(0);
