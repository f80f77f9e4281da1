// WebSocket frames (RFC 6455) read from one side and written to the other,
// with every data message's payload passed through a filter: scrubbed on the
// way to the agent, guarded on the way out. The payload is never buffered
// whole: each piece that arrives goes on at once as a fragment of the same
// message (an intermediary may refragment a message that uses no extension,
// RFC 6455 5.4), less the window the filter holds (lib/proxy/message-filter.ts),
// which goes on with the next fragment, or as a fragment of its own when
// nothing follows within a few milliseconds; at the end of a message nothing
// is held. Control frames
// (at most 125 bytes) are read whole and filtered whole.
//
// No extension is ever negotiated (the proxy strips Sec-WebSocket-Extensions),
// so a frame with a reserved bit set, a masked frame from the server, an
// unmasked one from the client, or a control frame over 125 bytes is a
// protocol error: the stream fails and the caller closes both sides.
import { randomFillSync } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { type BodyRefused, type MessageFilter, ReleaseTimer } from './message-filter.js';

export class WsProtocolError extends Error {}

interface FrameHead {
  fin: boolean;
  opcode: number;
  mask: Buffer | null;
  length: number;
}

/** Parses a frame head at the start of buf: the head and its size, or null while incomplete. */
export function parseHead(buf: Buffer): { head: FrameHead; size: number } | null {
  if (buf.length < 2) return null;
  const b0 = buf[0]!;
  const b1 = buf[1]!;
  let size = 2;
  let length = b1 & 0x7f;
  if (length === 126) {
    if (buf.length < 4) return null;
    length = buf.readUInt16BE(2);
    size = 4;
  } else if (length === 127) {
    if (buf.length < 10) return null;
    const big = buf.readBigUInt64BE(2);
    if (big > BigInt(Number.MAX_SAFE_INTEGER)) throw new WsProtocolError('frame length out of range');
    length = Number(big);
    size = 10;
  }
  const masked = (b1 & 0x80) !== 0;
  if (masked && buf.length < size + 4) return null;
  if ((b0 & 0x70) !== 0) throw new WsProtocolError('reserved bits set (no extension was negotiated)');
  const head = { fin: (b0 & 0x80) !== 0, opcode: b0 & 0x0f, mask: masked ? Buffer.from(buf.subarray(size, size + 4)) : null, length };
  return { head, size: size + (masked ? 4 : 0) };
}

/** One frame's bytes: the head, then the payload masked with a fresh key where `masked`. */
export function encodeFrame(fin: boolean, opcode: number, payload: Buffer, masked: boolean): Buffer {
  const n = payload.length;
  const lenBytes = n < 126 ? 0 : n < 65536 ? 2 : 8;
  const head = Buffer.alloc(2 + lenBytes + (masked ? 4 : 0));
  head[0] = (fin ? 0x80 : 0) | opcode;
  head[1] = (masked ? 0x80 : 0) | (n < 126 ? n : n < 65536 ? 126 : 127);
  if (lenBytes === 2) head.writeUInt16BE(n, 2);
  else if (lenBytes === 8) head.writeBigUInt64BE(BigInt(n), 2);
  if (!masked) return Buffer.concat([head, payload]);
  const key = maskKey();
  key.copy(head, 2 + lenBytes);
  const body = Buffer.alloc(n);
  for (let i = 0; i < n; i++) body[i] = payload[i]! ^ key[i & 3]!;
  return Buffer.concat([head, body]);
}

// Masking keys from the CSPRNG, 4 KiB at a time: one call per frame was most of the time a stream of small frames took.
const KEYS = Buffer.alloc(4096);
let keyAt = KEYS.length;

/** A fresh masking key (unpredictable, as RFC 6455 asks). */
function maskKey(): Buffer {
  if (keyAt === KEYS.length) {
    randomFillSync(KEYS);
    keyAt = 0;
  }
  keyAt += 4;
  return KEYS.subarray(keyAt - 4, keyAt);
}

function unmask(data: Buffer, key: Buffer, offset: number): Buffer {
  const out = Buffer.alloc(data.length);
  for (let i = 0; i < data.length; i++) out[i] = data[i]! ^ key[(offset + i) & 3]!;
  return out;
}

