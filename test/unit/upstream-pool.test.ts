// The intercepting proxy's upstream pool, with streams for sockets: a free
// connection is reused most recent first, closed once idle past the limit
// (by the owner's sweep), and a request past the per-host limit waits for the
// next one released, or leaves the queue.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import { type Pooled, UpstreamPool } from '../../lib/proxy/h1/pool.js';

class Conn implements Pooled {
  static made = 0;
  readonly socket = new PassThrough();
  idleSince = 0;
  readonly n = ++Conn.made;
}

function take(pool: UpstreamPool<Conn>, key = 'k'): Promise<Conn> {
  return new Promise((resolve) => pool.acquire(key, () => new Conn(), resolve));
}

test('a free connection is reused (the latest first) and closed by the sweep once idle past the limit', async () => {
  const pool = new UpstreamPool<Conn>(4, 8, 5000);
  const a = await take(pool);
  const b = await take(pool);
  pool.release('k', a);
  pool.release('k', b);
  assert.equal(await take(pool), b);
  pool.release('k', b);
  b.idleSince -= 4000;
  a.idleSince -= 6000;
  pool.sweep(Date.now());
  assert.equal(a.socket.destroyed, true);
  assert.equal(b.socket.destroyed, false);
  assert.equal(await take(pool), b);
  assert.equal(b.idleSince, 0);
  pool.release('k', b);
  pool.sweep(Date.now() + 5001);
  assert.equal(b.socket.destroyed, true);
  await tick();
  const c = await take(pool);
  assert.notEqual(c, a);
  assert.notEqual(c, b);
  pool.close();
});

test('past the per-host limit a request waits for the next release; one that leaves the queue is never served', async () => {
  const pool = new UpstreamPool<Conn>(1, 8, 5000);
  const a = await take(pool);
  const served: string[] = [];
  const left = pool.acquire('k', () => new Conn(), () => served.push('left'));
  pool.acquire('k', () => new Conn(), (c) => served.push(c === a ? 'second, on a' : 'second, new'));
  assert.equal(served.length, 0);
  left.cancel();
  pool.release('k', a);
  assert.deepEqual(served, ['second, on a']);
  // Another host is not held up by this one's limit.
  const other = await take(pool, 'other');
  assert.notEqual(other, a);
  // A connection that closes gives its place to the next request waiting, on a new one.
  pool.acquire('k', () => new Conn(), (c) => served.push(c === a ? 'third, on a' : 'third, new'));
  a.socket.destroy();
  await tick();
  assert.deepEqual(served, ['second, on a', 'third, new']);
  pool.close();
});
