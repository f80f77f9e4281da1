// The egress proxy: HTTP forward proxy and CONNECT relay on loopback (or inside
// the sandbox's network namespace). Policy first, then resolution, then a dial
// to the very address that was checked. TLS interception and secret
// substitution build on this (docs/proxy.md).
import { type McpRemote, serverAt } from '../mcp/servers.js';
import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { lookup } from 'node:dns/promises';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { refusedAddress } from './addresses.js';
import { forwardable, refuseHttp, WHOLE_ANSWERS, withCanonicalHost } from './http-util.js';
import type { Interceptor } from './intercept.js';
import { guardBody } from './body-guard.js';
import { forwardResponse, planBody } from './forward-response.js';
import { parseFailure } from './h1/wire.js';
import { checkingInterval, ConnectionTracker, DEFAULT_LIMITS, linger, MAX_HEADER_BYTES, MAX_PIPELINED, type ProxyLimits, upstreamAgentOptions } from './limits.js';
import { scrubPairs } from './scrub.js';
import { type BoundSecret, bodyNeedles, rewriteRequest, secretFields } from './secrets.js';
import { decide, type Decision, type EgressPolicy, mappingFor, normalizeHost } from './policy.js';
import { PROXY_USER } from '../../templates/native-plan.js';
import { type HookHandler, noHooks } from '../hooks/endpoints.js';
import { HOOK_PREFIX } from '../hooks/hook-env.js';

export type AuditSink = (event: Record<string, unknown>) => void;

export interface ProxyOptions {
  policy: EgressPolicy;
  audit: AuditSink;
  /** What one run may take of the proxy (lib/proxy/limits.ts); the defaults where unset. */
  limits?: Partial<ProxyLimits>;
  /** Set when the profile binds secrets: tunnels are intercepted, not passed through. */
  interceptor?: Interceptor;
  /** The bound secrets, for plain-http requests (substituted only where allow_plaintext). */
  secrets?: BoundSecret[];
  /** Name resolution (tests substitute their own). */
  resolve?: Resolver;
  /** Which client addresses may connect at all (Docker: the run's containers only). */
  acceptClient?: (address: string) => boolean;
  /** The run's hook endpoints (lib/hooks/endpoints.ts), when its profile allows hooks. */
  hooks?: HookHandler;
  /**
   * The run's credential: every CONNECT and every plain request must carry it
   * as `Proxy-Authorization: Basic` (user stashbase). A proxy socket or port
   * another process finds is then of no use to it. Undefined: none asked (unit tests).
   */
  token?: string;
  /** The profile's remote MCP servers: their hosts are never forwarded as plain HTTP. */
  mcp?: McpRemote[];
}

export { MAX_HEADER_BYTES };


/** The 403's body: one line an agent can show its model, saying why and who can change it. */
export function denialBody(d: Decision): string {
  return `stashbase proxy refused ${d.host}:${d.port}: ${d.rule}. This sandbox reaches only the hosts its profile allows; if the task needs this one, ask the user to add it to the profile's [network] egress_hosts.\n`;
}

const PROXY_AUTH_RULE = 'no valid proxy credential for this run';
const PROXY_AUTH_BODY = 'stashbase proxy: this proxy serves one run; use the proxy URL that run was given\n';
const PROXY_AUTHENTICATE = 'Basic realm="stashbase"';

/** Compares a Proxy-Authorization header with the run's credential in constant time. */
export function proxyCredentialCheck(token: string): (header: string | undefined) => boolean {
  const want = Buffer.from(`Basic ${Buffer.from(`${PROXY_USER}:${token}`).toString('base64')}`);
  return (header) => {
    if (header === undefined) return false;
    const got = Buffer.from(header.trim());
    let diff = got.length ^ want.length;
    for (let i = 0; i < want.length; i++) diff |= want[i]! ^ (got[i] ?? 0);
    return diff === 0;
  };
}

