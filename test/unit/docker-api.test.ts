// The engine's API spoken directly (lib/docker/api.ts), against a stand-in
// engine on a Unix socket of the test's own: which engines it is used for
// (whole answers), the exact exec request the docker CLI would make, the exec
// stream's frames taken apart however they are cut (and a frame that is not
// the engine's format ending the stream), the bounds on answers and event
// lines, and the start heard on the event stream.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { apiRequest, closeApi, type EngineApi, engineApiOf, engineApiOfEndpoint, EngineApiError, execAttach, removeContainer, watchDie } from '../../lib/docker/api.js';
import { readFileSync } from 'node:fs';
import { imageRefPath } from '../../lib/docker/engine.js';

const dir = mkdtempSync(join(tmpdir(), 'stashbase-api-'));
const servers: Server[] = [];
after(() => {
  for (const s of servers) s.close();
  rmSync(dir, { recursive: true, force: true });
});

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;
type Upgrade = (req: IncomingMessage, body: string, socket: Socket) => void;

let n = 0;
/** A stand-in engine on a Unix socket; every request recorded with its body. */
async function engine(handle: Handler, upgrade?: Upgrade): Promise<{ api: EngineApi; seen: { method: string; url: string; body: string }[] }> {
  const seen: { method: string; url: string; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (b: Buffer) => (body += b.toString('utf8')));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body });
      handle(req, body, res);
    });
  });
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    // The body of an upgrade request arrives on the socket (after `head`).
    let body = head.toString('utf8');
    const done = () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body });
      upgrade?.(req, body, socket);
    };
    if (body.length >= Number(req.headers['content-length'] ?? 0)) return done();
    socket.once('data', (b: Buffer) => {
      body += b.toString('utf8');
      done();
    });
  });
  servers.push(server);
  const path = join(dir, `engine-${n++}.sock`);
  await new Promise<void>((r) => server.listen(path, r));
  return { api: { socketPath: path, address: `unix://${path}` }, seen };
}

const json = (res: ServerResponse, status: number, v: unknown) => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(v));
};

/** One of the engine's frames: the stream (1 stdout, 2 stderr), three zero bytes, the length. */
function frame(kind: number, payload: Buffer | string): Buffer {
  const p = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  const h = Buffer.alloc(8);
  h[0] = kind;
  h.writeUInt32BE(p.length, 4);
  return Buffer.concat([h, p]);
}

const ID = 'a'.repeat(64);

test('engineApiOf: the engines the CLI would reach over a local socket or plain loopback TCP, nothing else', () => {
  assert.deepEqual(engineApiOf('', {}, 'linux'), { socketPath: '/var/run/docker.sock', address: 'unix:///var/run/docker.sock' });
  assert.deepEqual(engineApiOf('unix:///run/user/1000/docker.sock', {}, 'darwin'), { socketPath: '/run/user/1000/docker.sock', address: 'unix:///run/user/1000/docker.sock' });
  assert.deepEqual(engineApiOf('tcp://127.0.0.1:2375', {}, 'linux'), { host: '127.0.0.1', port: 2375, address: 'tcp://127.0.0.1:2375' });
  assert.deepEqual(engineApiOf('tcp://[::1]:2375', {}, 'linux'), { host: '::1', port: 2375, address: 'tcp://[::1]:2375' });
  for (const host of ['unix://docker.sock', 'tcp://10.0.0.2:2375', 'tcp://localhost.example:2375', 'tcp://127.0.0.1', 'tcp://127.0.0.1:99999', 'ssh://me@box', 'npipe:////./pipe/docker_engine', 'fd://']) assert.equal(engineApiOf(host, {}, 'linux'), null, host);
  // TLS is the CLI's: a loopback engine behind it is left to the CLI.
  assert.equal(engineApiOf('tcp://127.0.0.1:2376', { DOCKER_TLS_VERIFY: '1' }, 'linux'), null);
  assert.equal(engineApiOf('tcp://127.0.0.1:2376', { DOCKER_CERT_PATH: '/c' }, 'linux'), null);
  assert.equal(engineApiOf('', {}, 'win32'), null);
  // Through a context: only its Unix socket (found in review: a context the CLI could not read is not the default
  // engine, and a TCP context's TLS settings are in the context, not the environment).
  assert.deepEqual(engineApiOfEndpoint({ from: 'the context "desk"', host: 'unix:///home/me/.docker/run/docker.sock', context: 'desk' }, {}, 'darwin'), { socketPath: '/home/me/.docker/run/docker.sock', address: 'unix:///home/me/.docker/run/docker.sock' });
  assert.equal(engineApiOfEndpoint({ from: 'the context "gone"', host: '', context: 'gone' }, {}, 'linux'), null);
  assert.equal(engineApiOfEndpoint({ from: 'the context "tls"', host: 'tcp://127.0.0.1:2376', context: 'tls' }, {}, 'linux'), null);
  assert.deepEqual(engineApiOfEndpoint({ from: 'the default context', host: '' }, {}, 'linux'), { socketPath: '/var/run/docker.sock', address: 'unix:///var/run/docker.sock' });
});

