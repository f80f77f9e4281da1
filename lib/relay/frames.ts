// The sealed network's framing (relay/main.go says the same): a 9-byte header
// (type, stream id, payload length; big-endian) and a payload of at most
// 32 KiB. What comes from the relay is read here as hostile input: a header is
// checked before its payload is waited for, and nothing larger than one frame
// is ever held.

export const FRAME = { HELLO: 1, OPEN: 2, DATA: 3, EOF: 4, CLOSE: 5, WINDOW: 6 } as const;
export const HEADER_BYTES = 9;
export const MAX_PAYLOAD = 32 << 10;
/** What either side may send on a stream before the other grants more. */
export const STREAM_WINDOW = 128 << 10;
/** Credit is granted back in batches of at least this much (relay/main.go does the same). */
export const GRANT_BATCH = 32 << 10;
export const HELLO_TEXT = 'stashbase-relay 1';

export class FrameError extends Error {}

export function encodeFrame(type: number, id: number, payload?: Buffer): Buffer {
  const out = Buffer.allocUnsafe(HEADER_BYTES + (payload?.length ?? 0));
  out[0] = type;
  out.writeUInt32BE(id >>> 0, 1);
  out.writeUInt32BE(payload?.length ?? 0, 5);
  payload?.copy(out, HEADER_BYTES);
  return out;
}

export function windowFrame(id: number, bytes: number): Buffer {
  const p = Buffer.allocUnsafe(4);
  p.writeUInt32BE(bytes, 0);
  return encodeFrame(FRAME.WINDOW, id, p);
}

/** Cuts a byte stream into frames; throws FrameError on a type it does not know or a length past the limit. */
export class FrameReader {
  private pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer, onFrame: (type: number, id: number, payload: Buffer) => void): void {
    let buf = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    while (buf.length >= HEADER_BYTES) {
      const type = buf[0] as number;
      const len = buf.readUInt32BE(5);
      if (type < FRAME.HELLO || type > FRAME.WINDOW) throw new FrameError(`a frame of unknown type ${type}`);
      if (len > MAX_PAYLOAD) throw new FrameError(`a frame of ${len} bytes (at most ${MAX_PAYLOAD})`);
      if (buf.length < HEADER_BYTES + len) break;
      // A copy: the chunk it came in is not held for the payload's sake.
      const payload = Buffer.from(buf.subarray(HEADER_BYTES, HEADER_BYTES + len));
      const id = buf.readUInt32BE(1);
      buf = buf.subarray(HEADER_BYTES + len);
      onFrame(type, id, payload);
    }
    this.pending = Buffer.from(buf);
  }
}
