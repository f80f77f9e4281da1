// Upstream connections for intercepted requests, per host and port (and the
// name TLS verifies): at most `perHost` at once, kept alive between requests
// for `idleMs` (closed by the owner's periodic sweep(), not a timer per
// request), the most recently used first; a request past the limit waits its
// turn, and can leave the queue. Each connection carries its own response
// parser (lib/proxy/h1/exchange.ts sets it up), so a connection is reused only
// when its last response was read to the end.
import type { Duplex } from 'node:stream';

export interface Pooled {
  socket: Duplex;
  /** When it was put back free (0 while in use). */
  idleSince: number;
}

interface Want<C> {
  create: () => C;
  use: (c: C) => void;
}

interface Slot<C extends Pooled> {
  open: number;
  free: C[];
  waiting: Array<Want<C>>;
}

export interface Waiter {
  cancel(): void;
}

export class UpstreamPool<C extends Pooled> {
  private readonly slots = new Map<string, Slot<C>>();
  private closed = false;

  constructor(private readonly perHost: number, private readonly maxFree: number, private readonly idleMs: number) {}

  private slot(key: string): Slot<C> {
    let s = this.slots.get(key);
    if (!s) {
      s = { open: 0, free: [], waiting: [] };
      this.slots.set(key, s);
    }
    return s;
  }

  /** Gives `use` a connection for `key`: a free one, a new one from `create` while under the limit, or the next one released. */
  acquire(key: string, create: () => C, use: (c: C) => void): Waiter {
    const s = this.slot(key);
    const free = s.free.pop();
    if (free) {
      free.idleSince = 0;
      use(free);
      return { cancel: () => {} };
    }
    const want = { create, use };
    if (s.open < this.perHost && !this.closed) {
      this.open(key, s, want);
      return { cancel: () => {} };
    }
    s.waiting.push(want);
    return {
      cancel: () => {
        const i = s.waiting.indexOf(want);
        if (i !== -1) s.waiting.splice(i, 1);
      },
    };
  }

  private open(key: string, s: Slot<C>, want: Want<C>): void {
    s.open++;
    const c = want.create();
    c.socket.once('close', () => this.gone(key, s, c));
    want.use(c);
  }

  /** A connection whose response was read whole and that may carry another request. */
  release(key: string, c: C): void {
    const s = this.slot(key);
    if (c.socket.destroyed) return;
    const next = s.waiting.shift();
    if (next) return next.use(c);
    if (s.free.length >= this.maxFree || this.closed) return void c.socket.destroy();
    c.idleSince = Date.now();
    s.free.push(c);
  }

  /** Closes the connections free for longer than the idle limit (the oldest are first in each list). */
  sweep(now: number): void {
    for (const s of this.slots.values()) {
      while (s.free.length > 0 && now - s.free[0]!.idleSince > this.idleMs) s.free.shift()!.socket.destroy();
    }
  }

  private gone(key: string, s: Slot<C>, c: C): void {
    s.open--;
    const i = s.free.indexOf(c);
    if (i !== -1) s.free.splice(i, 1);
    // Its place goes to the next request waiting, on a new connection.
    const next = s.waiting.shift();
    if (next && !this.closed) return this.open(key, s, next);
    if (s.open === 0 && this.slots.get(key) === s) this.slots.delete(key);
  }

  close(): void {
    this.closed = true;
    for (const s of this.slots.values()) {
      for (const c of s.free) c.socket.destroy();
      s.free = [];
      s.waiting = [];
    }
  }
}
