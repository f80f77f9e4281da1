// A raw client of the proxy for the tests: a CONNECT tunnel (with TLS to the
// proxy's leaf, or plain), and a reader that keeps every byte with the time
// it arrived, so that a test can say what the agent could ever read, and when.
import { connect as netConnect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';

export interface Reader {
  /** Every byte read so far. */
  all(): Buffer;
  chunks: Array<{ at: number; data: Buffer }>;
  /** Resolves when the connection ended or closed, with the time. */
  closed: Promise<number>;
  /** Resolves once the bytes read include `text`. */
  until(text: string | RegExp | ((all: Buffer) => boolean), timeoutMs?: number): Promise<Buffer>;
}

export function reader(s: Duplex): Reader {
  const chunks: Array<{ at: number; data: Buffer }> = [];
  const waiters: Array<() => void> = [];
  s.on('data', (d: Buffer) => {
    chunks.push({ at: Date.now(), data: d });
    for (const w of [...waiters]) w();
  });
  s.on('error', () => {});
  s.resume(); // a tunnel handed over paused
  const closed = new Promise<number>((res) => {
    s.once('close', () => res(Date.now()));
    s.once('end', () => res(Date.now()));
  });
  const all = () => Buffer.concat(chunks.map((c) => c.data));
  return {
    all,
    chunks,
    closed,
    until: (text, timeoutMs = 5000) =>
      new Promise((resolve, reject) => {
        const hit = () => (typeof text === 'string' ? all().includes(text) : typeof text === 'function' ? text(all()) : text.test(all().toString('latin1')));
        const timer = setTimeout(() => reject(new Error(`no ${String(text)} within ${timeoutMs} ms; read: ${JSON.stringify(all().toString('latin1').slice(0, 400))}`)), timeoutMs);
        const check = () => {
          if (!hit()) return;
          clearTimeout(timer);
          waiters.splice(waiters.indexOf(check), 1);
          resolve(all());
        };
        waiters.push(check);
        void closed.then(() => setTimeout(() => {
          if (waiters.includes(check) && !hit()) {
            clearTimeout(timer);
            waiters.splice(waiters.indexOf(check), 1);
            reject(new Error(`closed before ${String(text)}; read: ${JSON.stringify(all().toString('latin1').slice(0, 400))}`));
          }
        }, 10));
        check();
      }),
  };
}

/** A plain connection to the proxy. */
export function toProxy(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = netConnect(port, '127.0.0.1', () => resolve(s));
    s.setNoDelay(true);
    s.on('error', reject);
  });
}

/** A CONNECT tunnel to host:port through the proxy, then TLS to the proxy's leaf (unless plain). */
export async function tunnel(proxyPort: number, host: string, port: number, o: { caPem?: string; plain?: boolean; auth?: string } = {}): Promise<Duplex> {
  const raw = await toProxy(proxyPort);
  raw.write(`CONNECT ${host}:${port} HTTP/1.1\r\nHost: ${host}:${port}\r\n${o.auth ? `Proxy-Authorization: ${o.auth}\r\n` : ''}\r\n`);
  await new Promise<void>((resolve, reject) => {
    let head = '';
    const on = (d: Buffer) => {
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      raw.off('data', on);
      raw.pause();
      if (!head.startsWith('HTTP/1.1 200')) reject(new Error(`CONNECT refused: ${head}`));
      else resolve();
    };
    raw.on('data', on);
  });
  if (o.plain) return raw;
  return new Promise((resolve, reject) => {
    const t = tlsConnect({ socket: raw, servername: host, ca: o.caPem }, () => resolve(t));
    t.setNoDelay?.(true);
    t.on('error', reject);
  });
}

/** Everything the agent could read, as Latin-1 text (base64 and percent forms are ASCII). */
export function text(b: Buffer): string {
  return b.toString('latin1');
}
