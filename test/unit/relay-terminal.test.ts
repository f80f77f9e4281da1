// The agent's standard streams on stream 0 of a local sealed run's frames
// (lib/relay/terminal.ts, relay/supervise.go): what the relay sends there is
// read as hostile input (output past its window, standard error apart from a
// terminal, a frame only stashbase may send, an unknown type end the relay,
// controls: the same within bounds is taken); your input goes out within the
// credit the relay grants, and waits while it does not. Then the real relay
// as a process of this host (no container), on pipes and on a terminal of its
// own, with its controls: the same command run directly.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { encodeFrame, FRAME, FrameReader, GRANT_BATCH, HELLO_TEXT, MAX_PAYLOAD, STREAM_WINDOW } from '../../lib/relay/frames.js';
import { RelayMux } from '../../lib/relay/mux.js';
import { sizeArg, TerminalLink } from '../../lib/relay/terminal.js';
import { REPO, requirement } from '../helpers.js';

const RELAY = join(REPO, 'dist', 'relay', `linux-${process.arch === 'arm64' ? 'arm64' : 'amd64'}`, 'stashbase-relay');

const until = async (f: () => boolean, what: string) => {
  for (const t0 = Date.now(); !f(); await new Promise((r) => setTimeout(r, 5))) if (Date.now() - t0 > 5000) assert.fail(`never: ${what}`);
};

/** Your side: an input you type into, the output and error collected; a mux whose relay is the test. */
function harness(tty = false, terminal = true) {
  const typed = new PassThrough() as unknown as NodeJS.ReadStream;
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const sink = (into: Buffer[]) => {
    const p = new PassThrough();
    p.on('data', (b: Buffer) => into.push(b));
    return p;
  };
  const fromRelay = new PassThrough();
  const toRelay = new PassThrough();
  const frames: Array<[number, number, Buffer]> = [];
  const reader = new FrameReader(FRAME.RESIZE);
  toRelay.on('data', (c: Buffer) => reader.push(c, (t, id, p) => frames.push([t, id, p])));
  let ended: [string, boolean] | null = null;
  const link = new TerminalLink({ input: typed, output: sink(out), error: sink(err), tty });
  const mux = new RelayMux(fromRelay, toRelay, { connect: () => connect(1, '127.0.0.1'), maxStreams: 4, onEnd: (why, bad) => (ended = [why, bad]), ...(terminal ? { terminal: link } : {}) });
  const send = (t: number, id: number, p: Buffer | string = '') => fromRelay.write(encodeFrame(t, id, Buffer.isBuffer(p) ? p : Buffer.from(p, 'latin1')));
  const window = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n, 0);
    return b;
  };
  return { typed: typed as unknown as PassThrough, out, err, frames, send, window, mux, ended: () => ended };
}

test('your input goes out as IN frames within the credit the relay grants, waits at the window, and its end as an EOF; the relay\'s output and error come back, granted once written', async () => {
  const h = harness();
  h.typed.write('before the greeting');
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(h.frames.length, 0, 'nothing before the relay greets');
  h.send(FRAME.HELLO, 0, HELLO_TEXT);
  await until(() => h.frames.length > 0, 'the first input');
  const sent = () => h.frames.filter(([t, id]) => t === FRAME.IN && id === 0).reduce((n, [, , p]) => n + p.length, 0);
  h.typed.write(Buffer.alloc(STREAM_WINDOW, 'x'));
  await until(() => sent() === STREAM_WINDOW, 'a window of input');
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(sent(), STREAM_WINDOW, 'no more than the window before a grant');
  assert.ok(h.frames.every(([, , p]) => p.length <= MAX_PAYLOAD));
  h.send(FRAME.WINDOW, 0, h.window(GRANT_BATCH));
  await until(() => sent() === STREAM_WINDOW + 'before the greeting'.length, 'the rest, once granted');
  h.typed.end();
  await until(() => h.frames.some(([t, id]) => t === FRAME.EOF && id === 0), 'its end');
  // Output and error apart (pipes inside), each granted back once written, in batches.
  for (let i = 0; i < 3; i++) h.send(FRAME.OUT, 0, Buffer.alloc(MAX_PAYLOAD, 'o'));
  h.send(FRAME.ERR, 0, 'err');
  await until(() => Buffer.concat(h.out).length === 3 * MAX_PAYLOAD && Buffer.concat(h.err).toString() === 'err', 'output and error');
  await until(() => h.frames.filter(([t, id]) => t === FRAME.WINDOW && id === 0).reduce((n, [, , p]) => n + p.readUInt32BE(0), 0) === 3 * MAX_PAYLOAD + 3, 'all granted back');
  // Granted back, the window's worth again is taken.
  for (let i = 0; i < 4; i++) h.send(FRAME.OUT, 0, Buffer.alloc(MAX_PAYLOAD, 'o'));
  await until(() => Buffer.concat(h.out).length === 7 * MAX_PAYLOAD, 'a window more');
  assert.equal(h.ended(), null);
  h.mux.end('the test is over');
});

