// An upstream's answer on its way to the agent. Headers lose the hop-by-hop
// ones and have every form of a real secret value scrubbed. In a run with
// secrets, from every host (a bound service can serve what it stored under
// another allowed name: an alias, a CDN, a second mapped name), every byte of
// the body is scrubbed, the fixed window held for a few milliseconds
// (lib/proxy/message-filter.ts); a compressed body (sent although the proxy
// asked for identity) is decoded, scrubbed and passed on plain, and an
// encoding that cannot be decoded is refused. In a run without secrets the
// body passes as it is.
// Content-Length is kept whenever the body keeps its size. An upstream that
// stops short ends the agent's response with an error, not a hang; an agent
// that leaves cancels the upstream request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Transform, Writable } from 'node:stream';
import { constants, createBrotliDecompress, createUnzip } from 'node:zlib';
import { HOP_BY_HOP } from './http-util.js';
import { rawJoined, reason } from './h1/wire.js';
import { type ScrubPair, Scrubber, scrubText } from './scrub.js';
import { chain, type MessageFilter, ReleaseTimer } from './message-filter.js';

export interface ResponseScrub {
  pairs: ScrubPair[];
}

const NO_NAMES: ReadonlySet<string> = new Set();

/** The response's headers to pass on (raw pairs): no hop-by-hop, none the Connection header names, names and values scrubbed (a name may be any token: a key is one). */
export function passHeaders(raw: string[], pairs: ScrubPair[], drop: ReadonlySet<string> = NO_NAMES): string[] {
  let named: Set<string> | null = null;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length === 10 && raw[i]!.toLowerCase() === 'connection') for (const t of raw[i + 1]!.split(',')) (named ??= new Set()).add(t.trim().toLowerCase());
  }
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (HOP_BY_HOP.has(name) || named?.has(name) || drop.has(name)) continue;
    out.push(scrubText(raw[i]!, pairs), scrubText(raw[i + 1]!, pairs));
  }
  return out;
}

export type BodyPlan = { refused: string } | { headers: string[]; decoder: Transform | null; filter: MessageFilter | null };
export type Plan = Exclude<BodyPlan, { refused: string }>;

/**
 * Codings the proxy names when it refuses one (IANA's registry). Any other
 * value an upstream sends is not repeated in the proxy's own words: those are
 * not scrubbed, and a bound host can echo a secret's value into a header.
 */
const REGISTERED_CODINGS: ReadonlySet<string> = new Set(['aes128gcm', 'br', 'chunked', 'compress', 'dcb', 'dcz', 'deflate', 'exi', 'gzip', 'identity', 'pack200-gzip', 'trailers', 'x-compress', 'x-gzip', 'zstd']);

/** `value` (lower-case codings) quoted when each of its codings is a registered one, else `unknown`. */
function codingNamed(value: string, unknown: string): string {
  return value.split(',').every((c) => REGISTERED_CODINGS.has(c.trim())) ? JSON.stringify(value) : unknown;
}

/** How the body will be passed on: the decoder and filter, and the headers that describe it. `answer` adds a filter of its own between two scrubbings (an MCP server's answers: lib/mcp/answer-filter.ts). */
export function planBody(up: { rawHeaders: string[] }, scrub: ResponseScrub, answer?: (rawHeaders: string[]) => MessageFilter | null): BodyPlan {
  // A transfer-coding other than chunked (never asked for: the proxy sends no TE) would reach the agent still coded, unscrubbed.
  const transfer = rawJoined(up.rawHeaders, 'transfer-encoding')?.trim().toLowerCase();
  if (transfer !== undefined && transfer !== 'chunked') {
    return { refused: `the upstream sent a body in transfer-encoding ${codingNamed(transfer, 'with a coding the proxy does not know')}, which the proxy does not pass on` };
  }
  // Every Content-Encoding value ("gzip, br" when there are two): each must be undone.
  const encoding = (rawJoined(up.rawHeaders, 'content-encoding') ?? 'identity').trim().toLowerCase();
  const pairs = scrub.pairs;
  const extra = answer?.(up.rawHeaders) ?? null;
  // No secret in the run and nothing else to read: nothing to look for.
  if (pairs.length === 0 && extra === null) return { headers: passHeaders(up.rawHeaders, pairs), decoder: null, filter: null };
  let decoder: Transform | null = null;
  const drop = new Set<string>();
  if (encoding !== 'identity' && encoding !== '') {
    const flush = { finishFlush: constants.Z_SYNC_FLUSH };
    if (encoding === 'gzip' || encoding === 'x-gzip' || encoding === 'deflate') decoder = createUnzip(flush);
    else if (encoding === 'br') decoder = createBrotliDecompress({ finishFlush: constants.BROTLI_OPERATION_FLUSH });
    else return { refused: `the upstream sent a body in content-encoding ${codingNamed(encoding, 'the proxy does not know')}, which the proxy cannot ${pairs.length > 0 ? 'scrub' : 'read'}` };
    drop.add('content-encoding').add('content-length');
  }
  // A scrubbed body goes on without its length, whatever it holds: whether its size could change told whether a
  // secret has bytes percent-encoding escapes (found in review), and whether it did change, where a value was.
  if (extra !== null || pairs.length > 0) drop.add('content-length');
  const scrubber = pairs.length > 0 ? new Scrubber(pairs) : null;
  // Scrubbed on both sides of another filter: one that parses and writes the message anew (the MCP answers' JSON)
  // turns an escaped form the scrubber does not know (`\/`, `\u002b`) into the raw value (review, round 35), and may
  // escape a raw one it was given.
  const filter = scrubber && extra ? chain(chain(scrubber, extra), new Scrubber(pairs)) : (scrubber ?? extra);
  return { headers: passHeaders(up.rawHeaders, pairs, drop), decoder, filter };
}

