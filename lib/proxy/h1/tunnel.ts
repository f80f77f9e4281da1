// The agent's side of an intercepted tunnel, as HTTP/1.1: requests parsed as
// they arrive (lib/proxy/h1/parser.ts), handed on one at a time in order (a
// pipelined request waits, its body held, until the answer before it is
// written), and each answer written with framing the proxy chooses itself:
// Content-Length when the body keeps the size the upstream gave, else chunked
// (close-delimited for an HTTP/1.0 agent). A head must be complete within the
// head deadline (408), an idle connection closes after 5 s, a head the parser
// refuses is answered 400 or 431 and the connection closed, as by Node's server.
import type { Duplex } from 'node:stream';
import { type Head, Http1Parser } from './parser.js';
import { headBytes, LAST_CHUNK, parseFailure, pushChunk, reason, refusal } from './wire.js';
import { MAX_PIPELINED } from '../limits.js';

/**
 * What a request's body may hold, waiting for its upstream connection, before
 * the agent is no longer read. Each part counts its bytes and a fixed cost (the
 * parser makes a Buffer of each chunk: a body of one-byte chunks would otherwise
 * hold a hundred times its size).
 */
const HELD_MAX = 64 * 1024;
const PART_COST = 256;

/** A request of the tunnel: its head, and its body as it comes. */
export class Incoming {
  private held: Buffer[] = [];
  private heldBytes = 0;
  private holding = false;
  private sink: ((b: Buffer) => void) | null = null;
  private onEnd: (() => void) | null = null;
  complete = false;

  /** `hold` and `release`: stop and restart reading the agent's bytes. */
  constructor(readonly head: Head, private readonly hold: () => void, private readonly release: () => void) {}

  push(b: Buffer): void {
    if (this.sink) return this.sink(b);
    this.held.push(b);
    this.heldBytes += b.length + PART_COST;
    if (this.heldBytes > HELD_MAX && !this.holding) {
      this.holding = true;
      this.hold();
    }
  }

  end(): void {
    this.complete = true;
    this.onEnd?.();
  }

  /** Takes the body: what arrived so far at once, then each part as it comes; `end` once it is whole. */
  read(sink: (b: Buffer) => void, end: () => void): void {
    this.sink = sink;
    this.onEnd = end;
    const held = this.held;
    this.held = [];
    this.heldBytes = 0;
    for (const b of held) sink(b);
    if (this.holding) {
      this.holding = false;
      this.release();
    }
    if (this.complete) end();
  }
}

export type Framing = 'none' | 'length' | 'chunked' | 'close';

/** How one answer goes back to the agent. */
export interface Responder {
  readonly started: boolean;
  /** The agent left before the answer was written. */
  onGone(cb: () => void): void;
  informational(status: number, headers: string[]): void;
  /** The head: status, raw headers (without framing), and whether the body keeps a Content-Length the headers carry. */
  head(status: number, headers: string[], hasLength: boolean): void;
  body(b: Buffer): boolean;
  /** Called once when the agent can take more after body() returned false. */
  onDrain(cb: () => void): void;
  end(): void;
  /** The proxy's own refusal (and the connection's end) when no head went out yet; else the connection is cut. */
  refuse(status: number, rule: string, text: string): void;
  /** Cuts the connection: an answer begun cannot end well. */
  cut(): void;
}

export interface TunnelEvents {
  /** A request's turn: answer it through the responder. */
  request(req: Incoming, res: Responder): void;
  /** An Upgrade or a CONNECT (never behind another request): the socket and the bytes after its head are the handler's. */
  upgrade(head: Head, socket: Duplex, rest: Buffer): void;
  busy(): void;
  idle(): void;
  /** A limit the agent reached on this connection (for the audit). */
  limit(rule: string): void;
}

const IDLE_MS = 5_000;

export class TunnelHttp {
  private readonly parser: Http1Parser;
  private readonly queue: Array<{ req: Incoming; res: Answer }> = [];
  private current: Incoming | null = null;
  /** Why the connection ends after the answers queued (a refused head's own answer), if it does. */
  private lastWords: string | null = null;
  private paused = 0;
  /** The head of a request that asks to switch protocols: the parser stops after it. */
  private switching: Head | null = null;
  /** The connection went to an upgrade's handler: it reads it from now on. */
  private handedOn = false;
  headSince = 0;
  idleSince = Date.now();

  private readonly onData = (d: Buffer) => this.feed(d);
  private readonly onEnd = () => this.abort();
  /** The request at the front arrived in this read: it starts once the whole read parsed cleanly. */
  private startPending = false;
  /** More requests came than may wait on one connection: what this read holds past them is dropped, and the connection ends. */
  private overflowed = false;

