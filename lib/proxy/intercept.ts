// TLS interception for CONNECT tunnels when the profile binds secrets: the
// agent's TLS ends here with a leaf for the CONNECT target (never for whatever
// SNI it sends; only http/1.1 is offered), each request inside is checked and
// rewritten, and sent on over TLS that verifies the real upstream certificate,
// dialled at the address the policy checked.
import { Agent, request as httpsRequest } from 'node:https';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, createSecureContext, type SecureContext, TLSSocket } from 'node:tls';
import type { LeafCache } from '../tls/leaves.js';
import { forwardable, HOP_BY_HOP, refuseHttp } from './http-util.js';
import { guardBody } from './body-guard.js';
import { ScrubStream } from './scrub-stream.js';
import { type BoundSecret, bodyNeedles, rewriteRequest, scrubHeaders } from './secrets.js';

export interface InterceptOptions {
  leaves: LeafCache;
  secrets: BoundSecret[];
  /** CAs trusted for upstream TLS: the system's plus upstream_ca_file. */
  upstreamCa: string[];
  audit: (event: Record<string, unknown>) => void;
}

interface Target {
  host: string;
  port: number;
  address: string;
  dialPort: number;
  rule: string;
}

// Bodies are scanned on the way back, so the agent's Accept-Encoding is replaced by identity.
const DROP = new Set(['accept-encoding']);

