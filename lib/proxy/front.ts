// A listener that loads the real proxy (Node's HTTP server, its parser and the
// resolver: a few milliseconds of start-up) only when the first connection
// arrives, then hands it that connection and every later one. A run whose agent
// never uses the network never pays for them.
import type { Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { armHeadDeadline, DEFAULT_LIMITS, type ProxyLimits } from './limits.js';

export interface ConnectionSink {
  emit(event: 'connection', socket: Socket): boolean;
  close(): unknown;
}

export function deferredServer(load: () => Promise<ConnectionSink>, limits: ProxyLimits = DEFAULT_LIMITS): Server {
  let real: Promise<ConnectionSink> | null = null;
  // Paused: nothing is read before the real server takes the socket over.
  const front = createServer({ pauseOnConnect: true, noDelay: true }, (socket) => {
    socket.on('error', () => socket.destroy()); // a client gone while the server loads
    real ??= load().then((server) => {
      // It never listens itself: its head deadline starts here.
      armHeadDeadline(server as unknown as HttpServer, limits.headTimeoutMs);
      return server;
    });
    real.then(
      (server) => {
        server.emit('connection', socket);
        socket.resume(); // the HTTP server reads from here on
      },
      () => socket.destroy(),
    );
  });
  front.on('close', () => void real?.then((server) => server.close(), () => {}));
  return front;
}