  /** Reads nothing until begin(). */
  constructor(readonly socket: Duplex, maxHeaderSize: number, private readonly on: TunnelEvents) {
    this.parser = new Http1Parser('request', maxHeaderSize, {
      head: (h) => {
        this.headSince = 0;
        // One read can hold thousands of pipelined heads, each parsed before the first is answered (found in review:
        // 64 KiB of them held 1.25 MB, per connection): past MAX_PIPELINED waiting, as on the plain-HTTP path, no more.
        if (this.overflowed || this.queue.length >= MAX_PIPELINED) {
          this.overflowed = true;
          this.current = null;
          return;
        }
        this.current = new Incoming(h, () => this.pause(), () => this.resume());
        if (h.upgrade) this.switching = h;
        else this.enqueue(this.current);
      },
      body: (b) => this.current?.push(b),
      done: () => {
        const c = this.current;
        this.current = null;
        c?.end();
      },
    });
    socket.on('data', this.onData);
    // The agent's end of file ends what it asked, as with Node's server (no half-open connections).
    socket.on('end', this.onEnd);
    socket.on('close', () => this.abort());
  }

  /** Starts with the bytes already read off the connection, then reads on. */
  begin(first: Buffer): void {
    if (first.length) this.feed(first);
    // Not when that read paused it (requests waiting their turn: resumed, the count of pauses would
    // never reach zero again, and nothing would pause it after) or handed it to an upgrade.
    if (this.paused === 0 && !this.handedOn) this.socket.resume();
  }

  /** Everything still asked is abandoned (its upstream requests cancelled), and the connection ends. */
  private abort(): void {
    this.parser.close();
    const queued = this.queue.splice(0);
    for (const q of queued) q.res.gone();
    if (!this.socket.destroyed) this.socket.end();
  }

  private feed(d: Buffer): void {
    if (this.lastWords !== null || this.parser.closed) return;
    this.idleSince = 0;
    if (this.current === null && this.headSince === 0) this.headSince = Date.now();
    const r = this.parser.execute(d);
    if (!r.ok) return this.fail(r.code);
    // Dispatched only now: a head the parser goes on to refuse (a Transfer-Encoding it
    // does not take) never reaches an upstream, as with Node's server.
    if (this.startPending) {
      this.startPending = false;
      this.start();
      // Answered at once with the connection's last words (a refusal): nothing read after it goes anywhere.
      if (this.parser.closed) return;
    }
    if (this.overflowed) {
      // As on the plain-HTTP path: what was asked is abandoned (its upstream requests cancelled), and the connection ends.
      this.on.limit(`more than ${MAX_PIPELINED} requests pipelined on one connection: it was closed`);
      return this.abort();
    }
    if (r.upgradeAt !== undefined && this.switching) {
      const h = this.switching;
      this.switching = null;
      this.current = null;
      this.headSince = 0;
      this.parser.close();
      this.socket.off('data', this.onData);
      this.socket.off('end', this.onEnd);
      // Behind another request a switch cannot be told from that request's body.
      if (this.queue.length > 0) return void this.socket.destroy();
      this.handedOn = true;
      this.socket.pause();
      this.on.upgrade(h, this.socket, d.subarray(r.upgradeAt));
    }
  }

  /**
   * Bytes the parser refused, or a head too slow: the answer (400, 431, 408)
   * and the end. A request cut off in its body is abandoned with its upstream
   * request; complete ones before it are answered first.
   */
  fail(code: string): void {
    const cut = this.current;
    const pending = this.startPending;
    this.current = null;
    this.startPending = false;
    this.parser.close();
    this.lastWords = parseFailure(code);
    // The request cut off (queued when its head came) goes; those complete before it are answered first.
    const i = this.queue.findIndex((q) => q.req === cut);
    if (i !== -1) for (const q of this.queue.splice(i)) q.res.gone();
    if (this.queue.length === 0) this.socket.end(this.lastWords);
    else if (pending) this.start();
  }

  private enqueue(req: Incoming): void {
    const res = new Answer(this, req);
    this.queue.push({ req, res });
    if (this.queue.length === 1) this.startPending = true;
    // A request waiting behind another: read no further until it is its turn.
    else this.pause();
  }

  private start(): void {
    const q = this.queue[0]!;
    this.on.busy();
    this.on.request(q.req, q.res);
  }

  pause(): void {
    if (this.paused++ === 0) this.socket.pause();
  }

  resume(): void {
    if (this.paused > 0 && --this.paused === 0) this.socket.resume();
  }

