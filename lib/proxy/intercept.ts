// Interception of CONNECT tunnels when the profile binds secrets. The tunnel's
// first byte says what the agent speaks: TLS (a handshake record) ends here
// with a leaf for the CONNECT target (never for whatever SNI it sends; only
// http/1.1 is offered) and goes on over TLS that verifies the real upstream
// certificate; anything else is plain HTTP and goes on as plain HTTP (CONNECT
// to port 80). Either way each request inside is checked and rewritten, sent
// to the address the policy checked, and its answer scrubbed on the way back
// (lib/proxy/forward-response.ts); upgrades are lib/proxy/upgrade.ts's.
import { Agent as HttpAgent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { Duplex } from 'node:stream';
import { createSecureContext, type SecureContext, TLSSocket } from 'node:tls';
import type { LeafCache } from '../tls/leaves.js';
import { forwardable, refuseHttp } from './http-util.js';
import { guardBody } from './body-guard.js';
import { forwardResponse, planBody, type ResponseScrub } from './forward-response.js';
import { armHeadDeadline, checkingInterval, type ConnectionTracker, DEFAULT_LIMITS, MAX_HEADER_BYTES, type ProxyLimits, upstreamAgentOptions } from './limits.js';
import { normalizeHost } from './policy.js';
import { scrubPairs, type ScrubPair } from './scrub.js';
import { type BoundSecret, bodyNeedles, hostCarriesSecret, rewriteRequest, secretFields } from './secrets.js';
import { type TlsFailure, upstreamErrorRule } from './tls-failure.js';
import { handleUpgrade } from './upgrade.js';

export interface InterceptOptions {
  leaves: LeafCache;
  secrets: BoundSecret[];
  /** CAs trusted for upstream TLS: the system's plus upstream_ca_file. */
  upstreamCa: string[];
  audit: (event: Record<string, unknown>) => void;
  /** The defaults (lib/proxy/limits.ts) where unset. */
  limits?: ProxyLimits;
  /** Upgrades other than websocket the profile allows (network.allow_upgrades). */
  allowUpgrades?: string[];
  /** Told of every upstream TLS failure (lib/proxy/tls-failure.ts); the run shows the first. */
  onUpstreamTls?: (f: TlsFailure) => void;
}

export interface Target {
  host: string;
  port: number;
  address: string;
  dialPort: number;
  rule: string;
}

type HostCheck = (raw: string[], host: string, port: number) => string | null;

interface Tunnel extends Target {
  tls: boolean;
  /** The agent's connection to the proxy (what the connection limits count). */
  outer: Duplex;
  tracker: ConnectionTracker | null;
  /** What the tunnel's host is owed, the same for each of its requests: computed once. */
  scrub: ResponseScrub;
  needles: ReturnType<typeof bodyNeedles>;
}

/**
 * The agent's plain-HTTP tunnel as a stream of its own, beginning with the
 * bytes already read: Node's HTTP server would read a real socket's handle
 * directly and miss them.
 */
function plainConnection(client: Duplex, first: Buffer): Duplex {
  const sock = client as Duplex & { setTimeout?: (ms: number) => void };
  const conn: Duplex = new Duplex({
    read: () => void client.resume(),
    write: (chunk, enc, cb) => void client.write(chunk, enc, cb),
    final: (cb) => void client.end(cb),
    destroy: (err, cb) => {
      client.destroy();
      cb(err);
    },
  });
  // The idle timeouts Node's server sets (keep-alive) act on the real socket.
  Object.assign(conn, {
    setTimeout: (ms: number, cb?: () => void) => {
      sock.setTimeout?.(ms);
      if (cb) conn.once('timeout', cb);
      return conn;
    },
    setNoDelay: () => conn,
    setKeepAlive: () => conn,
  });
  client.on('timeout', () => conn.emit('timeout'));
  client.on('data', (d: Buffer) => {
    if (!conn.push(d)) client.pause();
  });
  client.on('end', () => conn.push(null));
  client.on('close', () => conn.destroy());
  if (first.length) conn.push(first);
  return conn;
}

export class Interceptor {
  private readonly tunnels = new WeakMap<object, Tunnel>();
  private readonly contexts = new Map<string, SecureContext>();
  private readonly inner: Server;
  private readonly tlsAgent: HttpsAgent;
  private readonly plainAgent: HttpAgent;
  private readonly pairs: ScrubPair[];
  /**
   * The upstream trust, built once: passed as `ca` per request, the agent would
   * fold every CA into its pool key on each request (most of the cost of one).
   * Built at first use or by warm(), not before the agent starts (~20 ms).
   */
  private upstreamContext: SecureContext | null = null;

  constructor(private readonly o: InterceptOptions, private readonly checkHost: HostCheck) {
    this.pairs = scrubPairs(o.secrets);
    const limits = o.limits ?? DEFAULT_LIMITS;
    const sockets = upstreamAgentOptions(limits);
    this.tlsAgent = new HttpsAgent(sockets);
    this.plainAgent = new HttpAgent(sockets);
    const ms = limits.headTimeoutMs;
    this.inner = createServer({ maxHeaderSize: MAX_HEADER_BYTES, headersTimeout: ms, requestTimeout: 0, connectionsCheckingInterval: checkingInterval(ms) });
    armHeadDeadline(this.inner, ms);
    this.inner.on('request', (req: IncomingMessage, res: ServerResponse) => this.handle(req, res));
    // The upstream answers 100 Continue, not the proxy (lib/proxy/server.ts says why).
    this.inner.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => this.handle(req, res));
    this.inner.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head));
    this.inner.on('clientError', (e: NodeJS.ErrnoException, socket: Duplex) => {
      const status = e.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : e.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request';
      if (socket.writable) socket.end(`HTTP/1.1 ${status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      else socket.destroy();
    });
  }

  private upstream(): SecureContext {
    this.upstreamContext ??= createSecureContext({ ca: this.o.upstreamCa });
    return this.upstreamContext;
  }

  /**
   * What the first intercepted request would otherwise build: the upstream
   * trust and the certificates of the secrets' named hosts. Called once the
   * agent runs, while it starts up and asks nothing yet.
   */
  warm(): void {
    this.upstream();
    for (const s of this.o.secrets) {
      for (const p of s.hosts) {
        const host = p.includes('*') ? null : normalizeHost(p);
        if (host !== null) this.context(host);
      }
    }
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

  /** Takes over an allowed CONNECT: answers 200, then speaks TLS as the target, or plain HTTP, as the agent does. */
  accept(client: Duplex, head: Buffer, target: Target, tracker: ConnectionTracker | null): void {
    // Heads and bodies go out as several small writes: no Nagle delay between them.
    (client as Duplex & { setNoDelay?: (v: boolean) => void }).setNoDelay?.(true);
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    const start = (first: Buffer) => {
      const tls = first[0] === 0x16;
      let conn: Duplex;
      if (tls) {
        if (first.length) client.unshift(first);
        conn = new TLSSocket(client as never, { isServer: true, secureContext: this.context(target.host), ALPNProtocols: ['http/1.1'] });
      } else {
        conn = plainConnection(client, first);
      }
      conn.on('error', () => conn.destroy());
      this.tunnels.set(conn, { ...target, tls, outer: client, tracker, scrub: this.scrubFor(target.host), needles: bodyNeedles(target.host, tls, this.o.secrets) });
      this.inner.emit('connection', conn);
    };
    if (head.length) return start(head);
    client.once('data', (d: Buffer) => {
      client.pause();
      start(d);
    });
  }

  private dial(t: Tunnel, method: string, path: string, headers: string[], agent: HttpAgent | false) {
    const common = { host: t.address, port: t.dialPort, method, path, headers, setHost: false };
    if (!t.tls) return httpRequest({ ...common, agent: agent === false ? false : this.plainAgent });
    return httpsRequest({
      ...common,
      servername: isIP(t.host) ? undefined : t.host,
      agent: agent === false ? false : this.tlsAgent,
      // A TLS option https.request passes on; its typings omit it.
      ...({ secureContext: this.upstream() } as object),
    });
  }

  private scrubFor(host: string): ResponseScrub {
    return { pairs: this.pairs, bound: hostCarriesSecret(this.o.secrets, host) };
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const t = this.tunnels.get(req.socket);
    if (!t) return void req.socket.destroy();
    t.tracker?.mark(t.outer, 'busy');
    res.on('finish', () => t.tracker?.mark(t.outer, 'idle'));
    const url = req.url ?? '';
    const event = { type: 'proxy', method: req.method, host: t.host, port: t.port, path: url.startsWith('/') ? url.split('?')[0] : null, intercepted: true, ...(t.tls ? {} : { plaintext: true }) };
    const deny = (status: number, rule: string, extra: Record<string, unknown> = {}) => {
      this.o.audit({ ...event, decision: 'deny', rule, status, ...extra });
      refuseHttp(res, status, rule, `stashbase proxy refused ${t.host}:${t.port}: ${rule}\n`);
    };
    const scrub = t.scrub;
    // A host a secret is bound to answers uncompressed, so that every byte can be scrubbed.
    const c = this.check(req, t, new Set(), scrub.bound ? new Set(['accept-encoding']) : new Set());
    if ('rule' in c) return deny(c.status, c.rule, c.extra);
    const headers = scrub.bound ? [...c.headers, 'Accept-Encoding', 'identity'] : c.headers;
    const up = this.dial(t, req.method ?? 'GET', c.path, headers, this.tlsAgent);
    up.on('socket', (sock) => sock.setNoDelay(true));
    up.on('continue', () => res.writeContinue());
    // The agent waits for the upstream's word before its body: the head must go now.
    if (req.headers.expect !== undefined) up.flushHeaders();
    // The agent gone before the answer: the upstream request goes too, and frees its socket.
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    const body = guardBody(
      req, up, res, t.needles,
      (rule, suspect) => this.o.audit({ ...event, decision: 'deny', rule, status: 403, exfiltration: true, secret: suspect }),
      (rule) => refuseHttp(res, 403, rule, `stashbase proxy refused ${t.host}:${t.port}: ${rule}\n`),
    );
    up.on('response', (r) => {
      if (body.refused) return void r.destroy();
      const plan = planBody(r, scrub);
      if ('refused' in plan) {
        r.destroy();
        this.o.audit({ ...event, decision: 'error', rule: plan.refused, status: 502 });
        return refuseHttp(res, 502, plan.refused, `stashbase proxy: ${plan.refused}\n`);
      }
      forwardResponse(r, res, plan, (bytes, err) => {
        const fields = { ...secretFields(c), status: r.statusCode, bytes };
        if (err && !res.writableFinished) this.o.audit({ ...event, decision: 'error', rule: `upstream ${t.host}: the response stopped short (${(err as NodeJS.ErrnoException).code ?? err.message})`, ...fields });
        else this.o.audit({ ...event, decision: 'allow', rule: t.rule, ...fields });
      });
    });
    up.on('error', (e: NodeJS.ErrnoException) => {
      if (body.refused || res.writableFinished) return;
      const rule = upstreamErrorRule(t.host, e, this.o.onUpstreamTls);
      this.o.audit({ ...event, decision: 'error', rule });
      if (!res.headersSent) refuseHttp(res, 502, rule, `stashbase proxy: ${rule}\n`);
      else res.destroy();
    });
  }

  /** The checks every request inside a tunnel gets, and its rewritten head. */
  private check(req: IncomingMessage, t: Tunnel, keep: Set<string>, drop: Set<string>): { status: number; rule: string; extra?: Record<string, unknown> } | { headers: string[]; path: string; injected: string[]; inert: string[] } {
    const url = req.url ?? '';
    if (!url.startsWith('/')) return { status: 400, rule: 'absolute-form request inside a tunnel' };
    if (req.headers.host === undefined) return { status: 400, rule: 'a request without a Host header' };
    const hostProblem = this.checkHost(req.rawHeaders, t.host, t.port);
    if (hostProblem) return { status: 400, rule: hostProblem };
    if (req.rawHeaders.filter((h, i) => i % 2 === 0 && h.toLowerCase() === 'authorization').length > 1) return { status: 400, rule: 'duplicate Authorization header' };
    if (req.method === 'TRACE') return { status: 403, rule: 'TRACE is refused' };
    const rw = rewriteRequest(forwardable(req.rawHeaders, keep, drop), url, t.host, t.tls, this.o.secrets);
    if (!rw.ok) return { status: 403, rule: rw.rule, extra: { exfiltration: true, secret: rw.suspect } };
    return { headers: rw.rawHeaders, path: rw.path, injected: rw.injected, inert: rw.inert };
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const t = this.tunnels.get(req.socket);
    if (!t) return void socket.destroy();
    t.tracker?.mark(t.outer, 'tunnel');
    socket.on('error', () => socket.destroy());
    const event = { type: 'proxy', method: req.method, host: t.host, port: t.port, path: (req.url ?? '').split('?')[0], intercepted: true, upgrade: String(req.headers.upgrade ?? '') };
    const c = this.check(req, t, new Set(['connection', 'upgrade']), new Set(['accept-encoding']));
    if ('rule' in c) {
      this.o.audit({ ...event, decision: 'deny', rule: c.rule, status: c.status, ...(c.extra ?? {}) });
      const body = `stashbase proxy refused ${t.host}:${t.port}: ${c.rule}\n`;
      socket.end(`HTTP/1.1 ${c.status} ${c.status === 400 ? 'Bad Request' : 'Forbidden'}\r\nX-Stashbase-Denied: ${c.rule.replace(/[^\x20-\x7e]/g, '?')}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      return;
    }
    handleUpgrade({
      req, socket, head, headers: c.headers, path: c.path,
      dial: (method, path, headers) => {
        const up = this.dial(t, method, path, headers, false);
        up.on('socket', (sock) => sock.setNoDelay(true));
        return up;
      },
      scrub: t.scrub,
      needles: t.needles,
      allowed: this.o.allowUpgrades ?? [],
      audit: (o) => {
        if (o.refused !== undefined) this.o.audit({ ...event, decision: 'deny', rule: o.refused, status: o.status ?? 400, ...secretFields(c) });
        else if (o.error !== undefined) this.o.audit({ ...event, decision: 'error', rule: upstreamErrorRule(t.host, { code: o.code, message: o.error }, this.o.onUpstreamTls), ...secretFields(c) });
        else this.o.audit({ ...event, decision: 'allow', rule: t.rule, ...secretFields(c), status: o.status });
      },
    });
  }

  close(): void {
    this.tlsAgent.destroy();
    this.plainAgent.destroy();
    this.inner.close();
  }
}
