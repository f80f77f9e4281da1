// An upstream that does everything a proxy must survive: it echoes what it
// was sent (headers, Basic credentials, the URL, a WebSocket subprotocol) in
// every transfer form (plain, gzip, brotli, an encoding nobody decodes, a 101
// and a 200 to an Upgrade), streams events, stalls, stops short, refuses an
// upload before reading it, hides a value in a status line or a header name,
// closes after answering. HTTPS with a test CA, or plain HTTP.
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { createServer as createHttp, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { LeafCache } from '../lib/tls/leaves.js';
import { testCa } from './upstream-ca.js';
import { frame, messages, readFrames } from './ws-util.js';

export interface StubLog {
  /** "METHOD host path" of every request head the stub read, in order. */
  requests: string[];
  /** Bytes that arrived on a connection after an answer the stub closed it with. */
  smuggled: string[];
  /** Request bodies received in full. */
  bodies: Buffer[];
  /** Raw Authorization header values seen. */
  auths: string[];
}

export interface Stub {
  server: Server;
  port: number;
  caPem: string;
  log: StubLog;
  close(): void;
}

function echo(req: IncomingMessage): string {
  return JSON.stringify({ auth: req.headers.authorization ?? null, url: req.url, cookie: req.headers.cookie ?? null });
}

/** The credential of the request's Authorization header (what follows the scheme). */
function token(req: IncomingMessage): string {
  return (req.headers.authorization ?? '').split(' ')[1] ?? 'none';
}

/**
 * What /store kept, shared by every stub of the process: a bound service that
 * stores a header value and another name serving it (a CDN alias, a raw host).
 */
const stored: { value: string } = { value: '' };

function route(req: IncomingMessage, res: ServerResponse, log: StubLog): void {
  const url = new URL(req.url ?? '/', 'https://stub');
  const body = echo(req);
  switch (url.pathname) {
    case '/split-echo': {
      // The credential it was sent, in two writes 20 ms apart (past the scrubber's release), the cut inside the value.
      const v = `{"auth":"${req.headers.authorization ?? ''}"}`;
      const cut = v.indexOf(' ') + 21;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(v.slice(0, cut));
      return void setTimeout(() => res.end(v.slice(cut)), 20);
    }
    case '/store':
      stored.value = (req.headers['x-note'] as string | undefined) ?? '';
      return void res.end('stored\n');
    case '/stored': {
      // Served whole in one write, padded so that it straddles byte `at`, gzip if asked.
      const at = Number(url.searchParams.get('at') ?? 0);
      const text = `${'.'.repeat(Math.max(0, at - (stored.value.length >> 1)))}${stored.value}\n`;
      const range = /^bytes=(\d+)-(\d+)$/.exec(String(req.headers.range ?? ''));
      if (range) {
        // A byte range of it, as a file server answers one.
        res.writeHead(206, { 'Content-Type': 'text/plain', 'Content-Range': `bytes ${range[1]}-${range[2]}/${text.length}` });
        return void res.end(text.slice(Number(range[1]), Number(range[2]) + 1));
      }
      const gz = url.searchParams.has('gzip');
      res.writeHead(200, { 'Content-Type': 'text/plain', ...(gz ? { 'Content-Encoding': 'gzip' } : {}) });
      return void res.end(gz ? gzipSync(text) : text);
    }
    case '/escaped-error': {
      // The credential named in an error as two frameworks write it: .NET's JSON (`+<>&'"` and past ASCII as
      // \u00XX, upper-case hex) and Go's html/template (`&#34;` beside `&amp;`, `&#43;`), written a few bytes at a
      // time with pauses past the scrubber's release.
      const key = token(req);
      const dotnet = key.replace(/[+<>&'"\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
      const html = key.replace(/[&<>"'+]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;', '+': '&#43;' })[c]!);
      const page = `{"error":"invalid key ${dotnet}"}\n<p>The key <code>${html}</code> is not valid.</p>\n`;
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      let at = 0;
      const next = () => {
        if (at >= page.length) return void res.end();
        res.write(page.slice(at, (at += 7)));
        setTimeout(next, 3);
      };
      return void next();
    }
    case '/echo':
      res.writeHead(200, { 'Content-Type': 'application/json', 'X-Echo-Auth': req.headers.authorization ?? '' });
      return void res.end(body);
    case '/gzip':
      res.writeHead(200, { 'Content-Encoding': 'gzip', 'Content-Type': 'application/json' });
      return void res.end(gzipSync(body));
    case '/br':
      res.writeHead(200, { 'Content-Encoding': 'br', 'Content-Type': 'application/json' });
      return void res.end(brotliCompressSync(body));
    case '/echo-encoding':
      // The token it was sent, as the name of its content coding (a bound host's echo into a header the proxy judges).
      res.writeHead(200, { 'Content-Encoding': token(req) });
      return void res.end(body);
    case '/te-gzip':
      // A transfer-coding never asked for (the proxy sends no TE): the body still gzip once de-chunked.
      res.setHeader('Transfer-Encoding', 'gzip, chunked');
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return void res.end(gzipSync(body));
    case '/odd-encoding':
      res.writeHead(200, { 'Content-Encoding': 'x-stashbase-unknown' });
      return void res.end(body);
    case '/location':
      res.writeHead(302, { Location: `https://elsewhere.test/landed?from=${req.url}` });
      return void res.end(`you asked for ${req.url}\n`);
    case '/search': {
      // A search API: the query it was asked, decoded, in its answer.
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return void res.end(JSON.stringify({ query: url.searchParams.get('q'), results: [] }));
    }
    case '/basic': {
      const b64 = /^Basic (.*)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
      res.writeHead(200, { 'X-Basic': b64 });
      return void res.end(`basic ${b64} decoded ${Buffer.from(b64, 'base64').toString('latin1')}\n`);
    }
    case '/sse': {
      const n = Number(url.searchParams.get('n') ?? 5);
      const every = Number(url.searchParams.get('every') ?? 200);
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      res.flushHeaders();
      let i = 0;
      const tick = setInterval(() => {
        res.write(`data: {"i":${i},"t":${Date.now()}}\n\n`);
        if (++i === n) {
          clearInterval(tick);
          res.end();
        }
      }, every);
      res.on('close', () => clearInterval(tick));
      return;
    }
    case '/stall':
      return; // never answers
    case '/early401':
      // Answers as soon as the head is in, before any of the body (as many servers refuse a bad credential).
      res.writeHead(401, { 'Content-Type': 'text/plain', Connection: 'close' });
      return void res.end('no\n');
    case '/stream': {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      const tick = setInterval(() => res.write(Buffer.alloc(16 * 1024, 120)), 5);
      res.on('close', () => clearInterval(tick));
      return;
    }
    case '/short':
      res.writeHead(200, { 'Content-Length': '100000' });
      res.write(Buffer.alloc(1000, 97));
      setTimeout(() => res.socket?.destroy(), 50);
      return;
    case '/odd-head': {
      // The value it was sent, hidden in its status line (split by a control byte) and, percent-encoded (all token characters), as a header name.
      const v = (req.headers.authorization ?? '').split(' ')[1] ?? 'none';
      req.socket.end(`HTTP/1.1 200 ${v.slice(0, 6)}\x01${v.slice(6)}\r\n${encodeURIComponent(v)}: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok`);
      return;
    }
    case '/close':
      // A moment late, so that another request can be waiting for this connection when it ends.
      return void setTimeout(() => {
        res.writeHead(200, { Connection: 'close', 'Content-Length': '6' });
        res.end('closed');
      }, 50);
    case '/refuse-upload':
      res.writeHead(403, { 'Content-Length': '9', Connection: 'close' });
      return void res.end('no thanks');
    case '/upload':
      if (req.headers.expect === '100-continue') res.writeContinue();
      return void req.on('data', () => {}).on('end', () => res.end('uploaded\n'));
    case '/len':
      res.writeHead(200, { 'Content-Length': String(Buffer.byteLength(body)) });
      return void res.end(req.method === 'HEAD' ? undefined : body);
    default:
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end(`ok ${req.url}\n`);
  }
  void log;
}

function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, log: StubLog): void {
  log.requests.push(`${req.method} ${req.headers.host} ${req.url}`);
  if (req.headers.authorization) log.auths.push(req.headers.authorization);
  const url = new URL(req.url ?? '/', 'https://stub');
  if (url.pathname === '/upgrade-200') {
    // Not switching: an answer that echoes the head, on a connection left open.
    const body = echo(req);
    socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nX-Echo-Auth: ${req.headers.authorization ?? ''}\r\n\r\n${body}`);
    socket.on('data', (d: Buffer) => log.smuggled.push(d.toString('latin1')));
    return;
  }
  if (url.pathname === '/ws-echo-upgrade') {
    // Switches to "the protocol" it was sent as a token: the 101's Upgrade carries the value.
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${token(req)}\r\nConnection: Upgrade\r\n\r\n`);
    return;
  }
  if (url.pathname === '/h2c-echo') {
    // Switches to h2c and echoes the Authorization it got in a DATA frame split in two, a 9-byte frame header between
    // the halves, as an HTTP/2 server frames a body where a frame ends (16,384 bytes by default).
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n');
    const auth = Buffer.from(String(req.headers.authorization ?? ''), 'latin1');
    const half = auth.length >> 1;
    const header = (n: number) => Buffer.from([0, n >> 8, n & 0xff, 0, 0, 0, 0, 0, 1]);
    socket.write(Buffer.concat([header(half), auth.subarray(0, half), header(auth.length - half), auth.subarray(half)]));
    return;
  }
  if (url.pathname === '/ws-case') {
    // Switches, spelling "websocket" in a letter case of its own choosing: one bit a letter, toward the agent.
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: wEBsOCkeT\r\nConnection: Upgrade\r\n\r\n');
    return;
  }
  const proto = req.headers['sec-websocket-protocol'];
  const ext = url.pathname === '/ws-deflate' ? 'Sec-WebSocket-Extensions: permessage-deflate\r\n' : '';
  // Like the ws package's default: the first requested subprotocol is echoed.
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n${proto ? `Sec-WebSocket-Protocol: ${String(proto).split(',')[0]!.trim()}\r\n` : ''}X-Echo-Auth: ${req.headers.authorization ?? ''}\r\n${ext}\r\n`);
  socket.write(frame(`hello ${req.headers.authorization ?? ''}`, { masked: false }));
  let buf: Buffer = head;
  socket.on('data', (d: Buffer) => {
    const r = readFrames(Buffer.concat([buf, d]));
    buf = r.rest;
    if (r.frames.some((f) => !f.masked)) log.smuggled.push('an unmasked frame');
    for (const m of messages(r.frames)) {
      log.bodies.push(Buffer.from(m));
      // Split in two frames of one message, then as two whole messages.
      const half = Math.floor(m.length / 2);
      socket.write(Buffer.concat([frame(`echo:${m.slice(0, half)}`, { masked: false, fin: false }), frame(m.slice(half), { masked: false, opcode: 0 })]));
    }
    if (buf.length > 0 && !/^[\x81\x82\x01\x02\x00\x80\x88\x89\x8a]/.test(buf.toString('latin1'))) log.smuggled.push(buf.toString('latin1'));
  });
  socket.on('error', () => {});
}

/** Starts the stub for `host` (HTTPS with a leaf of the test CA unless plain). */
export async function startStub(host: string, plain = false): Promise<Stub> {
  const log: StubLog = { requests: [], smuggled: [], bodies: [], auths: [] };
  const ca = testCa();
  const leaf = new LeafCache(ca).get(host);
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    log.requests.push(`${req.method} ${req.headers.host} ${req.url}`);
    if (req.headers.authorization) log.auths.push(req.headers.authorization);
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => log.bodies.push(Buffer.concat(chunks)));
    route(req, res, log);
  };
  const server = (plain ? createHttp(handler) : createHttps({ key: leaf.keyPem, cert: leaf.certPem }, handler)) as Server;
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => upgrade(req, socket, head, log));
  server.on('checkContinue', handler); // the stub decides, as a real server would
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    server, port, caPem: ca.certPem, log,
    close: () => {
      server.closeAllConnections?.();
      server.close();
    },
  };
}
