// What stashbase reads from its children is bounded (lib/exec.ts): many of them
// print what the agent made (commit subjects, file names, a file of the agents'
// home volume). Past the bound the child is killed and its run failed; within
// it, the output comes whole. Real processes (head of /dev/zero), no sandbox.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { capture, collect, probe } from '../../lib/exec.js';

const zeros = (bytes: number) => ({ file: '/bin/sh', args: ['-c', `head -c ${bytes} /dev/zero; echo done >&2`] });
const endless = { file: '/bin/sh', args: ['-c', 'exec cat /dev/zero'] };

test('collect: output past maxBytes kills the child (an endless one too) and says so; within it, all of it and the exit', async () => {
  const over = await collect(endless, { timeoutMs: 20_000, maxBytes: 1 << 20 });
  assert.deepEqual([over.over, over.signal, over.stdout.length, over.stderr], [true, 'SIGKILL', 1 << 20, 'it printed more than 1 MiB, and was stopped']);
  const within = await collect(zeros(1 << 20), { timeoutMs: 20_000, maxBytes: 1 << 20 });
  assert.deepEqual([within.over, within.code, within.stdout.length, within.stderr], [false, 0, 1 << 20, 'done\n']);
});

test('collect: the default bound (64 MiB) holds for a child that never ends', async () => {
  const r = await collect(endless, { timeoutMs: 60_000 });
  assert.deepEqual([r.over, r.signal, r.stdout.length], [true, 'SIGKILL', 64 << 20]);
});

test('capture: output past its bound fails the command, naming why; within it, the output', async () => {
  await assert.rejects(capture(endless, undefined, 20_000, 1 << 20), (e: Error) => /it printed more than 1 MiB, and was stopped/.test(e.message));
  assert.equal((await capture(zeros(1000), undefined, 20_000, 1000)).length, 1000);
});

test('probe: a bound asked past 256 MiB is held at 256 MiB, so a child printing 600 MB fails it rather than throw past V8\'s longest string', () => {
  const r = probe(zeros(600_000_000), 30_000, 1 << 30);
  assert.equal(r.code, null);
  assert.match(r.stderr, /ENOBUFS/);
});

test('(review, round 30) linesShown: each line of another program shown escaped after its prefix, a line split across chunks and a UTF-8 character split across them whole; an error\'s tail lines indented', async () => {
  const { linesShown } = await import('../../lib/exec.js');
  const { CommandFailedError } = await import('../../lib/errors.js');
  const out: string[] = [];
  const shown = linesShown({ write: (s: string) => out.push(s) } as unknown as NodeJS.WritableStream, '  | ');
  const text = Buffer.from('Auto-merging x\nstashbase: forged \x1b]0;t\x07 é\nlast');
  shown.write(text.subarray(0, 20));
  shown.write(text.subarray(20, 41));
  shown.write(text.subarray(41));
  shown.end();
  assert.deepEqual(out, ['  | Auto-merging x\n', '  | stashbase: forged \\x1b]0;t\\x07 é\n', '  | last\n']);
  const e = new CommandFailedError('docker x', 1, 'Error response from daemon: boom\nstashbase: forged line');
  assert.equal(e.message, 'Command failed with exit code 1: docker x\n  Error response from daemon: boom\n  stashbase: forged line');
});
