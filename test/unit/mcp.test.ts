// MCP tool restrictions (lib/mcp/): the policy over tool names, the JSON-RPC
// reader, what a POST's verdict is, the answers' tools/list filtering (JSON
// whole, event streams event by event), and the [mcp] section of a profile.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { mkdirSync, symlinkSync } from 'node:fs';
import { after, test } from 'node:test';
import { answerFilter, charsetProblem, filterJson } from '../../lib/mcp/answer-filter.js';
import { ambiguity, parseMessages } from '../../lib/mcp/jsonrpc.js';
import { serverAt } from '../../lib/mcp/servers.js';
import { filterRequest as _fr, framingProblem } from '../../lib/mcp/request-filter.js';
import { filterRequest } from '../../lib/mcp/request-filter.js';
import { globMatch, toolDecision, toolListed } from '../../lib/mcp/tool-policy.js';
import { loadProfile } from '../../lib/profile/load.js';
import { tempHome, writeFile } from '../helpers.js';

const P = { server: 'gh', allow: ['get_*', 'list_*', 'echo'], deny: ['delete_*', '*_admin'] };
const call = (id: number | null, name: unknown, args: unknown = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
const body = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));

test('the policy: an allowance matches the name exactly; a denial wins, in any case and compatibility form; a name the specification does not allow is refused', () => {
  assert.deepEqual(toolDecision(P, 'get_issue'), { allow: true, rule: 'tool "get_issue" is allowed by allow_tools "get_*" in [mcp.servers.gh]' });
  assert.deepEqual(toolDecision(P, 'create_issue'), { allow: false, rule: 'tool "create_issue" is not in allow_tools of [mcp.servers.gh]' });
  assert.equal(toolDecision(P, 'delete_repo').rule, 'tool "delete_repo" is refused by deny_tools "delete_*" in [mcp.servers.gh]');
  // Deny wins over an allowance that matches too; variants a loose server might accept are denied as well.
  for (const n of ['list_admin', 'Delete_repo', 'DELETE_REPO', 'ｄelete_repo', 'GET_ADMIN']) assert.equal(toolDecision(P, n).allow, false, n);
  // An allowance is exact: a case variant of an allowed name is not it.
  for (const n of ['Echo', 'ECHO', 'ｅcho', 'echo\u200b', 'echo ', '', 'x'.repeat(129), 42, null]) assert.equal(toolDecision(P, n).allow, false, String(n));
  assert.equal(toolDecision({ server: 's', allow: null, deny: [] }, 'anything_at.all-1').allow, true);
});

test('the JSON-RPC reader: own fields only, batches, and what is not MCP; a key twice in one object is refused (servers read it differently)', () => {
  assert.deepEqual(parseMessages(body(call(1, "echo", { m: "x" }))), { batch: false, messages: [{ id: 1, method: "tools/call", tool: "echo", argBytes: 9 }] });
  assert.deepEqual(parseMessages(body([call(1, 'a'), { jsonrpc: '2.0', method: 'notifications/initialized' }])), { batch: true, messages: [{ id: 1, method: 'tools/call', tool: 'a', argBytes: 2 }, { method: 'notifications/initialized' }] });
  for (const [b, why] of [['hello', /not JSON/], ['[]', /empty batch/], ['{"id":1,"method":"x"}', /jsonrpc/], ['{"jsonrpc":"2.0","id":{},"method":"x"}', /id that/], ['{"jsonrpc":"2.0","id":1,"method":"tools/call"}', /without params/], ['[1]', /not an object/],
    ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"delete_repo"}}', /"name" appears twice/], ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","na\\u006de":"delete_repo"}}', /"name" appears twice/],
    // From the hostile review: keys a case-insensitive reader (Go's encoding/json) takes for the same one.
    ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","Name":"delete_repo"}}', /"Name" appears twice/], ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"},"paramſ":{"name":"delete_repo"}}', /appears twice/],
    ['{"jsonrpc":"2.0","id":1,"method":"ping","METHOD":"tools/call","params":{"name":"delete_repo"}}', /"METHOD" appears twice/], ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","\u212Aey":1,"key":2}}', /appears twice/],
    [`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":${'['.repeat(10000)}${']'.repeat(10000)}}}`, /deeper than 128/],
    [`[${Array(101).fill('{"jsonrpc":"2.0","method":"notifications/x"}').join(',')}]`, /more than 100/], ['\ufeff{"jsonrpc":"2.0","id":1,"method":"ping"}', /byte order mark/]] as const) {
    const r = parseMessages(body(b));
    assert.ok('problem' in r && why.test(r.problem), `${b}: ${JSON.stringify(r)}`);
  }
  assert.deepEqual(parseMessages(Buffer.from([0x7b, 0xff, 0x7d])), { problem: 'the body is not UTF-8' });
  // A "__proto__" key is a key like any other: no prototype is touched, the name read is the own one.
  assert.deepEqual(parseMessages(body('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"__proto__":{"name":"delete_repo"},"name":"echo"}}')), { batch: false, messages: [{ id: 1, method: 'tools/call', tool: 'echo', argBytes: 0 }] });
  assert.equal(ambiguity('{"a":{"b":1},"c":[{"b":2},{"b":3}]}'), null);
});

test('a POST\'s verdict: an allowed call goes; a refused one gets a JSON-RPC error naming the rule; a batch that hides one is refused whole; what is not MCP is a parse error', () => {
  assert.deepEqual(filterRequest(body(call(1, 'echo')), P), { forward: true, calls: [{ tool: 'echo', decision: 'allow', rule: 'tool "echo" is allowed by allow_tools "echo" in [mcp.servers.gh]', argBytes: 2 }], listsTools: false });
  const one = filterRequest(body(call(7, 'delete_repo')), P);
  assert.equal(one.forward, false);
  assert.deepEqual(JSON.parse((one as { body: string }).body), { jsonrpc: '2.0', id: 7, error: { code: -32001, message: 'stashbase: tool "delete_repo" is refused by deny_tools "delete_*" in [mcp.servers.gh]' } });
  const batch = filterRequest(body([call(1, 'echo'), { jsonrpc: '2.0', method: 'notifications/progress' }, call(2, 'delete_repo')]), P);
  assert.equal(batch.forward, false);
  assert.deepEqual(JSON.parse((batch as { body: string }).body).map((e: { id: number; error: { message: string } }) => [e.id, e.error.message]), [
    [1, 'stashbase: not sent: tool "delete_repo" is refused by deny_tools "delete_*" in [mcp.servers.gh]'],
    [2, 'stashbase: tool "delete_repo" is refused by deny_tools "delete_*" in [mcp.servers.gh]'],
  ]);
  assert.deepEqual(batch.calls.map((c) => [c.tool, c.decision]), [['echo', 'deny'], ['delete_repo', 'deny']]);
  const bad = filterRequest(body('GET / HTTP/1.1'), P);
  assert.deepEqual([bad.forward, (bad as { status: number }).status, JSON.parse((bad as { body: string }).body).error.code], [false, 400, -32700]);
  assert.equal(filterRequest(body({ jsonrpc: '2.0', id: 3, method: 'tools/list' }), P).forward, true);
});

const TOOLS = { jsonrpc: '2.0', id: 2, result: { tools: [{ name: 'get_issue' }, { name: 'delete_repo' }, { name: 'Echo' }, { name: 'echo' }, { notAName: 1 }], nextCursor: 'c' } };
const KEPT = { jsonrpc: '2.0', id: 2, result: { tools: [{ name: 'get_issue' }, { name: 'echo' }], nextCursor: 'c' } };

