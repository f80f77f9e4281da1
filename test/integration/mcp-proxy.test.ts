// MCP tool restrictions at the proxy, with the real reference server
// (@modelcontextprotocol/server-everything, scripts/install-test-mcp.sh) run as
// a Streamable HTTP server on loopback behind an HTTPS name of the test's own
// (mcp.test, its CA given by upstream_ca_file). The agent is curl inside the
// real sandbox speaking JSON-RPC itself, as a prompt-injected agent would.
// The front records every body that reaches the server: a refused call never
// does. Each attack has its control straight at the server, where it works.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { LeafCache } from '../../lib/tls/leaves.js';
import { cli, needs, tempHome, writeFile } from '../helpers.js';
import { type McpFront, needsMcpServer, startMcpFront } from '../mcp-front.js';
import { testCa } from '../upstream-ca.js';

describe('MCP tool restrictions at the proxy (real bwrap, real server-everything)', { ...needs('bwrap'), ...needsMcpServer() }, () => {
  const t = tempHome();
  const proj = join(t.home, 'proj');
  writeFile(join(proj, 'README'), 'x\n');
  let mcp: McpFront;
  let frontPort = 0;
  let serverPort = 0;
  let reached: string[] = [];

  before(async () => {
    const ca = testCa();
    writeFile(join(t.dir, 'up-ca.pem'), ca.certPem);
    mcp = await startMcpFront(new LeafCache(ca), 'mcp.test');
    ({ frontPort, serverPort, reached } = mcp);
    writeFile(join(t.sbHome, 'agents', 'mcp.toml'), [
      '[network]', `upstream_ca_file = "${join(t.dir, 'up-ca.pem')}"`,
      '[network.hosts]', `"mcp.test" = "127.0.0.1:${frontPort}"`,
      '[mcp.servers.everything]', `url = "https://mcp.test:${frontPort}/mcp"`,
      'allow_tools = ["echo", "get-sum", "trigger-long-running-operation"]',
      'deny_tools = ["*long*", "get-env"]',
    ].join('\n') + '\n');
  });
  after(() => {
    mcp?.close();
    t.cleanup();
  });

  const URL_OF = () => `https://mcp.test:${frontPort}/mcp`;
  /** A shell script for the agent: an MCP session by curl, each answer after a marker line. */
  const session = (calls: Array<[string, string, string?]>) => {
    const curl = (extra: string) => `curl -sS ${URL_OF()} ${extra.includes('Content-Type') ? '' : "-H 'Content-Type: application/json'"} -H 'Accept: application/json, text/event-stream' -H 'mcp-protocol-version: 2025-06-18' ${extra}`;
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'agent', version: '1' } } });
    const lines = [
      `${curl(`-D /tmp/h -o /dev/null -d '${init}'`)}`,
      `SID=$(grep -i '^mcp-session-id:' /tmp/h | cut -d' ' -f2 | tr -d '\\r')`,
      `${curl(`-H "mcp-session-id: $SID" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'`)}`,
    ];
    for (const [name, body, extra] of calls) lines.push(`echo "=== ${name}"`, `${curl(`-H "mcp-session-id: $SID" ${extra ?? ''} -w '\\nstatus=%{http_code}\\n' --data-binary '${body}'`)}`);
    return lines.join('\n');
  };
  const sections = (out: string): Record<string, string> => Object.fromEntries(out.split('=== ').slice(1).map((s) => [s.slice(0, s.indexOf('\n')), s.slice(s.indexOf('\n') + 1)]));
  const call = (id: number, name: string, args: Record<string, unknown> = {}) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
  const toolsOf = (text: string): string[] => {
    const data = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
    const json = JSON.parse(data.length > 0 ? data[0]! : text.slice(0, text.lastIndexOf('\nstatus=')));
    return (json.result.tools as Array<{ name: string }>).map((x) => x.name).sort();
  };

  test('an allowed call works; a refused one, one hidden in a batch, a case or width variant, a key given twice and a body that is not MCP never reach the server; tools/list shows only the allowed tools, as an event stream and as JSON', { timeout: 120_000 }, async () => {
    reached.splice(0);
    const script = session([
      ['list', JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })],
      ['list-json', JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }), "-H 'x-test-json: 1'"],
      ['echo', call(4, 'echo', { message: 'hello-from-agent' })],
      ['denied', call(5, 'trigger-long-running-operation', { duration: 1, steps: 1 })],
      ['batch', `[${call(6, 'echo', { message: 'batched' })},${call(7, 'trigger-long-running-operation', { duration: 1, steps: 1 })}]`],
      ['case', call(8, 'ECHO', { message: 'x' })],
      ['deny-case', call(9, 'Trigger-Long-Running-Operation', { duration: 1, steps: 1 })],
      ['width', call(10, 'ｅcho', { message: 'x' })],
      ['twice', `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo","name":"trigger-long-running-operation","arguments":{}}}`],
      ['not-mcp', 'hello there'],
      ['get-env', call(12, 'get-env')],
      // From the hostile review: a charset the server would decode otherwise (UTF-7 hides "get-env" from a UTF-8 reader), a GET carrying a call.
      ['utf7', '{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"z":"+ACI-,+ACI-name+ACI-:+ACI-get-env"}}', "-H 'Content-Type: application/json; charset=utf-7'"],
      ['get-body', call(14, 'get-env'), '-X GET'],
    ]);
    const r = await cli(['agent', 'run', '--silent', '--profile', 'mcp', '--', 'sh', '-c', script], { env: t.env, cwd: proj, timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stderr);
    const s = sections(r.stdout);
    assert.deepEqual(toolsOf(s.list!), ['echo', 'get-sum'], s.list);
    assert.deepEqual(toolsOf(s['list-json']!), ['echo', 'get-sum'], s['list-json']);
    assert.match(s.echo!, /Echo: hello-from-agent/);
    const refused = (text: string) => JSON.parse(text.slice(0, text.lastIndexOf('\nstatus=')));
    assert.deepEqual(refused(s.denied!), { jsonrpc: '2.0', id: 5, error: { code: -32001, message: 'stashbase: tool "trigger-long-running-operation" is refused by deny_tools "*long*" in [mcp.servers.everything]' } });
    assert.deepEqual(refused(s.batch!).map((e: { id: number }) => e.id), [6, 7]);
    assert.match(refused(s.case!).error.message, /tool "ECHO" is not in allow_tools/);
    assert.match(refused(s['deny-case']!).error.message, /refused by deny_tools "\*long\*"/);
    assert.equal(refused(s.width!).error.message, 'stashbase: tool "ｅcho" is not a tool name the MCP specification allows (1 to 128 of A-Z a-z 0-9 _ - .), refused by [mcp.servers.everything]');
    assert.match(refused(s.twice!).error.message, /"name" appears twice/);
    assert.match(s['not-mcp']!, /status=400/);
    assert.match(refused(s['get-env']!).error.message, /tool "get-env" is refused by deny_tools "get-env"/);
    assert.match(s.utf7!, /status=415/);
    assert.match(s['get-body']!, /status=400/);
    // What reached the server: the session, the lists, the allowed echo; nothing refused, not even the batch's allowed half.
    const calls = reached.filter((b) => b.includes('tools/call'));
    assert.deepEqual(calls.map((b) => JSON.parse(b.slice(5)).params.name), ['echo']);
    assert.equal(reached.some((b) => b.includes('long-running') || b.includes('batched') || b.includes('hello there') || b.includes('get-env') || b.includes('+ACI-')), false, reached.join('\n'));
    // The audit: each call with its server, tool, decision and argument size, never the arguments.
    const audit = JSON.parse((await cli(['agent', 'audit', '--json'], { env: t.env, cwd: proj })).stdout) as Array<Record<string, unknown>>;
    const mcp = audit.filter((e) => e.type === 'mcp').map((e) => `${e.server} ${e.tool} ${e.decision} ${e.argBytes}`);
    assert.deepEqual(mcp, [
      'everything echo allow 30', 'everything trigger-long-running-operation deny 24', 'everything echo deny 21', 'everything trigger-long-running-operation deny 24',
      'everything ECHO deny 15', 'everything Trigger-Long-Running-Operation deny 24', 'everything ｅcho deny 15', 'everything get-env deny 2',
    ]);
    assert.equal(JSON.stringify(audit.filter((e) => e.type !== 'start')).includes('hello-from-agent'), false);
    const text = (await cli(['agent', 'audit'], { env: t.env, cwd: proj })).stdout;
    assert.match(text, /MCP tools: everything\/"echo" allowed 1, refused 1; everything\/"trigger-long-running-operation" refused 2/);
  });

  test('the Docker backend: the same proxy, the same restrictions (an allowed call works, a refused one never reaches the server, tools/list filtered)', { ...needs('docker'), timeout: 180_000 }, async () => {
    reached.splice(0);
    const script = session([
      ['list', JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })],
      ['echo', call(3, 'echo', { message: 'from-the-container' })],
      ['denied', call(4, 'get-env')],
    ]);
    const r = await cli(['agent', 'run', '--silent', '--docker-sandbox', 'true', '--profile', 'mcp', '--', 'sh', '-c', script], { env: t.env, cwd: proj, timeoutMs: 150_000 });
    assert.equal(r.code, 0, r.stderr);
    const s = sections(r.stdout);
    assert.deepEqual(toolsOf(s.list!), ['echo', 'get-sum'], s.list);
    assert.match(s.echo!, /Echo: from-the-container/);
    assert.match(s.denied!, /refused by deny_tools \\"get-env\\"/);
    assert.deepEqual(reached.filter((b) => b.includes('tools/call')).map((b) => JSON.parse(b.slice(5)).params.name), ['echo']);
  });

  test('the hostile agent: plain HTTP to the server\'s host, a WebSocket upgrade, the server\'s real port; the control: the refused call straight at the server works', { timeout: 60_000 }, async () => {
    reached.splice(0);
    const script = [
      `curl -sS -o /dev/null -w 'plain=%{http_code}\\n' http://mcp.test:${frontPort}/mcp -d '${call(1, 'trigger-long-running-operation')}'`,
      `curl -sS -o /dev/null -w 'upgrade=%{http_code}\\n' ${URL_OF()} -H 'Connection: Upgrade' -H 'Upgrade: websocket' -H 'Sec-WebSocket-Version: 13' -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=='`,
      `curl -sS -o /dev/null --noproxy '*' --max-time 3 -w 'raw=%{http_code}\\n' http://127.0.0.1:${serverPort}/mcp || echo raw=refused`,
      // (review) Another route on the server's host, and other spellings of its endpoint: never sent, whatever the method.
      `curl -sS -o /dev/null -w 'other-post=%{http_code}\\n' https://mcp.test:${frontPort}/admin -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"x","repo":"acme/prod"}'`,
      `curl -sS -o /dev/null -w 'other-delete=%{http_code}\\n' -X DELETE https://mcp.test:${frontPort}/v1/repos/acme/prod`,
      `curl -sS -o /dev/null -w 'dotted=%{http_code}\\n' --path-as-is https://mcp.test:${frontPort}/x/../mcp -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d '{"jsonrpc":"2.0","id":1,"method":"ping"}'`,
      `curl -sS -o /dev/null -w 'query=%{http_code}\\n' 'https://mcp.test:${frontPort}/mcp?x=1' -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d '{"jsonrpc":"2.0","id":1,"method":"ping"}'`,
    ].join('\n');
    const r = await cli(['agent', 'run', '--silent', '--profile', 'mcp', '--', 'sh', '-c', script], { env: t.env, cwd: proj });
    assert.match(r.stdout, /plain=403\n/);
    assert.match(r.stdout, /upgrade=403\n/);
    assert.match(r.stdout, /raw=(000|refused)/);
    assert.match(r.stdout, /other-post=404\nother-delete=404\ndotted=404\nquery=404\n/);
    assert.equal(reached.length, 0, reached.join('\n'));
    // The control: straight at the server (no proxy), the same call runs.
    const init = await fetch(`http://127.0.0.1:${serverPort}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } }) });
    const sid = init.headers.get('mcp-session-id')!;
    await init.text();
    const direct = await fetch(`http://127.0.0.1:${serverPort}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' }, body: call(2, 'get-env') });
    assert.match(await direct.text(), /"result"/);
    // And another route on its host is reached by whoever asks it straight (the server's front passes any target on).
    // (Asynchronously: the front answers in this process.)
    const straight = await promisify(execFile)('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '20', '--cacert', join(t.dir, 'up-ca.pem'), '--resolve', `mcp.test:${frontPort}:127.0.0.1`, '-X', 'DELETE', `https://mcp.test:${frontPort}/v1/repos/acme/prod`], { encoding: 'utf8' });
    assert.notEqual(straight.stdout, '000', straight.stderr);
    assert.deepEqual(reached.filter((x) => x.startsWith('DELETE')), ['DELETE ']);
  });
});
