// A request body on its way upstream, scanned for the values of secrets not
// bound to its host (placeholders and real values alike), also across chunk
// boundaries: the tail that could start one is held back until the next chunk
// shows whether it does, so no complete value ever leaves. On a find the stream
// fails with the rule, and the caller refuses the request and cuts the upstream.
import { Transform, type TransformCallback } from 'node:stream';
import type { BodyNeedle } from './secrets.js';

export class BodyRefused extends Error {
  constructor(readonly rule: string, readonly suspect: string) {
    super(rule);
  }
}

export class BodyGuard extends Transform {
  private carry: Buffer = Buffer.alloc(0);
  private readonly keep: number;

  constructor(private readonly needles: BodyNeedle[]) {
    super();
    this.keep = Math.max(0, ...needles.map((n) => n.needle.length - 1));
  }

  private found(buf: Buffer): BodyRefused | null {
    for (const n of this.needles) if (n.needle.length > 0 && buf.includes(n.needle)) return new BodyRefused(n.rule, n.suspect);
    return null;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    const all = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    const hit = this.found(all);
    if (hit) return done(hit);
    const cut = Math.max(0, all.length - this.keep);
    this.carry = all.subarray(cut);
    done(null, all.subarray(0, cut));
  }

  override _flush(done: TransformCallback): void {
    const hit = this.found(this.carry);
    done(hit, hit ? undefined : this.carry);
  }
}

/**
 * Pipes the request body to the upstream request through a guard (straight
 * through when nothing needs looking for). A refusal cuts the upstream before
 * the value leaves, is audited, and answered with `respond` (a 403) if the
 * response has not started, else by cutting the agent's connection.
 */
export function guardBody(
  req: NodeJS.ReadableStream,
  up: NodeJS.WritableStream & { destroy(): void },
  res: { headersSent: boolean; destroy(): void },
  needles: BodyNeedle[],
  audit: (rule: string, suspect: string) => void,
  respond: (rule: string) => void,
): { refused: boolean } {
  const state = { refused: false };
  if (needles.length === 0) {
    req.pipe(up);
    return state;
  }
  const guard = new BodyGuard(needles);
  guard.on('error', (e) => {
    up.destroy();
    if (!(e instanceof BodyRefused)) return;
    state.refused = true;
    audit(e.rule, e.suspect);
    if (res.headersSent) res.destroy();
    else respond(e.rule);
  });
  req.pipe(guard).pipe(up);
  return state;
}
