// WebSocket frames as a test client writes and reads them (RFC 6455), built
// here independently of lib/proxy/ws-frames.ts so that a shared mistake
// cannot pass unseen.
import { randomBytes } from 'node:crypto';

/** One frame; masked (as a client must send) unless `masked` is false. */
export function frame(payload: Buffer | string, opts: { fin?: boolean; opcode?: number; masked?: boolean } = {}): Buffer {
  const data = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  const masked = opts.masked ?? true;
  const n = data.length;
  const len = n < 126 ? [n] : n < 65536 ? [126, n >> 8, n & 0xff] : [127, 0, 0, 0, 0, (n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
  const head = Buffer.from([((opts.fin ?? true) ? 0x80 : 0) | (opts.opcode ?? 1), (masked ? 0x80 : 0) | len[0]!, ...len.slice(1)]);
  if (!masked) return Buffer.concat([head, data]);
  const key = randomBytes(4);
  const body = Buffer.from(data.map((b, i) => b ^ key[i % 4]!));
  return Buffer.concat([head, key, body]);
}

export interface Frame {
  fin: boolean;
  opcode: number;
  masked: boolean;
  payload: Buffer;
}

/** Every complete frame at the start of buf, and what is left. */
export function readFrames(buf: Buffer): { frames: Frame[]; rest: Buffer } {
  const frames: Frame[] = [];
  let at = 0;
  for (;;) {
    if (buf.length - at < 2) break;
    const b1 = buf[at + 1]!;
    let n = b1 & 0x7f;
    let p = at + 2;
    if (n === 126) {
      if (buf.length < p + 2) break;
      n = buf.readUInt16BE(p);
      p += 2;
    } else if (n === 127) {
      if (buf.length < p + 8) break;
      n = Number(buf.readBigUInt64BE(p));
      p += 8;
    }
    const masked = (b1 & 0x80) !== 0;
    const key = masked ? buf.subarray(p, p + 4) : null;
    if (masked) p += 4;
    if (buf.length < p + n) break;
    let payload = Buffer.from(buf.subarray(p, p + n));
    if (key) payload = Buffer.from(payload.map((b, i) => b ^ key[i % 4]!));
    frames.push({ fin: (buf[at]! & 0x80) !== 0, opcode: buf[at]! & 0x0f, masked, payload });
    at = p + n;
  }
  return { frames, rest: buf.subarray(at) };
}

/** The text of each whole message among frames (fragments joined). */
export function messages(frames: Frame[]): string[] {
  const out: string[] = [];
  let cur: Buffer[] = [];
  for (const f of frames) {
    if (f.opcode >= 8) continue;
    cur.push(f.payload);
    if (f.fin) {
      out.push(Buffer.concat(cur).toString());
      cur = [];
    }
  }
  return out;
}
