// The Docker path of the dependency hook, piece by piece: the stand-in
// script (run by the host's sh, then inside the sandbox image) posts to a
// stand-in of the proxy's endpoint, which reads the request with
// parseHookRequest, runs it with runAgentHook and answers with
// encodeHookResponse; the check's decisions come back as audit events. Then
// `agent hooks deps install claude --docker` into a volume of the test's own.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_DEPENDENCY_CHECK } from '../../lib/deps/settings.js';
import { HOOK_PATH, HOOK_TOKEN_VAR, HOOK_URL_VAR } from '../../lib/hooks/hook-env.js';
import { encodeHookResponse, HookRequestError, parseHookRequest, runAgentHook } from '../../lib/hooks/host-agent-hooks.js';
import type { DependencyEvent } from '../../lib/hooks/report.js';
import { standInScript } from '../../templates/stand-in.js';
import { BIN, cli, needs, REPO, tempHome } from '../helpers.js';
import { PACKAGES } from '../deps-packages.js';

interface Stub { port: number; requests: Array<{ method: string; path: string }>; close(): Promise<void> }

const TOKEN = 'hooktoken-0123456789';
const hookInput = (command: string) => JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command } });

function run(file: string, args: string[], env: NodeJS.ProcessEnv, input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.on('error', () => {}); // refused before it read its input
    child.stdin.end(input);
  });
}

