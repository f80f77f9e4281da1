// stashbase's side of the sealed network's relay (relay/main.go): the frames
// that come over the engine's exec stream become connections to the run's
// proxy, and what the proxy answers goes back as frames. The relay runs in the
// agent's container, so everything it sends is read as hostile input:
// - a frame is checked before its payload is waited for (lib/relay/frames.ts);
// - stream ids only grow: an OPEN for an old id, or anything but OPEN for a
//   new one, ends the relay; frames for a stream already over are dropped;
// - at most `maxStreams` proxy connections at once (the proxy's connection
//   limit), a closed stream's counted until its connection is gone: an OPEN
//   past it is answered CLOSE;
// - while the exec stream does not drain, nothing more is read from the proxy;
//   the relay is still read (its frames may be what lets it read its input
//   again: a window it grants, data within the credit it has), until what
//   waits for it passes the most it can legitimately cause (every stream's
//   window, and room for control frames: a flood of OPENs past the limit,
//   each answered CLOSE, stops there);
// - each stream may send STREAM_WINDOW bytes before stashbase grants more, and
//   gets more only once the proxy has taken them: data past its window ends
//   the relay. What stashbase holds for the relay is so bounded by streams
//   times window, and what it holds for the proxy by one read per stream (a
//   stream without credit, or an exec stream that does not drain, pauses).
// Anything else out of order ends the relay and every stream with it; the
// agent's connections then fail at once (the relay inside exits with its
// input), and the run goes on to its end.
import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { encodeFrame, FRAME, FrameError, FrameReader, GRANT_BATCH, HELLO_TEXT, MAX_PAYLOAD, STREAM_WINDOW, windowFrame } from './frames.js';
import type { TerminalLink } from './terminal.js';

/** Room for control frames (grants, EOFs, CLOSEs) beyond every stream's window. */
export const CONTROL_SLACK = 256 * 1024;

export interface RelayMuxOptions {
  /** A new connection to the run's proxy. */
  connect: () => Socket;
  maxStreams: number;
  /** Told once, when the relay ends: why (a protocol error, or its stream closed). */
  onEnd: (why: string, protocolError: boolean) => void;
  /** The agent's standard streams on stream 0 (a relay that is the container's own process), started at its greeting. */
  terminal?: TerminalLink;
}

interface Stream {
  socket: Socket;
  /** What the relay may still send on it. */
  recvCredit: number;
  /** Taken by the proxy, not yet granted back. */
  owed: number;
  /** What stashbase may still send on it. */
  sendCredit: number;
  /** Read from the proxy, waiting for credit. */
  queue: Buffer[];
  gotEof: boolean;
  sentEof: boolean;
  /** The proxy ended its side while data still waited for credit. */
  eofPending: boolean;
}

export class RelayMux {
  private readonly reader: FrameReader;
  private readonly streams = new Map<number, Stream>();
  /** Proxy connections not yet closed, forgotten streams' included: what the stream limit counts. */
  private live = 0;
  private lastId = 0;
  private hello = false;
  private ended = false;
  /** The exec stream does not drain: every stream's reading waits. */
  private blocked = false;
  /** What waits for the relay passed `slack`: the relay is not read until it drains. */
  private inputPaused = false;
  /** Every stream's window, and room for control frames: what may wait for the relay before it stops being read. */
  private readonly slack: number;
  readonly ready: Promise<void>;
  private resolveReady!: () => void;
  private rejectReady!: (e: Error) => void;

