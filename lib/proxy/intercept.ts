// Interception of CONNECT tunnels when the profile binds secrets. The tunnel's
// first byte says what the agent speaks: TLS (a handshake record) ends here
// with a leaf for the CONNECT target (never for whatever SNI it sends; only
// http/1.1 is offered) and goes on over TLS that verifies the real upstream
// certificate; anything else is plain HTTP and goes on as plain HTTP (CONNECT
// to port 80). Either way each request inside is checked and rewritten, sent
// to the address the policy checked, and its answer scrubbed on the way back
// (lib/proxy/forward-response.ts); upgrades are lib/proxy/upgrade.ts's. The
// HTTP/1.1 on both sides is the proxy's own (lib/proxy/h1/) around Node's
// parser: Node's server and client machinery cost more per request than all
// the checking and scrubbing (docs/benchmarks.md).
import { maxHeaderSize as RESPONSE_HEADER_BYTES, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { createSecureContext, type SecureContext, TLSSocket } from 'node:tls';
import type { LeafCache } from '../tls/leaves.js';
import { forwardable, WHOLE_ANSWERS, withCanonicalHost } from './http-util.js';
import type { ResponseScrub } from './forward-response.js';
import { exchange } from './h1/exchange.js';
import type { Head } from './h1/parser.js';
import { UpstreamPool } from './h1/pool.js';
import { type Incoming, type Responder, TunnelHttp } from './h1/tunnel.js';
import { UpstreamConn } from './h1/upstream.js';
import { EMPTY, headerMap, rawCount, rawJoined, rawValue } from './h1/wire.js';
import { checkingInterval, type ConnectionTracker, DEFAULT_LIMITS, MAX_HEADER_BYTES, type ProxyLimits, upstreamAgentOptions } from './limits.js';
import { normalizeHost } from './policy.js';
import { MIN_SECRET_BYTES, scrubBuffer, scrubPairs, type ScrubPair } from './scrub.js';
import { type BoundSecret, bodyNeedles, rewriteRequest, secretFields } from './secrets.js';
import { type TlsFailure, upstreamErrorRule } from './tls-failure.js';
import { handleUpgrade, refuseUpgrade } from './upgrade.js';
import type { MessageFilter } from './message-filter.js';
import { type AnswerBudget, answerFilter } from '../mcp/answer-filter.js';
import { MAX_REQUEST_BODY } from '../mcp/jsonrpc.js';
import { filterRequest, framingProblem } from '../mcp/request-filter.js';
import { type McpRemote, serverAt } from '../mcp/servers.js';
import type { LocalServer } from '../mcp/local-server.js';

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
  /** The profile's MCP servers: every request to one of their hosts is read as MCP (lib/mcp/). */
  mcp?: McpRemote[];
  /** The local ones' bridges, by server name (lib/mcp/local-server.ts): answered here, never dialled. */
  bridges?: Map<string, LocalServer>;
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
  /** The name upstream TLS sends and verifies (none for an IP address). */
  servername: string | undefined;
  /** The upstream pool's key for this tunnel's target, and how a connection to it is made. */
  key: string;
  create: () => UpstreamConn;
}

const NONE: ReadonlySet<string> = new Set();
/** An MCP POST's: answers uncompressed, and no Expect (the body is in hand). */
const WHOLE_ANSWERS_NO_EXPECT: ReadonlySet<string> = new Set([...WHOLE_ANSWERS, 'expect']);
const CONNECTION_UPGRADE: ReadonlySet<string> = new Set(['connection', 'upgrade']);

