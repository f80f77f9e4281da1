// HTTP/1.1 message parsing for the intercepting proxy: the parser Node's own
// HTTP server and client use (llhttp, strict: no lenient flag, so the same
// request-smuggling shapes are refused as by http.Server), driven directly,
// without IncomingMessage, ServerResponse or ClientRequest around it. Those
// cost the proxy more CPU per request than everything else it does
// (docs/benchmarks.md, bench/proxy-floor.mjs).
//
// The binding comes from `_http_common`, a module of Node's own that is not in
// its documented API: its shape is checked on load, and a Node that lacks it
// stops the proxy with a clear error rather than parsing anything differently.
import { createRequire } from 'node:module';

interface NativeParser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(data: Buffer): number | (Error & { code?: string; bytesParsed?: number });
  finish(): undefined | (Error & { code?: string });
  close(): void;
  [k: number]: unknown;
}

interface Binding {
  HTTPParser: { new (): NativeParser; REQUEST: number; RESPONSE: number; kOnMessageBegin: number; kOnHeaders: number; kOnHeadersComplete: number; kOnBody: number; kOnMessageComplete: number; kLenientNone: number };
  methods: string[];
}

function load(): Binding {
  const b = createRequire(import.meta.url)('_http_common') as Partial<Binding>;
  const P = b.HTTPParser;
  const ok = typeof P === 'function' && Array.isArray(b.methods) && P.kLenientNone === 0 &&
    [P.REQUEST, P.RESPONSE, P.kOnMessageBegin, P.kOnHeaders, P.kOnHeadersComplete, P.kOnBody, P.kOnMessageComplete].every((n) => typeof n === 'number') &&
    typeof P.prototype.execute === 'function' && typeof P.prototype.finish === 'function' && typeof P.prototype.initialize === 'function';
  if (!ok) throw new Error(`stashbase: this Node (${process.version}) has no usable HTTP parser binding (_http_common.HTTPParser); use Node 20 or 22`);
  return b as Binding;
}

const binding = load();
const { HTTPParser } = binding;

/** One message's head as the parser saw it. */
export interface Head {
  /** Request: the method; response: ''. */
  method: string;
  url: string;
  status: number;
  statusMessage: string;
  /** Raw name/value pairs, in order, latin1 strings. */
  headers: string[];
  versionMinor: number;
  versionMajor: number;
  /** llhttp's own word on the message: an Upgrade (or CONNECT) it would switch for. */
  upgrade: boolean;
  keepAlive: boolean;
}

export interface ParserEvents {
  /** The first byte of a message arrived (its head may come in later reads). */
  begin?(): void;
  /** The head is complete. Return true to say the message has no body (a response to HEAD). */
  head(h: Head): boolean | void;
  body(chunk: Buffer): void;
  done(): void;
}

export type ParseResult = { ok: true; upgradeAt?: number } | { ok: false; code: string };

/**
 * A parser of requests or responses on one connection. execute() takes the
 * bytes as they arrive; a message that asks to switch protocols stops the
 * parser, and upgradeAt says where its head ended in that chunk.
 */
export class Http1Parser {
  private readonly p: NativeParser;
  private pending: string[] = [];
  private pendingUrl = '';
  private upgrading = false;
  /** Inside execute() or finish(): the native parser must not be freed under itself. */
  private busy = false;
  closed = false;

  constructor(kind: 'request' | 'response', maxHeaderSize: number, on: ParserEvents) {
    const p = new HTTPParser();
    p.initialize(kind === 'request' ? HTTPParser.REQUEST : HTTPParser.RESPONSE, {}, maxHeaderSize, HTTPParser.kLenientNone);
    if (on.begin) {
      const begin = on.begin;
      p[HTTPParser.kOnMessageBegin] = () => {
        if (!this.closed) begin();
      };
    }
    // Heads of over 32 headers arrive in parts: Node's own server gathers them the same way.
    // Once closed (from a callback), the rest of the bytes in hand are nobody's.
    p[HTTPParser.kOnHeaders] = (headers: string[], url: string) => {
      if (this.closed) return;
      for (const h of headers) this.pending.push(h);
      this.pendingUrl += url;
    };
    p[HTTPParser.kOnHeadersComplete] = (versionMajor: number, versionMinor: number, headers: string[] | undefined, method: number | undefined, url: string | undefined, status: number, statusMessage: string | undefined, upgrade: boolean, keepAlive: boolean): number => {
      if (this.closed) return 1;
      const all = headers ?? this.pending;
      const whole = url ?? this.pendingUrl;
      this.pending = [];
      this.pendingUrl = '';
      const name = method === undefined ? '' : binding.methods[method] ?? '';
      this.upgrading = upgrade;
      const noBody = on.head({ method: name, url: whole, status, statusMessage: statusMessage ?? '', headers: all, versionMajor, versionMinor, upgrade, keepAlive });
      // 2: no body, and the parser stops here for the switch; 1: no body (HEAD).
      return upgrade ? 2 : noBody ? 1 : 0;
    };
    p[HTTPParser.kOnBody] = (b: Buffer) => {
      if (!this.closed) on.body(b);
    };
    // A chunked body's trailer fields come through kOnHeaders too: they are dropped
    // here, never gathered into the next message's head (nor passed on: Node's own
    // proxying drops them the same way).
    p[HTTPParser.kOnMessageComplete] = () => {
      this.pending = [];
      this.pendingUrl = '';
      if (!this.closed) on.done();
    };
    this.p = p;
  }

  execute(data: Buffer): ParseResult {
    if (this.closed) return { ok: true };
    this.busy = true;
    let r: ReturnType<NativeParser['execute']>;
    try {
      r = this.p.execute(data);
    } finally {
      this.busy = false;
      if (this.closed) this.p.close();
    }
    if (this.closed) return { ok: true };
    if (typeof r !== 'number') return { ok: false, code: r.code ?? 'HPE_ERROR' };
    if (this.upgrading) {
      this.upgrading = false;
      return { ok: true, upgradeAt: r };
    }
    return { ok: true };
  }

  /** The connection ended: completes a body delimited by the close, or says the message was cut short. */
  finish(): ParseResult {
    if (this.closed) return { ok: true };
    this.busy = true;
    let r: ReturnType<NativeParser['finish']>;
    try {
      r = this.p.finish();
    } finally {
      this.busy = false;
      if (this.closed) this.p.close();
    }
    if (this.closed) return { ok: true };
    return r ? { ok: false, code: r.code ?? 'HPE_ERROR' } : { ok: true };
  }

  /** Frees the parser; called from one of its own callbacks, once execute() returns. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.busy) this.p.close();
  }
}