  /** The answer at the front was written: the next request's turn, or the end. */
  finished(closeAfter: boolean): void {
    this.queue.shift();
    this.on.idle();
    if (closeAfter) return this.abort();
    if (this.queue.length > 0) {
      this.resume();
      return this.start();
    }
    if (this.lastWords !== null) return void this.socket.end(this.lastWords);
    this.idleSince = Date.now();
  }

  /** The deadline sweep: a head begun too long ago gets 408; a connection idle too long closes. */
  sweep(now: number, headTimeoutMs: number): void {
    if (this.headSince !== 0 && now - this.headSince > headTimeoutMs && this.lastWords === null) {
      this.headSince = 0;
      this.fail('ERR_HTTP_REQUEST_TIMEOUT');
    } else if (this.idleSince !== 0 && now - this.idleSince > IDLE_MS && this.queue.length === 0) {
      this.socket.destroy();
    }
  }
}


/** One answer on the tunnel (a Responder). */
class Answer implements Responder {
  started = false;
  private framing: Framing = 'none';
  private done = false;
  /** What this turn wrote, not yet handed to the socket. */
  private pending: Buffer[] | null = null;
  /** This turn's body bytes of a chunked answer, framed as one chunk when the turn's bytes go out. */
  private chunk: Buffer[] = [];
  private chunkBytes = 0;
  private goneCb: (() => void) | null = null;
  private closeAfter: boolean;

  constructor(private readonly t: TunnelHttp, private readonly req: Incoming) {
    const h = req.head;
    this.closeAfter = !h.keepAlive;
  }

  private get out(): Duplex {
    return this.t.socket;
  }

  /**
   * What one read of the upstream produces (a head, its body, the end) goes
   * out as one write: one TLS record, one segment, one wake-up of the agent.
   * The bytes wait only for the end of the current task (a microtask), never
   * for later I/O. False when the agent cannot take more for now.
   */
  private write(b: Buffer): boolean {
    if (this.pending) this.pending.push(b);
    else {
      this.pending = [b];
      queueMicrotask(() => this.flush());
    }
    return !this.out.writableNeedDrain;
  }

  /** The turn's chunked body bytes into what goes out, as one chunk. */
  private frame(): void {
    if (this.chunkBytes === 0) return;
    this.pending ??= [];
    pushChunk(this.pending, this.chunk, this.chunkBytes);
    this.chunk = [];
    this.chunkBytes = 0;
  }

  private flush(): void {
    this.frame();
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    if (!this.out.destroyed) this.out.write(p.length === 1 ? p[0]! : Buffer.concat(p));
  }

  onGone(cb: () => void): void {
    this.goneCb = cb;
  }

  gone(): void {
    if (this.done) return;
    this.done = true;
    this.goneCb?.();
  }

  informational(status: number, headers: string[]): void {
    if (this.started || this.done) return;
    this.write(headBytes(`HTTP/1.1 ${status} ${reason(status)}`, headers));
  }

  head(status: number, headers: string[], hasLength: boolean): void {
    if (this.done) return;
    this.started = true;
    const h = this.req.head;
    const http10 = h.versionMajor === 1 && h.versionMinor === 0;
    const out = headers.slice();
    if (h.method === 'HEAD' || status === 204 || status === 304) this.framing = 'none';
    else if (hasLength) this.framing = 'length';
    else if (http10) {
      this.framing = 'close';
      this.closeAfter = true;
    } else {
      this.framing = 'chunked';
      out.push('Transfer-Encoding', 'chunked');
    }
    if (this.closeAfter) out.push('Connection', 'close');
    else if (http10) out.push('Connection', 'keep-alive');
    this.write(headBytes(`HTTP/1.1 ${status} ${reason(status)}`, out));
  }

  body(b: Buffer): boolean {
    if (this.done || b.length === 0 || this.framing === 'none') return true;
    if (this.framing !== 'chunked') return this.write(b);
    if (this.chunkBytes === 0 && !this.pending) queueMicrotask(() => this.flush());
    this.chunk.push(b);
    this.chunkBytes += b.length;
    return !this.out.writableNeedDrain;
  }

  onDrain(cb: () => void): void {
    this.out.once('drain', cb);
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    if (this.framing === 'chunked') {
      this.frame();
      this.write(LAST_CHUNK);
    }
    this.flush();
    // A body the agent has not finished sending cannot be told from the next request.
    this.t.finished(this.closeAfter || this.framing === 'close' || !this.req.complete);
  }

  refuse(status: number, rule: string, text: string): void {
    if (this.started) return this.cut();
    if (this.done) return;
    this.done = true;
    this.started = true;
    this.write(refusal(status, rule, text));
    this.flush();
    this.t.finished(true);
  }

  cut(): void {
    this.done = true;
    this.t.socket.destroy();
  }
}