/**
 * Passes an upstream body to `sink` through the plan, with backpressure, and
 * ends `sink` with it. `done` is called once, with the bytes passed on, or an
 * error when either side failed first; then both are cut, so that a body that
 * stopped short never looks complete to the agent. (Plain events, no
 * pipeline: this runs for every response, and a pipeline's abort signal and
 * stream wrappers cost more than the rest of it.)
 */
export function forwardBody(up: IncomingMessage, plan: Plan, sink: Writable, done: (bytes: number, error?: Error) => void, onFirst?: () => void): void {
  let over = false;
  const finish = (err?: Error) => {
    if (over) return;
    over = true;
    if (err) {
      relay.abort();
      up.destroy();
      sink.destroy();
    }
    done(relay.bytes, err);
  };
  // What one turn of the event loop passes on goes out as one write (a body and
  // the chunked end that follows it at once: one segment, one wake-up of the
  // agent, not two); ending the response uncorks it, as does the next turn.
  let corked = false;
  const write = (b: Buffer): boolean => {
    if (relay.bytes === b.length) onFirst?.();
    if (!corked) {
      corked = true;
      sink.cork();
      setImmediate(() => {
        corked = false;
        if (!sink.writableEnded && !sink.destroyed) sink.uncork();
      });
    }
    return sink.write(b);
  };
  // The same passage (decoding, scrubbing, backpressure) as the intercepting proxy's own HTTP/1.1.
  const relay: BodyRelay = new BodyRelay(plan, write, (cb) => sink.once('drain', cb), (e) => finish(e));
  up.on('data', (chunk: Buffer) => {
    if (!relay.push(chunk, () => up.resume())) up.pause();
  });
  up.on('end', () =>
    relay.finish(() => {
      sink.end();
      finish();
    }),
  );
  up.on('error', (e: Error) => finish(e));
  up.on('close', () => {
    if (!up.complete) finish(new Error('the upstream closed before the end of its response'));
  });
  sink.on('close', () => {
    if (!sink.writableFinished) finish(new Error('the agent went away'));
  });
}

/** Writes an upstream response to the agent's response (forwardBody's `done`). */
export function forwardResponse(up: IncomingMessage, res: ServerResponse, plan: Plan, done: (bytes: number, error?: Error) => void): void {
  // The standard reason phrase, never the upstream's: it is text the headers' scrubbing does not see.
  const status = up.statusCode ?? 502;
  res.writeHead(status, reason(status), plan.headers);
  let wrote = false;
  // An event stream's head goes out at once, not with its first event.
  setImmediate(() => {
    if (!wrote && !res.writableEnded && !res.destroyed) res.flushHeaders();
  });
  forwardBody(up, plan, res, done, () => (wrote = true));
}

/**
 * The same passage as forwardBody, fed by a parser instead of a stream (the
 * intercepting proxy's own HTTP/1.1, lib/proxy/h1/): push() each part as it
 * comes, finish() at its end. `out` returns false when the agent cannot take
 * more; push() then returns false, and `resume` is called once it can.
 */
export class BodyRelay {
  bytes = 0;
  private ended: (() => void) | null = null;
  private failed = false;
  /** Lets the filter's window go when the upstream pauses (lib/proxy/message-filter.ts). */
  private readonly timer: ReleaseTimer | null;

  constructor(private readonly plan: Plan, private readonly out: (b: Buffer) => boolean, private readonly onDrain: (cb: () => void) => void, private readonly fail: (e: Error) => void) {
    const filter: MessageFilter | null = plan.filter;
    this.timer = filter ? new ReleaseTimer(() => filter, (b) => void this.send(b)) : null;
    const d = plan.decoder;
    if (!d) return;
    d.on('data', (chunk: Buffer) => {
      if (!this.send(this.filtered(chunk))) {
        d.pause();
        this.onDrain(() => d.resume());
      }
    });
    d.on('end', () => this.close());
    d.on('error', (e: Error) => {
      this.failed = true;
      this.fail(e);
    });
  }

  private send(b: Buffer): boolean {
    if (b.length === 0 || this.failed) return true;
    this.bytes += b.length;
    return this.out(b);
  }

  /** A chunk through the filter, the window's timer touched. */
  private filtered(chunk: Buffer): Buffer {
    const f = this.plan.filter;
    if (!f) return chunk;
    const out = f.push(chunk);
    this.timer?.touch();
    return out;
  }

  /** One part of the upstream body; false: wait for `resume` before the next. */
  push(chunk: Buffer, resume: () => void): boolean {
    if (this.failed) return true;
    const d = this.plan.decoder;
    if (d) {
      if (d.write(chunk)) return true;
      d.once('drain', resume);
      return false;
    }
    if (this.send(this.filtered(chunk))) return true;
    this.onDrain(resume);
    return false;
  }

  /** The upstream body is whole: `ended` once the last byte went to the agent. */
  finish(ended: () => void): void {
    this.ended = ended;
    if (this.plan.decoder) this.plan.decoder.end();
    else this.close();
  }

  private close(): void {
    this.timer?.stop();
    if (this.failed) return;
    const rest = this.plan.filter?.end();
    if (rest && rest.length > 0) this.send(rest);
    this.ended?.();
  }

  /** The upstream failed: stop decoding. */
  abort(): void {
    this.failed = true;
    this.timer?.stop();
    this.plan.decoder?.destroy();
  }
}