function refuseRaw(socket: Duplex, status: number, reason: string, rule: string, body: string, authenticate?: string): void {
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nX-Stashbase-Denied: ${rule.replace(/[^\x20-\x7e]/g, '?')}\r\n` +
      (authenticate ? `Proxy-Authenticate: ${authenticate}\r\n` : '') +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export type Resolver = (host: string) => Promise<string[]>;

const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Resolves an allowed host, once, to one address it may dial, or says why not.
 * The caller dials exactly that address: a second lookup (DNS rebinding) never happens.
 */
export async function resolveTarget(host: string, port: number, policy: EgressPolicy, resolve: Resolver = systemResolver): Promise<{ address: string; port: number } | { refused: string; unresolved?: true }> {
  const mapping = mappingFor(policy.mapped, host);
  if (mapping) return { address: mapping.address, port: mapping.port ?? port };
  const bare = host.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = await resolve(bare);
  } catch (e) {
    // Not a refusal: an allowed name the resolver cannot answer for (an error, 502, counted as one).
    return { refused: `cannot resolve ${host}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`, unresolved: true };
  }
  const reasons: string[] = [];
  for (const a of addresses) {
    const why = refusedAddress(a);
    if (why === null) return { address: a, port };
    reasons.push(why);
  }
  return { refused: `${host} resolves only to refused addresses (${reasons.join('; ')})` };
}

function splitAuthority(authority: string): { host: string; port: number } | null {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(authority);
  return m ? { host: m[1] as string, port: Number(m[2]) } : null;
}

/** Why the Host header(s) of a request do not match its target, or null. */
export function hostHeaderProblem(rawHeaders: string[], targetHost: string, targetPort: number): string | null {
  const hosts = rawHeaders.filter((_, i) => i % 2 === 0 && rawHeaders[i]!.toLowerCase() === 'host').length;
  if (hosts > 1) return 'duplicate Host header';
  if (hosts === 0) return null;
  const value = rawHeaders[rawHeaders.findIndex((h, i) => i % 2 === 0 && h.toLowerCase() === 'host') + 1] ?? '';
  const m = /^(\[[^\]]+\]|[^:]*)(?::(\d{1,5}))?$/.exec(value.trim());
  const port = m?.[2] ? Number(m[2]) : targetPort === 443 ? 443 : 80;
  if (!m || normalizeHost(m[1] as string) !== normalizeHost(targetHost) || port !== targetPort) return 'Host header differs from the request target';
  return null;
}

export function createProxy(opts: ProxyOptions): Server & { tracker: ConnectionTracker } {
  const limits: ProxyLimits = { ...DEFAULT_LIMITS, ...opts.limits };
  const headersTimeout = limits.headTimeoutMs;
  const authorized = opts.token === undefined ? () => true : proxyCredentialCheck(opts.token);
  const secrets = opts.secrets ?? [];
  const pairs = scrubPairs(secrets);
  const agent = new Agent(upstreamAgentOptions(limits));
  // Node's strict parser answers 400 to request-smuggling shapes (Content-Length
  // with Transfer-Encoding, duplicate Content-Length, obs-fold); insecureHTTPParser
  // stays off. Every request on a kept-alive connection goes through the same
  // handler, so each one is judged. requestTimeout stays 0: agents stream
  // long uploads and responses; the head must arrive in time, the body need not.
  const server = createServer({
    headersTimeout, requestTimeout: 0, keepAliveTimeout: 5_000, maxHeaderSize: MAX_HEADER_BYTES, insecureHTTPParser: false,
    connectionsCheckingInterval: checkingInterval(headersTimeout),
  }) as Server & { tracker: ConnectionTracker };
  const tracker = new ConnectionTracker(limits, (why) => opts.audit({ type: 'limit', rule: why }));
  server.tracker = tracker;
  // Closing the proxy ends its upstream connections and checks at once; idle
  // clients are closed by Node, the rest end with the run.
  const close = server.close.bind(server);
  server.close = (cb?: (err?: Error) => void) => {
    tracker.close();
    agent.destroy();
    return close(cb);
  };
  server.on('connection', (socket: Socket) => {
    if (opts.acceptClient && !opts.acceptClient(socket.remoteAddress ?? '')) {
      opts.audit({ type: 'client-refused', address: socket.remoteAddress ?? '' });
      return void socket.destroy();
    }
    if (!tracker.add(socket)) return;
    socket.setNoDelay(true);
  });

  server.on('connect', async (req: IncomingMessage, client: Duplex, head: Buffer) => {
    client.on('error', () => client.destroy());
    if (!authorized(req.headers['proxy-authorization'])) {
      opts.audit({ type: 'proxy', method: 'CONNECT', host: null, port: null, path: null, decision: 'deny', rule: PROXY_AUTH_RULE, status: 407 });
      return refuseRaw(client, 407, 'Proxy Authentication Required', PROXY_AUTH_RULE, PROXY_AUTH_BODY, PROXY_AUTHENTICATE);
    }
    const target = splitAuthority(req.url ?? '');
    if (!target) return refuseRaw(client, 400, 'Bad Request', 'malformed CONNECT target', 'stashbase proxy: CONNECT needs host:port\n');
    const d = decide(target.host, target.port, opts.policy);
    const event = { type: 'proxy', method: 'CONNECT', host: d.host, port: d.port, path: null };
    if (!d.allow) {
      opts.audit({ ...event, decision: 'deny', rule: d.rule, status: 403 });
      return refuseRaw(client, 403, 'Forbidden', d.rule, denialBody(d));
    }
    // A local MCP server's host is answered by the proxy itself (lib/mcp/local-server.ts): never resolved, never dialled.
    const local = opts.interceptor ? serverAt(opts.mcp ?? [], d.host) : undefined;
    if (local?.local && opts.interceptor) {
      opts.audit({ ...event, decision: 'allow', rule: d.rule, status: 200, intercepted: true });
      opts.interceptor.accept(client, head, { host: d.host, port: d.port, address: '127.0.0.1', dialPort: 0, rule: d.rule }, tracker);
      return;
    }
    const dest = await resolveTarget(d.host, d.port, opts.policy, opts.resolve);
    if ('refused' in dest) {
      const status = dest.unresolved ? 502 : 403;
      opts.audit({ ...event, decision: dest.unresolved ? 'error' : 'deny', rule: dest.refused, status });
      return refuseRaw(client, status, dest.unresolved ? 'Bad Gateway' : 'Forbidden', dest.refused, `stashbase proxy ${dest.unresolved ? 'could not reach' : 'refused'} ${d.host}:${d.port}: ${dest.refused}\n`);
    }
    if (opts.interceptor) {
      opts.audit({ ...event, decision: 'allow', rule: d.rule, status: 200, address: dest.address, intercepted: true });
      opts.interceptor.accept(client, head, { host: d.host, port: d.port, address: dest.address, dialPort: dest.port, rule: d.rule }, tracker);
      return;
    }
    const upstream: Socket = connect({ host: dest.address, port: dest.port, noDelay: true });
    let established = false;
    upstream.once('connect', () => {
      established = true;
      tracker.mark(client, 'tunnel');
      opts.audit({ ...event, decision: 'allow', rule: d.rule, status: 200, address: dest.address });
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', (e) => {
      opts.audit({ ...event, decision: 'error', rule: d.rule, error: (e as NodeJS.ErrnoException).code ?? e.message });
      // Once the tunnel stands its bytes are the upstream's: a reset closes it, the proxy writes nothing into it.
      if (!established && !client.destroyed) refuseRaw(client, 502, 'Bad Gateway', 'upstream unreachable', `stashbase proxy: cannot reach ${d.host}:${d.port}\n`);
      else client.destroy();
    });
    client.on('close', () => upstream.destroy());
    // The upstream's end ends the agent's side (the pipe); an agent that then never closes its own is cut after a linger.
    upstream.on('close', () => linger(client));
  });

  // Per connection, its requests not yet answered, each with what cancels its upstream request. Node's
  // server starts every pipelined request at once and queues the answers; a queued answer sees no
  // 'close' when the agent leaves, so the connection's own close cancels them all.
  const inFlight = new WeakMap<Socket, Set<{ cancel: () => void }>>();
  const pipelined = (socket: Socket): Set<{ cancel: () => void }> => {
    const known = inFlight.get(socket);
    if (known) return known;
    const live = new Set<{ cancel: () => void }>();
    inFlight.set(socket, live);
    socket.once('close', () => {
      for (const r of live) r.cancel();
      live.clear();
    });
    return live;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const live = pipelined(req.socket);
    if (live.size >= MAX_PIPELINED) {
      opts.audit({ type: 'limit', rule: `more than ${MAX_PIPELINED} requests pipelined on one connection: it was closed` });
      return void req.socket.destroy();
    }
    const entry = { cancel: () => {} };
    live.add(entry);
    res.once('close', () => live.delete(entry));
    tracker.mark(req.socket, 'busy');
    res.on('finish', () => tracker.mark(req.socket, 'idle'));
    // The run's own endpoints: origin-form, answered here, never forwarded; their own token.
    if (req.url === HOOK_PREFIX || req.url?.startsWith(`${HOOK_PREFIX}/`)) return opts.hooks ? opts.hooks(req, res) : noHooks(res);
    if (!authorized(req.headers['proxy-authorization'])) {
      opts.audit({ type: 'proxy', method: req.method, host: null, port: null, path: null, decision: 'deny', rule: PROXY_AUTH_RULE, status: 407 });
      res.setHeader('Proxy-Authenticate', PROXY_AUTHENTICATE);
      refuseHttp(res, 407, PROXY_AUTH_RULE, PROXY_AUTH_BODY);
      return;
    }
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      refuseHttp(res, 400, 'not an absolute-form request', 'stashbase proxy: requests must use absolute-form URLs\n');
      return;
    }
    const event = { type: 'proxy', method: req.method, host: url.hostname, port: null as number | null, path: url.pathname };
    if (url.protocol !== 'http:' || url.username || url.password) {
      opts.audit({ ...event, decision: 'deny', rule: 'not a plain http:// URL without userinfo', status: 400 });
      refuseHttp(res, 400, 'not a plain http:// URL without userinfo', 'stashbase proxy: only http:// URLs without userinfo are forwarded (use CONNECT for https)\n');
      return;
    }
    const port = url.port ? Number(url.port) : 80;
    // The Host an upstream sees must be the one the policy judged: a different
    // one would reach another virtual host behind the same address; none
    // (HTTP/1.0) would leave the upstream to pick one.
    const hostProblem = req.headers.host === undefined ? 'a request without a Host header' : hostHeaderProblem(req.rawHeaders, url.hostname, port);
    if (hostProblem) {
      opts.audit({ ...event, port, decision: 'deny', rule: hostProblem, status: 400 });
      refuseHttp(res, 400, hostProblem, `stashbase proxy refused ${url.host}: ${hostProblem}\n`);
      return;
    }
    const d = decide(url.hostname, port, opts.policy);
    event.host = d.host;
    event.port = port;
    // An MCP server's host is reached through the interception that reads its tools (lib/mcp/), never in plain HTTP.
    const mcpServer = d.allow ? serverAt(opts.mcp ?? [], d.host) : undefined;
    if (!d.allow || req.method === 'TRACE' || mcpServer) {
      const rule = mcpServer ? `${d.host} is [mcp.servers.${mcpServer.name}]'s, reached over https only` : d.allow ? 'TRACE is refused' : d.rule;
      opts.audit({ ...event, decision: 'deny', rule, status: 403 });
      refuseHttp(res, 403, rule, d.allow ? `stashbase proxy refused ${d.host}:${port}: ${rule}\n` : denialBody(d));
      return;
    }
    const dest = await resolveTarget(d.host, port, opts.policy, opts.resolve);
    if ('refused' in dest) {
      const status = dest.unresolved ? 502 : 403;
      opts.audit({ ...event, decision: dest.unresolved ? 'error' : 'deny', rule: dest.refused, status });
      refuseHttp(res, status, dest.refused, `stashbase proxy ${dest.unresolved ? 'could not reach' : 'refused'} ${d.host}:${port}: ${dest.refused}\n`);
      return;
    }
    // In a run with secrets every answer is scrubbed whole: asked for uncompressed.
    const full = pairs.length > 0;
    const rw = rewriteRequest(forwardable(withCanonicalHost(req.rawHeaders, d.host, port, false), new Set(), full ? WHOLE_ANSWERS : new Set()), url.pathname + url.search, d.host, false, secrets);
    if (!rw.ok) {
      opts.audit({ ...event, decision: 'deny', rule: rw.rule, status: 403, exfiltration: true, secret: rw.suspect });
      refuseHttp(res, 403, rw.rule, `stashbase proxy refused ${d.host}:${port}: ${rw.rule}\n`);
      return;
    }
    const headers = full ? [...rw.rawHeaders, 'Accept-Encoding', 'identity'] : rw.rawHeaders;
    const upstream = httpRequest({ host: dest.address, port: dest.port, method: req.method, path: rw.path, headers, setHost: false, agent });
    upstream.on('socket', (sock) => sock.setNoDelay(true));
    entry.cancel = () => upstream.destroy();
    // One per request: an upstream streaming 100s without end would pile them up toward an agent that does not read.
    upstream.once('continue', () => res.writeContinue());
    // The head goes now, whatever the body holds: Node's client would send it with the first
    // body bytes past the guard, and their timing would tell what the guard holds back.
    // As Latin-1, the text of the bytes they came as (flushHeaders writes the head as UTF-8: a byte past 0x7f went as
    // two, and a real value of non-ASCII characters reached its host spelled otherwise; review, round 36).
    upstream.write('', 'latin1');
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    const body = guardBody(
      req, upstream, res, bodyNeedles(d.host, false, secrets),
      (rule, suspect) => opts.audit({ ...event, decision: 'deny', rule, status: 403, exfiltration: true, secret: suspect }),
      (rule) => refuseHttp(res, 403, rule, `stashbase proxy refused ${d.host}:${port}: ${rule}\n`),
    );
    upstream.on('response', (up) => {
      if (body.refused) return void up.destroy();
      const plan = planBody(up, { pairs });
      if ('refused' in plan) {
        up.destroy();
        opts.audit({ ...event, decision: 'error', rule: plan.refused, status: 502 });
        return refuseHttp(res, 502, plan.refused, `stashbase proxy: ${plan.refused}\n`);
      }
      forwardResponse(up, res, plan, (bytes, err) => {
        const fields = { ...secretFields(rw), status: up.statusCode, bytes };
        if (err && !res.writableFinished) opts.audit({ ...event, decision: 'error', rule: `upstream ${d.host}: the response stopped short`, ...fields });
        else opts.audit({ ...event, decision: 'allow', rule: d.rule, ...fields });
      });
    });
    upstream.on('error', (e: NodeJS.ErrnoException) => {
      if (body.refused || res.writableFinished) return;
      opts.audit({ ...event, decision: 'error', rule: `upstream ${d.host}: ${e.code ?? e.message}` });
      if (!res.headersSent) refuseHttp(res, 502, 'upstream unreachable', `stashbase proxy: cannot reach ${d.host}:${port}\n`);
      else res.destroy();
    });
  };
  server.on('request', handle);
  // Expect: 100-continue goes to the upstream, which says whether it wants the
  // body: answered here, the agent would upload it to an upstream that refused.
  server.on('checkContinue', handle);
  // No 'upgrade' listener: Node passes an Upgrade request on as a plain one,
  // and Upgrade and Connection are hop-by-hop, so nothing switches protocols
  // on the plain-HTTP path and every later request on it is still judged.

  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (socket.writable) socket.end(parseFailure(err.code ?? ''));
    else socket.destroy();
  });
  return server;
}
