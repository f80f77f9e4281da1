// The sealed network's framing (relay/main.go says the same): a 9-byte header
// (type, stream id, payload length; big-endian) and a payload of at most
// 32 KiB. What comes from the relay is read here as hostile input: a header is
// checked before its payload is waited for, and nothing larger than one frame
// is ever held.

/**
 * IN, OUT, ERR and RESIZE are the agent's standard streams on stream 0, where the relay is the container's own
 * process (relay/supervise.go, lib/relay/terminal.ts); no other relay sends them.
 */
export const FRAME = { HELLO: 1, OPEN: 2, DATA: 3, EOF: 4, CLOSE: 5, WINDOW: 6, IN: 7, OUT: 8, ERR: 9, RESIZE: 10 } as const;
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

/**
 * Cuts a byte stream into frames; throws FrameError on a type it does not know
 * or a length past the limit. What arrives is kept as a list of chunks and
 * joined once a whole frame is there: a frame sent a byte at a time costs
 * no more than one sent whole.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private have = 0;

  /** `maxType`: the last type this relay may send (WINDOW; RESIZE where it carries the agent's streams). */
  constructor(private readonly maxType: number = FRAME.WINDOW) {}

  /** The first n bytes held (n at most `have`), copied only when they span chunks. */
  private head(n: number): Buffer {
    const first = this.chunks[0] as Buffer;
    if (first.length >= n) return first;
    const joined = Buffer.concat(this.chunks, this.have);
    this.chunks = [joined];
    return joined;
  }

  push(chunk: Buffer, onFrame: (type: number, id: number, payload: Buffer) => void): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.have += chunk.length;
    while (this.have >= HEADER_BYTES) {
      // The header's 9 bytes: joined from the first chunks if need be (never more than the frame).
      let h = this.chunks[0] as Buffer;
      if (h.length < HEADER_BYTES) {
        const parts: Buffer[] = [];
        let got = 0;
        for (const c of this.chunks) {
          parts.push(c);
          got += c.length;
          if (got >= HEADER_BYTES) break;
        }
        h = Buffer.concat(parts, got);
        // Kept joined: the next bytes do not join the header again.
        this.chunks.splice(0, parts.length, h);
      }
      const type = h[0] as number;
      const len = h.readUInt32BE(5);
      if (type < FRAME.HELLO || type > this.maxType) throw new FrameError(`a frame of unknown type ${type}`);
      if (len > MAX_PAYLOAD) throw new FrameError(`a frame of ${len} bytes (at most ${MAX_PAYLOAD})`);
      const id = h.readUInt32BE(1);
      if (this.have < HEADER_BYTES + len) return;
      const buf = this.head(HEADER_BYTES + len);
      // A copy: the chunk it came in is not held for the payload's sake.
      const payload = Buffer.from(buf.subarray(HEADER_BYTES, HEADER_BYTES + len));
      const rest = buf.subarray(HEADER_BYTES + len);
      this.chunks.shift();
      if (rest.length > 0) this.chunks.unshift(rest);
      this.have -= HEADER_BYTES + len;
      onFrame(type, id, payload);
    }
  }
}