test('the relay lies on stream 0: each lie ends it, as a protocol error (controls: within bounds, the same frames are taken; a relay without the agent\'s streams knows none of their types)', async () => {
  const lies: Array<[string, boolean, (h: ReturnType<typeof harness>) => void, RegExp]> = [
    ['output past its window', false, (h) => { for (let n = 0; n <= STREAM_WINDOW; n += MAX_PAYLOAD) h.send(FRAME.OUT, 0, Buffer.alloc(MAX_PAYLOAD)); }, /the agent's output was sent past its window/],
    ['standard error apart from a terminal', true, (h) => h.send(FRAME.ERR, 0, 'x'), /standard error apart from a terminal/],
    ['input, which only stashbase sends', false, (h) => h.send(FRAME.IN, 0, 'x'), /a frame of type 7 on stream 0/],
    ['a resize, which only stashbase sends', false, (h) => h.send(FRAME.RESIZE, 0, '\0\x01\0\x01'), /a frame of type 10 on stream 0/],
    ['a connection on stream 0', false, (h) => h.send(FRAME.OPEN, 0), /a frame of type 2 on stream 0/],
    ['the agent\'s output on a connection', false, (h) => { h.send(FRAME.OPEN, 1); h.send(FRAME.OUT, 1, 'x'); }, /a frame of type 8 on stream 1/],
    ['input granted past the window', false, (h) => h.send(FRAME.WINDOW, 0, h.window(1)), /input granted past the window/],
    ['a type past the last', false, (h) => h.send(11, 0), /unknown type 11/],
  ];
  for (const [name, tty, lie, why] of lies) {
    const h = harness(tty);
    h.send(FRAME.HELLO, 0, HELLO_TEXT);
    lie(h);
    await until(() => h.ended() !== null, name);
    assert.match(h.ended()![0], why, name);
    assert.equal(h.ended()![1], true, name);
  }
  // Controls: a window's worth of output, standard error from pipes, a grant within the window.
  const h = harness(false);
  h.send(FRAME.HELLO, 0, HELLO_TEXT);
  for (let n = 0; n < STREAM_WINDOW; n += MAX_PAYLOAD) h.send(FRAME.OUT, 0, Buffer.alloc(MAX_PAYLOAD));
  h.send(FRAME.ERR, 0, '');
  h.typed.write('x');
  await until(() => h.frames.some(([t]) => t === FRAME.IN), 'input');
  h.send(FRAME.WINDOW, 0, h.window(1));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(h.ended(), null);
  h.mux.end('the test is over');
  // A relay without the agent's streams (a remote run's): their types are unknown.
  const plain = harness(false, false);
  plain.send(FRAME.HELLO, 0, HELLO_TEXT);
  plain.send(FRAME.OUT, 0, 'x');
  await until(() => plain.ended() !== null, 'a plain relay');
  assert.match(plain.ended()![0], /unknown type 8/);
});

test('the size the agent\'s terminal starts with: yours, or 24x80 where it is unknown; pipes: -', () => {
  assert.equal(sizeArg({ tty: true, output: { rows: 30, columns: 100 } }), '30x100');
  assert.equal(sizeArg({ tty: true, output: {} }), '24x80');
  assert.equal(sizeArg({ tty: true, output: { rows: 0, columns: 0 } }), '24x80');
  assert.equal(sizeArg({ tty: false, output: { rows: 30, columns: 100 } }), '-');
});

/** The real relay as a process here, its stream to a mux with your side in a harness; resolves with its exit status. */
async function supervised(size: string, command: (port: number) => string[], input: string) {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child = spawn(RELAY, ['supervise', String(port), '8', size, '--', ...command(port)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const typed = new PassThrough();
  const sink = (into: Buffer[]) => {
    const p = new PassThrough();
    p.on('data', (b: Buffer) => into.push(b));
    return p;
  };
  const link = new TerminalLink({ input: typed as unknown as NodeJS.ReadStream, output: sink(out), error: sink(err), tty: false });
  let ended: [string, boolean] | null = null;
  const proxy = createServer((s) => s.end('PROXY\n'));
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  const mux = new RelayMux(child.stdout, child.stdin, { connect: () => connect((proxy.address() as { port: number }).port, '127.0.0.1'), maxStreams: 8, terminal: link, onEnd: (why, bad) => (ended = [why, bad]) });
  await mux.ready;
  typed.end(input);
  const code = await new Promise<number | null>((r) => child.on('exit', (c, sig) => r(c ?? (sig ? -1 : null))));
  await until(() => ended !== null, 'the stream\'s end');
  proxy.close();
  return { code, out: Buffer.concat(out).toString(), err: Buffer.concat(err).toString(), ended: ended as [string, boolean] | null, port };
}

const built = requirement(existsSync(RELAY), `${RELAY} is not built (npm run build, with Go)`);

test('the real relay on pipes: the command reads your input to its end, its output and error come back apart, its status is the relay\'s; its connection reaches the proxy through the same stream; control: the same command run here', built, async () => {
  // Its connection: to the relay's port, a byte sent (a stream opens at the first), what the proxy says read back.
  const script = 'cat; echo "to error" >&2; exec 3<>/dev/tcp/127.0.0.1/$1 && echo hi >&3 && head -c 6 <&3; exit 3';
  const r = await supervised('-', (port) => ['bash', '-c', script, 'bash', String(port)], 'your input\n');
  assert.equal(r.code, 3, r.err);
  assert.equal(r.out, 'your input\nPROXY\n');
  assert.equal(r.err, 'to error\n');
  // Its stream ended with it (closed, or failed where a last grant met its end), never as a protocol error.
  assert.match(r.ended?.[0] ?? '', /^the relay's stream (closed|failed)$/);
  assert.equal(r.ended?.[1], false);
  const control = spawnSync('bash', ['-c', 'cat; echo "to error" >&2; exit 3'], { input: 'your input\n', encoding: 'utf8' });
  assert.deepEqual([control.status, control.stdout, control.stderr], [3, 'your input\n', 'to error\n']);
});

test('the real relay on a terminal of its own: the command has a terminal of the size given, its line ends made there, and a signal\'s death is 128 and its number; control: on pipes it has none', built, async () => {
  const r = await supervised('30x100', () => ['sh', '-c', 'tty >/dev/null && stty size; kill -9 $$'], '');
  assert.equal(r.code, 137);
  assert.equal(r.out, '30 100\r\n');
  const p = await supervised('-', () => ['sh', '-c', 'tty || echo none'], '');
  assert.equal(p.code, 0);
  assert.equal(p.out, 'not a tty\nnone\n');
});

test('the real relay refuses a size it cannot read, and says how it is used; a command it cannot find is 127', built, () => {
  for (const size of ['0x80', '30x', 'x', '30x100x2', '70000x80', 'big']) {
    const r = spawnSync(RELAY, ['supervise', '40123', '8', size, '--', 'true'], { encoding: 'utf8' });
    assert.equal(r.status, 2, size);
    assert.match(r.stderr, /^usage: stashbase-relay serve PORT \[MAX\] \| gate PORT -- COMMAND\.\.\. \| supervise PORT MAX \(-\|ROWSxCOLS\) -- COMMAND\.\.\. \| lease SECONDS\n$/, size);
  }
  const missing = spawnSync(RELAY, ['supervise', String(20000 + Math.floor(Math.random() * 20000)), '8', '-', '--', 'no-such-command-here'], { encoding: 'buffer' });
  assert.equal(missing.status, 127);
  assert.match(missing.stderr.toString(), /stashbase: no-such-command-here: command not found/);
});

test('(review) the stty that makes your terminal raw is never one the agent could have left: not from a folder of PATH in the working tree (absolute, relative, empty), nor, when no folder of PATH is left, from the current folder (second review); control: a plain search of those PATHs runs it', async () => {
  const { mkdtempSync, rmSync, writeFileSync, existsSync: exists, realpathSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { onTerminal } = await import('../../lib/exec.js');
  const tree = realpathSync(mkdtempSync(join(tmpdir(), 'stty-tree-')));
  const marker = join(tree, 'ran');
  const plant = `#!/bin/sh\necho "$*" >> ${marker}\n`;
  for (const f of [join(tree, 'stty'), join(tree, 'bin', 'stty')]) {
    (await import('node:fs')).mkdirSync(join(f, '..'), { recursive: true });
    writeFileSync(f, plant, { mode: 0o755 });
  }
  const cwd = process.cwd();
  process.chdir(tree);
  try {
    const system = '/usr/local/bin:/usr/bin:/bin';
    const shapes = [`${tree}/bin:${system}`, `bin:${system}`, `:${system}`, `${tree}/bin`, 'bin', ''];
    for (const PATH of shapes) {
      const status = onTerminal({ file: 'stty', args: ['-opost'], env: { PATH } }, 'ignore');
      assert.equal(exists(marker), false, `PATH=${JSON.stringify(PATH)}`);
      // The system's stty ran, and said that /dev/null is no terminal.
      assert.equal(status, 1, `PATH=${JSON.stringify(PATH)}`);
    }
    // Controls: the same PATHs searched plainly run the planted one.
    for (const PATH of [`${tree}/bin:${system}`, `:${system}`, '']) {
      rmSync(marker, { force: true });
      spawnSync('stty', ['-opost'], { env: { PATH }, stdio: 'ignore' });
      assert.equal(exists(marker), true, `control PATH=${JSON.stringify(PATH)}`);
    }
  } finally {
    process.chdir(cwd);
    rmSync(tree, { recursive: true, force: true });
  }
});