test('answers: a JSON tools/list result keeps only the allowed tools; anything else passes as it came', () => {
  assert.deepEqual(JSON.parse(filterJson(JSON.stringify(TOOLS), P)!), KEPT);
  assert.equal(filterJson(JSON.stringify({ jsonrpc: '2.0', id: 3, result: { content: [] } }), P), null);
  const f = answerFilter(P);
  const text = JSON.stringify(TOOLS);
  const out = Buffer.concat([f.push(Buffer.from(text.slice(0, 10))), f.push(Buffer.from(text.slice(10))), f.end()]).toString();
  assert.deepEqual(JSON.parse(out), KEPT);
  // Whatever the type says: a JSON answer (after a byte order mark too) is read as JSON; look-alikes of result and tools are dropped.
  const g = answerFilter(P);
  // A look-alike beside the real key makes the answer ambiguous (refused, below); one alone is dropped.
  const sneaky = JSON.stringify({ jsonrpc: '2.0', id: 2, RESULT: { tools: [{ name: 'delete_repo' }] } });
  assert.deepEqual(JSON.parse(Buffer.concat([g.push(Buffer.from(`\ufeff  ${sneaky}`)), g.end()]).toString()), { jsonrpc: '2.0', id: 2 });
  const g2 = answerFilter(P);
  const both = JSON.stringify({ jsonrpc: '2.0', id: 2, result: { tools: [{ name: 'echo' }], Tools: [{ name: 'delete_repo' }] } });
  assert.match(Buffer.concat([g2.push(Buffer.from(both)), g2.end()]).toString(), /not JSON it could read/);
  // What cannot be read is not passed on.
  const h = answerFilter(P);
  assert.match(Buffer.concat([h.push(Buffer.from('{"jsonrpc":"2.0", "tools": [ broken')), h.end()]).toString(), /stashbase: the MCP server's answer is not JSON it could read/);
});

test('answers as an event stream: each event passed on as soon as its blank line comes, a tools/list one filtered, the rest byte for byte', () => {
  const f = answerFilter(P);
  const first = 'event: message\nid: 1\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\n';
  assert.equal(f.push(Buffer.from(first)).toString(), first);
  const list = `event: message\r\nid: 2\r\ndata: ${JSON.stringify(TOOLS)}\r\n\r\n`;
  // Split anywhere: nothing of the event goes before its end, then all of it.
  assert.equal(f.push(Buffer.from(list.slice(0, 40))).length, 0);
  const out = f.push(Buffer.from(list.slice(40))).toString();
  assert.equal(out, `event: message\nid: 2\ndata: ${JSON.stringify(KEPT)}\n\n`);
  assert.equal(f.held, 0);
  assert.equal(Buffer.concat([f.push(Buffer.from(': keep-alive\n\n')), f.end()]).toString(), ': keep-alive\n\n');
  // From the hostile review: a stream's byte order mark, a data line not JSON, an event that never ends.
  const b = answerFilter(P);
  assert.equal(b.push(Buffer.from(`\ufeffdata: ${JSON.stringify(TOOLS)}\n\ndata: not json\n\nevent: x\ndata: {"jsonrpc":"2.0","id":9,"result":{}}\n\n`)).toString(), `data: ${JSON.stringify(KEPT)}\n\nevent: x\ndata: {"jsonrpc":"2.0","id":9,"result":{}}\n\n`);
  const e = answerFilter(P);
  e.push(Buffer.from('data: {"x":"'));
  const mb = Buffer.alloc(1 << 20, 'a');
  for (let i = 0; i < 40; i++) assert.equal(e.push(mb).length, 0);
  assert.ok(e.held < 17 << 20, `held ${e.held}`);
  assert.equal(e.push(Buffer.from('"}\n\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n')).toString(), 'data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
});

test('from the hostile review: a deny glob with "-" works; a denial matches case and width variants by itself (no allow-list behind it); a server is its host on any port; an MCP request is UTF-8 JSON without a coding, a GET or DELETE without a body', () => {
  const open = { server: 'ev', allow: null, deny: ['get-env', 'delete_*'] };
  for (const n of ['get-env', 'GET-ENV', 'Get-Env', 'ｇet-env', 'DELETE_x']) assert.equal(toolDecision(open, n).allow, false, n);
  assert.equal(toolDecision(open, 'get-sum').allow, true);
  assert.equal(toolDecision(open, 'GET-ENV').rule, 'tool "GET-ENV" is refused by deny_tools "get-env" in [mcp.servers.ev]');
  const servers = [{ name: 'ev', url: 'https://mcp.test/mcp', target: '/mcp', host: 'mcp.test', port: 443, policy: open, local: false }];
  for (const h of ['mcp.test', 'MCP.TEST', 'mcp.test.']) assert.equal(serverAt(servers, h)?.name, 'ev', h);
  assert.equal(serverAt(servers, 'other.test'), undefined);
  const post = (contentType: string | undefined, contentEncoding?: string) => framingProblem('POST', { contentType, contentEncoding, contentLength: '10', transferEncoding: undefined }, 'ev');
  assert.equal(post('application/json'), null);
  assert.equal(post('application/json; charset=utf-8'), null);
  assert.equal(post('Application/JSON; charset="UTF-8"'), null);
  for (const ct of ['application/json; charset=utf-7', 'application/json; charset=utf-16', 'text/plain', undefined, 'application/x-www-form-urlencoded', 'application/json, text/plain']) assert.equal(post(ct)?.status, 415, String(ct));
  assert.equal(post('application/json', 'gzip')?.status, 415);
  assert.equal(framingProblem('GET', { contentType: undefined, contentEncoding: undefined, contentLength: '55', transferEncoding: undefined }, 'ev')?.rule, 'a GET with a body to [mcp.servers.ev]');
  assert.equal(framingProblem('DELETE', { contentType: undefined, contentEncoding: undefined, contentLength: undefined, transferEncoding: 'chunked' }, 'ev')?.status, 400);
  assert.equal(framingProblem('GET', { contentType: undefined, contentEncoding: undefined, contentLength: undefined, transferEncoding: undefined }, 'ev'), null);
  assert.equal(typeof _fr, 'function');
});

const t = tempHome();
after(() => t.cleanup());

test("[mcp] in a profile: https URLs only, one server per host (which joins egress_hosts), globs over tool names, a local server's keys; errors name the key", () => {
  const load = (toml: string) => {
    writeFile(join(t.sbHome, 'agents', 'p.toml'), toml);
    try {
      return loadProfile({ name: 'p', source: 'global', cwd: t.dir, env: t.env }).profile;
    } catch (e) {
      return (e as Error).message;
    }
  };
  const ok = load('[mcp.servers.gh]\nurl = "https://api.githubcopilot.test/mcp/"\ndeny_tools = ["delete_*"]\n');
  assert.ok(typeof ok !== 'string', String(ok));
  assert.deepEqual(ok.mcp.servers.gh, { url: 'https://api.githubcopilot.test/mcp/', local: null, allowTools: null, denyTools: ['delete_*'] });
  assert.ok(ok.network.egressHosts.includes('api.githubcopilot.test'));
  const bad = load([
    '[mcp.servers."bad name"]', 'url = "https://a.test/"',
    '[mcp.servers.plain]', 'url = "http://b.test/mcp"',
    '[mcp.servers.cred]', 'url = "https://u:p@c.test/mcp"',
    '[mcp.servers.twice]', 'url = "https://a.test/other"', 'allow_tools = ["ok", "no spaces"]',
    '[mcp.servers.local]', 'command = ["npx", "x"]', 'url = "https://d.test/"',
    '[mcp.servers.nourl]', 'deny_tools = []',
    '[mcp.servers.keys]', 'command = ["srv"]', 'read = ["~/.ssh", "~"]', 'workdir = "rw"', 'data = ["src/*"]',
    '[mcp.servers.remote-data]', 'url = "https://e.test/mcp"', 'data = ["."]',
  ].join('\n') + '\n');
  assert.match(bad as string, /mcp\.servers\.keys\.data\[0\]: "src\/\*": name a folder, not a pattern/);
  assert.match(bad as string, /mcp\.servers\.remote-data\.data: belongs to a local server \(command\)/);
  assert.equal(typeof bad, 'string');
  for (const re of [/mcp\.servers\."bad name": "bad name" is not a server name/, /mcp\.servers\.plain\.url: "http:\/\/b\.test\/mcp": a remote MCP server is reached over https/, /mcp\.servers\.cred\.url: .*no user, query or fragment/,
    /mcp\.servers\.twice\.url: a\.test is already \[mcp\.servers\.bad name\]'s/, /mcp\.servers\.twice\.allow_tools\[1\]: "no spaces" is not a glob over tool names/, /mcp\.servers\.local\.url: set url \(a remote server\) or command \(a local one\), not both/, /mcp\.servers\.nourl\.url: is required/, /mcp\.servers\.keys\.read\[0\]: "~\/\.ssh" would show the server "~\/\.ssh"/, /mcp\.servers\.keys\.read\[1\]: "~" would show the server/, /mcp\.servers\.keys\.workdir: "rw" is not one of "none", "read", "write"/]) {
    assert.match(bad as string, re);
  }
});

test("what stays advisory: the project's .mcp.json servers the profile does not list are named (stdio: confined, not filtered by name); the file is read without following a link", async () => {
  const { unlistedServers } = await import('../../lib/mcp/advisory.js');
  const { symlinkSync, mkdirSync } = await import('node:fs');
  const dir = join(t.dir, 'proj-mcp');
  writeFile(join(dir, '.mcp.json'), JSON.stringify({ mcpServers: { github: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'] }, remote: { type: 'http', url: 'https://other.test/mcp' }, listed: { type: 'http', url: 'https://mcp.test/mcp' } } }));
  assert.deepEqual(unlistedServers(dir, { everything: { url: 'https://mcp.test/mcp' } }), [
    ".mcp.json's server \"github\" (stdio) runs inside the sandbox: confined by it, but its tools are not restricted by name (list a remote server under [mcp.servers] for that)",
    ".mcp.json's server \"remote\" (\"https://other.test/mcp\") is not in [mcp.servers]: its tools are not restricted, and it is reached only as egress_hosts allows",
  ]);
  const linked = join(t.dir, 'proj-link');
  mkdirSync(linked);
  symlinkSync(join(dir, '.mcp.json'), join(linked, '.mcp.json'));
  assert.deepEqual(unlistedServers(linked, {}), []);
  writeFile(join(dir, '.mcp.json'), '{"mcpServers":{"__proto__":{"command":"x"}}}');
  assert.deepEqual(unlistedServers(dir, {}), []);
  // (Review, round 35) A URL holding line breaks and an escape sequence is quoted: no line of agent validate's own
  // is forged (control: the URL as the file gives it holds them).
  const url = 'http://a/\n  ok   mcp: all servers restricted\n\u001b]52;c;eA==\u0007Ready.';
  writeFile(join(dir, '.mcp.json'), JSON.stringify({ mcpServers: { x: { url } } }));
  assert.ok(url.includes('\n  ok   mcp'));
  const [said] = unlistedServers(dir, {});
  assert.equal(said, `.mcp.json's server "x" (${JSON.stringify(url)}) is not in [mcp.servers]: its tools are not restricted, and it is reached only as egress_hosts allows`);
  assert.doesNotMatch(said!, /[\n\x1b\x07]/);
});

test("(review, round 36) a local server's secret too short to be scrubbed from its answers is refused: the server does not run", async () => {
  const { localServerCommand } = await import('../../lib/mcp/local-server.js');
  const dir = join(t.dir, 'local-short');
  writeFile(join(dir, 'pin'), '1234\n');
  const { chmodSync } = await import('node:fs');
  chmodSync(join(dir, 'pin'), 0o600);
  const cfg = { hosts: [] as string[], data: [] as string[], command: ['node', '/opt/srv/index.js'], env: { PIN: { source: `file:${join(dir, 'pin')}`, from: { kind: 'file' as const, path: join(dir, 'pin') } } }, read: [dir], workdir: 'none' as const };
  const r = localServerCommand(cfg, { env: { PATH: process.env.PATH }, home: t.home, cwd: dir, platform: 'linux' });
  assert.equal(r, "its env PIN's secret is 4 bytes; a secret under 7 bytes cannot be bound: what comes back from its hosts could not be scrubbed of it reliably (its base64 forms are too short to look for)");
});

test('a local server\'s confinement: the system, node, what read names; the working tree only as workdir says (hidden by default); its secrets as real values in its own environment, nothing of yours inherited', async () => {
  const { localServerCommand } = await import('../../lib/mcp/local-server.js');
  const dir = join(t.dir, 'local-cmd');
  writeFile(join(dir, 'tok'), 'tok-real-value-0123456789\n');
  const { chmodSync } = await import('node:fs');
  chmodSync(join(dir, 'tok'), 0o600);
  const base = { hosts: [] as string[], data: [] as string[], command: ['node', '/opt/srv/index.js', 'stdio'], env: { A: { value: 'lit' }, T: { source: `file:${join(dir, 'tok')}`, from: { kind: 'file' as const, path: join(dir, 'tok') } } }, read: [dir] };
  const work = join(t.dir, 'local-work');
  writeFile(join(work, 'README'), 'x');
  const cmd = (workdir: 'none' | 'read') => localServerCommand({ ...base, workdir }, { env: { PATH: process.env.PATH, SECRET_OF_YOURS: 'x' }, home: t.home, cwd: work, platform: 'linux' });
  const none = cmd('none');
  assert.ok(typeof none !== 'string', String(none));
  // bwrap itself runs with a bare PATH and nothing of the profile's: the server's environment is set inside (--clearenv, --setenv).
  assert.deepEqual([none.env, none.onlyEnv], [{ PATH: '/usr/bin:/bin' }, true]);
  const args = none.args.join(' ');
  // Its environment on a pipe bwrap reads (--args 4), never on its command line, which any user reads in /proc (review).
  assert.ok(args.startsWith('--clearenv --args 4 --unshare-all --die-with-parent --new-session --cap-drop ALL '), args.slice(0, 300));
  assert.doesNotMatch(args, /tok-real-value|--setenv/);
  assert.deepEqual(none.pipes, [{ fd: 4, direction: 'to-child' }]);
  assert.equal(none.envArgs, `--setenv\0PATH\0${process.env.PATH}\0--setenv\0HOME\0/tmp\0--setenv\0TMPDIR\0/tmp\0--setenv\0LANG\0C.UTF-8\0--setenv\0A\0lit\0--setenv\0T\0tok-real-value-0123456789\0`);
  assert.match(args, /--chdir \/tmp -- node \/opt\/srv\/index.js stdio$/);
  assert.ok(none.args.includes('--ro-bind') && none.args.includes(dir), 'read is bound read-only');
  // The server's PATH has no folder the agent writes, and a bare program found in one it may write is refused (found in review: npx from node_modules/.bin).
  writeFile(join(work, 'node_modules', '.bin', 'npx'), '#!/bin/sh\n');
  chmodSync(join(work, 'node_modules', '.bin', 'npx'), 0o755);
  writeFile(join(t.dir, 'allowed', 'bin', 'npx'), '#!/bin/sh\n');
  chmodSync(join(t.dir, 'allowed', 'bin', 'npx'), 0o755);
  const npx = (PATH: string, writable: string[] = []) => localServerCommand({ ...base, command: ['npx', 'srv'], workdir: 'none' }, { env: { PATH }, home: t.home, cwd: work, platform: 'linux', writable });
  const filtered = npx(`node_modules/.bin:${work}/node_modules/.bin:/usr/bin:/bin`);
  assert.ok(typeof filtered !== 'string', String(filtered));
  assert.ok(filtered.envArgs?.startsWith('--setenv\0PATH\0/usr/bin:/bin\0'), 'PATH first, without the folders the agent writes');
  assert.equal(npx(`${t.dir}/allowed/bin:/usr/bin:/bin`, [join(t.dir, 'allowed')]), `${join(t.dir, 'allowed', 'bin', 'npx')} lies where the agent writes (the working tree or allow_write): a later run would run what the agent left there`);
  // A program or a read path where the agent writes is refused (a later run would run what it left).
  const inTree = localServerCommand({ ...base, read: [], command: [join(dir, 'srv.mjs')], workdir: 'none' }, { env: { PATH: process.env.PATH }, home: t.home, cwd: dir, platform: 'linux' });
  assert.equal(typeof inTree, 'string');
  // workdir = "read": the tree read-only, less what the agent's sandbox hides; never from the home.
  writeFile(join(dir, 'sub', 'key.pem'), 'k');
  const read = localServerCommand({ ...base, read: [], workdir: 'read' }, { env: { PATH: process.env.PATH }, home: t.home, cwd: join(dir, 'sub'), platform: 'linux', denied: [join(dir, 'sub', 'key.pem')] });
  assert.ok(typeof read !== 'string', String(read));
  assert.match(read.args.join(' '), new RegExp(`--ro-bind /dev/null ${join(dir, 'sub', 'key.pem')}`));
  assert.match(String(localServerCommand({ ...base, read: [], workdir: 'read' }, { env: { PATH: process.env.PATH }, home: t.home, cwd: t.home, platform: 'linux' })), /from your home/);
  // workdir = "write": the tree writable; what the agent may not write read-only over it (pinned folders first), the git directory read-only whole, deny_read hidden.
  const wt = join(dir, 'wtree');
  writeFile(join(wt, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  writeFile(join(wt, 'conf', 'deploy.sh'), 'x');
  writeFile(join(wt, 'private.key'), 'k');
  writeFile(join(wt, 'node_modules', 'x.js'), 'x');
  // The run's own plan, as a backend made it (deny_write, a stand-in it made, pins, read denials) and a Docker run's isolated path.
  const protection = {
    denyRead: [{ path: join(wt, 'private.key'), kind: 'file' as const }],
    denyWrite: [{ path: join(wt, 'conf', 'deploy.sh'), kind: 'file' as const }, { path: join(wt, '.git', 'hooks'), kind: 'dir' as const }],
    placeholders: [] as string[], fileStandIns: [] as string[], pinned: [join(wt, 'conf')],
  };
  const tree = { protection, isolated: [join(wt, 'node_modules')] };
  const write = localServerCommand({ ...base, read: [], workdir: 'write' }, { env: { PATH: process.env.PATH }, home: t.home, cwd: wt, platform: 'linux', tree, seccompFile: '/run/f.bpf' });
  assert.ok(typeof write !== 'string', String(write));
  const tail = write.args.join(' ');
  assert.ok(tail.endsWith(`--bind ${wt} ${wt} --bind ${wt}/conf ${wt}/conf --ro-bind ${wt}/.git ${wt}/.git --ro-bind ${wt}/conf/deploy.sh ${wt}/conf/deploy.sh --ro-bind /dev/null ${wt}/private.key --tmpfs ${wt}/node_modules --chdir /tmp -- node /opt/srv/index.js stdio`), tail.slice(-500));
  // (review) Never from the tree (npx ran node_modules/.bin's program from there, python3 -m a module), and a file it is
  // named where the agent writes refused, a folder there its data.
  assert.match(read.args.join(' '), /--chdir \/tmp -- node \/opt\/srv\/index.js stdio$/);
  const server = (command: string[], more: { data?: string[]; env?: Record<string, { value: string }>; read?: string[] } = {}) => localServerCommand({ ...base, read: more.read ?? [], data: more.data ?? [], env: more.env ?? {}, command, workdir: 'write' }, { env: { PATH: process.env.PATH }, home: t.home, cwd: wt, platform: 'linux', tree, seccompFile: '/run/f.bpf' });
  const refusedFor = (r: ReturnType<typeof server>) => (typeof r === 'string' ? r.replace(/:.*/s, '') : 'started');
  assert.equal(server(['node', '/opt/srv/index.js', join(wt, 'conf', 'deploy.sh')]), `its argument ${JSON.stringify(join(wt, 'conf', 'deploy.sh'))} names ${join(wt, 'conf', 'deploy.sh')}, where the agent writes (the working tree or allow_write) or a folder above it: the server would run or obey what the agent left there (a folder it only works on can be listed in data)`);
  // (review, round 2) A folder node or python runs an index.js or __main__.py of, uv's --directory, a path in sh -c's string, a
  // file URL, a --flag=x=path, an env value (NODE_OPTIONS), a read path above the tree; and (unlisted) ~ and $HOME in a string.
  for (const [what, r] of [
    ['folder', server(['node', join(wt, 'conf')])],
    ['uv', server(['uv', '--directory', join(wt, 'conf'), 'run', 'weather.py'])],
    ['sh', server(['sh', '-c', `exec node ${join(wt, 'tools', 'plain.js')}`])],
    ['url', server(['node', `--import=file://${join(wt, 'x.mjs')}`, '/opt/srv/index.js'])],
    ['flag', server(['node', '/opt/srv/index.js', `--flag=x=${join(wt, 'x.js')}`])],
    // (~ and $HOME in a shell there are the server's HOME: the profile's, when it sets one.)
    ['tilde', server(['sh', '-c', 'exec node ~/wtree/x.js'], { env: { HOME: { value: dir } } })],
    ['home', server(['sh', '-c', 'exec node "$HOME/wtree/x.js"'], { env: { HOME: { value: dir } } })],
  ] as const) assert.match(refusedFor(r), /^its argument /, what);
  // (review, round 3) Without a HOME of the profile's, ~ is the server's private /tmp: started.
  assert.equal(typeof server(['sh', '-c', 'exec node ~/wtree/x.js']), 'object');
  assert.match(String(server(['node', '/opt/srv/index.js'], { env: { NODE_OPTIONS: { value: `--require ${join(wt, 'x.js')}` } } })), /^its env NODE_OPTIONS names \S+\/wtree\/x\.js, where the agent writes/);
  assert.match(String(server(['node', '/opt/srv/index.js'], { read: [dir] })), /holds \S+\/wtree, where the agent writes: workdir says what the server sees of the tree$/);
  // (review, round 2) A program named through a link in the tree (the agent can swap it), though it leads outside.
  symlinkSync(process.execPath, join(wt, 'node-link'));
  assert.match(String(server([join(wt, 'node-link'), '/opt/srv/index.js'])), /node-link lies where the agent writes/);
  // (review, round 3) A path with a space, a colon-joined list (PYTHONPATH, PATH), a folder above the tree with a relative
  // path from it, a file not made yet behind a link to the tree; and (unlisted) a Windows-style separator after the tree.
  const spaced = join(dir, 'My Project');
  mkdirSync(spaced, { recursive: true });
  const at = (cwd: string, command: string[], env: Record<string, { value: string }> = {}) => localServerCommand({ ...base, read: [], data: [], env, command, workdir: 'read' }, { env: { PATH: process.env.PATH }, home: t.home, cwd, platform: 'linux' });
  assert.match(refusedFor(at(spaced, ['node', join(spaced, 'server.js')])), /^its argument /);
  assert.match(String(at(wt, ['node', '/opt/srv/index.js'], { PYTHONPATH: { value: `/opt/x:${wt}/src` } })), /^its env PYTHONPATH names /);
  assert.match(String(at(wt, ['node', '/opt/srv/index.js'], { PATH: { value: `/usr/bin:${wt}` } })), /^its env PATH names /);
  assert.match(refusedFor(at(wt, ['sh', '-c', `cd ${dir} && node wtree/x.js`])), /^its argument /);
  symlinkSync(wt, join(dir, 'current'));
  assert.match(refusedFor(at(wt, ['node', join(dir, 'current', 'not-yet.js')])), /^its argument /);
  assert.match(refusedFor(at(wt, ['node', `${wt}\\x.js`])), /^its argument /);
  // An allow_write folder inside what the server loads from (the system's folders): refused.
  assert.match(String(localServerCommand({ ...base, read: [], data: [], env: {}, command: ['python3', '-m', 'srv'], workdir: 'none' }, { env: { PATH: process.env.PATH }, home: t.home, cwd: wt, platform: 'linux', writable: ['/usr/local/lib/python3/dist-packages'] })), /^\/usr\/local\/lib\/python3\/dist-packages, where the agent writes, lies in \/usr, which the server loads from/);
  // A path elsewhere in the home, below a folder above the tree, is not the tree: started.
  assert.equal(typeof at(wt, ['node', '/opt/srv/index.js', `${dir}/other/config.json`]), 'object');
  // A data folder is never what an interpreter runs or an option loads code from.
  assert.match(refusedFor(server(['node', wt], { data: [wt] })), /^its argument /);
  assert.match(refusedFor(server(['node', '--require', wt, '/opt/srv/index.js'], { data: [wt] })), /^its argument /);
  assert.equal(typeof server(['node', '/opt/srv/index.js', `${wt}/`], { data: [`${wt}/`] }), 'object', 'a trailing slash');
  // A folder the profile lists in data, given as a whole argument: its data; the same folder in another form, or not listed, refused.
  assert.equal(typeof server(['node', '/opt/srv/index.js', wt], { data: [wt] }), 'object');
  assert.match(refusedFor(server(['node', '/opt/srv/index.js', `--root=${wt}`], { data: [wt] })), /^its argument /);
  assert.match(refusedFor(server(['node', '/opt/srv/index.js', wt])), /^its argument /);
  assert.match(String(server(['node', '/opt/srv/index.js'], { data: ['/opt'] })), /^data: \/opt is not a folder where the agent writes/);
  // (review) Never from the tree; a relative name is from its private /tmp.
  assert.match(read.args.join(' '), /--chdir \/tmp -- node \/opt\/srv\/index.js stdio$/);
  assert.equal(typeof server(['node', 'tools/mcp.js']), 'object', 'a relative name: from its private /tmp');
  // The agent's seccomp filter (no setuid bits), on descriptor 3.
  assert.ok(tail.includes(' --seccomp 3 --unshare-all '), tail.slice(0, 400));
  assert.deepEqual(write.fds, [{ fd: 3, path: '/run/f.bpf' }]);
  // A protected or isolated path that does not exist (outside .git, read-only whole) could be created: the server does not start.
  const missing = (t2: typeof tree) => localServerCommand({ ...base, read: [], workdir: 'write' }, { env: { PATH: process.env.PATH }, home: t.home, cwd: wt, platform: 'linux', tree: t2, seccompFile: '/run/f.bpf' });
  assert.equal(missing({ ...tree, protection: { ...protection, fileStandIns: [join(wt, '.envrc')] } }), `${wt}/.envrc is protected from writes but does not exist, so the server could create it (workdir = "write")`);
  assert.equal(missing({ ...tree, isolated: [join(wt, 'vendor')] }), `${wt}/vendor is protected from writes but does not exist, so the server could create it (workdir = "write")`);
  assert.equal(localServerCommand({ ...base, read: [], workdir: 'write' }, { env: { PATH: process.env.PATH }, home: t.home, cwd: wt, platform: 'linux', seccompFile: '/run/f.bpf' }), "the working tree's protections are unknown");
  // Found in review: without the agent's seccomp filter (an architecture it lacks), no writable tree; under a deny-list, no local server at all.
  assert.match(String(localServerCommand({ ...base, read: [], workdir: 'write' }, { env: { PATH: process.env.PATH }, home: t.home, cwd: wt, platform: 'linux', tree })), /^workdir = "write" needs the agent's seccomp filter/);
  assert.match(String(localServerCommand({ ...base, read: [], workdir: 'none' }, { env: { PATH: process.env.PATH }, home: t.home, cwd: wt, platform: 'linux', denyListWrites: true })), /with writes = "deny-list" the agent could change its program or files before it runs/);
  assert.match(String(localServerCommand({ ...base, read: [], workdir: 'write' }, { env: { PATH: process.env.PATH }, home: t.home, cwd: t.home, platform: 'linux', tree, seccompFile: '/run/f.bpf' })), /workdir = "write" from your home/);
  assert.equal(localServerCommand({ ...base, workdir: 'none' }, { env: {}, home: t.home, cwd: dir, platform: 'darwin' }), 'local MCP servers run only on Linux for now (bubblewrap confines them); list a remote server by its url');
});

test("(review) a local server's read paths are judged by real path against what the agent's sandbox hides, both ways: an absolute spelling of a hidden folder, a link to one, a folder above one are refused; another is bound", async () => {
  const { localServerCommand } = await import('../../lib/mcp/local-server.js');
  const { symlinkSync } = await import('node:fs');
  const home = join(t.dir, 'read-home');
  writeFile(join(home, '.ssh', 'id_ed25519'), 'KEY');
  writeFile(join(home, '.config', 'gh', 'hosts.yml'), 'oauth_token: x');
  writeFile(join(home, 'tools', 'srv.mjs'), '');
  symlinkSync(join(home, '.config', 'gh'), join(home, 'ghlink'));
  const work = join(t.dir, 'read-work');
  writeFile(join(work, 'README'), 'x');
  // As the run gives it: the profile's deny_read expanded (its ~ spelled out).
  const denied = [join(home, '.ssh'), join(home, '.config', 'gh')];
  const cmd = (read: string[]) => localServerCommand({ hosts: [], data: [], command: ['node', join(home, 'tools', 'srv.mjs')], env: {}, read, workdir: 'none' }, { env: { PATH: process.env.PATH }, home, cwd: work, platform: 'linux', denied });
  for (const [read, shown] of [[join(home, '.ssh'), join(home, '.ssh')], [`${home}/./.config`, join(home, '.config', 'gh')], ['~/ghlink', join(home, '.config', 'gh')], [join(home, '.ssh', 'id_ed25519'), join(home, '.ssh')]]) {
    const r = cmd([join(home, 'tools'), read as string]);
    assert.equal(typeof r, 'string', `${read} was bound`);
    assert.match(r as string, new RegExp(`^read: .* would show the server ${(shown as string).replace(/[.]/g, '\\.')}, which the agent's sandbox hides, and the server reads for the agent what it asks`), read);
  }
  // Control: a folder that holds nothing hidden is bound.
  const ok = cmd([join(home, 'tools')]);
  assert.ok(typeof ok !== 'string', String(ok));
  assert.ok(ok.args.join(' ').includes(`--ro-bind ${join(home, 'tools')} ${join(home, 'tools')}`));
});

test('from the second review: a lone look-alike key (Method beside a result, a Name in params), a method a loose server takes for tools/call, a long duplicate key cut in the refusal', () => {
  for (const [b, why] of [
    ['{"jsonrpc":"2.0","id":1,"result":{},"Method":"tools/call","params":{"name":"get-env"}}', /"Method" is read as "method"/],
    ['{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"},"METHOD":"tools/call","params":{"name":"get-env"}}', /"METHOD" is read as "method"/],
    ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"get-env"}}', /"Name" is read as "name"/],
    ['{"jsonrpc":"2.0","id":1,"method":"TOOLS/CALL","params":{"name":"get-env"}}', /could be read as it/], ['{"jsonrpc":"2.0","id":1,"method":"tools/call ","params":{"name":"get-env"}}', /could be read as it/],
    ['{"jsonrpc":"2.0","id":1,"method":"/tools/call","params":{"name":"get-env"}}', /could be read as it/],
  ] as const) {
    const r = parseMessages(body(b));
    assert.ok('problem' in r && why.test(r.problem), `${b}: ${JSON.stringify(r)}`);
  }
  const long = 'k'.repeat(100_000);
  const r = parseMessages(body(`{"jsonrpc":"2.0","id":1,"method":"ping","${long}":1,"${long}":2}`));
  assert.ok('problem' in r && r.problem.length < 300, 'the refusal names the key cut short');
});

test('from the second review: answers with a byte order mark split across reads, in UTF-16, with endless white space, with a key twice are not passed on as they came; a 16 MiB event in 16 KiB reads is filtered in linear time', () => {
  const run = (parts: Buffer[]) => {
    const f = answerFilter(P);
    return Buffer.concat([...parts.map((x) => f.push(x)), f.end()]).toString();
  };
  const sse = Buffer.from(`\ufeffdata: ${JSON.stringify(TOOLS)}\n\n`);
  assert.equal(run([sse.subarray(0, 1), sse.subarray(1, 2), sse.subarray(2)]), `data: ${JSON.stringify(KEPT)}\n\n`);
  const json = Buffer.from(`\ufeff${JSON.stringify(TOOLS)}`);
  assert.deepEqual(JSON.parse(run([json.subarray(0, 1), json.subarray(1)])), KEPT);
  assert.match(run([Buffer.from(JSON.stringify(TOOLS), 'utf16le')]), /stashbase: the MCP server's answer is not JSON it could read/);
  // Endless white space is not held without end: past 64 KiB the answer is read as JSON (held within its limit, filtered).
  assert.deepEqual(JSON.parse(run([Buffer.alloc(70 << 10, ' '), Buffer.from(JSON.stringify(TOOLS))])), KEPT);
  assert.match(run([Buffer.from('{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo"}]},"result":{"tools":[{"name":"delete_repo"}]}}')]), /not JSON it could read/);
  const f = answerFilter(P);
  const big = Buffer.from(`data: {"jsonrpc":"2.0","id":3,"result":{"pad":"${'a'.repeat(16 << 20)}"}}\n\n`);
  const t0 = process.hrtime.bigint();
  let outBytes = 0;
  for (let i = 0; i < big.length; i += 16 << 10) outBytes += f.push(big.subarray(i, i + (16 << 10))).length;
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  assert.ok(ms < 3000, `${ms} ms`);
  assert.equal(outBytes, 0, 'past 16 MiB the event is dropped');
  const f2 = answerFilter(P);
  const fits = Buffer.from(`data: {"jsonrpc":"2.0","id":3,"result":{"pad":"${'a'.repeat(8 << 20)}"}}\n\n`);
  const t1 = process.hrtime.bigint();
  let got = 0;
  for (let i = 0; i < fits.length; i += 16 << 10) got += f2.push(fits.subarray(i, i + (16 << 10))).length;
  assert.equal(got, fits.length);
  assert.ok(Number(process.hrtime.bigint() - t1) / 1e6 < 2000);
});

test("the local bridge: an answer it cannot read is an error for the request it names (not a two-minute wait); a cancellation reaches the server under the bridge's id", async () => {
  const { LocalServer } = await import('../../lib/mcp/local-server.js');
  const { readFileSync, existsSync } = await import('node:fs');
  const log = join(t.dir, 'cancel.log');
  const script = `const rl = require('readline').createInterface({ input: process.stdin }); rl.on('line', (l) => { const m = JSON.parse(l);
    if (m.method === 'deep') process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id }).slice(0, -1) + ',"result":' + '['.repeat(150) + ']'.repeat(150) + '}\\n');
    if (m.method === 'notifications/cancelled') require('fs').appendFileSync(${JSON.stringify(log)}, String(m.params.requestId)); });`;
  const s = new LocalServer('fake', { file: process.execPath, args: ['-e', script], env: {}, onlyEnv: true }, { server: 'fake', allow: null, deny: [] });
  try {
    const t0 = Date.now();
    const a = await s.exchange(Buffer.from('{"jsonrpc":"2.0","id":7,"method":"deep"}'));
    assert.ok(Date.now() - t0 < 5000);
    assert.deepEqual(JSON.parse(a.body), { jsonrpc: '2.0', id: 7, error: { code: -32603, message: 'stashbase: the local server fake sent an answer stashbase could not read' } });
    void s.exchange(Buffer.from('{"jsonrpc":"2.0","id":9,"method":"slow"}'));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await s.exchange(Buffer.from('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}'))).status, 202);
    // Until written, not just made (the server's append opens the file, then writes: CI's load once read it between).
    for (let i = 0; i < 250 && !(existsSync(log) && readFileSync(log, 'utf8') !== ''); i++) await new Promise((r) => setTimeout(r, 20));
    assert.match(readFileSync(log, 'utf8'), /^sb-\d+$/);
  } finally {
    s.stop();
  }
});

test('numbers the local bridge could not pass exactly are refused', async () => {
  const { inexactNumber } = await import('../../lib/mcp/jsonrpc.js');
  assert.equal(inexactNumber('{"a":9007199254740993,"s":"123456789012345678901"}'), '9007199254740993');
  assert.equal(inexactNumber('{"a":1e400}'), '1e400');
  assert.equal(inexactNumber('{"a":1e-400}'), '1e-400');
  assert.equal(inexactNumber('{"a":[1,-2.5,3e10,9007199254740991],"b":"9007199254740993"}'), null);
});

test("the end-of-run refusal block says when a local MCP server's own proxy refused a host, and where to allow it (its hosts, not the agent's egress)", async () => {
  const { refusals, refusalBlock } = await import('../../lib/run/refusals.js');
  const events = [
    { type: 'proxy', method: 'CONNECT', host: 'other.test', port: 443, decision: 'deny', rule: 'not in egress_hosts', mcpServer: 'net' },
    { type: 'proxy', method: 'CONNECT', host: 'other.test', port: 443, decision: 'deny', rule: 'not in egress_hosts' },
  ];
  assert.deepEqual(refusalBlock(refusals(events as never), '/p.toml'), [
    'the proxy refused 2 destinations during the run (an agent that failed to connect may have failed because of it):',
    '  "other.test:443" (by the local MCP server net) ×1: not in egress_hosts; to allow it for that server, add "other.test" to hosts of [mcp.servers.net] in /p.toml',
    '  "other.test:443" ×1: not in egress_hosts; to allow it, add "other.test" to [network] egress_hosts in /p.toml',
  ]);
});

test("(review, round 33) a refused host named like a property of Object's prototype (constructor, __proto__, unlisted: toString, hasOwnProperty) gets no note of a known agent's; control: a known agent's host gets its note", async () => {
  const { refusals, refusalBlock } = await import('../../lib/run/refusals.js');
  const hosts = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'claude.ai'];
  const events = hosts.map((host) => ({ type: 'proxy', method: 'CONNECT', host, port: 443, decision: 'deny', rule: 'not in egress_hosts' }));
  const lines = refusalBlock(refusals(events as never), '/p.toml');
  for (const host of hosts.slice(0, 4)) assert.deepEqual(lines.filter((l) => l.includes(`"${host}:443"`)), [`  "${host}:443" ×1: not in egress_hosts; to allow it, add "${host}" to [network] egress_hosts in /p.toml`]);
  assert.deepEqual(lines.filter((l) => l.includes('"claude.ai:443"')), ['  "claude.ai:443" ×1: not in egress_hosts; to allow it, add "claude.ai" to [network] egress_hosts in /p.toml (Claude Code: a subscription login)']);
});

test('(review) an event any reader could take otherwise is dropped: a byte another reader splits lines at (Python\'s splitlines), another control character, bytes that are not UTF-8, a line that is none of the stream\'s fields; an answer in another charset is refused whole; control: the same listing in a plain event is filtered, and Python\'s splitlines finds the data line', () => {
  const listing = `data: ${JSON.stringify(TOOLS)}`;
  const through = (event: Buffer | string, contentType?: string) => {
    const f = answerFilter(P, contentType);
    return Buffer.concat([f.push(Buffer.isBuffer(event) ? event : Buffer.from(event)), f.end()]).toString();
  };
  for (const sep of ['\x0b', '\x0c', '\x1c', '\x1e', '\x85', '\u2028', '\u2029', '\x00']) assert.equal(through(`event: message${sep}${listing}\n\n`), '', JSON.stringify(sep));
  // (Unlisted: an event whose bytes are not UTF-8 — an overlong encoding of "\n", which a lenient decoder reads as one.)
  assert.equal(through(Buffer.concat([Buffer.from('event: message'), Buffer.from([0xc0, 0x8a]), Buffer.from(`${listing}\n\n`)])), '');
  assert.equal(through(`event: message\nx-data: 1\n${listing}\n\n`), '');
  for (const ct of ['text/event-stream; charset=utf-16', 'application/json; charset="UTF-7"']) assert.match(through(`${listing}\n\n`, ct), /^\{"jsonrpc":"2\.0","id":null,"error":\{"code":-32603,"message":"stashbase: the MCP server's answer says \\"charset=utf-(16|7)\\" of its charset, not plainly UTF-8, so it was not passed on"\}\}$/);
  // (review, round 2) Spellings Python's parser reads as UTF-7: RFC 2231 names, one inside another's quotes, a continuation; and
  // (unlisted) two Content-Type headers joined, and a charset given twice.
  for (const ct of ["text/event-stream; charset*=utf-8''utf-7", 'text/event-stream; x="; charset=utf-8"; charset=utf-7', 'text/event-stream; charset*0=utf-; charset*1=7', 'text/event-stream, text/plain; charset=utf-7', 'text/event-stream; charset=utf-8; charset=utf-7']) assert.notEqual(charsetProblem(ct), null, ct);
  for (const ct of [undefined, 'text/event-stream', 'text/event-stream; charset=utf-8', 'application/json; charset="UTF-8"', 'text/event-stream; x="a;b,c"']) assert.equal(charsetProblem(ct), null, ct);
  // The control: Python's own parser reads the first three as UTF-7.
  const pyCharset = spawnSync('python3', ['-c', "import sys\nfrom email.message import Message\nfor ct in sys.argv[1:]:\n    m = Message(); m['content-type'] = ct; print(m.get_content_charset())", "text/event-stream; charset*=utf-8''utf-7", 'text/event-stream; x="; charset=utf-8"; charset=utf-7', 'text/event-stream; charset*0=utf-; charset*1=7'], { encoding: 'utf8' });
  assert.equal(pyCharset.stdout, 'utf-7\nutf-7\nutf-7\n', pyCharset.stderr);
  // The control: a plain event is filtered, in UTF-8 said or not; and Python's splitlines finds a data line in the first one.
  for (const ct of [undefined, 'text/event-stream; charset=UTF-8']) assert.equal(through(`event: message\n${listing}\n\n`, ct), `event: message\ndata: ${JSON.stringify(KEPT)}\n\n`);
  const py = spawnSync('python3', ['-c', 'import sys; print(sum(1 for l in sys.stdin.read().splitlines() if l.startswith("data:")))'], { input: `event: message\x0b${listing}\n\n`, encoding: 'utf8' });
  assert.equal(py.stdout, '1\n');
});

test('(review, round 34) a tool name built to make a glob backtrack ("delete" repeated, then a newline) costs a glob what any name of its length does, in a tools/call and in a tools/list answer; control: the glob as a regular expression takes quadratic time over it', () => {
  const policy = { server: 'gh', allow: null, deny: ['*delete*'] };
  const attack = `${'delete'.repeat(20_000)}\n`;
  const plain = 'x'.repeat(attack.length);
  const time = (f: () => void) => {
    const t0 = process.hrtime.bigint();
    f();
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  const decided = toolDecision(policy, attack);
  assert.equal(decided.allow, false);
  assert.match(decided.rule, /is not a tool name the MCP specification allows/);
  assert.ok(time(() => toolDecision(policy, attack)) < 50);
  assert.equal(toolListed(policy, attack), false);
  // Within the length a name may have, the same decisions a regular expression makes, in any case and form.
  assert.deepEqual(['delete_repo', 'Delete_Repo', 'x_delete', 'list', 'ｄｅｌｅｔｅ'].map((n) => toolDecision(policy, n).allow), [false, false, false, true, false]);
  for (const [g, t, want] of [['a*b?c', 'aXXbYc', true], ['a*b?c', 'abc', false], ['*', '', true], ['?', '', false], ['a**', 'a', true], ['*a*a*a*b', 'a'.repeat(60), false], ['é?', 'éx', true]] as const) assert.equal(globMatch(g, t), want, `${g} ${t}`);
  // Control: the regular expression the glob was made into.
  const re = /^.*delete.*$/u;
  assert.ok(time(() => re.test(attack)) > 20 * Math.max(1, time(() => re.test(plain))));
});

test('(review, round 35) a bound MCP server that writes the value JSON-escaped (`\\/`, `\\u002b`) in a tools/list answer: it reaches the agent as the placeholder, in a JSON body and in an event stream, the event at its release; control: scrubbed only before the filter, which writes the message anew, the raw value comes out', async () => {
  const { planBody } = await import('../../lib/proxy/forward-response.js');
  const { scrubPairs, Scrubber } = await import('../../lib/proxy/scrub.js');
  const { chain } = await import('../../lib/proxy/message-filter.js');
  const REAL = 'sk-other+Secret/Value=Ab12cd34ef56gh78';
  const PH = 'sk-SBPHotherPlaceholderValuexxxxxxxxx';
  const pairs = scrubPairs([{ name: 'K', placeholder: PH, real: REAL, hosts: ['mcp.test'], inQuery: false, allowPlaintext: false }]);
  for (const escaped of [JSON.stringify(REAL).replace(/\//g, '\\/'), JSON.stringify(REAL).replace(/\+/g, '\\u002b'), JSON.stringify(REAL).replace('S', '\\u0053')]) {
    const message = `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"get_issue","description":"key: "},{"name":"delete_repo"}],"_meta":{"auth":${escaped}}}}`;
    const plan = planBody({ rawHeaders: ['Content-Type', 'application/json'] }, { pairs }, () => answerFilter(P, 'application/json'));
    assert.ok('filter' in plan && plan.filter !== null);
    const out = Buffer.concat([plan.filter.push(Buffer.from(message)), plan.filter.end()]).toString();
    assert.ok(!out.includes(REAL) && out.includes(PH), out);
    assert.deepEqual(JSON.parse(out).result.tools, [{ name: 'get_issue', description: 'key: ' }]);
    // An event stream: the event, whole, once the release timer fires (nothing held back past it).
    const sse = planBody({ rawHeaders: ['Content-Type', 'text/event-stream'] }, { pairs }, () => answerFilter(P, 'text/event-stream'));
    assert.ok('filter' in sse && sse.filter !== null);
    const pushed = sse.filter.push(Buffer.from(`event: message\ndata: ${message}\n\n`));
    const released = sse.filter.release();
    const sent = Buffer.concat([pushed, released]).toString();
    assert.ok(sent.endsWith('\n\n') && sent.includes(PH) && !sent.includes(REAL), sent);
    assert.equal(sse.filter.held, 0);
    // With a scrubber that knew the raw form alone (as before round 36, which reads every spelling before the filter
    // too): the scrubbing after the filter still finds what it wrote anew; the control, the order before the fix, lets
    // the raw value out.
    const rawOnly = [{ ...pairs[0]!, spelled: false }];
    const plain = planBody({ rawHeaders: ['Content-Type', 'application/json'] }, { pairs: rawOnly }, () => answerFilter(P, 'application/json'));
    assert.ok('filter' in plain && plain.filter !== null);
    const after = Buffer.concat([plain.filter.push(Buffer.from(message)), plain.filter.end()]).toString();
    assert.ok(!after.includes(REAL) && after.includes(PH), after);
    const old = chain(new Scrubber(rawOnly), answerFilter(P, 'application/json'));
    assert.ok(Buffer.concat([old.push(Buffer.from(message)), old.end()]).toString().includes(REAL));
  }
});

test("(review, round 35) an answer's charset is named in the refusal only where it is a known one: a bound server's secret given as its charset does not reach the agent, even lowercased; control: charset=utf-16 is named", () => {
  const REAL = 'ghp_R3alVa1ueSecret0123456789abcdef';
  const through = (ct: string) => {
    const f = answerFilter(P, ct);
    return Buffer.concat([f.push(Buffer.from('{}')), f.end()]).toString();
  };
  const said = through(`application/json; charset=${REAL}`);
  assert.ok(!said.toLowerCase().includes(REAL.toLowerCase()), said);
  assert.match(said, /says \\"a charset the proxy does not name\\" of its charset/);
  assert.match(through('application/json; charset=utf-16'), /says \\"charset=utf-16\\" of its charset/);
  assert.match(through(`application/json; charset*=utf-8''utf-7`), /says \\"charset\*=utf-8''utf-7\\" of its charset/);
  // (Third review) A quoted charset holding "; ": its second part, of letters alone, is no word of the proxy's.
  const quoted = through('application/json; charset="utf-7; CorrectHorseBatteryStaple"');
  assert.ok(!quoted.includes('correcthorsebatterystaple'), quoted);
  assert.match(quoted, /says \\"charset=utf-7; a charset the proxy does not name\\"/);
});

test('(review, round 38) an answer in one-byte pieces (a chunked body of one-byte chunks): its head is looked at once a byte, BOM split or not, and what is held costs about its size; the result is the same as whole; control: a head read again at every piece grows with its square (eight times the bytes, sixty-four times the time)', async () => {
  const { timed } = await import('../stats.js');
  const text = JSON.stringify(TOOLS);
  /** `white` bytes of white space, then the answer, a byte a piece; the output. */
  const pieces = (white: number, bom = false) => {
    const f = answerFilter(P);
    const all = Buffer.concat([Buffer.from(bom ? '\ufeff' : ''), Buffer.alloc(white, ' '), Buffer.from(text)]);
    const out: Buffer[] = [];
    for (let i = 0; i < all.length; i++) out.push(f.push(all.subarray(i, i + 1)));
    out.push(f.end());
    return Buffer.concat(out).toString();
  };
  assert.deepEqual(JSON.parse(pieces(100)), KEPT);
  assert.deepEqual(JSON.parse(pieces(100, true)), KEPT);
  pieces(6 << 10);
  pieces(48 << 10);
  const ratio = timed(() => pieces(48 << 10)) / timed(() => pieces(6 << 10));
  assert.ok(ratio < 20, `eight times the white space took ${ratio.toFixed(1)} times as long`);
  // Control: the head concatenated and scanned again at every piece, as before.
  const again = (white: number) => {
    const head: Buffer[] = [];
    for (let i = 0; i < white; i++) {
      head.push(Buffer.from(' '));
      const all = Buffer.concat(head);
      let j = 0;
      while (j < all.length && all[j] === 0x20) j++;
    }
  };
  again(1 << 10);
  const control = timed(() => again(8 << 10)) / timed(() => again(1 << 10));
  assert.ok(control > 30, `control: ${control.toFixed(1)}`);
  // Held: a 4 MiB answer in one-byte pieces costs about its size, not an object a byte (~100 bytes).
  const { setFlagsFromString } = await import('node:v8');
  const { runInNewContext } = await import('node:vm');
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const f = answerFilter(P);
  f.push(Buffer.from('['));
  const one = Buffer.from(' ');
  gc();
  const before = process.memoryUsage();
  for (let i = 0; i < 4 << 20; i++) f.push(one);
  gc();
  const after = process.memoryUsage();
  const grew = after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers;
  assert.ok(grew < 12 << 20, `4 MiB held in one-byte pieces grew the heap by ${(grew / 2 ** 20).toFixed(0)} MiB`);
  assert.equal(f.held, (4 << 20) + 1);
  assert.match(Buffer.concat([f.push(Buffer.from(']')), f.end()]).toString(), /^\[ +\]$/);
});