  constructor(private readonly input: Readable, private readonly output: Writable, private readonly o: RelayMuxOptions) {
    this.slack = o.maxStreams * STREAM_WINDOW + CONTROL_SLACK;
    this.reader = new FrameReader(o.terminal ? FRAME.RESIZE : FRAME.WINDOW);
    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => {});
    input.on('data', (chunk: Buffer) => {
      if (this.ended) return;
      try {
        this.reader.push(chunk, (t, id, p) => this.frame(t, id, p));
      } catch (e) {
        if (e instanceof FrameError) this.end(e.message, true);
        else throw e;
      }
    });
    input.on('end', () => this.end("the relay's stream closed", false));
    input.on('close', () => this.end("the relay's stream closed", false));
    input.on('error', () => this.end("the relay's stream failed", false));
    output.on('error', () => this.end("the relay's stream failed", false));
    output.on('drain', () => {
      this.blocked = false;
      if (this.inputPaused && !this.ended) {
        this.inputPaused = false;
        this.input.resume();
      }
      for (const s of this.streams.values()) if (s.sendCredit > 0 && s.queue.length === 0) s.socket.resume();
    });
  }

  /** The relay greeted: it listens in the container. */
  get greeted(): boolean {
    return this.hello;
  }

  /** Streams open now (for tests and status). */
  get open(): number {
    return this.streams.size;
  }

  private send(buf: Buffer): void {
    if (this.ended) return;
    if (!this.output.write(buf) && !this.blocked) {
      // The exec stream does not drain: nothing more is read from the proxy until it does.
      this.blocked = true;
      for (const s of this.streams.values()) s.socket.pause();
    }
    // The relay is read on (found under load: a relay blocked writing a window grant reads none of this,
    // and stopping here too held both sides forever), until what waits passes what it can legitimately cause.
    if (this.output.writableLength > this.slack && !this.inputPaused) {
      this.inputPaused = true;
      this.input.pause();
    }
  }

  private frame(type: number, id: number, payload: Buffer): void {
    if (this.ended) return;
    if (!this.hello) {
      if (type !== FRAME.HELLO || id !== 0 || payload.toString('latin1') !== HELLO_TEXT) throw new FrameError('the relay did not begin with its greeting');
      this.hello = true;
      this.o.terminal?.start((b) => this.send(b));
      this.resolveReady();
      return;
    }
    if (type === FRAME.HELLO) throw new FrameError('a second greeting');
    if (this.o.terminal && id === 0) return this.o.terminal.frame(type, payload);
    if (type >= FRAME.IN) throw new FrameError(`a frame of type ${type} on stream ${id}`);
    if (type === FRAME.OPEN) {
      if (id <= this.lastId || payload.length !== 0) throw new FrameError(`an OPEN for stream ${id} out of order`);
      this.lastId = id;
      if (this.live >= this.o.maxStreams) {
        this.send(encodeFrame(FRAME.CLOSE, id));
        return;
      }
      this.openStream(id);
      return;
    }
    if (id > this.lastId || id === 0) throw new FrameError(`a frame for stream ${id}, never opened`);
    const s = this.streams.get(id);
    if (!s) return; // over already: what was on its way is dropped
    switch (type) {
      case FRAME.DATA: {
        if (s.gotEof) throw new FrameError(`data on stream ${id} after its end`);
        if (payload.length > s.recvCredit) throw new FrameError(`stream ${id} sent past its window`);
        if (payload.length === 0) return;
        s.recvCredit -= payload.length;
        const n = payload.length;
        s.socket.write(payload, (err) => {
          if (err || this.ended || this.streams.get(id) !== s) return;
          // Credit back once the proxy took it, in batches (a WINDOW per small write would double the frames).
          s.recvCredit += n;
          s.owed += n;
          if (s.owed >= GRANT_BATCH) {
            this.send(windowFrame(id, s.owed));
            s.owed = 0;
          }
        });
        return;
      }
      case FRAME.EOF:
        if (payload.length !== 0) throw new FrameError(`an EOF with a payload on stream ${id}`);
        s.gotEof = true;
        s.socket.end();
        if (s.sentEof) this.forget(id, s);
        return;
      case FRAME.CLOSE:
        // What the relay sent before goes to the proxy first; then the connection is cut (at the latest after a moment).
        this.forget(id, s);
        s.socket.end();
        setTimeout(() => s.socket.destroy(), 2000).unref();
        return;
      case FRAME.WINDOW: {
        if (payload.length !== 4) throw new FrameError(`a WINDOW of ${payload.length} bytes on stream ${id}`);
        s.sendCredit += payload.readUInt32BE(0);
        if (s.sendCredit > STREAM_WINDOW) throw new FrameError(`stream ${id} granted past the window`);
        this.flush(id, s);
        return;
      }
    }
  }

  private openStream(id: number): void {
    const socket = this.o.connect();
    this.live++;
    const s: Stream = { socket, recvCredit: STREAM_WINDOW, owed: 0, sendCredit: STREAM_WINDOW, queue: [], gotEof: false, sentEof: false, eofPending: false };
    this.streams.set(id, s);
    if (this.blocked) socket.pause();
    socket.on('data', (chunk: Buffer) => {
      // A stream the relay closed: what the proxy still says goes nowhere.
      if (this.streams.get(id) !== s) return;
      for (let off = 0; off < chunk.length; off += MAX_PAYLOAD) s.queue.push(chunk.subarray(off, off + MAX_PAYLOAD));
      this.flush(id, s);
    });
    socket.on('end', () => {
      if (this.streams.get(id) !== s) return;
      s.eofPending = true;
      this.flush(id, s);
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      this.live--;
      if (this.streams.get(id) !== s) return;
      this.forget(id, s);
      this.send(encodeFrame(FRAME.CLOSE, id));
    });
  }

  /** What waits for credit goes out as far as the credit reaches; the socket reads on only when nothing waits. */
  private flush(id: number, s: Stream): void {
    while (s.queue.length > 0 && s.sendCredit > 0) {
      const head = s.queue[0] as Buffer;
      const take = Math.min(head.length, s.sendCredit);
      this.send(encodeFrame(FRAME.DATA, id, head.subarray(0, take)));
      s.sendCredit -= take;
      if (take === head.length) s.queue.shift();
      else s.queue[0] = head.subarray(take);
    }
    if (s.queue.length > 0) {
      s.socket.pause();
      return;
    }
    if (s.eofPending && !s.sentEof) {
      s.sentEof = true;
      this.send(encodeFrame(FRAME.EOF, id));
      if (s.gotEof) {
        this.forget(id, s);
        s.socket.destroy();
      }
      return;
    }
    if (!this.blocked) s.socket.resume();
  }

  private forget(id: number, s: Stream): void {
    if (this.streams.get(id) === s) this.streams.delete(id);
  }

  /** Ends the relay: every stream's connection is cut, nothing more is read or sent. */
  end(why: string, protocolError = false): void {
    if (this.ended) return;
    this.ended = true;
    this.o.terminal?.stop();
    for (const s of this.streams.values()) s.socket.destroy();
    this.streams.clear();
    this.input.removeAllListeners('data');
    this.input.resume();
    this.rejectReady(new Error(why));
    this.o.onEnd(why, protocolError);
  }
}
