// Pieces both proxy paths (plain HTTP and intercepted tunnels) share.
import type { ServerResponse } from 'node:http';

/** Headers that describe one connection, never forwarded across the proxy. */
export const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/**
 * Dropped from requests in a run with secrets: scrubbing is per message, so an answer compressed
 * or cut to a byte range (a stored value read back in two ranges, each holding part of it) would
 * carry what no message shows whole. Identity is asked for; without Range the whole body comes.
 */
export const WHOLE_ANSWERS: ReadonlySet<string> = new Set(['accept-encoding', 'range', 'if-range']);

/** The request's headers without the hop-by-hop ones (and any in `drop`), as raw pairs; `keep` wins. */
export function forwardable(rawHeaders: string[], keep: ReadonlySet<string> = new Set(), drop: ReadonlySet<string> = new Set()): string[] {
  const out: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] as string).toLowerCase();
    if (keep.has(name) || (!HOP_BY_HOP.has(name) && !drop.has(name))) out.push(rawHeaders[i] as string, rawHeaders[i + 1] as string);
  }
  return out;
}

/** A refusal: the status, the rule in X-Stashbase-Denied and the body, then close. */
export function refuseHttp(res: ServerResponse, status: number, rule: string, body: string): void {
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'X-Stashbase-Denied': rule.replace(/[^\x20-\x7e]/g, '?'),
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  res.end(body);
}

/**
 * The request's headers with its Host written as the proxy judged it (the target's normal name, its port where not the
 * scheme's own), whatever the agent spelled (review, round 36: `bound.te\xADst` normalised to the target and went
 * upstream as sent, with the real credential; a front that routes a name it does not know to its default site would
 * have handed the secret to another application). Called after hostHeaderProblem passed: one Host at most.
 */
export function withCanonicalHost(rawHeaders: string[], targetHost: string, targetPort: number, tls: boolean): string[] {
  const out = rawHeaders.slice();
  for (let i = 0; i < out.length; i += 2) {
    if (out[i]!.toLowerCase() === 'host') out[i + 1] = targetPort === (tls ? 443 : 80) ? targetHost : `${targetHost}:${targetPort}`;
  }
  return out;
}
