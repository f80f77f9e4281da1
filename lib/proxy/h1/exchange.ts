// One intercepted request on its way upstream and its answer on the way back:
// the checked head is written to a pooled upstream connection, the body
// follows through the guard against secrets not bound to the host (framed as
// the agent framed it: Content-Length kept, chunked re-encoded), and the
// response is scrubbed (lib/proxy/forward-response.ts's plan) and written to
// the agent. An agent that leaves cancels the request, freeing its place in
// the pool; an upstream that fails or stops short reaches the agent at once.
import type { Head } from './parser.js';
import type { UpstreamPool, Waiter } from './pool.js';
import type { Incoming, Responder } from './tunnel.js';
import type { UpstreamConn } from './upstream.js';
import { EMPTY, headBytes, LAST_CHUNK, pushChunk, rawValue } from './wire.js';
import { BodyRelay, planBody, type ResponseScrub } from '../forward-response.js';
import { BodyRefused, Guard, type MessageFilter, ReleaseTimer } from '../message-filter.js';
import type { BodyNeedle } from '../secrets.js';

export interface ExchangeAudit {
  /** The response was passed on whole. */
  allowed(status: number, bytes: number): void;
  /** The response stopped short after its head went to the agent. */
  short(status: number, bytes: number, e: Error & { code?: string }): void;
  /** The upstream failed before answering; returns the rule the refusal names. */
  failed(e: Error & { code?: string }): string;
  /** The agent left before the answer was whole (status 0: before its head). */
  abandoned(status: number, bytes: number): void;
  /** The body carried a value it may not; the request was cut. */
  refusedBody(rule: string, suspect: string): void;
  /** The answer cannot be scrubbed (an encoding nobody decodes). */
  refusedAnswer(rule: string): void;
}

export interface ExchangeInput {
  req: Incoming;
  res: Responder;
  /** The checked path and headers (raw pairs) to send, framing excepted. */
  path: string;
  headers: string[];
  pool: UpstreamPool<UpstreamConn>;
  key: string;
  create: () => UpstreamConn;
  needles: BodyNeedle[];
  scrub: ResponseScrub;
  /** Stop and restart reading the agent's bytes (an upstream that cannot take more). */
  holdAgent(): void;
  releaseAgent(): void;
  audit: ExchangeAudit;
  /** The text of a refusal, for its rule. */
  refusalText(rule: string): string;
  /** The request's body, read already (an MCP request, decided whole): sent instead of reading the agent. */
  body?: Buffer;
  /** A filter of the answer's body after the scrubbing, by the answer's headers (lib/mcp/answer-filter.ts). */
  answer?: (rawHeaders: string[]) => MessageFilter | null;
}

/** The agent's Content-Length as the number it is (no leading zeros: an upstream might read those otherwise). */
function withLength(headers: string[]): string[] {
  for (let i = 0; i < headers.length; i += 2) {
    const v = headers[i + 1]!;
    if (headers[i]!.length === 14 && headers[i]!.toLowerCase() === 'content-length' && v.length > 1 && v.startsWith('0')) {
      const out = headers.slice();
      out[i + 1] = v.replace(/^0+(?=\d)/, '');
      return out;
    }
  }
  return headers;
}

