// What the benchmarks' clients share (bench/proxy-client.mjs,
// bench/mcp-client.mjs): one HTTPS connection to the target, straight
// (direct) or through the run's proxy by CONNECT (proxy), and a reader of
// keep-alive answers (Content-Length or chunked) off it. Node built-ins only:
// the clients run from the checkout, read-only, inside the sandbox.
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/** A TLS connection to host:port, straight at 127.0.0.1:directPort or through HTTPS_PROXY. */
export async function open(mode, o) {
  let raw;
  if (mode === 'direct') raw = connect(o.directPort, '127.0.0.1');
  else {
    const proxy = new URL(process.env.HTTPS_PROXY);
    const basic = Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64');
    raw = connect(Number(proxy.port), proxy.hostname);
    raw.write(`CONNECT ${o.host}:${o.port} HTTP/1.1\r\nHost: ${o.host}:${o.port}\r\nProxy-Authorization: Basic ${basic}\r\n\r\n`);
    await new Promise((resolve) => raw.once('data', resolve));
  }
  raw.setNoDelay(true);
  const s = tlsConnect({ socket: raw, servername: o.host, ca: o.ca });
  await new Promise((resolve, reject) => { s.once('secureConnect', resolve); s.once('error', reject); });
  s.setNoDelay(true);
  return s;
}

/** Reads answers off the socket: `next()` resolves with the head of the next answer once its body is complete. */
export function answers(s) {
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
