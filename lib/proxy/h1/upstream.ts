// One upstream connection of the intercepting proxy: a TLS (or, for a plain
// tunnel, TCP) socket to the address the policy checked, with Node's parser
// reading its responses and handing them to the request it is serving. Bytes
// that arrive when no request is waiting, or a second response after the one
// asked for, end the connection: they are never given to the next request.
import { connect as tcpConnect } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, type SecureContext } from 'node:tls';
import { type Head, Http1Parser } from './parser.js';
import type { Pooled } from './pool.js';

/** What a connection's parser reports to the request it serves. */
export interface ResponseSink {
  /** Returns true when the response has no body (HEAD). */
  head(h: Head): boolean;
  body(b: Buffer): void;
  /** The response was read to its end. */
  done(): void;
  /** The connection failed or closed before the response was whole. */
  broken(e: Error & { code?: string }): void;
}

export interface UpstreamAddress {
  tls: boolean;
  address: string;
  port: number;
  /** The name TLS sends and verifies (undefined for an IP address). */
  servername: string | undefined;
}

export class UpstreamConn implements Pooled {
  readonly socket: Duplex;
  idleSince = 0;
  private readonly parser: Http1Parser;
  private sink: ResponseSink | null = null;
  private answered = false;
  /** The response is whole and nothing came after it. */
  private clean = false;
  /** The upstream said the connection goes on after this response (HTTP/1.1 without Connection: close). */
  private keepAlive = false;
  private released: (() => void) | null = null;

  /**
   * `sessions`: TLS sessions to resume, by key; one cache per proxy, as its
   * trust: a session verified under other CAs would skip this proxy's check.
   */
  constructor(readonly key: string, a: UpstreamAddress, context: SecureContext, sessions: Map<string, Buffer>, maxHeaderSize: number) {
    if (a.tls) {
      const session = sessions.get(key);
      const s = tlsConnect({ host: a.address, port: a.port, servername: a.servername, secureContext: context, ...(session ? { session } : {}) });
      s.on('session', (b: Buffer) => {
        sessions.set(key, b);
        if (sessions.size > 256) sessions.delete(sessions.keys().next().value as string);
      });
      this.socket = s;
    } else {
      this.socket = tcpConnect({ host: a.address, port: a.port });
    }
    const sock = this.socket as Duplex & { setNoDelay(v: boolean): void };
    sock.setNoDelay(true);
    this.parser = new Http1Parser('response', maxHeaderSize, {
      // Any byte of a message after the answer, even a head's first, ends the connection.
      begin: () => {
        if (!this.sink || this.answered) this.socket.destroy();
      },
      head: (h) => {
        if (!this.sink || this.answered || this.socket.destroyed) {
          this.socket.destroy();
          return true;
        }
        if (h.status >= 200 || h.upgrade) {
          this.answered = true;
          this.keepAlive = h.keepAlive;
        }
        return this.sink.head(h);
      },
      body: (b) => {
        if (this.answered && !this.clean) this.sink?.body(b);
      },
      done: () => {
        if (!this.answered || this.clean) return;
        this.clean = true;
        this.sink?.done();
      },
    });
    this.socket.on('data', (d: Buffer) => {
      if (!this.sink) return void this.socket.destroy();
      const r = this.parser.execute(d);
      if (!r.ok) return this.fail(Object.assign(new Error(`the upstream's response does not parse (${r.code})`), { code: r.code }));
      if (r.upgradeAt !== undefined) return this.fail(Object.assign(new Error('the upstream switched protocols unasked'), { code: 'UNEXPECTED_UPGRADE' }));
      this.afterResponse();
    });
    this.socket.on('end', () => {
      // A body ended by the close completes here; the connection is done either way.
      this.keepAlive = false;
      if (this.sink && !this.clean) {
        const r = this.parser.finish();
        if (r.ok && this.clean) this.afterResponse();
      }
      this.socket.destroy();
    });
    this.socket.on('error', (e: Error) => this.fail(e));
    this.socket.on('close', () => {
      this.parser.close();
      this.fail(Object.assign(new Error('the upstream closed the connection'), { code: 'ECONNRESET' }));
    });
  }

  /** Serves one request: `release` is called when the connection may serve the next. */
  serve(sink: ResponseSink, release: () => void): void {
    this.sink = sink;
    this.answered = false;
    this.clean = false;
    this.keepAlive = false;
    this.released = release;
  }

  private afterResponse(): void {
    if (!this.clean || this.sink === null) return;
    const release = this.released;
    this.sink = null;
    this.released = null;
    // Reused only when the upstream keeps it open and nothing came after the answer.
    if (!this.keepAlive || this.socket.destroyed) return void this.socket.destroy();
    release?.();
  }

  private fail(e: Error & { code?: string }): void {
    const sink = this.sink;
    this.sink = null;
    this.released = null;
    this.socket.destroy();
    if (sink && !this.clean) sink.broken(e);
  }
}
