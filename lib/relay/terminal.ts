// The agent's standard streams on stream 0 of a local sealed run's relay
// frames (relay/supervise.go): the relay is the container's own process there,
// and the container's one stream (`docker run -i`, no exec) carries both the
// agent's terminal and its connections. What comes from the container is
// hostile input, read as the rest of the frames are (lib/relay/mux.ts):
// - OUT and ERR may send at most STREAM_WINDOW bytes before stashbase grants
//   more, and it grants only what your terminal (or pipe) has taken: past it,
//   the relay is ended, and the run with it;
// - a WINDOW on stream 0 may not grant input past the window;
// - no other frame is the container's on stream 0.
// With a terminal, yours is raw while the run lasts (as the docker client's
// `-t` made it), the agent's terminal inside is of your window's size, and a
// change of that size is sent on (RESIZE).
import { onTerminal, terminalSettings } from '../exec.js';
import { encodeFrame, FRAME, FrameError, GRANT_BATCH, MAX_PAYLOAD, STREAM_WINDOW, windowFrame } from './frames.js';

export interface TerminalEnds {
  input: NodeJS.ReadStream;
  output: NodeJS.WritableStream;
  error: NodeJS.WritableStream;
  /** A terminal inside (the relay's pseudo-terminal): your input raw, output only on OUT, the size followed. */
  tty: boolean;
  /**
   * Told once when your output or error fails (a pipe whose reader went, `| head -1`; a terminal hung up): the run
   * should end, as a docker client's would. What the agent says after it is dropped, and granted back, never waited on.
   */
  onLost?: (why: string) => void;
  /** Told your terminal's settings once stashbase made it raw (`stty -g`): the watchdog sets it back only from those. */
  onRaw?: (settings: string) => void;
}

/** Your window's rows and columns (24 and 80 where unknown), as the relay takes them (16 bits each). */
function sizeOf(output: { rows?: number; columns?: number }): [number, number] {
  const rows = output.rows && output.rows > 0 ? output.rows : 24;
  const cols = output.columns && output.columns > 0 ? output.columns : 80;
  return [Math.min(rows, 65535), Math.min(cols, 65535)];
}

/** The size the agent's terminal starts with: the relay's argument (`-`: no terminal, pipes). */
export function sizeArg(ends: { tty: boolean; output: { rows?: number; columns?: number } }): string {
  return ends.tty ? sizeOf(ends.output).join('x') : '-';
}

export class TerminalLink {
  private send: (b: Buffer) => void = () => {};
  /** What the relay may still send us on OUT and ERR. */
  private outCredit = STREAM_WINDOW;
  /** Written out, not yet granted back. */
  private outOwed = 0;
  /** What we may still send on IN. */
  private inCredit = STREAM_WINDOW;
  private inQueue: Buffer[] = [];
  private inEnded = false;
  private inEofSent = false;
  private running = false;
  private raw = false;
  /** Your output or error failed: the agent's is dropped from then on. */
  private lost = false;
  private readonly onWriteError = (e: Error) => {
    if (this.lost) return;
    this.lost = true;
    this.ends.onLost?.(`your terminal or pipe took no more of the agent's output (${(e as NodeJS.ErrnoException).code ?? e.message})`);
  };
  private readonly onData = (b: Buffer) => this.typed(b);
  private readonly onEnd = () => {
    this.inEnded = true;
    this.flushInput();
  };
  private readonly onResize = () => {
    const [rows, cols] = sizeOf(this.ends.output as NodeJS.WriteStream);
    const p = Buffer.alloc(4);
    p.writeUInt16BE(rows, 0);
    p.writeUInt16BE(cols, 2);
    this.send(encodeFrame(FRAME.RESIZE, 0, p));
  };

  constructor(private readonly ends: TerminalEnds) {}

