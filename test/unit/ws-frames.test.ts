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