test('imageRefPath: a ref the engine would answer as it is, else null (the CLI asks)', () => {
  assert.equal(imageRefPath('stashbase-sandbox:latest'), '/images/stashbase-sandbox:latest/json');
  assert.equal(imageRefPath('registry.example:5000/team/img@sha256:' + 'a'.repeat(64)), `/images/registry.example:5000/team/img@sha256:${'a'.repeat(64)}/json`);
  // Found in review: segments the engine cleans are answered with a redirect, not the image.
  for (const ref of ['foo/', 'a//b', 'x/./y', 'x/../y', '../etc', 'a?b', 'a#b', 'a%2fb', '/abs', '']) assert.equal(imageRefPath(ref), null, ref);
});

test('execAttach: the exec the CLI would make (docker exec -i --user --workdir), started on a hijacked stream whose frames are taken apart however they are cut', async () => {
  let server: Socket | null = null;
  const { api, seen } = await engine((req, _body, res) => {
    if (req.method === 'POST' && req.url === '/containers/stashbase-agent-run-x-agent/exec') return json(res, 201, { Id: ID });
    json(res, 404, { message: 'no such thing' });
  }, (_req, _body, socket) => {
    server = socket;
    socket.write('HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n');
    // Cut at every byte across two frames, then a stderr frame and a large stdout one in one write.
    const bytes = Buffer.concat([frame(1, 'hello '), frame(1, 'world\n')]);
    for (const b of bytes) socket.write(Buffer.from([b]));
    socket.write(Buffer.concat([frame(2, 'its last words\n'), frame(1, Buffer.alloc(100_000, 120))]));
    // What the exec reads from its input is echoed as stdout.
    socket.on('data', (b: Buffer) => socket.write(frame(1, b)));
  });
  const s = await execAttach(api, { container: 'stashbase-agent-run-x-agent', user: '2147483646:2147483646', workdir: '/', cmd: ['/.stashbase-relay', 'serve', '3128'] });
  const chunks: Buffer[] = [];
  let total = 0;
  const want = 12 + 100_000 + 4;
  await new Promise<void>((resolve) => {
    s.stdout.on('data', (b: Buffer) => {
      chunks.push(b);
      total += b.length;
      if (total === 12 + 100_000) s.stdin.write('ping');
      if (total >= want) resolve();
    });
  });
  const out = Buffer.concat(chunks);
  assert.equal(out.subarray(0, 12).toString(), 'hello world\n');
  assert.ok(out.subarray(12, 12 + 100_000).every((c) => c === 120));
  assert.equal(out.subarray(12 + 100_000).toString(), 'ping');
  assert.equal(s.stderrTail(), 'its last words\n');
  assert.deepEqual(seen.map((r) => [r.method, r.url]), [['POST', '/containers/stashbase-agent-run-x-agent/exec'], ['POST', `/exec/${ID}/start`]]);
  assert.deepEqual(JSON.parse(seen[0]!.body), { AttachStdin: true, AttachStdout: true, AttachStderr: true, Tty: false, User: '2147483646:2147483646', WorkingDir: '/', Cmd: ['/.stashbase-relay', 'serve', '3128'] });
  assert.deepEqual(JSON.parse(seen[1]!.body), { Detach: false, Tty: false });
  // The engine ends it: stdout ends, `closed` resolves.
  (server as Socket | null)?.end();
  await s.closed;
  assert.equal((s.stdout as unknown as { writableEnded: boolean }).writableEnded, true);
});