export interface FrameRelayOptions {
  /** Frames come from the client: they arrive masked and leave masked (for the server); else neither. */
  fromClient: boolean;
  /** A filter for each new data message. */
  filter: () => MessageFilter;
  /** A whole control frame's payload, filtered (a close reason, a ping's data). */
  control: (payload: Buffer) => Buffer;
}

/** Reads frames from one side and writes them, filtered, for the other. */
export class FrameRelay extends Transform {
  private buf: Buffer = Buffer.alloc(0);
  private head: FrameHead | null = null;
  private got = 0;
  private control: Buffer[] = [];
  private message: MessageFilter | null = null;
  /** The opcode of the message in progress, until its first fragment went out. */
  private pendingOpcode = 0;
  /** The frames one read made: passed on together, one write (a read of thousands of tiny frames cost a write each). */
  private out: Buffer[] = [];
  /** The message's window, let go as a fragment of its own when nothing follows in time. */
  private readonly timer = new ReleaseTimer(
    () => this.message,
    (b) => {
      const opcode = this.pendingOpcode;
      this.pendingOpcode = 0;
      this.push(encodeFrame(false, opcode, b, this.o.fromClient));
    },
    (e) => this.destroy(e),
  );

  /** Dropped before its end (the sender went): a value among the held bytes of the message in progress, for the audit. */
  abandon(): BodyRefused | null {
    this.timer.stop();
    return this.message?.abandon?.() ?? null;
  }

  constructor(private readonly o: FrameRelayOptions) {
    super();
  }

  override _destroy(e: Error | null, cb: (e: Error | null) => void): void {
    this.timer.stop();
    cb(e);
  }

  override _flush(cb: TransformCallback): void {
    this.timer.stop();
    cb();
  }

  private emitData(fin: boolean, payload: Buffer): void {
    if (!fin && payload.length === 0) return;
    const opcode = this.pendingOpcode;
    this.pendingOpcode = 0;
    this.out.push(encodeFrame(fin, opcode, payload, this.o.fromClient));
  }

  private step(): boolean {
    if (this.head === null) {
      const parsed = parseHead(this.buf);
      if (parsed === null) return false;
      const h = parsed.head;
      if (this.o.fromClient !== (h.mask !== null)) throw new WsProtocolError(this.o.fromClient ? 'an unmasked frame from the client' : 'a masked frame from the server');
      if (h.opcode >= 8) {
        if (h.length > 125 || !h.fin) throw new WsProtocolError('a control frame over 125 bytes or fragmented');
      } else if (h.opcode === 0) {
        if (this.message === null) throw new WsProtocolError('a continuation frame outside a message');
      } else if (h.opcode === 1 || h.opcode === 2) {
        if (this.message !== null) throw new WsProtocolError('a new message inside a fragmented one');
        this.message = this.o.filter();
        this.pendingOpcode = h.opcode;
      } else {
        throw new WsProtocolError(`reserved opcode ${h.opcode}`);
      }
      this.head = h;
      this.got = 0;
      this.buf = this.buf.subarray(parsed.size);
    }
    const h = this.head;
    const take = Math.min(h.length - this.got, this.buf.length);
    let piece = this.buf.subarray(0, take);
    this.buf = this.buf.subarray(take);
    if (h.mask) piece = unmask(piece, h.mask, this.got);
    this.got += take;
    const done = this.got === h.length;
    if (h.opcode >= 8) {
      this.control.push(piece);
      if (done) {
        const payload = this.o.control(Buffer.concat(this.control)).subarray(0, 125);
        this.control = [];
        this.out.push(encodeFrame(true, h.opcode, payload, this.o.fromClient));
      }
    } else {
      const m = this.message!;
      let out = m.push(piece);
      const last = done && h.fin;
      if (last) {
        const rest = m.end();
        out = rest.length ? Buffer.concat([out, rest]) : out;
        this.message = null;
      }
      // A whole frame that arrived at once goes out as one frame.
      if (take > 0 || last) this.emitData(last, out);
    }
    if (done) this.head = null;
    return this.buf.length > 0;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    try {
      while (this.step());
    } catch (e) {
      this.out = [];
      return done(e as Error);
    }
    const out = this.out;
    this.out = [];
    if (out.length > 0) this.push(out.length === 1 ? out[0] : Buffer.concat(out));
    this.timer.touch();
    done();
  }
}
