// An upstream's answer on its way to the agent. Headers lose the hop-by-hop
// ones and have every form of a real secret value scrubbed. The body:
//   - from a host a secret is bound to, every byte is scrubbed, holding back
//     only what could still begin a value; a compressed body (sent although
//     the proxy asked for identity) is decoded, scrubbed and passed on plain,
//     and an encoding that cannot be decoded is refused;
//   - from any other host nothing is held back: each chunk as it arrives has
//     complete values replaced, where that keeps its length.
// Content-Length is kept whenever the body keeps its size. An upstream that
// stops short ends the agent's response with an error, not a hang; an agent
// that leaves cancels the upstream request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline, type Readable, Transform, type TransformCallback } from 'node:stream';
import { constants, createBrotliDecompress, createUnzip } from 'node:zlib';
import { HOP_BY_HOP } from './http-util.js';
import { lengthPreserving, type ScrubPair, scrubBuffer, scrubText } from './scrub.js';
import { ScrubStream } from './scrub-stream.js';

export interface ResponseScrub {
  pairs: ScrubPair[];
  /** A secret is bound to this host: full scrubbing. */
  bound: boolean;
}

/** The response's headers to pass on (raw pairs): no hop-by-hop, none the Connection header names, values scrubbed. */
export function passHeaders(raw: string[], pairs: ScrubPair[], drop: ReadonlySet<string> = new Set()): string[] {
  const named = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === 'connection') for (const t of raw[i + 1]!.split(',')) named.add(t.trim().toLowerCase());
  }
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (HOP_BY_HOP.has(name) || named.has(name) || drop.has(name)) continue;
    out.push(raw[i]!, scrubText(raw[i + 1]!, pairs));
  }
  return out;
}

/** Replaces complete values in each chunk alone: nothing is held back. */
class ChunkScrub extends Transform {
  constructor(private readonly pairs: ScrubPair[]) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    done(null, scrubBuffer(chunk, this.pairs));
  }
}

export type BodyPlan = { refused: string } | { stream: Readable; headers: string[]; transforms: Transform[] };

/** How the body will be passed on: the transforms, and the headers that describe it. */
export function planBody(up: IncomingMessage, scrub: ResponseScrub): BodyPlan {
  const encoding = (up.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  const pairs = scrub.pairs;
  if (!scrub.bound || pairs.length === 0) {
    // Nothing held back: a compressed body passes as it is.
    const light = pairs.length > 0 && encoding === 'identity' && lengthPreserving(pairs);
    return { stream: up, headers: passHeaders(up.rawHeaders, pairs), transforms: light ? [new ChunkScrub(pairs)] : [] };
  }
  const transforms: Transform[] = [];
  const drop = new Set<string>();
  if (encoding !== 'identity' && encoding !== '') {
    const flush = { finishFlush: constants.Z_SYNC_FLUSH };
    if (encoding === 'gzip' || encoding === 'x-gzip' || encoding === 'deflate') transforms.push(createUnzip(flush));
    else if (encoding === 'br') transforms.push(createBrotliDecompress({ finishFlush: constants.BROTLI_OPERATION_FLUSH }));
    else return { refused: `the upstream sent a body in content-encoding ${JSON.stringify(encoding)}, which the proxy cannot scrub` };
    drop.add('content-encoding').add('content-length');
  }
  if (!lengthPreserving(pairs)) drop.add('content-length');
  transforms.push(new ScrubStream(pairs));
  return { stream: up, headers: passHeaders(up.rawHeaders, pairs, drop), transforms };
}

/**
 * Writes an upstream response to the agent's response. `done` is called once,
 * with the bytes passed on, or an error when either side failed first.
 */
export function forwardResponse(up: IncomingMessage, res: ServerResponse, plan: Exclude<BodyPlan, { refused: string }>, done: (bytes: number, error?: Error) => void): void {
  res.writeHead(up.statusCode ?? 502, up.statusMessage, plan.headers);
  let bytes = 0;
  let wrote = false;
  const count = new Transform({
    transform(chunk: Buffer, _e, cb) {
      bytes += chunk.length;
      wrote = true;
      cb(null, chunk);
    },
  });
  // An event stream's head goes out at once, not with its first event.
  setImmediate(() => {
    if (!wrote && !res.writableEnded && !res.destroyed) res.flushHeaders();
  });
  pipeline([plan.stream, ...plan.transforms, count, res] as unknown as [Readable, ...Transform[], ServerResponse], (err) => {
    if (err) {
      // Cut both: an upstream that stopped short must not look complete to the agent.
      up.destroy();
      res.destroy();
    }
    done(bytes, err ?? undefined);
  });
}
