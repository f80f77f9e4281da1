// Issue 16 end to end, on the native and the Docker backend: a hostile client
// inside the sandbox (test/fixtures/proxy-attacks.py) against hostile
// upstreams on this host (test/proxy-stubs.ts), through the run's real proxy
// (native: bwrap, its network namespace and the relay; Docker: the firewall
// holder and the gateway). Every item: no real value in any byte the client
// read, policy after an upgrade, streams on time, stalls and short bodies
// answered within a second, slow heads cut, floods bounded while a normal
// request gets through, real clients served as they asked.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer as createTcp, type AddressInfo, type Server as TcpServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, descendsFrom, needs, parentOf, processesWhere, REPO, tempHome } from '../helpers.js';
import { leaks } from '../leak-check.js';
import { type Stub, startStub } from '../proxy-stubs.js';
import { messages, readFrames } from '../ws-util.js';

const REAL = 'sk-ant-api03-R3al/Va1ue+Secret=0123456789abcdefXYZ';
const SCENARIOS = ['ws', 'upgrade-200', 'ws-smuggle', 'encodings', 'query-basic', 'sse', 'keepalive', 'stall', 'short', 'slowloris', 'flood', 'real-clients', 'held-chunks'];
/** The stashbase process (proxy and all) stays under this while 1,500 unfinished 31 KB heads arrive. */
const RSS_CEILING_MB = 250;
const AUDIT_CAP_MB = 1;
/**
 * What 40 requests waiting for an upstream connection may add to the stashbase
 * process while each sends one-byte chunks. Each holds at most 64 KiB,
 * counting a fixed cost per part: measured 17-19 MB with the 72 connections'
 * own costs. Counting bytes alone, each held 65,536 parts: 300 MB.
 */
const HELD_GROWTH_MB = 48;

interface Run {
  out: Record<string, Record<string, unknown>>;
  stderr: string;
  code: number | null;
  /** The stashbase process's memory over the run: [ms since the epoch, MB]. */
  rss: Array<[number, number]>;
  maxRelays: number;
}

/** Runs the attack script in a sandbox, sampling the stashbase process's memory and the relays meanwhile. */
function attack(env: NodeJS.ProcessEnv, cwd: string, profile: string, scenarios: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'agent', 'run', '--profile', profile, '--silent', '--', 'python3', join(cwd, 'proxy-attacks.py'), ...scenarios], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    let maxRelays = 0;
    const rss: Run['rss'] = [];
    const sample = setInterval(() => {
      try {
        const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0);
        rss.push([Date.now(), kb / 1024]);
      } catch {
        // gone
      }
      // This run's relays only: other test files' runs may have theirs at the same time. Not the
      // launcher in the instant between forking the relay and becoming bwrap (stashbase's own child,
      // it still carries the relay's script then). The relay lives only until the proxy has its
      // socket, before the agent starts; a process per connection would be counted.
      maxRelays = Math.max(maxRelays, processesWhere((p, argv) => argv.includes('# stashbase relay') && parentOf(p) !== child.pid && descendsFrom(p, child.pid!)).length);
    }, 100);
    const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(sample);
      clearTimeout(timer);
      try {
        resolve({ out: JSON.parse(stdout) as Run['out'], stderr, code, rss, maxRelays });
      } catch {
        reject(new Error(`no JSON from the attack script (exit ${code}): ${stdout.slice(0, 500)}\n${stderr.slice(-2000)}`));
      }
    });
  });
}

const bytes = (v: unknown) => Buffer.from(String(v ?? ''), 'base64');
const text = (v: unknown) => bytes(v).toString('latin1');

