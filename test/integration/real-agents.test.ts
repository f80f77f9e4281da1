// Compatibility under the default boundary (writes as an allow-list, no Unix
// sockets, Landlock), proven by the real agents: Claude Code and Codex each
// run full turns on the native backend against local HTTPS stubs of their
// APIs (test/fixtures/agent-api-stub.mjs), with the profiles and commands of
// docs/agents.md (test/agent-recipes.ts reads them from there and checks each
// turn: the real key at the stub, only placeholders in the tool's output,
// ~/.ssh unreadable, example.com refused, every request in the audit). Then
// the traps that page names, and the everyday work of an agent: npm ci, a
// virtual environment with pip, a commit, Node's and Python's test runners.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LeafCache } from '../../lib/tls/leaves.js';
import { needsMcpServer, startMcpFront } from '../mcp-front.js';
import { checkTurn, CODEX_MCP_ALLOWED_ECHO, codexMcpTurn, hostKeysFor, plantSshKey, REAL_ANTHROPIC, recipe, runTurn, type Stub, startStubs, type TurnOptions, type Wiring, wired, workRepository } from '../agent-recipes.js';
import { shellQuote } from '../../templates/shell-quote.js';
import { BIN, cli, needs, needsAgents, outsideTempBase, sessionStoreEntries, TEST_AGENTS_BIN, tempHome, writeFile } from '../helpers.js';