test('execAttach: output not taken pauses the connection with one drain listener, however many frames a chunk holds (found in review: one each)', async () => {
  const { api } = await engine((_req, _body, res) => json(res, 201, { Id: ID }), (_req, _body, socket) => {
    socket.write('HTTP/1.1 101 UPGRADED\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n');
    const frames: Buffer[] = [];
    for (let i = 0; i < 20_000; i++) frames.push(frame(1, 'x'));
    socket.write(Buffer.concat(frames));
  });
  const s = await execAttach(api, { container: 'c', user: '1:1', workdir: '/', cmd: ['x'] });
  s.stdout.pause();
  await new Promise((r) => setTimeout(r, 200));
  assert.ok(s.stdout.listenerCount('drain') <= 1, String(s.stdout.listenerCount('drain')));
  let got = 0;
  s.stdout.on('data', (b: Buffer) => (got += b.length));
  s.stdout.resume();
  for (let i = 0; i < 100 && got < 20_000; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(got, 20_000);
  s.destroy();
});

test('execAttach: a frame header that is not the engine\'s ends the stream at once, said in its tail; nothing past it is passed on', async () => {
  const { api } = await engine((_req, _body, res) => json(res, 201, { Id: ID }), (_req, _body, socket) => {
    socket.write('HTTP/1.1 101 UPGRADED\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n');
    const bad = frame(1, 'after');
    bad[2] = 7;
    socket.write(Buffer.concat([frame(1, 'before'), bad, frame(1, 'never')]));
  });
  const s = await execAttach(api, { container: 'c', user: '1:1', workdir: '/', cmd: ['x'] });
  let out = '';
  s.stdout.on('data', (b: Buffer) => (out += b.toString()));
  await s.closed;
  assert.equal(out, 'before');
  assert.match(s.stderrTail(), /not framed as expected/);
});

test('execAttach: the engine refusing the exec (no such container, not running) rejects with its status and message', async () => {
  const { api } = await engine((_req, _body, res) => json(res, 409, { message: 'Container abc is not running' }));
  await assert.rejects(execAttach(api, { container: 'c', user: '1:1', workdir: '/', cmd: ['x'] }), (e: unknown) => e instanceof EngineApiError && e.status === 409 && e.message === 'Container abc is not running');
  // An exec id that is not one: refused before it is put in a path.
  const odd = await engine((_req, _body, res) => json(res, 201, { Id: '../../containers/x/kill' }));
  await assert.rejects(execAttach(odd.api, { container: 'c', user: '1:1', workdir: '/', cmd: ['x'] }), /an exec without an id/);
  assert.deepEqual(odd.seen.map((r) => r.url), ['/containers/c/exec']);
});

test('apiRequest: an answer past its bound, or not JSON, rejects; an error status gives the engine\'s message', async () => {
  const { api } = await engine((req, _body, res) => {
    if (req.url === '/big') {
      res.writeHead(200);
      res.end(`"${'x'.repeat(2000)}"`);
    } else if (req.url === '/text') {
      res.writeHead(200);
      res.end('<html>');
    } else json(res, 404, { message: 'No such image: nothing:latest' });
  });
  await assert.rejects(apiRequest(api, 'GET', '/big', undefined, { maxBytes: 1000 }), /passed 1000 bytes/);
  assert.equal((await apiRequest(api, 'GET', '/big', undefined, { maxBytes: 4000 }) as string).length, 2000);
  await assert.rejects(apiRequest(api, 'GET', '/text'), /is not JSON/);
  // A redirect is not an answer (found in review: the engine's for a path it cleans, with an empty body).
  const moved = await engine((_req, _body, res) => {
    res.writeHead(301, { Location: '/images/foo/json' });
    res.end();
  });
  await assert.rejects(apiRequest(moved.api, 'GET', '/images/foo//json'), (e: unknown) => e instanceof EngineApiError && e.status === 301);
  await assert.rejects(apiRequest(api, 'GET', '/images/nothing:latest/json'), (e: unknown) => e instanceof EngineApiError && e.status === 404 && e.message === 'No such image: nothing:latest');
  // Removal: DELETE with force, a missing container no error.
  const gone = await engine((_req, _body, res) => json(res, 404, { message: 'No such container: c' }));
  await removeContainer(gone.api, 'stashbase-agent-run-x-agent');
  assert.deepEqual(gone.seen.map((r) => [r.method, r.url]), [['DELETE', '/containers/stashbase-agent-run-x-agent?force=true']]);
  // No engine there: a rejection naming the address, never a hang.
  await assert.rejects(apiRequest({ socketPath: join(dir, 'none.sock'), address: 'unix:///none' }, 'GET', '/info'), /cannot reach the Docker engine at unix:\/\/\/none/);
});

test('watchDie: subscribed once the engine answers, `since` a few seconds back; heard on the container\'s die event alone, by its exact name, a partial line no event; its state never asked (no die is assumed); a stream that floods or ends is not heard; cancelled, it rejects', async () => {
  let stream: ServerResponse | null = null;
  const { api, seen } = await engine((_req, _body, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('');
    stream = res;
  });
  const w = watchDie(api, 'stashbase-agent-run-x-agent');
  await w.subscribed;
  let died = false;
  void w.heard.then(() => (died = true));
  const url = new URL(seen[0]!.url, 'http://docker');
  assert.equal(url.pathname, '/events');
  assert.deepEqual(JSON.parse(url.searchParams.get('filters')!), { type: ['container'], container: ['stashbase-agent-run-x-agent'], event: ['die'] });
  // Found in review: the engine answers before it listens; `since` (a few seconds back) has it replay an event in between.
  const since = Number(url.searchParams.get('since'));
  assert.ok(since <= Date.now() / 1000 - 4 && since >= Date.now() / 1000 - 7, String(since));
  // Its start, and another container's die whose name begins with this one's (the engine's filter matches names by
  // prefix), and a partial line: not its end.
  (stream as ServerResponse | null)!.write('{"status":"start","Action":"start","Actor":{"Attributes":{"name":"stashbase-agent-run-x-agent"}}}\n');
  (stream as ServerResponse | null)!.write('{"status":"die","Action":"die","Actor":{"Attributes":{"name":"stashbase-agent-run-x-agent-du"}}}\n{"status":"di');
  await new Promise((r) => setTimeout(r, 600));
  assert.equal(died, false);
  assert.deepEqual(seen.map((r) => new URL(r.url, 'http://docker').pathname), ['/events'], 'no state asked');
  (stream as ServerResponse | null)!.write('e","Action":"die","Actor":{"Attributes":{"name":"stashbase-agent-run-x-agent","exitCode":"0"}}}\n');
  await w.heard;
  w.cancel();
  // A stream that floods one endless line, or ends: not read further, never heard, nothing else asked.
  for (const end of [false, true]) {
    const other = await engine((_req, _body, res) => {
      res.writeHead(200);
      if (end) res.end();
      else res.write('x'.repeat(70 * 1024));
    });
    const o = watchDie(other.api, 'c');
    await o.subscribed;
    let heard = false;
    void o.heard.then(() => (heard = true), () => undefined);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(heard, false);
    assert.equal(other.seen.length, 1);
    o.cancel();
    await assert.rejects(o.heard, /cancelled/);
  }
});

/**
 * A stand-in for `ssh … docker system dial-stdio`: its standard input and
 * output joined to the stand-in engine's socket, a line in `count` per start;
 * it ends once both ways are over, as dial-stdio does.
 */
function dialer(socketPath: string, count: string): { file: string; args: string[] } {
  const script = `const fs = require('fs'); fs.appendFileSync(${JSON.stringify(count)}, 'x'); const s = require('net').connect(${JSON.stringify(socketPath)}); process.stdin.pipe(s); s.pipe(process.stdout); s.on('close', () => process.exit(0));`;
  return { file: process.execPath, args: ['-e', script] };
}

test('a dialed API (the docker CLI\'s way to an ssh:// engine): each connection a command\'s standard input and output; an idle one kept for the next request, parallel ones each their own', async () => {
  const { api: local, seen } = await engine((req, _body, res) => json(res, 200, { url: req.url }));
  const count = join(dir, `dials-${n++}`);
  const api: EngineApi = { dial: dialer(local.socketPath!, count), address: 'ssh://me@box' };
  try {
    for (const path of ['/_ping', '/info', '/version']) assert.deepEqual({ ...(await apiRequest(api, 'GET', path, undefined, { timeoutMs: 10_000 }) as object) }, { url: path });
    assert.equal(readFileSync(count, 'utf8'), 'x', 'three requests in turn, one command');
    const answers = await Promise.all(['/a', '/b', '/c'].map((p) => apiRequest(api, 'GET', p)));
    assert.deepEqual(answers.map((a) => ({ ...(a as object) })), [{ url: '/a' }, { url: '/b' }, { url: '/c' }]);
    assert.equal(readFileSync(count, 'utf8'), 'xxx', 'three at once: the kept one and two more');
    assert.deepEqual(seen.map((r) => r.url).sort(), ['/_ping', '/a', '/b', '/c', '/info', '/version']);
  } finally {
    closeApi(api);
  }
});

test('a dialed API: the exec stream on a dialed connection, taken apart as on a socket', async () => {
  const { api: local } = await engine((req, _body, res) => (req.url === '/containers/c/exec' ? json(res, 201, { Id: ID }) : json(res, 404, { message: 'no' })), (_req, _body, socket) => {
    socket.write('HTTP/1.1 101 UPGRADED\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n');
    socket.write(frame(1, 'hello\n'));
    socket.on('data', (b: Buffer) => socket.write(frame(1, b)));
  });
  const api: EngineApi = { dial: dialer(local.socketPath!, join(dir, `dials-${n++}`)), address: 'ssh://me@box' };
  try {
    const s = await execAttach(api, { container: 'c', user: '1:1', workdir: '/', cmd: ['cat'] });
    let out = '';
    await new Promise<void>((resolve) => s.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      if (out === 'hello\n') s.stdin.write('ping');
      if (out === 'hello\nping') resolve();
    }));
    s.destroy();
    await s.closed;
  } finally {
    closeApi(api);
  }
});