describe("the Docker stand-in and the host side it reaches", () => {
  const t = tempHome();
  let registry: Stub;
  let endpoint: Server;
  let url: string;
  const events: DependencyEvent[] = [];
  const seen: string[] = [];
  const standIn = join(t.dir, 'stashbase');
  let answer: ((body: string) => string) | null = null;

  before(async () => {
    const { startRegistryStub } = (await import(join(REPO, 'test', 'fixtures', 'registry-stub.mjs'))) as { startRegistryStub: (o: unknown) => Promise<Stub> };
    registry = await startRegistryStub({ packages: PACKAGES });
    const base = `http://127.0.0.1:${registry.port}`;
    // What the run's proxy will do at HOOK_PATH: token, strict request, the check on the host, events for the audit log.
    endpoint = createServer(async (req, res) => {
      let body = '';
      for await (const c of req) body += c;
      seen.push(`${req.method} ${req.url} ${req.headers.authorization}`);
      if (answer) return res.end(answer(body));
      if (req.headers.authorization !== `Bearer ${TOKEN}` || req.url !== HOOK_PATH) return res.writeHead(403).end('no');
      try {
        const { args, stdin } = parseHookRequest(body);
        const r = await runAgentHook({
          args, stdin, cwd: t.dir, settings: DEFAULT_DEPENDENCY_CHECK, stashbase: [process.execPath, BIN],
          // The run's proxy variables would go here; the test's registry settings ride along.
          proxyEnv: { npm_config_registry: `${base}/npm/`, STASHBASE_OSV_URL: `${base}/osv`, HOME: t.home },
        });
        events.push(...r.events);
        res.writeHead(200, { 'content-type': 'application/json' }).end(encodeHookResponse(r));
      } catch (e) {
        res.writeHead(e instanceof HookRequestError ? 400 : 500).end((e as Error).message);
      }
    });
    await new Promise<void>((r) => endpoint.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(endpoint.address() as { port: number }).port}`;
    writeFileSync(standIn, standInScript({ urlVar: HOOK_URL_VAR, tokenVar: HOOK_TOKEN_VAR, path: HOOK_PATH }));
    chmodSync(standIn, 0o755);
  });
  after(async () => {
    endpoint?.closeAllConnections();
    endpoint?.close();
    await registry?.close();
    t.cleanup();
  });

  const env = () => ({ PATH: process.env.PATH, [HOOK_URL_VAR]: url, [HOOK_TOKEN_VAR]: TOKEN, HTTPS_PROXY: 'http://127.0.0.1:9', HTTP_PROXY: 'http://127.0.0.1:9' });

  test('a hook call goes through, its answer comes back as the agent would read it, and its decisions as audit events', { timeout: 30_000 }, async () => {
    const denied = await run(standIn, ['agent', 'hooks', 'deps', 'check'], env(), hookInput("npm install 'sb-no-such-package' && echo é"));
    assert.equal(denied.code, 0, denied.stderr);
    const out = JSON.parse(denied.stdout) as { hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } };
    assert.equal(out.hookSpecificOutput.permissionDecision, 'deny');
    assert.match(out.hookSpecificOutput.permissionDecisionReason, /"sb-no-such-package": does not exist in the npm registry/);
    assert.equal(seen.at(-1), `POST ${HOOK_PATH} Bearer ${TOKEN}`, 'straight to the endpoint, not through HTTPS_PROXY');
    assert.deepEqual(events.map((e) => [e.type, e.agent, e.ecosystem, e.package, e.decision, e.answer]), [['dependency', 'claude', 'npm', 'sb-no-such-package', 'block', 'deny']]);
    const clean = await run(standIn, ['agent', 'hooks', 'deps', 'check'], env(), hookInput('npm i sb-clean-helper'));
    assert.deepEqual([clean.code, clean.stdout, clean.stderr], [0, '', '']);
    const direct = await run(standIn, ['agent', 'hooks', 'deps', 'check', '--ecosystem', 'npm', 'sb-evil-thing', '--json'], env(), '');
    assert.equal(direct.code, 1);
    assert.equal((JSON.parse(direct.stdout) as Array<{ verdict: string }>)[0]?.verdict, 'block');
  });

  test('refused: other stashbase commands (by the stand-in), other hook commands and flags (by the host)', { timeout: 30_000 }, async () => {
    const run1 = await run(standIn, ['agent', 'run', '--', 'sh'], env(), '');
    assert.equal(run1.code, 2);
    assert.match(run1.stderr, /only "stashbase agent hooks \.\.\." works inside the sandbox/);
    const before = seen.length;
    await run(standIn, ['--version'], env(), '');
    assert.equal(seen.length, before, 'nothing was sent');
    const install = await run(standIn, ['agent', 'hooks', 'deps', 'install', 'claude'], env(), '');
    assert.deepEqual([install.code, install.stdout], [2, '']);
    assert.equal(install.stderr, 'stashbase (host): refused: only "stashbase agent hooks deps check" runs on the host from the sandbox\n');
    const profile = await run(standIn, ['agent', 'hooks', 'deps', 'check', '--profile', 'x'], env(), '');
    assert.match(profile.stderr, /refused: "--profile" is not allowed from the sandbox/);
  });

  test('fails closed when the host cannot be reached or answers garbage; stands aside when the run offers no hooks', { timeout: 30_000 }, async () => {
    const off = await run(standIn, ['agent', 'hooks', 'deps', 'check'], { PATH: process.env.PATH }, hookInput('npm i x'));
    assert.equal(off.code, 0);
    assert.match(off.stderr, /this run offers no agent hooks/);
    const down = await run(standIn, ['agent', 'hooks', 'deps', 'check'], { ...env(), [HOOK_URL_VAR]: 'http://127.0.0.1:9' }, hookInput('npm i x'));
    assert.equal(down.code, 2);
    assert.match(down.stderr, /the host did not answer; the command was not run/);
    const wrongToken = await run(standIn, ['agent', 'hooks', 'deps', 'check'], { ...env(), [HOOK_TOKEN_VAR]: 'wrong' }, hookInput('npm i x'));
    assert.equal(wrongToken.code, 2);
    assert.match(wrongToken.stderr, /the host answered 403: no/);
    for (const garbage of ['{"exit":0,"stdout_b64":"e30=","stderr_b64":""} trailing', 'x\n{"exit":0,"stdout_b64":"e30=","stderr_b64":""}', '{"exit":"0","stdout_b64":"","stderr_b64":""}', '{"stdout_b64":"","exit":0,"stderr_b64":""}', 'null']) {
      answer = () => garbage;
      try {
        const r = await run(standIn, ['agent', 'hooks', 'deps', 'check'], env(), hookInput('npm i x'));
        assert.deepEqual([r.code, r.stdout], [2, ''], garbage);
        assert.match(r.stderr, /the host answered something unexpected/);
      } finally {
        answer = null;
      }
    }
  });

  test('inside the sandbox image: its sh, curl, base64 and sed carry it', { ...needs('docker'), timeout: 60_000 }, async () => {
    const image = process.env.STASHBASE_DOCKER_IMAGE || 'stashbase-sandbox:latest';
    if (spawnSync('docker', ['image', 'inspect', image], { stdio: 'ignore' }).status !== 0) return;
    // Not spawnSync: the endpoint answering it lives in this very process.
    const r = await run('docker', [
      'run', '--rm', '-i', '--network', 'host', '--cap-drop', 'ALL', '--user', `${process.getuid?.() ?? 0}:${process.getgid?.() ?? 0}`,
      '--mount', `type=bind,source=${standIn},target=/usr/local/bin/stashbase,readonly`,
      '--env', `${HOOK_URL_VAR}=${url}`, '--env', `${HOOK_TOKEN_VAR}=${TOKEN}`, '--env', 'HTTPS_PROXY=http://127.0.0.1:9',
      '--entrypoint', 'stashbase', image, 'agent', 'hooks', 'deps', 'check',
    ], { PATH: process.env.PATH }, hookInput('npm install sb-clean-helper && npm install sb-evil-thing'));
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } };
    assert.equal(out.hookSpecificOutput.permissionDecision, 'deny');
    assert.match(out.hookSpecificOutput.permissionDecisionReason, /MAL-2025-0001/);
  });
});

describe('agent hooks deps install --docker', needs('docker'), () => {
  const t = tempHome();
  const volume = `stashbase-test-hooks-${randomBytes(4).toString('hex')}`;
  const image = process.env.STASHBASE_DOCKER_IMAGE || 'stashbase-sandbox:latest';
  const read = () => spawnSync('docker', ['run', '--rm', '--network', 'none', '--mount', `type=volume,source=${volume},target=/home/agent`, '--entrypoint', 'cat', image, '/home/agent/.claude/settings.json'], { encoding: 'utf8' });
  after(() => {
    spawnSync('docker', ['volume', 'rm', '-f', volume], { stdio: 'ignore' });
    t.cleanup();
  });

  test('writes the hook into the volume through a container, merged with what is there, and removes it again', { timeout: 120_000 }, async () => {
    if (spawnSync('docker', ['image', 'inspect', image], { stdio: 'ignore' }).status !== 0) return;
    const env = { ...t.env, PATH: process.env.PATH };
    const write = spawnSync('docker', ['run', '--rm', '-i', '--network', 'none', '--user', `${process.getuid?.() ?? 0}:${process.getgid?.() ?? 0}`, '--mount', `type=volume,source=${volume},target=/home/agent`, '--entrypoint', 'sh', image, '-c', 'mkdir -p /home/agent/.claude && cat > /home/agent/.claude/settings.json'], { input: '{"model":"opus"}' });
    assert.equal(write.status, 0, String(write.stderr));
    const r = await cli(['agent', 'hooks', 'deps', 'install', 'claude', '--docker', '--volume', volume], { env, timeoutMs: 100_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, `The dependency check hook installed in ${volume}:/home/agent/.claude/settings.json\n`);
    const command = "/usr/local/bin/stashbase agent hooks deps check || { echo 'stashbase dependency check could not run (see above); the command was not run. Remove the hook with: stashbase agent hooks deps install claude --uninstall' >&2; exit 2; }";
    assert.equal(r.stdout, `${command}\n`);
    assert.deepEqual(JSON.parse(read().stdout), { model: 'opus', hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command, timeout: 30 }] }] } });
    const again = await cli(['agent', 'hooks', 'deps', 'install', 'claude', '--docker', '--volume', volume], { env, timeoutMs: 100_000 });
    assert.match(again.stderr, /already in/);
    const gone = await cli(['agent', 'hooks', 'deps', 'install', 'claude', '--docker', '--volume', volume, '--uninstall'], { env, timeoutMs: 100_000 });
    assert.equal(gone.code, 0, gone.stderr);
    assert.deepEqual(JSON.parse(read().stdout), { model: 'opus' });
  });
});
