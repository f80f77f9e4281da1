// Compatibility under the default boundary (writes as an allow-list, no Unix
// sockets, Landlock), proven by the real agents: Claude Code and Codex each
// run a full turn on the native backend against local HTTPS stubs of their
// APIs (test/fixtures/agent-api-stub.mjs), whose first answer is a tool call
// that runs a shell command. The keys are bound as secrets, the vendor hosts
// mapped to the stubs. Then the everyday work of an agent: npm ci, a virtual
// environment with pip, a commit, Node's and Python's test runners.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { LeafCache } from '../../lib/tls/leaves.js';
import { cli, needs, needsAgents, REPO, TEST_AGENTS_BIN, tempHome, writeFile } from '../helpers.js';
import { testCa } from '../upstream-ca.js';

interface Stub {
  port: number;
  requests: Array<{ method: string; path: string; headers: Record<string, string | undefined>; body: unknown }>;
  close(): Promise<void> | void;
}
type StartStub = (o: { key: string; cert: string; command: string }) => Promise<Stub>;

const REAL_ANTHROPIC = 'sk-ant-api03-realRealRealRealRealRealReal-0123456789';
const REAL_OPENAI = 'sk-proj-realRealRealRealRealRealReal0123456789';

describe('the real Claude Code and Codex inside the default native sandbox', needs('bwrap', 'git'), () => {
  const skip = needsAgents();
  const t = tempHome();
  const repo = join(t.home, 'work');
  let anthropic: Stub;
  let openai: Stub;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    if (skip.skip) return;
    const { startAgentApiStub } = (await import(join(REPO, 'test', 'fixtures', 'agent-api-stub.mjs'))) as { startAgentApiStub: StartStub };
    const ca = testCa();
    writeFileSync(join(t.dir, 'upstream-ca.pem'), ca.certPem);
    const leaves = new LeafCache(ca);
    const a = leaves.get('api.anthropic.com');
    const o = leaves.get('api.openai.com');
    anthropic = await startAgentApiStub({ key: a.keyPem, cert: a.certPem, command: 'echo ran-claude > tool-output-claude.txt' });
    openai = await startAgentApiStub({ key: o.keyPem, cert: o.certPem, command: 'echo ran-codex > tool-output-codex.txt' });
    writeFile(join(t.sbHome, 'agents', 'agents.toml'), `
[network]
egress_hosts = ["api.anthropic.com", "api.openai.com"]
upstream_ca_file = "${join(t.dir, 'upstream-ca.pem')}"
[network.hosts]
"api.anthropic.com" = "127.0.0.1:${anthropic.port}"
"api.openai.com" = "127.0.0.1:${openai.port}"
[secrets.ANTHROPIC_API_KEY]
source = "REAL_ANTHROPIC_KEY"
hosts = ["api.anthropic.com"]
[secrets.CODEX_API_KEY]
source = "REAL_OPENAI_KEY"
hosts = ["api.openai.com"]
[config_env]
CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = "1"
`);
    mkdirSync(repo);
    const git = (args: string[]) => spawnSync('git', ['-c', 'user.name=me', '-c', 'user.email=me@x', ...args], { cwd: repo });
    git(['init', '-q']);
    writeFileSync(join(repo, 'README'), 'work\n');
    git(['add', 'README']);
    git(['commit', '-qm', 'init']);
    env = { ...t.env, PATH: `${TEST_AGENTS_BIN}:${process.env.PATH}`, REAL_ANTHROPIC_KEY: REAL_ANTHROPIC, REAL_OPENAI_KEY: REAL_OPENAI };
  });
  after(async () => {
    await anthropic?.close();
    await openai?.close();
    t.cleanup();
  });

  test('Claude Code: a full turn with a Bash tool call; the stub got the real key, the agent only a placeholder; its state is kept', { ...skip, timeout: 180_000 }, async () => {
    const r = await cli(['agent', 'run', '--profile', 'agents', '--silent', '--', 'claude', '-p', 'Run the command.', '--allowedTools', 'Bash', '--output-format', 'text'], { env, cwd: repo, timeoutMs: 150_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /stub-finished/);
    assert.equal(readFileSync(join(repo, 'tool-output-claude.txt'), 'utf8'), 'ran-claude\n');
    const turns = anthropic.requests.filter((q) => q.path.startsWith('/v1/messages'));
    assert.ok(turns.length >= 2, JSON.stringify(anthropic.requests.map((q) => q.path)));
    assert.deepEqual([...new Set(turns.map((q) => q.headers['x-api-key']))], [REAL_ANTHROPIC]);
    const seen = await cli(['agent', 'run', '--profile', 'agents', '--silent', '--', 'sh', '-c', 'echo "$ANTHROPIC_API_KEY"'], { env, cwd: repo });
    assert.match(seen.stdout, /^sk-ant-api03-\S+\n$/);
    assert.notEqual(seen.stdout, `${REAL_ANTHROPIC}\n`);
    // Its transcript and config came back to your home; nothing else of the home was written.
    assert.ok(readdirSync(join(t.home, '.claude', 'projects')).length > 0);
    const config = readFileSync(join(t.home, '.claude.json'), 'utf8');
    assert.equal(typeof (JSON.parse(config) as { userID?: string }).userID, 'string', config + r.stderr);
    assert.equal(r.stderr, '', 'nothing the agent wrote was left behind');
  });

  test('Codex: a full turn with a shell tool call, through the WebSocket or its fallback; the stub got the real key', { ...skip, timeout: 180_000 }, async () => {
    const r = await cli(
      ['agent', 'run', '--profile', 'agents', '--silent', '--', 'codex', 'exec', '--skip-git-repo-check', '-s', 'danger-full-access', '--disable', 'plugins', '--disable', 'api_key_model_discovery', '-c', 'analytics.enabled=false', 'Run the command.'],
      { env, cwd: repo, timeoutMs: 150_000 },
    );
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(readFileSync(join(repo, 'tool-output-codex.txt'), 'utf8'), 'ran-codex\n');
    const calls = openai.requests.filter((q) => q.path.startsWith('/v1/responses') && q.method !== 'WS');
    assert.ok(calls.length >= 1, JSON.stringify(openai.requests.map((q) => `${q.method} ${q.path}`)));
    assert.deepEqual([...new Set(calls.map((q) => q.headers.authorization))], [`Bearer ${REAL_OPENAI}`]);
    assert.ok(existsSync(join(t.home, '.codex', 'sessions')), 'its session log came back to your home');
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
    assert.ok(existsSync(join(proj, 'node_modules', 'sb-local-lib', 'index.js')));
    assert.equal(spawnSync('git', ['log', '--format=%s'], { cwd: proj, encoding: 'utf8' }).stdout, 'work\n');
    // The commit's index came back with it: your checkout is clean of what was committed.
    assert.doesNotMatch(spawnSync('git', ['status', '--porcelain'], { cwd: proj, encoding: 'utf8' }).stdout, /package\.json|sum\.test\.js/);
  });
});
