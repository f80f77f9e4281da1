// An Upgrade request inside an intercepted tunnel, after the checks every
// request gets. What comes back is never a raw pipe:
//   - a WebSocket (the only upgrade allowed by default) is offered without
//     extensions; once the upstream switches, every frame both ways is parsed
//     (lib/proxy/ws-frames.ts): the agent's messages are guarded against the
//     values of secrets not bound to the host, the upstream's are scrubbed;
//   - another protocol goes through only where network.allow_upgrades names
//     it, then as bytes scrubbed toward the agent and guarded toward the upstream;
//     where it is not named the request goes on without its Upgrade header;
//   - an upstream that does not switch (any answer but 101) has its answer
//     scrubbed and passed back, and the connection is closed: nothing the
//     agent sends later on it can reach the upstream unchecked.
import type { ClientRequest } from 'node:http';
import { pipeline, type Duplex, type Transform } from 'node:stream';
import { BodyGuard } from './body-guard.js';
import { type BodyPlan, forwardBody, passHeaders, planBody, type ResponseScrub } from './forward-response.js';
import { BodyRefused, Guard, PASS } from './message-filter.js';
import { Scrubber, scrubBuffer } from './scrub.js';
import { ScrubStream } from './scrub-stream.js';
import type { BodyNeedle } from './secrets.js';
import { FrameRelay } from './ws-frames.js';
import { headBytes, reason } from './h1/wire.js';
import { linger } from './limits.js';

export interface UpgradeInput {
  /** The request's method and headers (repeated ones joined). */
  req: { method: string; headers: Record<string, string | undefined> };
  socket: Duplex;
  head: Buffer;
  /** The checked and rewritten request headers (raw pairs, with Connection and Upgrade) and path. */
  headers: string[];
  path: string;
  /** Sends a request to the checked upstream, on a connection of its own. */
  dial: (method: string, path: string, headers: string[]) => ClientRequest;
  scrub: ResponseScrub;
  /** What the agent's bytes may not carry toward this host. */
  needles: BodyNeedle[];
  /** Upgrades other than websocket that the profile allows (network.allow_upgrades). */
  allowed: string[];
  /** Called once, with the upstream's status, or with an error (and its code) or a refusal. */
  /** `suspect`: the secret whose real value a message carried toward a host it is not bound to. */
  audit: (outcome: { status?: number; error?: string; code?: string; refused?: string; suspect?: string; upgrade: string }) => void;
}

/** A head of the proxy's writing; the reason phrase is the standard one (lib/proxy/h1/wire.ts says why). */
function writeHead(socket: Duplex, status: number, headers: string[]): void {
  socket.write(headBytes(`HTTP/1.1 ${status} ${reason(status)}`, headers));
}

/** The proxy's refusal of an upgrade, the connection's last words: the rule in X-Stashbase-Denied, a text body. */
export function refuseUpgrade(socket: Duplex, status: number, rule: string, body = `stashbase proxy: ${rule}\n`): void {
  writeHead(socket, status, [
    'X-Stashbase-Denied', rule.replace(/[^\x20-\x7e]/g, '?'),
    'Content-Type', 'text/plain; charset=utf-8',
    'Content-Length', String(Buffer.byteLength(body)),
    'Connection', 'close',
  ]);
  socket.end(body);
  linger(socket);
}

function without(headers: string[], names: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < headers.length; i += 2) if (!names.has(headers[i]!.toLowerCase())) out.push(headers[i]!, headers[i + 1]!);
  return out;
}

/** A whole payload checked at once; throws BodyRefused. */
function guardWhole(p: Buffer, needles: BodyNeedle[]): Buffer {
  const g = new Guard(needles);
  return Buffer.concat([g.push(p), g.end()]);
}

