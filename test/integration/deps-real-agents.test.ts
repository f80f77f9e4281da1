// The dependency check as the real Claude Code (and Codex) use it, inside a
// native stashbase run: the hook is installed with `stashbase agent hooks deps
// install claude|codex` into the test's home, the local API stub's model asks its
// Bash tool for `npm install <package>`, and the check (run by Claude Code
// inside the sandbox) asks the registry stub through the run's proxy, which
// maps registry.sb.test to it. A made-up name and a name with a MAL- advisory
// are blocked: the registry never sees a tarball request, nothing is
// installed, and the model's next turn carries the reason. A clean package
// installs. Codex runs an untrusted hook only with --dangerously-bypass-hook-trust
// (trust is given in its TUI), which the Codex case passes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { LeafCache } from '../../lib/tls/leaves.js';
import { cli, needs, needsAgents, REPO, TEST_AGENTS_BIN, tempHome, writeFile } from '../helpers.js';
import { testCa } from '../upstream-ca.js';
import { PACKAGES } from '../deps-packages.js';

interface ApiStub {
  port: number;
  requests: Array<{ method: string; path: string; body: unknown }>;
  close(): Promise<void>;
}
interface RegistryStub {
  port: number;
  requests: Array<{ method: string; path: string }>;
  close(): Promise<void>;
}

const REAL_KEY = 'sk-ant-api03-realRealRealRealRealRealReal-0123456789';
const REAL_OPENAI = 'sk-proj-realRealRealRealRealRealReal0123456789';