describe('the real Claude Code and Codex inside the native sandbox, with the recipes of docs/agents.md', needs('native', 'git'), () => {
  const skip = needsAgents();
  // A home outside the temp folders: the agents' live state folders are then guarded (no link made there, as for a
  // home of yours; templates/landlock.ts), and the agents work with that.
  const t = tempHome(outsideTempBase());
  const repo = join(t.home, 'work');
  let anthropic: Stub;
  let openai: Stub;
  let platform: Stub;
  let wiring: Wiring;
  let leaves: LeafCache;
  let env: NodeJS.ProcessEnv;
  let sshKey = '';

  before(async () => {
    if (skip.skip) return;
    const stubs = await startStubs(t.dir);
    ({ anthropic, openai, platform } = stubs);
    wiring = stubs.wiring;
    leaves = stubs.leaves;
    for (const name of ['claude', 'codex', 'claude-and-codex', 'claude-subscription']) writeFile(join(t.sbHome, 'agents', `${name}.toml`), wired(recipe(name), stubs.wiring));
    sshKey = plantSshKey(t.home);
    workRepository(repo);
    env = { ...t.env, PATH: `${TEST_AGENTS_BIN}:${process.env.PATH}` };
  });
  after(async () => {
    await anthropic?.close();
    await openai?.close();
    await platform?.close();
    if (process.env.SBTEST_KEEP !== "1") t.cleanup(); else process.stderr.write(`kept ${t.dir}\n`);
  });

  const turn = (name: string, command: string, stub: Stub, secrets: string[], o: TurnOptions = {}) => runTurn({ env, cwd: repo, sshKey, timeoutMs: 150_000 }, name, command, stub, secrets, o);

  test('Claude Code (recipes claude, claude-turn): a full turn with a Bash tool call; its state is kept', { ...skip, timeout: 180_000 }, async () => {
    const r = await turn('claude', 'claude-turn', anthropic, ['ANTHROPIC_API_KEY']);
    await checkTurn(r);
    assert.match(r.result.stdout, /stub-finished/);
    // Its transcript is in stashbase's store (agent_sessions = "sandbox"), not among your sessions; its config came
    // back to your home; nothing else of the home was written.
    assert.ok(sessionStoreEntries(t.sbHome, 'claude', 'projects').length > 0);
    assert.equal(existsSync(join(t.home, '.claude', 'projects')), false);
    const config = readFileSync(join(t.home, '.claude.json'), 'utf8');
    assert.equal(typeof (JSON.parse(config) as { userID?: string }).userID, 'string', config + r.result.stderr);
    assert.equal(r.result.stderr, '', 'nothing the agent wrote was left behind');
  });

  test("Claude Code with the profile's MCP server (the claude recipe plus [mcp.servers]): stashbase gives it the server, it is offered only the allowed tools, and the allowed call's result reaches the model through the proxy", { ...skip, ...needsMcpServer(), timeout: 180_000 }, async () => {
    const mcp = await startMcpFront(leaves, 'mcp.test');
    try {
      // Claude Code's MCP tool search (its default with the first-party API) would list the tools only when the model searches: off, so the offer is seen whole.
      const profile = `${wired(recipe('claude'), wiring)}"mcp.test" = "127.0.0.1:${mcp.frontPort}"\n[mcp.servers.everything]\nurl = "https://mcp.test:${mcp.frontPort}/mcp"\nallow_tools = ["echo"]\n`;
      writeFile(join(t.sbHome, 'agents', 'claude-mcp.toml'), profile.replace('[config_env]', '[config_env]\nENABLE_TOOL_SEARCH = "false"'));
      anthropic.setCommand({ tool: 'mcp__everything__echo', input: { message: 'through-the-proxy' } });
      const before = anthropic.requests.length;
      const r = await cli(['agent', 'run', '--silent', '--profile', 'claude-mcp', '--', 'claude', '-p', 'Echo something', '--allowedTools', 'mcp__everything__echo'], { env: { ...env, ...hostKeysFor(recipe('claude')) }, cwd: repo, timeoutMs: 150_000 });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /stub-finished/);
      const asked = anthropic.requests.slice(before).filter((q) => q.path.startsWith('/v1/messages') && Array.isArray((q.body as { tools?: unknown[] })?.tools));
      const offered = new Set(asked.flatMap((q) => ((q.body as { tools: Array<{ name: string }> }).tools).map((x) => x.name)).filter((n) => n.startsWith('mcp__')));
      // The server offers many tools (get-env among them); the model was offered the one the profile allows.
      assert.deepEqual([...offered], ['mcp__everything__echo']);
      assert.ok(JSON.stringify(anthropic.requests.slice(before).map((q) => q.body)).includes('Echo: through-the-proxy'), 'the tool result reached the model');
      assert.deepEqual(mcp.reached.filter((b) => b.includes('tools/call')).map((b) => JSON.parse(b.slice(5)).params.name), ['echo']);
    } finally {
      anthropic.setCommand('true');
      mcp.close();
    }
  });

  test("Codex with the profile's MCP server (the codex recipe plus [mcp.servers]): stashbase gives it the server (-c mcp_servers), it has only the allowed tool, whose result reaches the model through the proxy; the denied one is not there to call (control: with every tool allowed, both calls reach the server)", { ...skip, ...needsMcpServer(), timeout: 180_000 }, async () => {
    const mcp = await startMcpFront(leaves, 'mcp.test');
    try {
      const server = `"mcp.test" = "127.0.0.1:${mcp.frontPort}"\n[mcp.servers.everything]\nurl = "https://mcp.test:${mcp.frontPort}/mcp"\n`;
      writeFile(join(t.sbHome, 'agents', 'codex-mcp.toml'), `${wired(recipe('codex'), wiring)}${server}allow_tools = ["echo"]\n`);
      // The control: the same server with every tool allowed.
      writeFile(join(t.sbHome, 'agents', 'codex-mcp-all.toml'), `${wired(recipe('codex'), wiring)}${server}`);
      const codexTurn = (profile: string) => codexMcpTurn({ stub: openai, mcp, env, cwd: repo, profile });
      const allowed = await codexTurn('codex-mcp');
      assert.deepEqual(allowed.outputs.slice(1), CODEX_MCP_ALLOWED_ECHO);
      assert.deepEqual(allowed.calls, ['echo']);
      const all = await codexTurn('codex-mcp-all');
      assert.ok(all.outputs[1]!.includes('"mcp__everything__get_env"'), all.outputs[1]);
      assert.deepEqual(all.calls, ['echo', 'get-env']);
    } finally {
      openai.setCommand('true');
      mcp.close();
    }
  });

  test('Claude Code interactive, in a real terminal (tmux), from a fresh home with the claude recipe: its first start (platform.claude.com), onboarding, one turn with a tool call; the API got the real key, the screen shows the tool ran', { ...skip, timeout: 120_000 }, async () => {
    const fresh = tempHome(outsideTempBase());
    const socket = `sbtest-ic-${process.pid}`;
    const tmux = (...args: string[]) => spawnSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
    try {
      writeFile(join(fresh.sbHome, 'agents', 'claude.toml'), wired(recipe('claude'), wiring));
      // Outside the home: a folder above the run with .stashbase/agents would hold a directory profile of its own.
      const proj = join(fresh.dir, 'proj');
      writeFile(join(proj, 'README'), 'x\n');
      anthropic.setCommand('echo interactive-tool-ran');
      const before = anthropic.requests.length;
      const vars = { ...fresh.env, ...hostKeysFor(recipe('claude')), PATH: `${TEST_AGENTS_BIN}:${process.env.PATH}`, TERM: 'xterm-256color' };
      const envArgs = Object.entries(vars).filter(([k]) => /^[A-Z_][A-Z0-9_]*$/.test(k)).map(([k, v]) => shellQuote(`${k}=${v}`)).join(' ');
      const started = tmux('new-session', '-d', '-s', 'ic', '-x', '160', '-y', '45', `cd ${shellQuote(proj)} && exec env -i ${envArgs} ${shellQuote(process.execPath)} ${shellQuote(BIN)} agent run --profile claude -- claude`);
      assert.equal(started.status, 0, started.stderr);
      const screen = () => tmux('capture-pane', '-p', '-t', 'ic').stdout;
      const until = async (re: RegExp) => {
        for (const t0 = Date.now(); Date.now() - t0 < 30_000; await new Promise((r) => setTimeout(r, 250))) if (re.test(screen())) return;
        assert.fail(`the screen never showed ${re}:\n${screen()}`);
      };
      const keys = (...k: string[]) => assert.equal(tmux('send-keys', '-t', 'ic', ...k).status, 0);
      await until(/Dark mode/);
      keys('Enter');
      await until(/Do you want to use this API key\?/);
      keys('Up');
      await new Promise((r) => setTimeout(r, 300));
      keys('Enter');
      await until(/Press Enter to continue/);
      keys('Enter');
      await until(/Yes, I trust this folder/);
      keys('Enter');
      await until(/for shortcuts/);
      keys('-l', 'Run the tests');
      await new Promise((r) => setTimeout(r, 300));
      keys('Enter');
      await until(/stub-finished/);
      assert.match(screen(), /interactive-tool-ran/);
      const seen = anthropic.requests.slice(before);
      assert.ok(seen.some((q) => q.path.startsWith('/v1/messages') && q.headers['x-api-key'] === REAL_ANTHROPIC), 'the API got the real key');
      assert.ok(platform.requests.length > 0, 'the first start asked platform.claude.com');
    } finally {
      // The run tears down after the hang-up: its folders go once it has.
      const pid = Number(tmux('list-panes', '-t', 'ic', '-F', '#{pane_pid}').stdout.trim());
      tmux('kill-server');
      for (const t0 = Date.now(); pid > 0 && Date.now() - t0 < 20_000; await new Promise((r) => setTimeout(r, 100))) {
        try {
          process.kill(pid, 0);
        } catch {
          break;
        }
      }
      fresh.cleanup();
    }
  });

  test('Codex (recipes codex, codex-turn): a full turn with a shell tool call over the WebSocket, in a home a codex outside the sandbox used before', { ...skip, timeout: 180_000 }, async () => {
    // What a codex run outside the sandbox leaves besides its sessions: a lock folder it writes to at every thread's start.
    mkdirSync(join(t.home, '.codex', 'thread-writer-locks'), { recursive: true });
    const r = await turn('codex', 'codex-turn', openai, ['CODEX_API_KEY']);
    await checkTurn(r);
    assert.ok(r.stub.requests.slice(r.before).some((q) => q.method === 'WS'), 'the turn went over the WebSocket');
    assert.ok(sessionStoreEntries(t.sbHome, 'codex', 'sessions').length > 0, 'its session log is in stashbase\'s store');
    assert.equal(existsSync(join(t.home, '.codex', 'sessions')), false, 'not among your sessions');
  });

  test('two secrets in one profile (claude-and-codex): each turn carries the other secret\'s placeholder to its model, inert; Claude Code as root with --dangerously-skip-permissions (IS_SANDBOX)', { ...skip, timeout: 300_000 }, async () => {
    const both = ['ANTHROPIC_API_KEY', 'CODEX_API_KEY'];
    const claude = await turn('both-claude', 'claude-unattended', anthropic, both, { profile: 'claude-and-codex' });
    const seen = await checkTurn(claude);
    const codex = await turn('both-codex', 'codex-turn', openai, both, { profile: 'claude-and-codex' });
    await checkTurn(codex);
    // The model hosts received the other secret's placeholder in the conversation, unchanged.
    assert.ok(JSON.stringify(anthropic.requests.slice(claude.before).map((q) => q.body)).includes(seen.CODEX_API_KEY!));
  });

  test('Claude Code with a subscription token (claude-subscription): bound like a key, sent as a bearer token, kept from its own tool', { ...skip, timeout: 180_000 }, async () => {
    const r = await turn('subscription', 'claude-turn', anthropic, ['CLAUDE_CODE_OAUTH_TOKEN'], { profile: 'claude-subscription', hidden: ['CLAUDE_CODE_OAUTH_TOKEN'] });
    await checkTurn(r);
  });

  test("Codex without --dangerously-bypass-approvals-and-sandbox: stashbase turns its own sandbox off (it cannot nest), and its shell tool runs", { ...skip, timeout: 180_000 }, async () => {
    const r = await turn('codex-own-sandbox', 'codex-turn', openai, ['CODEX_API_KEY'], { dropFlags: ['--dangerously-bypass-approvals-and-sandbox'] });
    await checkTurn(r);
  });

  test("Codex's traps: the WebSocket refused on the way (SSE fallback), and model discovery at chatgpt.com without its --disable", { ...skip, timeout: 300_000 }, async () => {
    openai.setWebsocket(403);
    const fallback = await turn('codex-sse', 'codex-turn', openai, ['CODEX_API_KEY']).finally(() => openai.setWebsocket(true));
    await checkTurn(fallback);
    const sse = fallback.stub.requests.slice(fallback.before);
    assert.ok(sse.some((q) => q.method === 'POST' && q.path.startsWith('/v1/responses')), 'the turn fell back to HTTPS');
    const discovery = await turn('codex-discovery', 'codex-turn', openai, ['CODEX_API_KEY'], { drop: ['api_key_model_discovery'] });
    await checkTurn(discovery);
    const audit = JSON.parse((await cli(['agent', 'audit', '--json'], { env, cwd: repo })).stdout) as Array<Record<string, unknown>>;
    const refused = audit.filter((e) => e.host === 'chatgpt.com' && e.decision === 'deny').reduce((n, e) => n + (e.type === 'repeated' ? Number(e.count) : 1), 0);
    assert.ok(refused > 1, `chatgpt.com refused ${refused} times`);
    process.stderr.write(`# Codex with the WebSocket refused: ${fallback.ms} ms; without --disable api_key_model_discovery: ${discovery.ms} ms, chatgpt.com refused ${refused} times\n`);
  });
});

