// The WebSocket frame relay, pure: what one read of many frames becomes, and
// the masking keys it gives the frames it writes toward a server.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PASS } from '../../lib/proxy/message-filter.js';
import { FrameRelay } from '../../lib/proxy/ws-frames.js';
import { frame, messages, readFrames } from '../ws-util.js';

const plain = () => PASS;

test('a read of 5,000 small frames goes on as one write, every message intact and re-masked, each with a key of its own', async () => {
  const relay = new FrameRelay({ fromClient: true, filter: plain, control: (p) => p });
  const writes: Buffer[] = [];
  relay.on('data', (d: Buffer) => writes.push(d));
  const sent = Array.from({ length: 5000 }, (_, i) => `m${i}`);
  relay.write(Buffer.concat(sent.map((m) => frame(m))));
  await new Promise((res) => setImmediate(res));
  assert.equal(writes.length, 1, 'one write for the read');
  const { frames, rest } = readFrames(writes[0]!);
  assert.equal(rest.length, 0);
  assert.ok(frames.every((f) => f.masked));
  assert.deepEqual(messages(frames), sent);
  // Keys drawn from one pool of random bytes: still one per frame, not repeated.
  const keys = new Set<string>();
  for (let at = 0, i = 0; i < frames.length; i++) {
    const lenByte = writes[0]![at + 1]! & 0x7f;
    keys.add(writes[0]!.subarray(at + 2, at + 6).toString('hex'));
    at += 6 + lenByte;
  }
  assert.ok(keys.size > 4990, `${keys.size} distinct keys of 5000`);
});

test('(review, round 38) a message toward the upstream in fragments, guarded: a value whose end waits unread when the agent goes is named by abandon() (the upgrade audits it); one the 2 ms release finds fails the relay with the refusal without another byte; control: nothing to look for, the same fragments go whole', async () => {
  const { BodyRefused, Guard } = await import('../../lib/proxy/message-filter.js');
  const REAL = 'ghp_realRealRealRealRealRealReal0123456';
  const guard = () => new Guard([{ needle: Buffer.from(REAL), rule: 'r', suspect: 'GITHUB_TOKEN' }]);
  const control = (p: Buffer) => p;
  const first = frame(`${'x'.repeat(40)}${REAL.slice(0, 20)}`, { fin: false });
  const out = (r: FrameRelay) => {
    const got: Buffer[] = [];
    r.on('data', (b: Buffer) => got.push(b));
    return () => messages(readFrames(Buffer.concat(got)).frames.map((f) => ({ ...f, fin: true }))).join('');
  };
  // The value's last 19 bytes wait unread (fewer than the window), then the agent goes.
  const a = new FrameRelay({ fromClient: true, filter: guard, control });
  const sentA = out(a);
  a.write(first);
  a.write(frame(REAL.slice(20), { fin: false, opcode: 0 }));
  await new Promise((r) => setTimeout(r, 20));
  const found = a.abandon();
  assert.ok(found instanceof BodyRefused);
  assert.equal(found.suspect, 'GITHUB_TOKEN');
  assert.equal(sentA().includes(REAL.slice(0, 12)), false);
  // With a line break after it, the timer's release reads it: the relay fails with the refusal.
  const b = new FrameRelay({ fromClient: true, filter: guard, control });
  const sentB = out(b);
  const failed = new Promise<unknown>((resolve) => b.on('error', resolve));
  b.write(first);
  b.write(frame(`${REAL.slice(20)}\n`, { fin: false, opcode: 0 }));
  const e = await Promise.race([failed, new Promise((r) => setTimeout(() => r('no refusal'), 500))]);
  assert.ok(e instanceof BodyRefused, String(e));
  assert.equal(sentB().includes(REAL.slice(0, 12)), false);
  // Control: with nothing to look for, the same fragments go whole.
  const c = new FrameRelay({ fromClient: true, filter: plain, control });
  const sentC = out(c);
  c.write(first);
  c.write(frame(`${REAL.slice(20)}\n`, { fin: true, opcode: 0 }));
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(sentC(), `${'x'.repeat(40)}${REAL}\n`);
});