  /** Starts once the relay greeted: your input read and sent, your window followed. */
  start(send: (b: Buffer) => void): void {
    if (this.running) return;
    this.running = true;
    this.send = send;
    const input = this.ends.input;
    if (this.ends.tty && typeof input.setRawMode === 'function') {
      input.setRawMode(true);
      // Node's raw mode keeps the output's line-feed translation (libuv sets ONLCR): the terminal inside made the
      // agent's line ends already, so yours must take them as they come, as the docker client's raw mode had it.
      // Node sets your settings back at the end, even on a crash (libuv keeps those it found).
      onTerminal({ file: 'stty', args: ['-opost'] }, input);
      const raw = terminalSettings(input);
      if (raw !== null) this.ends.onRaw?.(raw);
      this.raw = true;
      (this.ends.output as NodeJS.WriteStream).on('resize', this.onResize);
    }
    this.ends.output.on('error', this.onWriteError);
    this.ends.error.on('error', this.onWriteError);
    input.on('data', this.onData);
    input.on('end', this.onEnd);
    input.on('error', this.onEnd);
    input.resume();
  }

  /** Your terminal as it was: not raw, not read. */
  stop(): void {
    if (!this.running) return;
    this.running = false;
    const input = this.ends.input;
    input.off('data', this.onData);
    input.off('end', this.onEnd);
    input.off('error', this.onEnd);
    input.pause();
    (this.ends.output as NodeJS.WriteStream).off('resize', this.onResize);
    // A write that fails after the run is stashbase's own, as any other (lib/util/terminal.ts guardStandardStreams).
    this.ends.output.off('error', this.onWriteError);
    this.ends.error.off('error', this.onWriteError);
    if (this.raw) {
      this.raw = false;
      try {
        input.setRawMode(false);
      } catch {
        // A terminal gone already has no mode to set back.
      }
    }
    this.inQueue = [];
  }

  /** A frame of the relay's on stream 0. */
  frame(type: number, payload: Buffer): void {
    switch (type) {
      case FRAME.OUT:
      case FRAME.ERR: {
        if (payload.length > this.outCredit) throw new FrameError("the agent's output was sent past its window");
        if (type === FRAME.ERR && this.ends.tty) throw new FrameError('standard error apart from a terminal');
        if (payload.length === 0) return;
        this.outCredit -= payload.length;
        const n = payload.length;
        const written = () => {
          this.outCredit += n;
          this.outOwed += n;
          if (this.outOwed >= GRANT_BATCH || this.outCredit === STREAM_WINDOW) {
            this.send(windowFrame(0, this.outOwed));
            this.outOwed = 0;
          }
        };
        if (this.lost) return written();
        (type === FRAME.OUT ? this.ends.output : this.ends.error).write(payload, (err) => (err ? this.onWriteError(err) : undefined, written()));
        return;
      }
      case FRAME.WINDOW: {
        if (payload.length !== 4) throw new FrameError(`a WINDOW of ${payload.length} bytes on stream 0`);
        this.inCredit += payload.readUInt32BE(0);
        if (this.inCredit > STREAM_WINDOW) throw new FrameError('input granted past the window');
        this.flushInput();
        return;
      }
      default:
        throw new FrameError(`a frame of type ${type} on stream 0`);
    }
  }

  private typed(b: Buffer): void {
    for (let off = 0; off < b.length; off += MAX_PAYLOAD) this.inQueue.push(b.subarray(off, off + MAX_PAYLOAD));
    this.flushInput();
  }

  /** Your input goes out as far as the credit reaches; reading waits while some is held. */
  private flushInput(): void {
    while (this.inQueue.length > 0 && this.inCredit > 0) {
      const head = this.inQueue[0] as Buffer;
      const take = Math.min(head.length, this.inCredit);
      this.send(encodeFrame(FRAME.IN, 0, head.subarray(0, take)));
      this.inCredit -= take;
      if (take === head.length) this.inQueue.shift();
      else this.inQueue[0] = head.subarray(take);
    }
    if (!this.running) return;
    if (this.inQueue.length > 0) {
      this.ends.input.pause();
      return;
    }
    if (this.inEnded) {
      if (!this.inEofSent) {
        this.inEofSent = true;
        this.send(encodeFrame(FRAME.EOF, 0));
      }
      return;
    }
    this.ends.input.resume();
  }
}