describe("an agent's everyday work inside the default native sandbox", needs('bwrap', 'git'), () => {
  const t = tempHome();
  const proj = join(t.home, 'app');
  after(() => t.cleanup());

  test('npm ci, pip install into a venv in the working directory, a commit, and Node and Python test runners all work', { timeout: 180_000 }, async () => {
    // A local package for npm (no registry is asked) and one for pip.
    writeFile(join(t.home, 'vendor', 'lib-src', 'package.json'), JSON.stringify({ name: 'sb-local-lib', version: '1.0.0', main: 'index.js' }));
    writeFile(join(t.home, 'vendor', 'lib-src', 'index.js'), 'module.exports = (a, b) => a + b;\n');
    assert.equal(spawnSync('npm', ['pack', '--silent', '--pack-destination', join(t.home, 'vendor')], { cwd: join(t.home, 'vendor', 'lib-src'), env: t.env }).status, 0);
    writeFile(join(proj, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', dependencies: { 'sb-local-lib': `file:${join(t.home, 'vendor', 'sb-local-lib-1.0.0.tgz')}` } }));
    assert.equal(spawnSync('npm', ['install', '--package-lock-only', '--no-audit', '--no-fund'], { cwd: proj, env: t.env }).status, 0);
    writeFile(join(proj, 'sum.test.js'), "const test = require('node:test'); const assert = require('node:assert'); const sum = require('sb-local-lib');\ntest('sum', () => assert.equal(sum(2, 3), 5));\n");
    // A wheel made by hand (pip installs it with nothing to build, and no index to ask).
    const wheel = join(t.home, 'vendor', 'sblocal-1.0-py3-none-any.whl');
    const files = {
      'sblocal.py': 'def double(x):\n    return 2 * x\n',
      'sblocal-1.0.dist-info/METADATA': 'Metadata-Version: 2.1\nName: sblocal\nVersion: 1.0\n',
      'sblocal-1.0.dist-info/WHEEL': 'Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
      'sblocal-1.0.dist-info/RECORD': 'sblocal.py,,\nsblocal-1.0.dist-info/METADATA,,\nsblocal-1.0.dist-info/WHEEL,,\nsblocal-1.0.dist-info/RECORD,,\n',
    };
    const zip = `import json, sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w') as z:\n    for name, text in json.loads(sys.argv[2]).items(): z.writestr(name, text)\n`;
    assert.equal(spawnSync('python3', ['-c', zip, wheel, JSON.stringify(files)]).status, 0);
    writeFile(join(proj, 'test_double.py'), 'import unittest, sblocal\nclass T(unittest.TestCase):\n    def test_double(self):\n        self.assertEqual(sblocal.double(4), 8)\n');
    const script = [
      'set -e',
      'npm ci --no-audit --no-fund --loglevel=error > npm-ci.txt',
      'node --test sum.test.js > node-test.txt',
      `python3 -m venv .venv && .venv/bin/pip install --quiet --no-index ${wheel}`,
      '.venv/bin/python -m unittest -q test_double 2> py-test.txt',
      'git add package.json sum.test.js test_double.py && git -c user.name=me -c user.email=me@x commit -qm "work" && echo committed',
    ].join('\n');
    assert.equal(spawnSync('git', ['init', '-q'], { cwd: proj }).status, 0);
    const r = await cli(['agent', 'run', '--silent', '--', 'sh', '-c', script], { env: t.env, cwd: proj, timeoutMs: 170_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.stdout, 'committed\n');
    assert.match(readFileSync(join(proj, 'node-test.txt'), 'utf8'), /# pass 1\n# fail 0/);
    assert.match(readFileSync(join(proj, 'py-test.txt'), 'utf8'), /Ran 1 test[\s\S]*OK/);
    // What the installs left, which your own node and python would load and git does not show, is moved aside by default
    // (keep_executables keeps it): the install is made again on your side (npm ci), or restored once reviewed.
    assert.ok(existsSync(join(proj, 'node_modules.stashbase-quarantine', 'node_modules', 'sb-local-lib', 'index.js')));
    assert.equal(existsSync(join(proj, 'node_modules')), false);
    assert.ok(r.stderr.includes(`the agent changed code in ${join(proj, 'node_modules')} (node_modules, whose code Node, npm run and npx load), where git shows nothing: it was moved to`), r.stderr);
    assert.equal(spawnSync('git', ['log', '--format=%s'], { cwd: proj, encoding: 'utf8' }).stdout, 'work\n');
    // The commit's index came back with it: your checkout is clean of what was committed.
    assert.doesNotMatch(spawnSync('git', ['status', '--porcelain'], { cwd: proj, encoding: 'utf8' }).stdout, /package\.json|sum\.test\.js/);
  });
});