test('a dialed API: a command that fails (refused keys, no route) rejects with its last words, not a hang-up', async () => {
  const api: EngineApi = { dial: { file: 'sh', args: ['-c', 'echo "debug1: trying" >&2; echo "me@box: Permission denied (publickey)." >&2; exit 255'] }, address: 'ssh://me@box' };
  try {
    await assert.rejects(apiRequest(api, 'GET', '/_ping', undefined, { timeoutMs: 10_000 }), (e: Error) => {
      assert.equal(e.message, 'cannot reach the Docker engine at ssh://me@box (sh exited 255: me@box: Permission denied (publickey).)');
      return true;
    });
  } finally {
    closeApi(api);
  }
});

test('a dialed API: a command that never answers is timed out by the request\'s bound, and killed', async () => {
  const api: EngineApi = { dial: { file: 'sleep', args: ['30'] }, address: 'ssh://me@box' };
  const t0 = Date.now();
  try {
    await assert.rejects(apiRequest(api, 'GET', '/_ping', undefined, { timeoutMs: 300 }), /did not answer GET \/_ping within 300 ms/);
    assert.ok(Date.now() - t0 < 5000);
  } finally {
    closeApi(api);
  }
});

test('a dialed API: a kept connection whose command ended (the engine closes an idle one after 300 s, and dial-stdio exits 0) is not used again (found in review: half-open, it stayed kept, and the next request waited out its bound)', async () => {
  const count = join(dir, `dials-${n++}`);
  // One request answered keep-alive, then the command ends of itself, as dial-stdio does when the engine closes.
  const script = `require('fs').appendFileSync(${JSON.stringify(count)}, 'x'); let d = ''; process.stdin.on('data', (c) => { d += c; if (d.includes('\\r\\n\\r\\n')) { process.stdout.write('HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: 11\\r\\n\\r\\n{"ok":true}'); setTimeout(() => process.exit(0), 100); } });`;
  const api: EngineApi = { dial: { file: process.execPath, args: ['-e', script] }, address: 'ssh://me@box' };
  try {
    assert.deepEqual({ ...(await apiRequest(api, 'GET', '/a', undefined, { timeoutMs: 5000 }) as object) }, { ok: true });
    await new Promise((r) => setTimeout(r, 500));
    const t0 = Date.now();
    assert.deepEqual({ ...(await apiRequest(api, 'GET', '/b', undefined, { timeoutMs: 5000 }) as object) }, { ok: true });
    assert.ok(Date.now() - t0 < 3000, `${Date.now() - t0} ms`);
    assert.equal(readFileSync(count, 'utf8'), 'xx', 'a new connection for the second');
  } finally {
    closeApi(api);
  }
});