/** A request's path for the audit, without its query (null for a target not in origin form). */
function pathOf(url: string): string | null {
  if (!url.startsWith('/')) return null;
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** `res`, with `done` called once when its answer ends, is cut or refused, or its agent is gone. */
function answeredThen(res: Responder, done: () => void): Responder {
  let called = false;
  const once = () => {
    if (called) return;
    called = true;
    done();
  };
  return {
    get started() {
      return res.started;
    },
    onGone: (cb) => res.onGone(() => {
      once();
      cb();
    }),
    informational: (status, headers) => res.informational(status, headers),
    head: (status, headers, hasLength) => res.head(status, headers, hasLength),
    body: (b) => res.body(b),
    onDrain: (cb) => res.onDrain(cb),
    end: () => {
      once();
      res.end();
    },
    refuse: (status, rule, text) => {
      once();
      res.refuse(status, rule, text);
    },
    cut: () => {
      once();
      res.cut();
    },
  };
}

/** The body of the proxy's refusal of a request inside a tunnel. */
function refusalText(t: Target, rule: string): string {
  return `stashbase proxy refused ${t.host}:${t.port}: ${rule}\n`;
}

/**
 * A proxy decision on one request in a tunnel, for the audit log. Made for
 * every request: always the same shape (no spreads), the fields a decision
 * adds set in the same order each time.
 */
function requestEvent(t: Tunnel, method: string, path: string | null, decision: string, rule: string): Record<string, unknown> {
  return t.tls
    ? { type: 'proxy', method, host: t.host, port: t.port, path, intercepted: true, decision, rule }
    : { type: 'proxy', method, host: t.host, port: t.port, path, intercepted: true, plaintext: true, decision, rule };
}

export class Interceptor {
  private readonly contexts = new Map<string, SecureContext>();
  private readonly pool: UpstreamPool<UpstreamConn>;
  private readonly pairs: ScrubPair[];
  /** Per local MCP server: the run's pairs with its own secrets', and how many secrets they were made of. */
  private readonly localScrub = new Map<string, { count: number; pairs: ScrubPair[] }>();
  private readonly live = new Set<TunnelHttp>();
  /** Upstream TLS sessions, resumed on new connections: this proxy's own (they were verified under its trust). */
  private readonly sessions = new Map<string, Buffer>();
  private readonly sweeper: NodeJS.Timeout;
  /**
   * The upstream trust, built once: passed as `ca` per request, the agent would
   * fold every CA into its pool key on each request (most of the cost of one).
   * Built at first use or by warm(), not before the agent starts (~20 ms).
   */
  private upstreamContext: SecureContext | null = null;

  /** MCP request bodies held now, all requests together (limits.mcpBodiesMaxBytes). */
  private mcpHeld = 0;
  /** MCP answers held now (each read whole, or an event at a time, before it is passed on), all together: as much room. */
  private mcpAnswersHeld = 0;
  private readonly limits: ProxyLimits;

  constructor(private readonly o: InterceptOptions, private readonly checkHost: HostCheck) {
    this.pairs = scrubPairs(o.secrets);
    const limits = o.limits ?? DEFAULT_LIMITS;
    this.limits = limits;
    const sockets = upstreamAgentOptions(limits);
    this.pool = new UpstreamPool(sockets.maxSockets, sockets.maxFreeSockets, sockets.timeout);
    const ms = limits.headTimeoutMs;
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const t of this.live) t.sweep(now, ms);
      this.pool.sweep(now);
    }, checkingInterval(ms)).unref();
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
        conn = client;
      }
      conn.on('error', () => conn.destroy());
      const servername = isIP(target.host.replace(/^\[|\]$/g, '')) ? undefined : target.host;
      const key = `${tls ? 'tls' : 'tcp'} ${target.address} ${target.dialPort} ${servername ?? ''}`;
      const t: Tunnel = {
        ...target, tls, outer: client, tracker, scrub: { pairs: this.pairs }, needles: bodyNeedles(target.host, tls, this.o.secrets),
        servername, key, create: () => new UpstreamConn(key, { tls, address: target.address, port: target.dialPort, servername }, this.upstream(), this.sessions, RESPONSE_HEADER_BYTES),
      };
      const http = new TunnelHttp(conn, MAX_HEADER_BYTES, {
        request: (req, res) => this.handle(t, http, req, res),
        upgrade: (h, socket, rest) => this.upgrade(t, h, socket, rest),
        busy: () => tracker?.mark(client, 'busy'),
        idle: () => tracker?.mark(client, 'idle'),
        limit: (rule) => this.o.audit({ type: 'limit', rule }),
      });
      this.live.add(http);
      conn.once('close', () => this.live.delete(http));
      http.begin(tls ? EMPTY : first);
    };
    if (head.length) return start(head);
    client.once('data', (d: Buffer) => {
      client.pause();
      start(d);
    });
  }

  /** An upgrade's request, on a connection of its own (lib/proxy/upgrade.ts reads its answer). */
  private dial(t: Tunnel, method: string, path: string, headers: string[]) {
    const common = { host: t.address, port: t.dialPort, method, path, headers, setHost: false, agent: false as const };
    if (!t.tls) return httpRequest(common);
    return httpsRequest({
      ...common,
      servername: t.servername,
      // A TLS option https.request passes on; its typings omit it.
      ...({ secureContext: this.upstream() } as object),
    });
  }

  private handle(t: Tunnel, http: TunnelHttp, req: Incoming, res: Responder): void {
    const server = this.o.mcp !== undefined && this.o.mcp.length > 0 ? serverAt(this.o.mcp, t.host) : undefined;
    if (server) return this.mcpRequest(t, http, req, res, server);
    const h = req.head;
    // In a run with secrets every host answers uncompressed, so that every byte can be scrubbed.
    const full = t.scrub.pairs.length > 0;
    const c = this.check(h, t, NONE, full ? WHOLE_ANSWERS : NONE);
    if ('rule' in c) return this.refused(t, h, res, c);
    this.send(t, http, req, res, c, { headers: full ? [...c.headers, 'Accept-Encoding', 'identity'] : c.headers });
  }

  private refused(t: Tunnel, h: Head, res: Responder, c: { status: number; rule: string; extra?: Record<string, unknown> }): void {
    const e = requestEvent(t, h.method, pathOf(h.url), 'deny', c.rule);
    e.status = c.status;
    if (c.extra) Object.assign(e, c.extra);
    this.o.audit(e);
    res.refuse(c.status, c.rule, refusalText(t, c.rule));
  }

  /**
   * A request to an MCP server's host (lib/mcp/): only POST, GET and DELETE;
   * a POST's body read whole and decided (a body that is not MCP, or a call
   * the profile refuses, never reaches the server: the agent gets JSON-RPC
   * errors); every answer asked uncompressed and its tools/list results
   * filtered. Each tools/call is audited: server, tool, decision, argument size.
   */
  private mcpRequest(t: Tunnel, http: TunnelHttp, req: Incoming, res: Responder, server: McpRemote): void {
    const h = req.head;
    if (h.method !== 'POST' && h.method !== 'GET' && h.method !== 'DELETE') {
      return this.refused(t, h, res, { status: 405, rule: `${h.method} to [mcp.servers.${server.name}] (MCP uses POST, GET and DELETE)` });
    }
    // Its endpoint alone, byte for byte (no other route on its host, and no spelling of this one a server might read as another).
    if (h.url !== server.target) {
      return this.refused(t, h, res, { status: 404, rule: `a target other than ${server.target} on the host of [mcp.servers.${server.name}] (its MCP endpoint alone)` });
    }
    const framing = framingProblem(h.method, {
      contentType: rawJoined(h.headers, 'content-type'), contentEncoding: rawJoined(h.headers, 'content-encoding'),
      contentLength: rawJoined(h.headers, 'content-length'), transferEncoding: rawJoined(h.headers, 'transfer-encoding'),
    }, server.name);
    if (framing !== null) return this.refused(t, h, res, framing);
    // Read whole here, a POST's body is never announced to the server with Expect (its 100 Continue is the proxy's own, below).
    const c = this.check(h, t, NONE, h.method === 'POST' ? WHOLE_ANSWERS_NO_EXPECT : WHOLE_ANSWERS);
    if ('rule' in c) return this.refused(t, h, res, c);
    // A local server has no stream of its own to offer (GET) and no session to end (DELETE).
    if (server.local && h.method !== 'POST') return this.refused(t, h, res, { status: 405, rule: `${h.method} to the local server [mcp.servers.${server.name}] (it answers POST alone)` });
    const headers = [...c.headers, 'Accept-Encoding', 'identity'];
    // Every answer is read, whatever type it says it is (lib/mcp/answer-filter.ts), within the run's room for answers held
    // at once (review, round 34): what the filter holds is charged, given back as it lets it go, the rest once it is over.
    let answerHeld = 0;
    const room = this.limits.mcpBodiesMaxBytes;
    const budget: AnswerBudget = {
      max: room,
      take: (n) => {
        if (this.mcpAnswersHeld + n > room) return false;
        this.mcpAnswersHeld += n;
        answerHeld += n;
        return true;
      },
      give: (n) => {
        const m = Math.min(n, answerHeld);
        this.mcpAnswersHeld -= m;
        answerHeld -= m;
      },
    };
    const answerOver = () => budget.give(answerHeld);
    const answer = (raw: string[]) => answerFilter(server.policy, rawJoined(raw, 'content-type'), budget);
    if (h.method !== 'POST') return this.send(t, http, req, answeredThen(res, answerOver), c, { headers, answer });
    // The body is read here before anything is sent: an agent that waits for 100 Continue is told to send it.
    if (rawValue(h.headers, 'expect') !== undefined) res.informational(100, []);
    let parts: Buffer[] = [];
    let size = 0;
    let over = false;
    // What this request holds of the run's budget for MCP bodies, given back once its answer ended, it was refused or its
    // agent is gone (found in review: 512 connections each trickling a 4 MiB body held 2 GiB, with no deadline past the
    // head's; then, given back once judged, bodies waiting for one of the host's upstream connections held as much).
    let held = 0;
    const giveBack = () => {
      this.mcpHeld -= held;
      held = 0;
    };
    const answering = answeredThen(res, () => {
      giveBack();
      answerOver();
    });
    const stop = (status: number, rule: string) => {
      over = true;
      parts = [];
      giveBack();
      clearTimeout(deadline);
      this.refused(t, h, res, { status, rule });
    };
    const limit = this.limits.headTimeoutMs;
    const deadline = setTimeout(() => stop(408, `an MCP request body to [mcp.servers.${server.name}] not whole within ${limit / 1000} s of its head (network.limits.head_timeout)`), limit);
    deadline.unref();
    // (Once a local server's bridge has it, the bridge gives it back when done.)
    let bridged = false;
    res.onGone(() => {
      over = true;
      parts = [];
      if (!bridged) giveBack();
      clearTimeout(deadline);
    });
    req.read(
      (b) => {
        if (over) return;
        size += b.length;
        if (size > MAX_REQUEST_BODY) return stop(413, `an MCP request body over ${MAX_REQUEST_BODY} bytes to [mcp.servers.${server.name}]`);
        if (this.mcpHeld + b.length > this.limits.mcpBodiesMaxBytes) return stop(503, `MCP request bodies held at once over ${this.limits.mcpBodiesMaxBytes >> 20} MiB (network.limits.mcp_bodies_mb)`);
        this.mcpHeld += b.length;
        held += b.length;
        parts.push(b);
      },
      () => {
        if (over) return;
        clearTimeout(deadline);
        const body = Buffer.concat(parts);
        parts = [];
        let v: ReturnType<typeof filterRequest>;
        try {
          v = filterRequest(body, server.policy);
        } catch (e) {
          // Whatever the reader could not take is refused, never sent and never the end of the run.
          v = { forward: false, status: 400, body: JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `stashbase: not an MCP message for [mcp.servers.${server.name}] (${(e as Error).name})` } }), rule: `not an MCP message for [mcp.servers.${server.name}]`, calls: [] };
        }
        for (const call of v.calls) this.o.audit({ type: 'mcp', server: server.name, host: t.host, tool: call.tool, decision: call.decision, rule: call.rule, argBytes: call.argBytes });
        // A local server's: held until its bridge is done with it, whether or not the agent waits (found in review, round 3:
        // an agent that left at once had its charge given back while the bridge held the request for two minutes).
        if (v.forward && server.local) {
          bridged = true;
          return this.answerLocal(t, h, res, server, body, giveBack);
        }
        if (v.forward) return this.send(t, http, req, answering, c, { headers, answer, body });
        giveBack();
        const e = requestEvent(t, h.method, pathOf(h.url), 'deny', v.rule);
        e.status = v.status;
        this.o.audit(e);
        const text = Buffer.from(v.body);
        res.head(v.status, ['Content-Type', 'application/json', 'Content-Length', String(text.length), 'X-Stashbase-Refused', v.rule.replace(/[^\x20-\x7e]/g, '?')], true);
        res.body(text);
        res.end();
      },
    );
  }

  /**
   * A local server's answer, from its bridge (lib/mcp/local-server.ts), audited as a request to its host: scrubbed of
   * the run's bound secrets and of the server's own (review, round 36: its answers went to the agent as the server wrote
   * them, and a server holding the same token as a bound secret, or a token of its own, could hand it over).
   */
  private answerLocal(t: Tunnel, h: Head, res: Responder, server: McpRemote, body: Buffer, done: () => void = () => {}): void {
    const bridge = this.o.bridges?.get(server.name);
    const reply = (status: number, text: string) => {
      const e = requestEvent(t, h.method, pathOf(h.url), status < 400 ? 'allow' : 'error', `[mcp.servers.${server.name}] (local)`);
      e.status = status;
      this.o.audit(e);
      const bytes = scrubBuffer(Buffer.from(text), bridge ? this.localPairs(server.name, bridge.secrets) : this.pairs);
      res.head(status, [...(bytes.length > 0 ? ['Content-Type', 'application/json'] : []), 'Content-Length', String(bytes.length)], true);
      if (bytes.length > 0) res.body(bytes);
      res.end();
    };
    if (!bridge) {
      done();
      return reply(502, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: `stashbase: the local server ${server.name} is not running` } }));
    }
    bridge.exchange(body).finally(done).then((a) => reply(a.status, a.body), (e: Error) => reply(502, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: `stashbase: the local server ${server.name}: ${e.name}` } })));
  }

  /** The run's scrub pairs with a local server's own secrets (each `[mcp.servers.NAME.env.VARIABLE]`), made once it has read them all. */
  private localPairs(name: string, secrets: Array<{ variable: string; value: string }>): ScrubPair[] {
    const made = this.localScrub.get(name);
    if (made && made.count === secrets.length) return made.pairs;
    const own = secrets.filter((s) => Buffer.byteLength(s.value) >= MIN_SECRET_BYTES).map((s) => ({ name: `${name}.${s.variable}`, placeholder: `[mcp.servers.${name}.env.${s.variable}]`, real: s.value, hosts: [], inQuery: false, allowPlaintext: false }));
    const pairs = [...this.pairs, ...scrubPairs(own)];
    this.localScrub.set(name, { count: secrets.length, pairs });
    return pairs;
  }

  /** The request upstream and its answer back (lib/proxy/h1/exchange.ts), audited. */
  private send(t: Tunnel, http: TunnelHttp, req: Incoming, res: Responder, c: { path: string; injected: string[]; inert: string[] }, o: { headers: string[]; body?: Buffer; answer?: (raw: string[]) => MessageFilter | null }): void {
    const h = req.head;
    const path = pathOf(h.url);
    const event = (decision: string, rule: string) => requestEvent(t, h.method, path, decision, rule);
    /** What the request carried (secrets substituted, placeholders passed inert), then the answer's fields. */
    const carried = (decision: string, rule: string, status: number | null, bytes: number) => {
      const e = event(decision, rule);
      e.injected = c.injected;
      if (c.inert.length > 0) e.inert = c.inert;
      if (status !== null) e.status = status;
      e.bytes = bytes;
      return e;
    };
    exchange({
      req, res, path: c.path,
      headers: o.headers,
      body: o.body,
      answer: o.answer,
      pool: this.pool, key: t.key, create: t.create, needles: t.needles, scrub: t.scrub,
      holdAgent: () => http.pause(),
      releaseAgent: () => http.resume(),
      refusalText: (rule) => refusalText(t, rule),
      audit: {
        allowed: (status, bytes) => this.o.audit(carried('allow', t.rule, status, bytes)),
        short: (status, bytes, e) => this.o.audit(carried('error', `upstream ${t.host}: the response stopped short (${e.code ?? e.message})`, status, bytes)),
        failed: (e) => {
          const rule = upstreamErrorRule(t.host, e, this.o.onUpstreamTls);
          this.o.audit(event('error', rule));
          return rule;
        },
        abandoned: (status, bytes) => this.o.audit(carried('error', `upstream ${t.host}: the agent went away before the answer ended`, status || null, bytes)),
        refusedBody: (rule, suspect) => {
          const e = event('deny', rule);
          e.status = 403;
          e.exfiltration = true;
          e.secret = suspect;
          this.o.audit(e);
        },
        refusedAnswer: (rule) => {
          const e = event('error', rule);
          e.status = 502;
          this.o.audit(e);
        },
      },
    });
  }

  /** The checks every request inside a tunnel gets, and its rewritten head. */
  private check(h: Head, t: Tunnel, keep: ReadonlySet<string>, drop: ReadonlySet<string>): { status: number; rule: string; extra?: Record<string, unknown> } | { headers: string[]; path: string; injected: string[]; inert: string[] } {
    const url = h.url;
    if (!url.startsWith('/')) return { status: 400, rule: 'absolute-form request inside a tunnel' };
    if (rawCount(h.headers, 'host') === 0) return { status: 400, rule: 'a request without a Host header' };
    const hostProblem = this.checkHost(h.headers, t.host, t.port);
    if (hostProblem) return { status: 400, rule: hostProblem };
    if (rawCount(h.headers, 'authorization') > 1) return { status: 400, rule: 'duplicate Authorization header' };
    if (h.method === 'TRACE') return { status: 403, rule: 'TRACE is refused' };
    const expect = rawValue(h.headers, 'expect');
    if (expect !== undefined && expect.trim().toLowerCase() !== '100-continue') return { status: 417, rule: 'an Expect other than 100-continue' };
    const rw = rewriteRequest(forwardable(withCanonicalHost(h.headers, t.host, t.port, t.tls), keep, drop), url, t.host, t.tls, this.o.secrets);
    if (!rw.ok) return { status: 403, rule: rw.rule, extra: { exfiltration: true, secret: rw.suspect } };
    return { headers: rw.rawHeaders, path: rw.path, injected: rw.injected, inert: rw.inert };
  }

  private upgrade(t: Tunnel, h: Head, socket: Duplex, head: Buffer): void {
    if (h.method === 'CONNECT') {
      this.o.audit({ type: 'proxy', method: 'CONNECT', host: t.host, port: t.port, path: null, intercepted: true, decision: 'deny', rule: 'CONNECT inside a tunnel', status: 400 });
      return void socket.destroy();
    }
    const server = this.o.mcp !== undefined && this.o.mcp.length > 0 ? serverAt(this.o.mcp, t.host) : undefined;
    if (server) {
      const rule = `an upgrade to [mcp.servers.${server.name}] (its host speaks MCP over HTTP only)`;
      this.o.audit({ type: 'proxy', method: h.method, host: t.host, port: t.port, path: pathOf(h.url), intercepted: true, decision: 'deny', rule, status: 403 });
      return refuseUpgrade(socket, 403, rule, refusalText(t, rule));
    }
    t.tracker?.mark(t.outer, 'tunnel');
    socket.on('error', () => socket.destroy());
    const headers = headerMap(h.headers);
    const event = { type: 'proxy', method: h.method, host: t.host, port: t.port, path: pathOf(h.url), intercepted: true, upgrade: headers.upgrade ?? '' };
    const c = this.check(h, t, CONNECTION_UPGRADE, WHOLE_ANSWERS);
    if ('rule' in c) {
      this.o.audit({ ...event, decision: 'deny', rule: c.rule, status: c.status, ...(c.extra ?? {}) });
      return refuseUpgrade(socket, c.status, c.rule, refusalText(t, c.rule));
    }
    handleUpgrade({
      req: { method: h.method, headers }, socket, head, headers: c.headers, path: c.path,
      dial: (method, path, headers) => {
        const up = this.dial(t, method, path, headers);
        up.on('socket', (sock) => sock.setNoDelay(true));
        return up;
      },
      scrub: t.scrub,
      needles: t.needles,
      // Another protocol frames its data (h2c's 9-byte frame headers, HPACK's Huffman codes): a value echoed in pieces
      // would pass a byte scrubber, so a run with secrets gets WebSocket alone, whose frames the proxy reads, from every
      // host (review, round 35: a bound host's h2c echo gave the agent the real value across a frame boundary, and so
      // did another allowed name of the same service; a profile cannot ask for both, lib/profile/validate.ts).
      allowed: this.o.secrets.length > 0 ? [] : (this.o.allowUpgrades ?? []),
      audit: (o) => {
        if (o.suspect !== undefined) this.o.audit({ ...event, decision: 'deny', rule: o.refused, status: o.status, ...secretFields(c), exfiltration: true, secret: o.suspect });
        else if (o.refused !== undefined) this.o.audit({ ...event, decision: 'deny', rule: o.refused, status: o.status ?? 400, ...secretFields(c) });
        else if (o.error !== undefined) this.o.audit({ ...event, decision: 'error', rule: upstreamErrorRule(t.host, { code: o.code, message: o.error }, this.o.onUpstreamTls), ...secretFields(c) });
        else this.o.audit({ ...event, decision: 'allow', rule: t.rule, ...secretFields(c), status: o.status });
      },
    });
  }

  close(): void {
    for (const b of this.o.bridges?.values() ?? []) b.stop();
    clearInterval(this.sweeper);
    this.pool.close();
  }
}
