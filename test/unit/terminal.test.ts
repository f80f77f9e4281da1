import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HELD_MAX_BYTES, holdTerminalWrites, renderingReset, terminalAfterAgent } from '../../lib/util/terminal.js';

class FakeTty {
  out: string[] = [];
  constructor(readonly isTTY: boolean) {}
  write(chunk: string | Uint8Array): boolean {
    this.out.push(Buffer.from(chunk).toString('utf8'));
    return true;
  }
}
const fake = (isTTY = true) => new FakeTty(isTTY) as unknown as NodeJS.WriteStream & FakeTty;

test('writes to a terminal are held in order, across streams, and said once released, after what `first` writes; callbacks are called at once', async () => {
  const [out, err, file] = [fake(), fake(), fake(false)];
  const release = holdTerminalWrites([out, err, file]);
  let called = 0;
  err.write('one\n', () => called++);
  out.write(Buffer.from('two\n'));
  err.write('74687265650a', 'hex');
  file.write('to a file, at once\n');
  await new Promise((r) => setImmediate(r));
  assert.equal(called, 1);
  assert.deepEqual([out.out, err.out, file.out], [[], [], ['to a file, at once\n']]);
  release(() => err.write('RESET'));
  assert.deepEqual(err.out, ['RESET', 'one\n', 'three\n']);
  assert.deepEqual(out.out, ['two\n']);
  // Released: writes go through again; a second release does nothing.
  out.write('after\n');
  release();
  assert.deepEqual(out.out, ['two\n', 'after\n']);
  assert.equal(Object.hasOwn(out, 'write'), false);
});

test('past HELD_MAX_BYTES, bytes are counted and the count said on stderr', () => {
  const err = fake();
  const release = holdTerminalWrites([err]);
  err.write('x'.repeat(HELD_MAX_BYTES - 1));
  err.write('yy');
  err.write('z');
  const saved = process.stderr.write;
  const said: string[] = [];
  process.stderr.write = ((s: string) => said.push(s) > 0) as typeof process.stderr.write;
  try {
    release();
  } finally {
    process.stderr.write = saved;
  }
  assert.deepEqual(err.out.map((s) => s.length), [HELD_MAX_BYTES - 1, 1]);
  assert.deepEqual(said, ['stashbase: 2 more bytes of its output during the run were not kept\n']);
});

test('the rendering reset: whole, with no OSC on the Linux console; said only on a terminal that reads escapes', () => {
  const input = '\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1004l\x1b[?2004l\x1b[?1l\x1b>';
  // The colours (round 37): xterm's palette, special, foreground, background, cursor and highlight colours reset.
  const colours = '\x1b]104\x1b\\\x1b]105\x1b\\\x1b]110\x1b\\\x1b]111\x1b\\\x1b]112\x1b\\\x1b]117\x1b\\\x1b]119\x1b\\';
  assert.equal(renderingReset('xterm-256color'), `\x1b<\x1b[0m\x0f\x1b(B\x1b[4l\x1b[?5l\x1b[?7h\x1b[?25h\x1b[?69l\x1b]8;;\x1b\\${colours}\x1b[?2026l\x1b7\x1b[r\x1b8\x1b[?1047l\x1b[J${input}\x1b[<99u`);
  assert.equal(renderingReset('linux'), `\x1b<\x1b[0m\x0f\x1b(B\x1b[4l\x1b[?5l\x1b[?7h\x1b[?25h\x1b[?69l\x1b]R\x1b[?2026l\x1b7\x1b[r\x1b8\x1b[?1047l\x1b[J${input}`);
  for (const [env, isTTY, said] of [[{ TERM: 'xterm' }, true, [renderingReset('xterm')]], [{ TERM: 'dumb' }, true, []], [{}, true, []], [{ TERM: 'xterm' }, false, []]] as const) {
    const s = fake(isTTY);
    terminalAfterAgent(env, s);
    assert.deepEqual(s.out, said, JSON.stringify(env));
  }
});

test('(round 37) the colours an agent redefined (a palette entry, the foreground set to the background\'s colour, the cursor) are all set back by the reset, as a real terminal emulator (xterm.js) reads it; control: without it they stay redefined', async () => {
  const { default: headless } = await import('@xterm/headless');
  const overridden = async (bytes: string) => {
    const t = new headless.Terminal({ allowProposedApi: true, cols: 80, rows: 5 });
    const set = new Set<number>();
    // xterm.js's parser reports each colour request (1: set, 2: set back; no index: all of them).
    const input = (t as unknown as { _core: { _inputHandler: { onColor: (f: (e: Array<{ type: number; index?: number }>) => void) => void } } })._core._inputHandler;
    input.onColor((events) => {
      for (const e of events) {
        if (e.type === 1 && e.index !== undefined) set.add(e.index);
        if (e.type === 2) e.index === undefined ? set.clear() : set.delete(e.index);
      }
    });
    await new Promise<void>((resolve) => t.write(bytes, resolve));
    t.dispose();
    return [...set].sort((a, b) => a - b);
  };
  const agent = '\x1b]4;1;rgb:00/00/00\x07\x1b]10;rgb:00/00/00\x1b\\\x1b]11;rgb:00/00/00\x1b\\\x1b]12;rgb:00/00/00\x1b\\';
  assert.deepEqual(await overridden(agent), [1, 256, 257, 258]);
  assert.deepEqual(await overridden(agent + renderingReset('xterm-256color')), []);
});
