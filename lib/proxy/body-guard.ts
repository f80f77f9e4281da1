// A request body on its way upstream, scanned for the values of secrets not
// bound to its host (placeholders and real values alike), also across chunk
// boundaries (lib/proxy/message-filter.ts Guard): no complete value ever
// leaves, and how long its bytes wait never depends on them. On a find
// the stream fails with the rule, and the caller refuses the request and cuts
// the upstream.
import { BodyRefused, Guard } from './message-filter.js';
import { FilterStream } from './scrub-stream.js';
import type { BodyNeedle } from './secrets.js';

export { BodyRefused };

export class BodyGuard extends FilterStream {
  constructor(needles: BodyNeedle[]) {
    super(new Guard(needles));
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
  // The agent gone before its body's end: a value among the bytes the guard held unread is refused and audited
  // all the same (review, round 38).
  req.once('close', () => {
    if ((req as { complete?: boolean }).complete === false) {
      const found = guard.abandon();
      if (found !== null) guard.destroy(found);
    }
  });
  req.pipe(guard).pipe(up);
  return state;
}
