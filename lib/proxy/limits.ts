// What one run may take of the proxy, so that a hostile agent can neither
// hang it nor exhaust the stashbase process: connections, the time and bytes
// of a request head, upstream sockets per host, and the audit log's size.
// Every limit has a profile override ([network.limits], docs/proxy.md).
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { AUDIT_MAX_BYTES } from '../run/audit.js';

export interface ProxyLimits {
  /** A request head must be complete this long after it began (and a new connection must begin one). */
  headTimeoutMs: number;
  /** Connections open at once; past this the oldest one waiting for a head, or idle, is closed. */
  maxConnections: number;
  /** Upstream connections per host and port, for intercepted requests. */
  upstreamSocketsPerHost: number;
  /** The run's audit log stops growing here (one line says so). */
  auditMaxBytes: number;
  /** MCP request bodies held at once, all requests together (each is read whole before it is judged). */
  mcpBodiesMaxBytes: number;
}

export const DEFAULT_LIMITS: ProxyLimits = {
  headTimeoutMs: 30_000,
  maxConnections: 512,
  upstreamSocketsPerHost: 32,
  auditMaxBytes: AUDIT_MAX_BYTES,
  mcpBodiesMaxBytes: 64 << 20,
};

/**
 * Upstream connections per host and port, kept alive between requests for at
 * most 5 s idle (Node's own default agent does the same).
 */
export function upstreamAgentOptions(limits: ProxyLimits): { keepAlive: true; maxSockets: number; maxFreeSockets: number; timeout: number; scheduling: 'lifo' } {
  return { keepAlive: true, maxSockets: limits.upstreamSocketsPerHost, maxFreeSockets: 8, timeout: 5000, scheduling: 'lifo' };
}

/**
 * A connection the proxy has ended (its last words written) is given this long
 * to close its side; what it sends meanwhile is read and dropped. Then it is
 * cut: an agent that never closes would hold its place for the whole run.
 */
export const LINGER_MS = 2_000;

/** Gives a connection whose end the proxy wrote LINGER_MS to close, reading and dropping what it sends. */
export function linger(socket: Duplex): void {
  if (socket.destroyed) return;
  socket.resume();
  const cut = setTimeout(() => socket.destroy(), LINGER_MS);
  cut.unref?.();
  socket.once('close', () => clearTimeout(cut));
}

/** Requests one connection may have in flight on the plain-HTTP path (pipelined): past it, the connection is closed. */
export const MAX_PIPELINED = 16;

/** Request heads larger than this are refused (431) before any upstream is chosen. */
export const MAX_HEADER_BYTES = 32 * 1024;

/**
 * Starts Node's own head deadline on a server that is handed connections
 * instead of listening (the proxy behind its front listener, the server inside
 * intercepted tunnels): Node checks headersTimeout only from 'listening' on.
 */
export function armHeadDeadline(server: Server, ms: number): void {
  server.headersTimeout = ms;
  server.requestTimeout = 0;
  if (!server.listening) server.emit('listening');
}

/** The interval at which Node checks heads against their deadline (a constructor option). */
export function checkingInterval(ms: number): number {
  return Math.max(100, Math.min(1000, Math.floor(ms / 4)));
}

type State = 'head' | 'busy' | 'idle' | 'tunnel';

/**
 * The run's client connections, oldest first. A new one past the limit closes
 * the oldest connection that is waiting for a head or idle between requests,
 * so a flood of half-sent heads costs at most maxConnections × MAX_HEADER_BYTES
 * and a normal request still gets through; when every connection is busy the
 * new one is refused. A connection that sends no head in time is closed.
 */
export class ConnectionTracker {
  private readonly open = new Map<Duplex, { state: State; since: number }>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly limits: ProxyLimits, private readonly onEvict: (why: string) => void = () => {}) {
    this.timer = setInterval(() => this.sweep(), checkingInterval(limits.headTimeoutMs)).unref();
  }

  get size(): number {
    return this.open.size;
  }

  /** Takes a new connection; false when it was refused (and destroyed). */
  add(socket: Duplex): boolean {
    if (this.open.size >= this.limits.maxConnections && !this.evictOne()) {
      this.onEvict('refused a connection: every connection is busy');
      socket.destroy();
      return false;
    }
    this.open.set(socket, { state: 'head', since: Date.now() });
    socket.once('close', () => this.open.delete(socket));
    return true;
  }

  mark(socket: Duplex, state: State): void {
    const entry = this.open.get(socket);
    if (!entry) return;
    entry.state = state;
    entry.since = Date.now();
    if (state === 'idle' || state === 'head') {
      // Most recently used goes last: eviction takes the longest waiting.
      this.open.delete(socket);
      this.open.set(socket, entry);
    }
  }

  private evictOne(): boolean {
    for (const [socket, e] of this.open) {
      if (e.state === 'head' || e.state === 'idle') {
        this.open.delete(socket);
        socket.destroy();
        this.onEvict('closed the oldest waiting connection: the connection limit was reached');
        return true;
      }
    }
    return false;
  }

  private sweep(): void {
    const now = Date.now();
    // Past Node's own check (which answers a begun head with 408): this closes what never began one.
    const deadline = this.limits.headTimeoutMs + 2 * checkingInterval(this.limits.headTimeoutMs);
    for (const [socket, e] of this.open) {
      if (e.state === 'head' && now - e.since > deadline) {
        this.open.delete(socket);
        socket.destroy();
      }
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}
