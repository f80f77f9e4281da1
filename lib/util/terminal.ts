// Stashbase's words on a terminal the agent had. Every backend passes the
// agent's output to your terminal (a native run through a terminal of its
// own, templates/pty-relay.ts, whose settings are the agent's and never
// yours). What stashbase says while a native agent runs is held until it has
// ended (round 35 found a line said while the agent shared your terminal with
// `tostop` set stopped stashbase before its checks; the terminal of its own
// closed that class, and the hold keeps stashbase's lines out of the agent's
// screen). And the agent may leave its rendering set to hide or disguise what
// stashbase says after it (concealed text, a line-drawing character set, a
// scroll region of one line, a hyperlink left open, synchronized output never
// ended): reset first.

import { closeSync, openSync } from 'node:fs';

type Stream = NodeJS.WriteStream;

let hungUp = false;

/**
 * stashbase's own standard output and error, made safe to write to whatever became of them (third review: a write to
 * a terminal that hung up threw EIO, uncaught, in the middle of a run's import, and Node's exit then aborted): a
 * write that fails is dropped, never thrown; EIO, a terminal gone, is a hang-up (terminalHungUp). Once, at start.
 */
export function guardStandardStreams(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EIO') terminalHungUp();
    });
  }
}

/**
 * Your terminal hung up (a SIGHUP, a write that failed with EIO). Node 20 sets its terminal's settings back as it
 * exits and aborts when that fails (nodejs/node#51519; second review: a run whose terminal hung up ended in SIGABRT,
 * and where core dumps are on and their pattern relative, a core file with the run's real secrets landed in the
 * working folder, the next agent's to read). So its standard descriptors that were a terminal are let go as it exits,
 * /dev/null in their place, which Node then leaves alone (it restores only the files it started with).
 */
export function terminalHungUp(): void {
  if (hungUp) return;
  hungUp = true;
  const wasTerminal = [process.stdin, process.stdout, process.stderr].map((s) => s.isTTY === true);
  process.once('exit', () => {
    for (const fd of [0, 1, 2]) {
      if (!wasTerminal[fd]) continue;
      try {
        closeSync(fd);
        openSync('/dev/null', fd === 0 ? 'r' : 'w');
      } catch {
        // Closed is as good: Node skips a descriptor that is gone.
      }
    }
  });
}

/** What is held of stashbase's output while the agent holds the terminal; past it, bytes are counted, not kept. */
export const HELD_MAX_BYTES = 256 * 1024;

/**
 * Holds back every write to standard output and standard error that is a terminal, whatever path makes it
 * (stashbase's warnings, Node's own warnings, a console call), until the returned function is called: then the
 * writes go out in their order (review: one notice was held back, and any other line said during the run would
 * have stopped stashbase at the agent's `tostop`). A write is reported done at once; what passes HELD_MAX_BYTES is
 * counted and said as a count. Streams that are not terminals are left as they are. `first`, given to the returned
 * function, writes before what was held (the terminal's rendering reset, terminalAfterAgent).
 */
export function holdTerminalWrites(streams: Stream[] = [process.stdout, process.stderr]): (first?: () => void) => void {
  const held: Array<{ stream: Stream; chunk: Buffer }> = [];
  let bytes = 0;
  let dropped = 0;
  const restore: Array<() => void> = [];
  for (const stream of streams) {
    if (stream.isTTY !== true) continue;
    const own = Object.getOwnPropertyDescriptor(stream, 'write');
    const hold = (chunk: string | Uint8Array, encoding?: BufferEncoding | ((e?: Error | null) => void), cb?: (e?: Error | null) => void): boolean => {
      const done = typeof encoding === 'function' ? encoding : cb;
      const data = typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8') : Buffer.from(chunk);
      if (bytes + data.length <= HELD_MAX_BYTES) {
        held.push({ stream, chunk: data });
        bytes += data.length;
      } else dropped += data.length;
      if (done) process.nextTick(done, null);
      return true;
    };
    Object.defineProperty(stream, 'write', { value: hold, configurable: true, writable: true, enumerable: false });
    restore.push(() => {
      if (own) Object.defineProperty(stream, 'write', own);
      else delete (stream as unknown as { write?: unknown }).write;
    });
  }
  let released = false;
  return (first) => {
    if (released) return;
    released = true;
    for (const r of restore) r();
    first?.();
    for (const h of held.splice(0)) h.stream.write(h.chunk);
    if (dropped > 0) process.stderr.write(`stashbase: ${dropped} more bytes of its output during the run were not kept\n`);
  };
}

/**
 * What makes your terminal send input of its own, off (the third review: left on by the agent, your shell got junk
 * after the run): mouse reports (X10, button, any-motion, UTF-8, SGR, urxvt), focus reports, bracketed paste (your
 * shell turns it on again at its prompt), application cursor keys and keypad.
 */
const INPUT_MODES_OFF = '\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1004l\x1b[?2004l\x1b[?1l\x1b>';

/**
 * The colours an agent can set and leave (round 37: the foreground set to the background's colour hid everything
 * stashbase said after the run, as the concealed attribute did): xterm's palette, its special colours, the default
 * foreground, background, cursor and highlight colours, each set back to the terminal's own (OSC 104, 105, 110, 111,
 * 112, 117, 119); the Linux console's palette (`ESC ] R`, which it reads: it prints only OSCs it does not know).
 */
const COLOURS_RESET = ['104', '105', '110', '111', '112', '117', '119'].map((n) => `\x1b]${n}\x1b\\`).join('');

/**
 * What sets back the rendering an agent can leave a terminal in, before stashbase says anything after it: the
 * character attributes (concealed, reverse, a colour as the background's), the character set (G0 ASCII, shifted in),
 * line wrapping and the cursor shown, an open hyperlink closed (text after it would link to the agent's address),
 * synchronized output ended (a terminal that honours it shows nothing until then), the scroll region reset with the
 * cursor kept where it is, and the normal screen (not the alternate one, which a later program's exit wipes); a
 * second review added VT52 mode left (`ESC <`: escape sequences are read again), insert mode off (the agent's text
 * pushed along behind stashbase's words), reverse screen and left/right margins off, and what the agent left below
 * the cursor erased (text waiting there to be read with stashbase's). None of it moves the cursor or clears what is
 * above it. The Linux console prints an OSC it does not know: there it is left out (the console has no hyperlinks),
 * its own palette reset in its place; elsewhere the colours are set back too (COLOURS_RESET).
 */
export function renderingReset(term: string | undefined): string {
  const osc = term === 'linux' ? '\x1b]R' : `\x1b]8;;\x1b\\${COLOURS_RESET}`;
  // The kitty keyboard protocol's stack popped (CSI < 99 u): the Linux console would read CSI … u as restore-cursor.
  const kitty = term === 'linux' ? '' : '\x1b[<99u';
  return `\x1b<\x1b[0m\x0f\x1b(B\x1b[4l\x1b[?5l\x1b[?7h\x1b[?25h\x1b[?69l${osc}\x1b[?2026l\x1b7\x1b[r\x1b8\x1b[?1047l\x1b[J${INPUT_MODES_OFF}${kitty}`;
}

/**
 * After an agent's output has ended on your terminal: its rendering set back (renderingReset) where standard error
 * is a terminal that reads escape sequences (not TERM=dumb, nor none), so that what stashbase says next is seen as
 * it is written.
 */
export function terminalAfterAgent(env: NodeJS.ProcessEnv = process.env, stream: Stream = process.stderr): void {
  if (stream.isTTY !== true || env.TERM === undefined || env.TERM === '' || env.TERM === 'dumb') return;
  stream.write(renderingReset(env.TERM));
}
