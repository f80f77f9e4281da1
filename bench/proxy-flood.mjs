// The flood side of bench/proxy.mjs, run inside a native sandbox: COUNT
// connections to the run's proxy, each with 31 KB of a head that never ends,
// then one normal request through it. Prints JSON; holds the flood open for
// HOLD_MS so that the bench can sample stashbase's memory.
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

const count = Number(process.argv[2] ?? 10000);
const proxy = new URL(process.env.HTTPS_PROXY);
const auth = Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64');
const partial = `GET http://api.test/ HTTP/1.1\r\nX-Pad: ${'a'.repeat(31 * 1024)}`;
const held = [];
let opened = 0;
for (let i = 0; i < count; i++) {
  const c = connect(Number(proxy.port), proxy.hostname);
  c.on('error', () => {});
  c.on('connect', () => { opened++; c.write(partial); });
  held.push(c);
  if (i % 200 === 199) await new Promise((r) => setTimeout(r, 5));
}
await new Promise((r) => setTimeout(r, 1000));
const t0 = Date.now();
const normal = await new Promise((resolve) => {
  const raw = connect(Number(proxy.port), proxy.hostname, () => raw.write(`CONNECT api.test:443 HTTP/1.1\r\nHost: api.test:443\r\nProxy-Authorization: Basic ${auth}\r\n\r\n`));
  raw.on('error', () => resolve('error'));
  raw.once('data', () => {
    const s = tlsConnect({ socket: raw, servername: 'api.test', ca: readFileSync(process.env.NODE_EXTRA_CA_CERTS, 'utf8') }, () => s.write('GET /cl HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n'));
    let out = '';
    s.on('data', (d) => (out += d));
    s.on('close', () => resolve(out.split('\r\n')[0]));
    s.on('error', () => resolve('error'));
  });
});
const normalMs = Date.now() - t0;
await new Promise((r) => setTimeout(r, Number(process.env.HOLD_MS ?? 1500)));
for (const c of held) c.destroy();
process.stdout.write(JSON.stringify({ opened, normal, normal_ms: normalMs }) + '\n');
process.exit(0);
