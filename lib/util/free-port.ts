// A free TCP port on the loopback, as the OS assigns one: what the proxy
// listens on when the sandbox shares the host's network and must know the
// port before it starts.
import { createServer } from 'node:net';
import { SandboxUnavailableError } from '../errors.js';

export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', (e) => reject(new SandboxUnavailableError(`no free port on 127.0.0.1 for the proxy (${e.message}); nothing was run`)));
    server.listen({ host: '127.0.0.1', port: 0 }, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