test('(review, round 31) a hostile engine: an answer that trickles is cut at the request\'s time, whole; an exec started with a 200 that never ends fails at once; its errors are StashbaseErrors (shown escaped, exit 4); an architecture that is no word names no path; control: a prompt answer passes', async () => {
  const { StashbaseError } = await import('../../lib/errors.js');
  const { goArch } = await import('../../lib/docker/engine.js');
  const timers: NodeJS.Timeout[] = [];
  const { api } = await engine((req, _body, res) => {
    if (req.url === '/slow') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"x":"');
      // A byte every 100 ms: never idle for the request's 400 ms, never done.
      timers.push(setInterval(() => res.write('a'), 100));
    } else if (req.url?.startsWith('/containers/c/exec')) json(res, 201, { Id: 'a'.repeat(64) });
    else json(res, 200, { ok: true });
  }, (_req, _body, socket) => {
    // The exec's start answered with a 200 whose body never ends, not an upgrade.
    socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream\r\nTransfer-Encoding: chunked\r\n\r\n');
    timers.push(setInterval(() => socket.write('1\r\nx\r\n'), 100));
    socket.on('error', () => {});
  });
  try {
    const t0 = Date.now();
    await assert.rejects(apiRequest(api, 'GET', '/slow', undefined, { timeoutMs: 400 }), (e: unknown) => e instanceof EngineApiError && e instanceof StashbaseError && e.exitCode === 4 && /did not answer GET \/slow within 400 ms/.test(e.message));
    assert.ok(Date.now() - t0 < 2000, `cut at its time, not later: ${Date.now() - t0} ms`);
    assert.equal((await apiRequest(api, 'GET', '/fine', undefined, { timeoutMs: 400 }) as { ok: boolean }).ok, true);
    const t1 = Date.now();
    await assert.rejects(execAttach(api, { container: 'c', user: '1:1', workdir: '/', cmd: ['x'] }), /answered the exec's start with status 200, not a stream/);
    assert.ok(Date.now() - t1 < 2000);
  } finally {
    for (const t of timers) clearInterval(t);
  }
  assert.deepEqual(['x86_64', 'aarch64', '../../../tmp/x', '', 'ppc64le'].map(goArch), ['amd64', 'arm64', 'tmpx', 'unknown', 'ppc64le']);
});