describe('the real Claude Code and Codex with the dependency hook, in a native run', needs('bwrap', 'git'), () => {
  const skip = needsAgents();
  const t = tempHome();
  const repo = join(t.home, 'work');
  let registry: RegistryStub;
  let leaves: LeafCache;
  let env: NodeJS.ProcessEnv;
  const apis: ApiStub[] = [];

  before(async () => {
    if (skip.skip) return;
    // A real tarball for the clean package, so that its install can go ahead.
    const src = join(t.dir, 'pkgsrc');
    writeFile(join(src, 'package.json'), JSON.stringify({ name: 'sb-clean-helper', version: '1.0.0', main: 'index.js' }));
    writeFile(join(src, 'index.js'), 'module.exports = 42;\n');
    assert.equal(spawnSync('npm', ['pack', '--silent', '--pack-destination', t.dir], { cwd: src, env: t.env }).status, 0);
    const tarball = readFileSync(join(t.dir, 'sb-clean-helper-1.0.0.tgz'));
    const packages = structuredClone(PACKAGES);
    packages.npm['sb-clean-helper'] = {
      created: PACKAGES.npm['sb-clean-helper'].created,
      versions: { '1.0.0': { file: 'sb-clean-helper-1.0.0.tgz', integrity: `sha512-${createHash('sha512').update(tarball).digest('base64')}`, shasum: createHash('sha1').update(tarball).digest('hex') } },
    } as never;
    const { startRegistryStub } = (await import(join(REPO, 'test', 'fixtures', 'registry-stub.mjs'))) as { startRegistryStub: (o: unknown) => Promise<RegistryStub> };
    (packages.npm['sb-clean-helper'].versions['1.0.0'] as { tarball?: Buffer }).tarball = tarball;
    registry = await startRegistryStub({ packages });

    const ca = testCa();
    writeFileSync(join(t.dir, 'upstream-ca.pem'), ca.certPem);
    leaves = new LeafCache(ca);
    mkdirSync(repo);
    const git = (args: string[]) => spawnSync('git', ['-c', 'user.name=me', '-c', 'user.email=me@x', ...args], { cwd: repo });
    git(['init', '-q']);
    writeFileSync(join(repo, 'package.json'), JSON.stringify({ name: 'work', version: '1.0.0', private: true }));
    git(['add', 'package.json']);
    git(['commit', '-qm', 'init']);
    env = { ...t.env, PATH: `${TEST_AGENTS_BIN}:${process.env.PATH}`, REAL_ANTHROPIC_KEY: REAL_KEY, REAL_OPENAI_KEY: REAL_OPENAI };

    const installed = await cli(['agent', 'hooks', 'deps', 'install', 'claude'], { env, cwd: repo });
    assert.equal(installed.code, 0, installed.stderr);
    const settings = JSON.parse(readFileSync(join(t.home, '.claude', 'settings.json'), 'utf8')) as { hooks: { PreToolUse: Array<{ matcher: string; hooks: Array<{ command: string }> }> } };
    assert.equal(settings.hooks.PreToolUse[0]?.matcher, 'Bash');
    assert.match(settings.hooks.PreToolUse[0]?.hooks[0]?.command ?? '', / agent hooks deps check \|\| /);
    assert.equal((await cli(['agent', 'hooks', 'deps', 'install', 'codex'], { env, cwd: repo })).code, 0);
  });
  after(async () => {
    for (const a of apis) await a.close();
    await registry?.close();
    t.cleanup();
  });

  /** One run whose model asks for `command`; returns the run, what the model got back and the registry requests it caused. */
  async function runAgent(agent: 'claude' | 'codex', command: string) {
    const { startAgentApiStub } = (await import(join(REPO, 'test', 'fixtures', 'agent-api-stub.mjs'))) as { startAgentApiStub: (o: { key: string; cert: string; command: string }) => Promise<ApiStub> };
    const host = agent === 'claude' ? 'api.anthropic.com' : 'api.openai.com';
    const leaf = leaves.get(host);
    const api = await startAgentApiStub({ key: leaf.keyPem, cert: leaf.certPem, command });
    apis.push(api);
    const secret = agent === 'claude' ? '[secrets.ANTHROPIC_API_KEY]\nsource = "REAL_ANTHROPIC_KEY"' : '[secrets.CODEX_API_KEY]\nsource = "REAL_OPENAI_KEY"';
    writeFile(join(t.sbHome, 'agents', 'deps.toml'), `
[filesystem]
keep_executables = ["node_modules"]
[network]
egress_hosts = ["${host}", "registry.sb.test"]
upstream_ca_file = "${join(t.dir, 'upstream-ca.pem')}"
[network.hosts]
"${host}" = "127.0.0.1:${api.port}"
"registry.sb.test" = "127.0.0.1:${registry.port}"
${secret}
hosts = ["${host}"]
[config_env]
CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = "1"
npm_config_registry = "http://registry.sb.test:${registry.port}/npm/"
STASHBASE_OSV_URL = "http://registry.sb.test:${registry.port}/osv"
npm_config_cache = "/tmp/npm-cache"
`);
    const seen = registry.requests.length;
    const argv = agent === 'claude'
      ? ['claude', '-p', 'Run the command.', '--allowedTools', 'Bash', '--output-format', 'text']
      : ['codex', 'exec', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', '-s', 'danger-full-access', '--disable', 'plugins', '--disable', 'api_key_model_discovery', '-c', 'analytics.enabled=false', 'Run the command.'];
    const r = await cli(['agent', 'run', '--profile', 'deps', '--silent', '--', ...argv], { env, cwd: repo, timeoutMs: 150_000 });
    // What the model got back from its tool (the hook's reason, or the command's output).
    const toolResult = JSON.stringify(api.requests.map((q) => q.body)).match(/stashbase dependency check[^"]*|"tool_result"[^}]*|function_call_output[^}]*/g)?.join('\n') ?? '';
    return { r, toolResult, registry: registry.requests.slice(seen).map((q) => `${q.method} ${q.path}`) };
  }

  for (const [name, why] of [['sb-made-up-helper', /does not exist in the npm registry/], ['sb-evil-thing', /OSV lists it as malicious: MAL-2025-0001/]] as const) {
    test(`npm install ${name} is blocked before it runs: no tarball, no install, and Claude reads why`, { ...skip, timeout: 180_000 }, async () => {
      const { r, toolResult, registry: asked } = await runAgent('claude', `npm install --no-audit --no-fund ${name} && echo installed > install-marker.txt`);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /stub-finished/);
      assert.ok(asked.includes(`GET /npm/${name}`), `the check asked the registry through the proxy: ${asked.join(', ')}`);
      assert.ok(!asked.some((q) => q.endsWith('.tgz')), asked.join(', '));
      assert.ok(!existsSync(join(repo, 'install-marker.txt')), 'the command never ran');
      assert.ok(!existsSync(join(repo, 'node_modules', name)));
      assert.match(toolResult, /stashbase dependency check blocked this install/);
      assert.match(toolResult, why);
    });
  }

  test('npm install of a clean package goes ahead', { ...skip, timeout: 180_000 }, async () => {
    const { r, registry: asked, toolResult } = await runAgent('claude', 'npm install --no-audit --no-fund sb-clean-helper && echo installed > install-marker.txt');
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.ok(existsSync(join(repo, 'install-marker.txt')), `${toolResult}\n${asked.join(', ')}`);
    assert.doesNotMatch(toolResult, /stashbase dependency check/);
    assert.equal(readFileSync(join(repo, 'install-marker.txt'), 'utf8'), 'installed\n');
    assert.equal(readFileSync(join(repo, 'node_modules', 'sb-clean-helper', 'index.js'), 'utf8'), 'module.exports = 42;\n');
    assert.ok(asked.includes('GET /npm/sb-clean-helper/-/sb-clean-helper-1.0.0.tgz'), asked.join(', '));
  });

  test('Codex: npm install of a made-up name is blocked by its PreToolUse hook the same way', { ...skip, timeout: 180_000 }, async () => {
    const { r, toolResult, registry: asked } = await runAgent('codex', 'npm install --no-audit --no-fund sb-codex-made-up && echo installed > codex-marker.txt');
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.ok(asked.includes('GET /npm/sb-codex-made-up'), asked.join(', '));
    assert.ok(!asked.some((q) => q.endsWith('.tgz')), asked.join(', '));
    assert.ok(!existsSync(join(repo, 'codex-marker.txt')), 'the command never ran');
    assert.match(toolResult, /stashbase dependency check blocked this install/);
  });
});
