// Runs inside the sandbox's network namespace (started by nsenter, outside the
// sandbox's PID namespace): binds the proxy's port on the namespace's loopback
// and hands the listening socket to stashbase over the IPC channel, then exits.
// stashbase serves the proxy on that socket itself, so nothing inside the
// sandbox can kill or reconfigure the only way out.
import { createServer } from 'node:net';

const port = Number(process.argv[2]);
const server = createServer();
server.on('error', (e) => {
  process.send?.({ error: e.message });
  process.exit(1);
});
server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
  process.send?.({ ready: true }, server, () => {
    server.close();
    process.disconnect?.();
  });
});
