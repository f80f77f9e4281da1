// The client side of bench/mcp.mjs, run as is (direct, at the HTTPS front of
// the MCP server) or inside a native sandbox (through the intercepting proxy
// and its MCP filter). It opens one keep-alive HTTPS connection, starts an MCP
// session (initialize, initialized), warms up, says "ready", then takes
// orders on stdin, one per line, each answered with a line of JSON:
//   call N   N tools/call requests (echo), each timed until its whole answer is read
//   end      every timed call together, then exit
// Node built-ins only: it runs from the checkout, read-only, inside the sandbox.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { answers, open } from './tls-client.mjs';

const [mode, port, host] = [process.argv[2], Number(process.argv[3]), process.argv[4]];
const WARM = Number(process.argv[5] ?? 200);
const ca = readFileSync(process.env.BENCH_CA ?? process.env.NODE_EXTRA_CA_CERTS, 'utf8');

const s = await open(mode, { directPort: port, host, port, ca });
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
