// What an agent's MCP request bodies may hold of the stashbase process (found
// in review: each body is read whole before it is judged, and 512 connections
// each trickling a 4 MiB body held 2 GiB, with no deadline past the head's):
// a budget for all of them at once (network.limits.mcp_bodies_mb), and a
// deadline for each (network.limits.head_timeout). The real proxy and
// interceptor, a stub MCP host on loopback.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Interceptor } from '../../lib/proxy/intercept.js';
import { createProxy, hostHeaderProblem } from '../../lib/proxy/server.js';
import { createRunCa } from '../../lib/tls/ca.js';
import { LeafCache } from '../../lib/tls/leaves.js';
import { listen } from '../helpers.js';
import { reader, text, tunnel } from '../proxy-client.js';
import { type Stub, startStub } from '../proxy-stubs.js';
import { testCa } from '../upstream-ca.js';

describe('MCP request bodies: a budget for all at once, a deadline for each (real proxy)', () => {
  let stub: Stub;
  let proxy: Server;
  let interceptor: Interceptor;
  let port = 0;
  let caPem = '';
  const MIB = 1 << 20;

  before(async () => {
    stub = await startStub('mcp.test');
    const ca = createRunCa(['mcp.test'], 'test');
    caPem = ca.certPem;
    const limits = { headTimeoutMs: 1500, maxConnections: 50, upstreamSocketsPerHost: 4, auditMaxBytes: MIB, mcpBodiesMaxBytes: 4 * MIB };
    const mcp = [{ name: 'm', url: 'https://mcp.test/mcp', target: '/mcp', host: 'mcp.test', port: 443, policy: { server: 'm', allow: null, deny: [] }, local: false }];
    interceptor = new Interceptor({ leaves: new LeafCache(ca), secrets: [], upstreamCa: [stub.caPem], audit: () => {}, limits, mcp }, hostHeaderProblem);
    proxy = createProxy({ policy: { egressHosts: ['mcp.test'], denyHosts: [], mapped: { 'mcp.test': `127.0.0.1:${stub.port}` } }, audit: () => {}, interceptor, secrets: [], limits, mcp });
    port = await listen(proxy);
  });
  after(() => {
    interceptor.close();
    proxy.close();
    stub.close();
  });

  /** A POST to the endpoint announcing `length` bytes of JSON-RPC, of which `sent` are sent now. */
  const post = async (length: number, sent: number) => {
    const s = await tunnel(port, 'mcp.test', 443, { caPem });
    const r = reader(s);
    const head = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`;
    const tail = '"}}';
    const body = head + 'a'.repeat(length - head.length - tail.length) + tail;
    s.write(`POST /mcp HTTP/1.1\r\nHost: mcp.test\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${length}\r\n\r\n`);
    s.write(body.slice(0, sent));
    return { s, r, rest: () => s.write(body.slice(sent)) };
  };
  const status = (all: Buffer) => /^HTTP\/1\.1 (\d{3})/.exec(text(all))?.[1];

  test('a body that would take the held bodies past the budget is refused 503; one never finished is refused 408 at the deadline; control: once they are given back, the same body passes and reaches the server', async () => {
    const before = stub.log.requests.length;
    const a = await post(3 * MIB + 512 * 1024, 3 * MIB);
    await new Promise((r) => setTimeout(r, 300));
    const b = await post(2 * MIB, 2 * MIB);
    await b.r.until('\r\n\r\n');
    assert.equal(status(b.r.all()), '503');
    assert.match(text(b.r.all()), /MCP request bodies held at once over 4 MiB \(network\.limits\.mcp_bodies_mb\)/);
    // The first, never finished, at its deadline.
    await a.r.until('\r\n\r\n');
    assert.equal(status(a.r.all()), '408');
    assert.match(text(a.r.all()), /not whole within 1\.5 s of its head \(network\.limits\.head_timeout\)/);
    a.s.destroy();
    b.s.destroy();
    assert.equal(stub.log.requests.length, before, 'neither reached the server');
    // The control: the budget given back, the same 2 MiB body (sent whole) goes through.
    const c = await post(2 * MIB, 2 * MIB);
    await c.r.until('\r\n\r\n');
    c.s.destroy();
    assert.notEqual(status(c.r.all()), '503');
    assert.notEqual(status(c.r.all()), '408');
    assert.equal(stub.log.requests.length, before + 1);
    assert.match(stub.log.requests.at(-1) ?? '', /^POST mcp\.test \/mcp$/);
  });

  test("(review, round 34) answers too: one that would take the answers held at once past the run's room is not passed on, a JSON-RPC error says why; the room comes back when the agent leaves those held; control: with room for all, the same answer passes whole", async () => {
    // An upstream whose answers to ids 1 and 2 hold 3 MiB each and never end; to any other, 3 MiB whole.
    const upCa = testCa();
    const leaf = new LeafCache(upCa).get('big.test');
    const https = await import('node:https');
    const answerOf = (id: string) => `{"jsonrpc":"2.0","id":${id},"result":{"pad":"${'b'.repeat(3 * MIB)}"}}`;
    const big = https.createServer({ key: leaf.keyPem, cert: leaf.certPem }, (req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const id = /"id":(\d+)/.exec(body)?.[1] ?? '0';
        const text = answerOf(id);
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(text.length) });
        if (id === '1' || id === '2') res.write(text.slice(0, -10));
        else res.end(text);
      });
    });
    const bigPort = await listen(big as never);
    const ca = createRunCa(['big.test'], 'test');
    const run = async (room: number) => {
      const limits = { headTimeoutMs: 5000, maxConnections: 50, upstreamSocketsPerHost: 8, auditMaxBytes: MIB, mcpBodiesMaxBytes: room };
      const mcp = [{ name: 'b', url: 'https://big.test/mcp', target: '/mcp', host: 'big.test', port: 443, policy: { server: 'b', allow: null, deny: [] }, local: false }];
      const ic = new Interceptor({ leaves: new LeafCache(ca), secrets: [], upstreamCa: [upCa.certPem], audit: () => {}, limits, mcp }, hostHeaderProblem);
      const px = createProxy({ policy: { egressHosts: ['big.test'], denyHosts: [], mapped: { 'big.test': `127.0.0.1:${bigPort}` } }, audit: () => {}, interceptor: ic, secrets: [], limits, mcp });
      const pport = await listen(px);
      const ask = async (id: number) => {
        const s = await tunnel(pport, 'big.test', 443, { caPem: ca.certPem });
        const r = reader(s);
        const body = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"x"}}`;
        s.write(`POST /mcp HTTP/1.1\r\nHost: big.test\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
        return { s, r };
      };
      const whole = async (id: number) => {
        const q = await ask(id);
        // Chunked (the filter's length is not known ahead): to the last chunk.
        await q.r.until('\r\n0\r\n\r\n', 10_000);
        q.s.destroy();
        const t = text(q.r.all());
        assert.match(t, /^HTTP\/1\.1 200 [^]*\r\nTransfer-Encoding: chunked\r\n/i);
        let rest = t.slice(t.indexOf('\r\n\r\n') + 4);
        let out = '';
        for (;;) {
          const eol = rest.indexOf('\r\n');
          const size = parseInt(rest.slice(0, eol), 16);
          if (size === 0) return out;
          out += rest.slice(eol + 2, eol + 2 + size);
          rest = rest.slice(eol + 2 + size + 2);
        }
      };
      try {
        const held = [await ask(1), await ask(2)];
        await new Promise((res) => setTimeout(res, 500));
        const third = await whole(3);
        for (const h of held) h.s.destroy();
        await new Promise((res) => setTimeout(res, 300));
        const fourth = await whole(4);
        return [third, fourth];
      } finally {
        ic.close();
        px.close();
      }
    };
    try {
      const [third, fourth] = await run(8 * MIB);
      assert.equal(third, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: "stashbase: the MCP server's answer would have been held with the run's other MCP answers past 8 MiB at once (network.limits.mcp_bodies_mb), so it was not passed on" } }));
      assert.equal(fourth, answerOf('4'));
      // Control: with room for all, the third passes whole.
      const [wide] = await run(64 * MIB);
      assert.equal(wide, answerOf('3'));
    } finally {
      big.closeAllConnections();
      big.close();
    }
  });

  test('(review) a body judged and passed on is held until its answer ends: bodies waiting for an upstream connection count; control: with the budget high enough, the same requests all wait unrefused', async () => {
    // An upstream that reads each request whole and never answers, one connection at a time.
    const upCa = testCa();
    const leaf = new LeafCache(upCa).get('hang.test');
    const https = await import('node:https');
    let reached = 0;
    const hang = https.createServer({ key: leaf.keyPem, cert: leaf.certPem }, (req) => {
      req.resume();
      req.on('end', () => reached++);
    });
    const hangPort = await listen(hang as never);
    const ca = createRunCa(['hang.test'], 'test');
    const run = async (budget: number) => {
      const limits = { headTimeoutMs: 5000, maxConnections: 50, upstreamSocketsPerHost: 1, auditMaxBytes: MIB, mcpBodiesMaxBytes: budget };
      const mcp = [{ name: 'h', url: 'https://hang.test/mcp', target: '/mcp', host: 'hang.test', port: 443, policy: { server: 'h', allow: null, deny: [] }, local: false }];
      const ic = new Interceptor({ leaves: new LeafCache(ca), secrets: [], upstreamCa: [upCa.certPem], audit: () => {}, limits, mcp }, hostHeaderProblem);
      const px = createProxy({ policy: { egressHosts: ['hang.test'], denyHosts: [], mapped: { 'hang.test': `127.0.0.1:${hangPort}` } }, audit: () => {}, interceptor: ic, secrets: [], limits, mcp });
      const pport = await listen(px);
      const open: Array<{ s: import('node:stream').Duplex; r: ReturnType<typeof reader> }> = [];
      const statuses: Array<string | undefined> = [];
      try {
      for (let i = 0; i < 4; i++) {
        const s = await tunnel(pport, 'hang.test', 443, { caPem: ca.certPem });
        const r = reader(s);
        const body = `{"jsonrpc":"2.0","id":${i},"method":"ping","params":{"pad":"${'a'.repeat(3 * MIB)}"}}`;
        s.write(`POST /mcp HTTP/1.1\r\nHost: hang.test\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
        open.push({ s, r });
        await new Promise((res) => setTimeout(res, 200));
      }
      for (const { r } of open) statuses.push(status(r.all()));
      } finally {
        for (const { s } of open) s.destroy();
        ic.close();
        px.close();
      }
      return statuses;
    };
    // 8 MiB: the first (sent upstream, unanswered) and the second (waiting for the connection) hold 6 MiB; the third and
    // fourth are refused.
    try {
      assert.deepEqual(await run(8 * MIB), [undefined, undefined, '503', '503']);
      // The control: with room for all, none is refused (they wait).
      assert.deepEqual(await run(64 * MIB), [undefined, undefined, undefined, undefined]);
      assert.ok(reached >= 1);
    } finally {
      hang.closeAllConnections();
      hang.close();
    }
  });

  test('(review, round 3) a local server\'s request stays charged until its bridge is done with it, though the agent left at once; control: with room for all, none is refused', async () => {
    const { LocalServer } = await import('../../lib/mcp/local-server.js');
    const ca = createRunCa(['slow.stashbase-mcp.internal'], 'test');
    const run = async (budget: number) => {
      // A server that reads every request and never answers.
      const bridge = new LocalServer('slow', { file: 'sh', args: ['-c', 'cat >/dev/null'] }, { server: 'slow', allow: null, deny: [] });
      const limits = { headTimeoutMs: 5000, maxConnections: 50, upstreamSocketsPerHost: 4, auditMaxBytes: MIB, mcpBodiesMaxBytes: budget };
      const mcp = [{ name: 'slow', url: 'https://slow.stashbase-mcp.internal/mcp', target: '/mcp', host: 'slow.stashbase-mcp.internal', port: 443, policy: { server: 'slow', allow: null, deny: [] }, local: true }];
      const ic = new Interceptor({ leaves: new LeafCache(ca), secrets: [], upstreamCa: [], audit: () => {}, limits, mcp, bridges: new Map([['slow', bridge]]) }, hostHeaderProblem);
      const px = createProxy({ policy: { egressHosts: ['slow.stashbase-mcp.internal'], denyHosts: [], mapped: {} }, audit: () => {}, interceptor: ic, secrets: [], limits, mcp });
      const pport = await listen(px);
      const statuses: Array<string | undefined> = [];
      try {
        for (let i = 0; i < 4; i++) {
          const s = await tunnel(pport, 'slow.stashbase-mcp.internal', 443, { caPem: ca.certPem });
          const r = reader(s);
          const body = `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"x","arguments":{"pad":"${'a'.repeat(3 * MIB)}"}}}`;
          s.write(`POST /mcp HTTP/1.1\r\nHost: slow.stashbase-mcp.internal\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
          await new Promise((res) => setTimeout(res, 300));
          statuses.push(status(r.all()));
          // The agent leaves at once.
          s.destroy();
        }
      } finally {
        bridge.stop();
        ic.close();
        px.close();
      }
      return statuses;
    };
    assert.deepEqual(await run(8 * MIB), [undefined, undefined, '503', '503']);
    assert.deepEqual(await run(64 * MIB), [undefined, undefined, undefined, undefined]);
  });
});