export function exchange(x: ExchangeInput): void {
  const { req, res } = x;
  const h = req.head;
  const length = rawValue(h.headers, 'content-length');
  const chunked = length === undefined && rawValue(h.headers, 'transfer-encoding') !== undefined;
  const expect = rawValue(h.headers, 'expect') !== undefined;
  let continued = false;
  const guard = x.needles.length > 0 ? new Guard(x.needles) : null;
  /** The guard's window goes upstream when the agent pauses (lib/proxy/message-filter.ts). */
  const timer = guard
    ? new ReleaseTimer(() => guard, (b) => {
      write(b);
      flush();
    }, (e) => refuse(e))
    : null;
  let conn: UpstreamConn | null = null;
  let waiter: Waiter | null = null;
  let over = false;
  let sent = false;
  let status = 0;
  let relay: BodyRelay | null = null;
  /** The upstream connection is paused until the agent takes more: it cannot serve another request as it is. */
  let paused = false;

  /** The agent is not being read until the upstream drains (this request's hold). */
  let holding = false;
  const settle = () => {
    over = true;
    if (holding) {
      holding = false;
      x.releaseAgent();
    }
  };
  const stop = () => {
    settle();
    timer?.stop();
    waiter?.cancel();
    relay?.abort();
    conn?.socket.destroy();
  };
  res.onGone(() => {
    if (over) return;
    stop();
    // A value among the bytes the guard held unread when the agent went (review, round 38): refused, and audited so.
    const found = guard?.abandon() ?? null;
    if (found !== null) x.audit.refusedBody(found.rule, found.suspect);
    else x.audit.abandoned(status, relay?.bytes ?? 0);
  });

  /** A value of a secret not bound to the host in the body: nothing more goes, and the agent gets a 403. */
  function refuse(e: BodyRefused): void {
    // Once (review, round 38: a response already begun is cut, and the rest of the agent's read, parsed still,
    // refused each chunk again: one request audited 131 times).
    if (over) return;
    stop();
    x.audit.refusedBody(e.rule, e.suspect);
    res.refuse(403, e.rule, x.refusalText(e.rule));
  }

  const guarded = (b: Buffer, last: boolean): Buffer | null => {
    if (!guard) return b;
    if (over) return null;
    try {
      const out = guard.push(b);
      if (last) {
        timer?.stop();
        return Buffer.concat([out, guard.end()]);
      }
      timer?.touch();
      return out;
    } catch (e) {
      if (!(e instanceof BodyRefused)) throw e;
      refuse(e);
      return null;
    }
  };

  // The head goes at once, whatever the body holds: sent with the first body
  // bytes past the guard, it told by its timing whether those bytes could
  // begin a secret (an upstream that answers after the head, as a 401 does,
  // was an oracle). The guard's window goes on its timer. What one read of the
  // agent produces goes upstream as one write, at the end of the task, its body
  // bytes framed there as one chunk (a body of one-byte chunks is neither a
  // write nor a chunk per byte).
  let head: Buffer | null = null;
  let out: { head: Buffer | null; body: Buffer[]; bytes: number; last: boolean } | null = null;
  const flush = () => {
    const c = conn;
    const o = out;
    out = null;
    if (!o || !c || over) return;
    const parts: Buffer[] = o.head ? [o.head] : [];
    if (chunked) pushChunk(parts, o.body, o.bytes);
    else for (const b of o.body) parts.push(b);
    if (o.last) parts.push(LAST_CHUNK);
    if (parts.length === 0) return;
    if (!c.socket.write(parts.length === 1 ? parts[0]! : Buffer.concat(parts)) && !holding) {
      holding = true;
      x.holdAgent();
      c.socket.once('drain', () => {
        if (!holding) return;
        holding = false;
        x.releaseAgent();
      });
    }
  };
  /** What this task sends: made at its first piece, written at the end of the task (or at once by flush()). */
  const pending = () => {
    if (!out) {
      out = { head: null, body: [], bytes: 0, last: false };
      queueMicrotask(flush);
    }
    return out;
  };
  /** Body bytes; `force` sends a head still waiting even with no bytes. */
  const write = (b: Buffer, force = false): void => {
    if (over || !conn) return;
    if (b.length === 0 && !(force && head !== null)) return;
    const o = pending();
    if (head !== null) {
      o.head = head;
      head = null;
    }
    if (b.length > 0) {
      o.body.push(b);
      o.bytes += b.length;
    }
  };

  const onHead = (r: Head): boolean => {
    if (over) return true;
    if (r.status < 200) {
      // One per request: an upstream that streams 100s without end gets the first passed on, the rest dropped
      // (written regardless of the agent's reading, they would pile up in memory).
      if (r.status === 100 && expect && !continued) {
        continued = true;
        res.informational(100, []);
      }
      return true;
    }
    status = r.status;
    const plan = planBody({ rawHeaders: r.headers }, x.scrub, x.answer);
    if ('refused' in plan) {
      stop();
      x.audit.refusedAnswer(plan.refused);
      res.refuse(502, plan.refused, `stashbase proxy: ${plan.refused}\n`);
      return true;
    }
    const hasLength = rawValue(plan.headers, 'content-length') !== undefined;
    res.head(r.status, plan.headers, hasLength);
    relay = new BodyRelay(plan, (b) => res.body(b), (cb) => res.onDrain(cb), (e) => {
      stop();
      x.audit.short(status, relay?.bytes ?? 0, e);
      res.cut();
    });
    return h.method === 'HEAD';
  };

  const sink = {
    head: onHead,
    body: (b: Buffer) => {
      const c = conn;
      if (over || !relay || !c) return;
      const resume = () => {
        paused = false;
        if (conn === c) (c.socket as { resume(): void }).resume();
      };
      if (!relay.push(b, resume)) {
        paused = true;
        (c.socket as { pause(): void }).pause();
      }
    },
    done: () => {
      if (over || !relay) return;
      const r = relay;
      r.finish(() => {
        if (over) return;
        settle();
        // The answer first: the audit line is made while the agent reads it.
        res.end();
        x.audit.allowed(status, r.bytes);
      });
    },
    broken: (e: Error & { code?: string }) => {
      if (over) return;
      const began = res.started;
      stop();
      if (began) {
        x.audit.short(status, relay?.bytes ?? 0, e);
        res.cut();
      } else {
        const rule = x.audit.failed(e);
        res.refuse(502, rule, `stashbase proxy: ${rule}\n`);
      }
    },
  };

  waiter = x.pool.acquire(x.key, x.create, (c) => {
    waiter = null;
    if (over) return void x.pool.release(x.key, c);
    conn = c;
    c.serve(sink, () => {
      // Past here the connection may serve another request: nothing of this one touches it.
      conn = null;
      // Reused only when the agent's whole request went out (else its rest would be
      // read as the next one) and nothing holds it paused.
      if (sent && !paused) x.pool.release(x.key, c);
      else c.socket.destroy();
    });
    const headers = withLength(x.headers);
    head = headBytes(`${h.method} ${x.path} HTTP/1.1`, chunked ? [...headers, 'Transfer-Encoding', 'chunked'] : headers);
    write(EMPTY, true);
    const read = x.body === undefined ? (sink: (b: Buffer) => void, end: () => void) => req.read(sink, end) : (sink: (b: Buffer) => void, end: () => void) => {
      if (x.body!.length > 0) sink(x.body!);
      end();
    };
    read(
      (b) => {
        const out = guarded(b, false);
        if (out) write(out);
      },
      () => {
        const rest = guarded(EMPTY, true);
        if (rest === null) return;
        write(rest);
        write(EMPTY, true);
        if (chunked && !over) pending().last = true;
        sent = true;
        // The request is whole: it goes now, not at the end of the task.
        flush();
      },
    );
  });
}