for (const backend of ['native', 'docker'] as const) {
  describe(`the proxy under a hostile agent and hostile upstreams: ${backend} backend (issue 16)`, backend === 'native' ? needs('bwrap') : needs('docker'), () => {
    const t = tempHome();
    let api: Stub;
    let free: Stub;
    let plain: Stub;
    let reset: TcpServer;
    let run: Run;
    let auditFile = '';

    before(async () => {
      api = await startStub('api.test');
      free = await startStub('free.test');
      plain = await startStub('plain.test', true);
      reset = createTcp((sock) => {
        sock.once('data', () => {
          sock.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart');
          setTimeout(() => sock.resetAndDestroy(), 50);
        });
      });
      await new Promise<void>((r) => reset.listen(0, '127.0.0.1', r));
      const caFile = join(t.dir, 'upstream-cas.pem');
      writeFileSync(caFile, [api.caPem, free.caPem].join('\n'));
      copyFileSync(join(REPO, 'test', 'fixtures', 'proxy-attacks.py'), join(t.dir, 'proxy-attacks.py'));
      mkdirSync(join(t.sbHome, 'agents'), { recursive: true });
      const common = [
        ...(backend === 'docker' ? ['[sandbox]', 'backend = "docker"'] : []),
        '[network]',
        'egress_hosts = ["api.test", "free.test", "plain.test", "reset.test"]',
        `upstream_ca_file = "${caFile}"`,
        '[network.limits]',
        'head_timeout = 1',
        'max_connections = 256',
        `audit_max_mb = ${AUDIT_CAP_MB}`,
        '[network.hosts]',
        `"api.test" = "127.0.0.1:${api.port}"`,
        `"free.test" = "127.0.0.1:${free.port}"`,
        `"plain.test" = "127.0.0.1:${plain.port}"`,
        `"reset.test" = "127.0.0.1:${(reset.address() as AddressInfo).port}"`,
      ];
      writeFileSync(join(t.sbHome, 'agents', 'attack.toml'), [...common, '[secrets.ANTHROPIC_API_KEY]', 'source = "REAL_KEY"', 'hosts = ["api.test"]', 'in_query = true'].join('\n') + '\n');
      writeFileSync(join(t.sbHome, 'agents', 'plain.toml'), common.join('\n') + '\n');
      run = await attack({ ...t.env, REAL_KEY: REAL }, t.dir, 'attack', SCENARIOS);
      auditFile = join(t.sbHome, 'audit', readdirSync(join(t.sbHome, 'audit')).sort((a, b) => statSync(join(t.sbHome, 'audit', a)).mtimeMs - statSync(join(t.sbHome, 'audit', b)).mtimeMs).at(-1)!);
    });
    after(() => {
      for (const s of [api, free, plain]) s?.close();
      reset?.close();
      t.cleanup();
    });

    const ok = (name: string) => {
      const r = run.out[name];
      assert.ok(r && !('error' in r), `${name}: ${JSON.stringify(r)}\n${run.stderr.slice(-1500)}`);
      return r;
    };

    test('the run finished and no byte the agent read holds the real value in any form', () => {
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(leaks(Buffer.from(JSON.stringify(run.out).replace(/"([A-Za-z0-9+/=]{8,})"/g, (_, b: string) => JSON.stringify(Buffer.from(b, 'base64').toString('latin1')))), REAL), []);
    });

    test('1: a WebSocket upgrade: the echoed subprotocol and header in the 101 and every message hold the placeholder', () => {
      const r = ok('ws');
      const raw = bytes(r.raw);
      const ph = String(r.ph);
      assert.match(ph, /^sk-ant-api03-SBPH[A-Za-z0-9]+$/);
      assert.deepEqual(leaks(raw, REAL), []);
      const head = raw.subarray(0, raw.indexOf('\r\n\r\n')).toString('latin1');
      assert.match(head, new RegExp(`^HTTP/1\\.1 101 Switching Protocols\r\n[^]*Sec-WebSocket-Protocol: ${ph}\r\n`));
      assert.doesNotMatch(head, /Sec-WebSocket-Extensions/i);
      assert.deepEqual(messages(readFrames(raw.subarray(raw.indexOf('\r\n\r\n') + 4)).frames), [`hello Bearer ${ph}`, `echo:say ${ph}`]);
      assert.ok(api.log.auths.includes(`Bearer ${REAL}`), 'the upstream got the real value');
    });

    test('1 and 4: a 200 to an Upgrade is scrubbed and ends the connection; nothing sent after an upgrade reaches the upstream', () => {
      const r = ok('upgrade-200');
      assert.equal(r.closed, true);
      assert.match(text(r.raw), /^HTTP\/1\.1 200 OK\r\n[^]*X-Echo-Auth: Bearer sk-ant-api03-SBPH/);
      assert.equal(ok('ws-smuggle').closed, true);
      assert.deepEqual(api.log.smuggled, []);
      assert.equal(api.log.requests.filter((q) => /evil|smuggled|again/.test(q)).length, 0, api.log.requests.join('\n'));
    });

    test('2: gzip and brotli answers from the bound host are decoded and scrubbed; an unknown encoding is refused', () => {
      const r = ok('encodings');
      for (const k of ['gzip', 'br']) {
        const all = text(r[k]);
        assert.match(all, /^HTTP\/1\.1 200 OK\r\n/, k);
        assert.doesNotMatch(all.split('\r\n\r\n')[0]!, /content-encoding/i, k);
        assert.match(all, /"auth":"Bearer sk-ant-api03-SBPH/, k);
      }
      assert.match(text(r.odd), /^HTTP\/1\.1 502 Bad Gateway\r\n[^]*X-Stashbase-Denied: the upstream sent a body in content-encoding the proxy does not know, which the proxy cannot scrub\r\n/);
    });

    test('3: the percent-encoded value echoed in Location and body, and Basic at each alignment, come back as the placeholder', () => {
      const r = ok('query-basic');
      const ph = String(ok('ws').ph);
      const location = /\r\nLocation: (.*)\r\n/.exec(text(r.location))?.[1] ?? '';
      assert.equal(decodeURIComponent(location), `https://elsewhere.test/landed?from=/location?key=${ph}`);
      assert.ok(api.log.requests.some((q) => q.includes(`key=${encodeURIComponent(REAL)}`)));
      for (const user of ['u', 'us', 'usr']) assert.match(text(r[`basic-${user}`]), new RegExp(`decoded ${user}:${ph}\n`), user);
    });

    test('5: each event of a stream from the bound host arrives within 50 ms of being sent (the next comes 200 ms later: an event held for it would be that late)', () => {
      // Stamps: when the kernel received the segment that completed each piece the client read.
      const r = ok('sse') as { sent: number; stamps: Array<[number, string]> };
      let all = '';
      const ends: Array<[number, number]> = [];
      for (const [at, data] of r.stamps) {
        all += text(data);
        ends.push([all.length, at]);
      }
      // The body's text, de-chunked, and where each of its characters was in what the client read.
      const head = all.indexOf('\r\n\r\n') + 4;
      let stream = '';
      const from: number[] = [];
      if (/\r\ntransfer-encoding: chunked\r\n/i.test(all.slice(0, head))) {
        for (let p = head, size = 1; size > 0 && p < all.length; ) {
          const line = all.indexOf('\r\n', p);
          size = parseInt(all.slice(p, line), 16);
          for (let k = line + 2; k < Math.min(line + 2 + size, all.length); k++) (stream += all[k], from.push(k));
          p = line + 2 + size + 2;
        }
      } else for (let k = head; k < all.length; k++) (stream += all[k], from.push(k));
      const events = [...stream.matchAll(/data: \{"i":(\d),"t":(\d+)\}\n\n/g)];
      assert.deepEqual(events.map((m) => m[1]), ['0', '1', '2', '3', '4'], stream);
      for (const m of events) {
        // An event has arrived once the piece holding its last byte has.
        const last = from[m.index! + m[0].length - 1]!;
        const at = ends.find(([end]) => end > last)![1];
        assert.ok(at - Number(m[2]) <= 50, `event ${m[1]} ${Math.round(at - Number(m[2]))} ms late`);
      }
      assert.ok(r.stamps[0]![0] - r.sent < 150, 'the head came at once, not with the first event');
    });

    test('6: keep-alive requests through the whole path carry no fixed delay (no Nagle wait)', () => {
      const r = ok('keepalive') as { median: number };
      assert.ok(r.median < 10, `median ${r.median.toFixed(1)} ms per request`);
    });

    test('7 and 8: abandoned and stalled requests free their sockets; a body cut short ends within a second', () => {
      const s = ok('stall') as { elapsed: number; ok: boolean };
      assert.equal(s.ok, true);
      assert.ok(s.elapsed < 1000, `${s.elapsed} ms`);
      const short = ok('short') as { elapsed: number; closed: boolean; body: number; raw_head: string };
      assert.equal(short.closed, true);
      assert.ok(short.elapsed < 1000, `${short.elapsed} ms`);
      // Scrubbed: chunked, cut before its last chunk (review, round 26: a scrubbed answer keeps no Content-Length).
      assert.match(text(short.raw_head), /Transfer-Encoding: chunked\r\n/);
      assert.ok(short.body < 100000);
    });

    test(`10: 40 requests waiting for an upstream connection, each sending one-byte chunks: stashbase grows by under ${HELD_GROWTH_MB} MB`, () => {
      const r = ok('held-chunks') as { start: number; end: number; sent: number; requests: number };
      const before = run.rss.filter(([t]) => t < r.start).at(-1);
      const during = run.rss.filter(([t]) => t >= r.start && t <= r.end).map(([, mb]) => mb);
      assert.ok(before && during.length > 10, `${during.length} samples`);
      // Enough was sent that a proxy holding parts without bound would have held megabytes of each.
      assert.ok(r.sent > r.requests * 64 * 1024, `${r.sent} bytes sent`);
      const growth = Math.max(...during) - before[1];
      assert.ok(growth < HELD_GROWTH_MB, `stashbase grew by ${growth.toFixed(0)} MB (from ${before[1].toFixed(0)} MB)`);
    });

    test('9: a head trickled on the proxy or inside a tunnel gets 408 at the deadline; a silent connection is closed', () => {
      const r = ok('slowloris') as Record<string, { closed_after: number | null; raw: string }>;
      for (const k of ['plain', 'inner']) {
        assert.ok(r[k]!.closed_after !== null && r[k]!.closed_after < 3000, `${k} closed after ${r[k]!.closed_after} ms`);
      }
      assert.match(text(r.plain!.raw), /^HTTP\/1\.1 408 Request Timeout\r\n/);
      assert.ok(r.silent!.closed_after !== null && r.silent!.closed_after < 4000, `silent closed after ${r.silent!.closed_after} ms`);
    });

    test(`10: 1,500 unfinished heads: stashbase stays under ${RSS_CEILING_MB} MB, a normal request is answered, no relay process, the audit log under its cap`, () => {
      const r = ok('flood') as { normal_ok: boolean; normal_ms: number; opened: number; why: string };
      assert.equal(r.normal_ok, true, r.why);
      assert.ok(r.normal_ms < 2000, `${r.normal_ms} ms`);
      // Up to the scenario after the flood (held-chunks, the run's last, is judged on its own).
      const heldFrom = (run.out['held-chunks'] as { start?: number } | undefined)?.start ?? Infinity;
      const maxRssMb = Math.max(...run.rss.filter(([t]) => t < heldFrom).map(([, mb]) => mb));
      assert.ok(maxRssMb < RSS_CEILING_MB, `stashbase reached ${maxRssMb.toFixed(0)} MB`);
      // At most the start's relay, in the instant before the agent starts; never one per connection.
      if (backend === 'native') assert.ok(run.maxRelays <= 1, `${run.maxRelays} relay processes`);
      assert.ok(statSync(auditFile).size < AUDIT_CAP_MB * 1024 * 1024);
      assert.match(readFileSync(auditFile, 'utf8'), /"type":"repeated","method":"GET","host":"denied\.test","port":80,"rule":"not in egress_hosts","decision":"deny","count":\d+/);
    });

    test('11: Basic without a value passes byte for byte; a scrubbed answer without Content-Length, GET and HEAD alike; CONNECT to 80 is plain HTTP; 100 Continue is the upstream\'s; no Host is refused', () => {
      const r = ok('real-clients');
      assert.ok(api.log.auths.includes(`Basic ${String(r.basic_raw)}`));
      assert.match(text(r.basic), /^HTTP\/1\.1 200 OK\r\n[^]*Transfer-Encoding: chunked\r\n/);
      assert.doesNotMatch(text(r.basic), /Content-Length:/i);
      assert.match(text(r.head), /^HTTP\/1\.1 200 OK\r\n/);
      assert.doesNotMatch(text(r.head), /Content-Length:/i);
      assert.match(text(r.plain80), /^HTTP\/1\.1 200 OK\r\n[^]*"url":"\/echo"/);
      assert.match(text(r.continue), /^HTTP\/1\.1 403 Forbidden\r\n/);
      for (const k of ['nohost_plain', 'nohost_tunnel']) assert.match(text(r[k]), /^HTTP\/1\.1 400 Bad Request\r\n[^]*a request without a Host header/, k);
    });

    test('11: in a plain tunnel (no secrets) an upstream reset closes the tunnel; the proxy writes nothing into it', async () => {
      const r = await attack(t.env, t.dir, 'plain', ['reset']);
      assert.equal(r.out.reset?.closed, true, JSON.stringify(r.out));
      assert.equal(text(r.out.reset?.raw), 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart');
    });
  });
}