export class Interceptor {
  private readonly targets = new WeakMap<object, Target>();
  private readonly contexts = new Map<string, SecureContext>();
  private readonly inner: Server;
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 16 });
  /**
   * The upstream trust, built once: passed as `ca` per request, the agent would
   * fold every CA into its pool key on each request (most of the cost of one).
   */
  private readonly upstream: SecureContext;

  constructor(private readonly o: InterceptOptions, checkHost: (raw: string[], host: string, port: number) => string | null) {
    this.upstream = createSecureContext({ ca: o.upstreamCa });
    this.inner = createServer({ maxHeaderSize: 32 * 1024, headersTimeout: 30_000, requestTimeout: 0 });
    this.inner.on('request', (req: IncomingMessage, res: ServerResponse) => this.handle(req, res, checkHost));
    this.inner.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head, checkHost));
    this.inner.on('clientError', (_e, socket) => (socket.writable ? socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n') : socket.destroy()));
  }

  private context(host: string): SecureContext {
    let ctx = this.contexts.get(host);
    if (!ctx) {
      const leaf = this.o.leaves.get(host);
      ctx = createSecureContext({ key: leaf.keyPem, cert: leaf.certPem });
      this.contexts.set(host, ctx);
      if (this.contexts.size > this.o.leaves.capacity) this.contexts.delete(this.contexts.keys().next().value as string);
    }
    return ctx;
  }

  /** Takes over an allowed CONNECT: answers 200 and speaks TLS as the target. */
  accept(client: Duplex, head: Buffer, target: Target): void {
    // Heads and bodies go out as several small writes: no Nagle delay between them.
    (client as Duplex & { setNoDelay?: (v: boolean) => void }).setNoDelay?.(true);
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) client.unshift(head);
    const tls = new TLSSocket(client as never, { isServer: true, secureContext: this.context(target.host), ALPNProtocols: ['http/1.1'] });
    tls.on('error', () => tls.destroy());
    this.targets.set(tls, target);
    this.inner.emit('connection', tls);
  }

  private handle(req: IncomingMessage, res: ServerResponse, checkHost: (raw: string[], host: string, port: number) => string | null): void {
    const t = this.targets.get(req.socket);
    if (!t) return void req.socket.destroy();
    const url = req.url ?? '';
    const path = url.split('?')[0];
    const event = { type: 'proxy', method: req.method, host: t.host, port: t.port, path: url.startsWith('/') ? path : null, intercepted: true };
    const deny = (status: number, rule: string, extra: Record<string, unknown> = {}) => {
      this.o.audit({ ...event, decision: 'deny', rule, status, ...extra });
      refuseHttp(res, status, rule, `stashbase proxy refused ${t.host}:${t.port}: ${rule}\n`);
    };
    const c = this.check(req, t, checkHost, new Set());
    if ('rule' in c) return deny(c.status, c.rule, c.extra);
    const rw = { rawHeaders: c.headers, path: c.path, injected: c.injected };
    // Bodies are scanned for real values on the way back: ask for them uncompressed.
    const headers = [...rw.rawHeaders, 'Accept-Encoding', 'identity'];
    const up = httpsRequest({
      host: t.address,
      port: t.dialPort,
      servername: isIP(t.host) ? undefined : t.host,
      method: req.method,
      path: rw.path,
      headers,
      setHost: false,
      agent: this.agent,
      // A TLS option https.request passes on; its typings omit it.
      ...({ secureContext: this.upstream } as object),
    });
    up.on('socket', (sock) => sock.setNoDelay(true));
    const body = guardBody(
      req, up, res, bodyNeedles(t.host, true, this.o.secrets),
      (rule, suspect) => this.o.audit({ ...event, decision: 'deny', rule, status: 403, exfiltration: true, secret: suspect }),
      (rule) => refuseHttp(res, 403, rule, `stashbase proxy refused ${t.host}:${t.port}: ${rule}\n`),
    );
    up.on('response', (r) => {
      if (body.refused) return void r.destroy();
      const out = scrubHeaders(r.headers, this.o.secrets);
      for (const h of [...HOP_BY_HOP, 'content-length']) delete out[h]; // the scrubbed body may change length
      let bytes = 0;
      r.on('data', (d: Buffer) => (bytes += d.length));
      r.on('end', () => this.o.audit({ ...event, decision: 'allow', rule: t.rule, injected: rw.injected, status: r.statusCode, bytes }));
      res.writeHead(r.statusCode ?? 502, out);
      r.pipe(new ScrubStream(this.o.secrets)).pipe(res);
    });
    up.on('error', (e: NodeJS.ErrnoException) => {
      if (body.refused) return;
      const rule = `upstream ${t.host}: ${e.code ?? e.message}`;
      this.o.audit({ ...event, decision: 'error', rule });
      if (!res.headersSent) refuseHttp(res, 502, rule, `stashbase proxy: ${rule}\n`);
      else res.destroy();
    });
  }

  /** The checks every request inside a tunnel gets; null when it may go on. */
  private check(req: IncomingMessage, t: Target, checkHost: (raw: string[], host: string, port: number) => string | null, keep: Set<string>): { status: number; rule: string; extra?: Record<string, unknown> } | { headers: string[]; path: string; injected: string[] } {
    const url = req.url ?? '';
    if (!url.startsWith('/')) return { status: 400, rule: 'absolute-form request inside a tunnel' };
    const hostProblem = checkHost(req.rawHeaders, t.host, t.port);
    if (hostProblem) return { status: 400, rule: hostProblem };
    if (req.rawHeaders.filter((h, i) => i % 2 === 0 && h.toLowerCase() === 'authorization').length > 1) return { status: 400, rule: 'duplicate Authorization header' };
    if (req.method === 'TRACE') return { status: 403, rule: 'TRACE is refused' };
    const rw = rewriteRequest(forwardable(req.rawHeaders, keep, DROP), url, t.host, true, this.o.secrets);
    if (!rw.ok) return { status: 403, rule: rw.rule, extra: { exfiltration: true, secret: rw.suspect } };
    return { headers: rw.rawHeaders, path: rw.path, injected: rw.injected };
  }

  /** WebSocket (and other) upgrades: the same checks, then bytes both ways. */
  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, checkHost: (raw: string[], host: string, port: number) => string | null): void {
    const t = this.targets.get(req.socket);
    if (!t) return void socket.destroy();
    socket.on('error', () => socket.destroy());
    const event = { type: 'proxy', method: req.method, host: t.host, port: t.port, path: (req.url ?? '').split('?')[0], intercepted: true, upgrade: req.headers.upgrade ?? '' };
    const c = this.check(req, t, checkHost, new Set(['connection', 'upgrade']));
    if ('rule' in c) {
      this.o.audit({ ...event, decision: 'deny', rule: c.rule, status: c.status, ...(c.extra ?? {}) });
      const body = `stashbase proxy refused ${t.host}:${t.port}: ${c.rule}\n`;
      socket.end(`HTTP/1.1 ${c.status} ${c.status === 400 ? 'Bad Request' : 'Forbidden'}\r\nX-Stashbase-Denied: ${c.rule.replace(/[^\x20-\x7e]/g, '?')}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      return;
    }
    const up = tlsConnect({ host: t.address, port: t.dialPort, servername: isIP(t.host) ? undefined : t.host, secureContext: this.upstream, ALPNProtocols: ['http/1.1'] });
    up.on('secureConnect', () => {
      this.o.audit({ ...event, decision: 'allow', rule: t.rule, injected: c.injected });
      let headText = `${req.method} ${c.path} HTTP/1.1\r\n`;
      for (let i = 0; i < c.headers.length; i += 2) headText += `${c.headers[i]}: ${c.headers[i + 1]}\r\n`;
      up.write(headText + '\r\n');
      if (head.length) up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    up.on('error', (e: NodeJS.ErrnoException) => {
      this.o.audit({ ...event, decision: 'error', rule: `upstream ${t.host}: ${e.code ?? e.message}` });
      socket.destroy();
    });
    socket.on('close', () => up.destroy());
  }

  close(): void {
    this.agent.destroy();
    this.inner.close();
  }
}