export function handleUpgrade(u: UpgradeInput): void {
  const { req, socket } = u;
  const protocol = String(req.headers.upgrade ?? '').trim().toLowerCase();
  const websocket = protocol === 'websocket';
  const permitted = websocket || u.allowed.includes(protocol);
  let finished = false;
  const outcome = (o: { status?: number; error?: string; code?: string; refused?: string }) => {
    if (!finished) u.audit({ ...o, upgrade: protocol });
    finished = true;
  };
  if (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0' || req.headers['transfer-encoding'] !== undefined) {
    outcome({ refused: 'an Upgrade request with a body' });
    return refuseUpgrade(socket, 400, 'an Upgrade request with a body is refused');
  }
  socket.pause();
  let headSent = false;
  let headers = u.headers;
  if (!permitted) headers = without(headers, new Set(['connection', 'upgrade']));
  else if (websocket) headers = without(headers, new Set(['sec-websocket-extensions']));
  const up = u.dial(req.method ?? 'GET', u.path, headers);
  const cut = () => {
    up.destroy();
    socket.destroy();
  };
  socket.on('error', cut);
  socket.on('close', () => up.destroy());
  up.on('error', (e: NodeJS.ErrnoException) => {
    outcome({ error: e.code ?? e.message, code: e.code });
    if (socket.writable && !headSent) refuseUpgrade(socket, 502, `upstream unreachable (${e.code ?? e.message})`);
    else socket.destroy();
  });
  up.on('response', (res) => {
    // No switch: the answer, scrubbed, then the end of this connection.
    outcome({ status: res.statusCode });
    const plan: BodyPlan = planBody(res, u.scrub);
    if ('refused' in plan) {
      res.destroy();
      return refuseUpgrade(socket, 502, plan.refused);
    }
    headSent = true;
    writeHead(socket, res.statusCode ?? 502, [...plan.headers, 'Connection', 'close']);
    // The answer is the last thing on this connection: the upstream's goes now, the agent's once it is written.
    forwardBody(res, plan, socket, (_bytes, err) => {
      up.destroy();
      if (err) socket.destroy();
      else linger(socket);
    });
  });
  up.on('upgrade', (res, upSocket: Duplex, upHead: Buffer) => {
    outcome({ status: 101 });
    const answered = String(res.headers.upgrade ?? '').trim().toLowerCase();
    if (!permitted || answered !== protocol || (websocket && res.headers['sec-websocket-extensions'] !== undefined)) {
      upSocket.destroy();
      // Named by what was offered (the agent's words), never by what the upstream answered: that text is not scrubbed.
      const offered = permitted ? `${JSON.stringify(protocol)}${websocket ? ' without extensions' : ''}` : 'no upgrade';
      return refuseUpgrade(socket, 502, `the upstream switched protocols on terms the proxy did not offer (it offered ${offered})`);
    }
    headSent = true;
    // Two pipelines and our own handlers per socket: past Node's default of ten listeners, and bounded.
    socket.setMaxListeners(32);
    upSocket.setMaxListeners(32);
    upSocket.on('error', cut);
    upSocket.on('close', () => socket.destroy());
    // The Upgrade value the agent offered, not the upstream's spelling of it: its letter case alone carried bits.
    writeHead(socket, 101, [...passHeaders(res.rawHeaders, u.scrub.pairs), 'Connection', 'Upgrade', 'Upgrade', String(req.headers.upgrade ?? '').trim()]);
    let toAgent: Transform;
    let toUpstream: Transform & { abandon(): BodyRefused | null };
    if (websocket) {
      const control = (p: Buffer) => scrubBuffer(p, u.scrub.pairs);
      toAgent = new FrameRelay({ fromClient: false, filter: () => (u.scrub.pairs.length > 0 ? new Scrubber(u.scrub.pairs) : PASS), control });
      toUpstream = new FrameRelay({
        fromClient: true,
        filter: () => new Guard(u.needles),
        // Throws BodyRefused, which fails the relay: the frame never leaves.
        control: (p) => guardWhole(p, u.needles),
      });
    } else {
      toAgent = new ScrubStream(u.scrub.pairs);
      toUpstream = new BodyGuard(u.needles);
    }
    let refused = false;
    const fail = (e: Error | null | undefined) => {
      // Else: a value among the bytes held unread when the agent went (review, round 38) is refused all the same.
      const found = e instanceof BodyRefused ? e : toUpstream.abandon();
      if (found !== null && !refused) u.audit({ refused: found.rule, suspect: found.suspect, status: 101, upgrade: protocol });
      refused ||= found !== null;
      cut();
    };
    if (upHead.length) toAgent.write(upHead);
    pipeline(upSocket, toAgent, socket, fail);
    if (u.head.length) toUpstream.write(u.head);
    pipeline(socket, toUpstream, upSocket, fail);
    socket.resume();
  });
  up.end();
}
