// The client side of bench/mcp.mjs, run as is (direct, at the HTTPS front of
// the MCP server) or inside a native sandbox (through the intercepting proxy
// and its MCP filter). It opens one keep-alive HTTPS connection, starts an MCP
// session (initialize, initialized), warms up, says "ready", then takes
// orders on stdin, one per line, each answered with a line of JSON:
//   call N   N tools/call requests (echo), each timed until its whole answer is read
//   end      every timed call together, then exit
// Node built-ins only: it runs from the checkout, read-only, inside the sandbox.
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { connect as tlsConnect } from 'node:tls';

const [mode, port, host] = [process.argv[2], Number(process.argv[3]), process.argv[4]];
const WARM = Number(process.argv[5] ?? 200);
const ca = readFileSync(process.env.BENCH_CA ?? process.env.NODE_EXTRA_CA_CERTS, 'utf8');

async function open() {
  let raw;
  if (mode === 'direct') raw = connect(port, '127.0.0.1');
  else {
    const proxy = new URL(process.env.HTTPS_PROXY);
    const basic = Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64');
    raw = connect(Number(proxy.port), proxy.hostname);
    raw.write(`CONNECT ${host}:${port} HTTP/1.1\r\nHost: ${host}:${port}\r\nProxy-Authorization: Basic ${basic}\r\n\r\n`);
    await new Promise((resolve) => raw.once('data', resolve));
  }
  raw.setNoDelay(true);
  const s = tlsConnect({ socket: raw, servername: host, ca });
  await new Promise((resolve, reject) => { s.once('secureConnect', resolve); s.once('error', reject); });
  s.setNoDelay(true);
  return s;
}

/** Reads answers off the socket (Content-Length or chunked): resolves each with its head when its body is complete. */
function answers(s) {
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
      const head = buf.subarray(0, buf.indexOf('\r\n\r\n')).toString('latin1');
      buf = buf.subarray(at);
      const w = waiter;
      waiter = null;
      w(head);
    }
  });
  return () => new Promise((resolve) => { waiter = resolve; });
}

const s = await open();
const next = answers(s);
let session = '';
const post = async (body) => {
  const done = next();
  s.write(`POST /mcp HTTP/1.1\r\nHost: ${host}:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-06-18\r\n${session ? `mcp-session-id: ${session}\r\n` : ''}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  return done;
};
const head = await post(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }));
session = /\r\nmcp-session-id: ([^\r]+)/i.exec(head)[1];
await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
let id = 1;
const all = [];
const run = async (n, timed = true) => {
  const lat = [];
  for (let i = 0; i < n; i++) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name: 'echo', arguments: { message: 'bench' } } });
    const t0 = process.hrtime.bigint();
    await post(body);
    lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  if (timed) all.push(...lat);
  return lat;
};
function summary(lat) {
  const sorted = [...lat].sort((a, b) => a - b);
  const total = lat.reduce((a, b) => a + b, 0) / 1000;
  return { calls: lat.length, per_s: Math.round(lat.length / total), p50_ms: +sorted[Math.floor(lat.length / 2)].toFixed(3), p99_ms: +sorted[Math.floor(lat.length * 0.99)].toFixed(3) };
}
await run(WARM, false);
const say = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
say({ ready: true });
for await (const line of createInterface({ input: process.stdin })) {
  const [order, n] = line.split(' ');
  if (order === 'call') say(summary(await run(Number(n))));
  else if (order === 'end') {
    say(summary(all));
    break;
  } else throw new Error(`unknown order: ${line}`);
}
process.exit(0);
