// The dependency check against local stubs of the registries and OSV
// (test/fixtures/registry-stub.mjs), pointed at the way a user would: npm's
// npm_config_registry, pip's PIP_INDEX_URL, cargo's source replacement in
// CARGO_HOME/config.toml, GOPROXY, and STASHBASE_OSV_URL. Then through an
// HTTP proxy (absolute form) and a CONNECT proxy to an HTTPS registry whose
// CA comes from SSL_CERT_FILE.
import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { existsSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { cargoSourcesConfig } from '../../lib/deps/registry-config.js';
import { PROBE_MANIFEST } from '../../templates/deps-commands.js';
import { LeafCache } from '../../lib/tls/leaves.js';
import { cli, REPO, tempHome, writeFile } from '../helpers.js';
import { testCa } from '../upstream-ca.js';

interface Stub {
  port: number;
  requests: Array<{ method: string; path: string; body: string; host?: string }>;
  state: { garbage: Set<string>; slow: Set<string> };
  close(): Promise<void>;
}
type StartStub = (o: { packages: unknown; tls?: { key: string; cert: string }; publicHost?: string }) => Promise<Stub>;

import { PACKAGES } from '../deps-packages.js';

interface Decision { ecosystem: string; name?: string; spec: string; verdict: string; reasons: string[] }

describe('the dependency check against local registry and OSV stubs', () => {
  const t = tempHome();
  let stub: Stub;
  let env: NodeJS.ProcessEnv;
  const work = join(t.home, 'work');

  before(async () => {
    const { startRegistryStub } = (await import(join(REPO, 'test', 'fixtures', 'registry-stub.mjs'))) as { startRegistryStub: StartStub };
    stub = await startRegistryStub({ packages: PACKAGES });
    const base = `http://127.0.0.1:${stub.port}`;
    const cargoHome = join(t.dir, 'cargo');
    writeFile(join(cargoHome, 'config.toml'), `[source.crates-io]\nreplace-with = "stub"\n[source.stub]\nregistry = "sparse+${base}/crates/index/"\n`);
    writeFile(join(work, 'package.json'), JSON.stringify({ name: 'work', dependencies: { 'sb-runs-scripts': '^1.0.0' } }));
    env = {
      ...t.env,
      npm_config_registry: `${base}/npm/`,
      PIP_INDEX_URL: `${base}/pypi/simple`,
      PIP_CONFIG_FILE: '/dev/null',
      CARGO_HOME: cargoHome,
      // cargo is rustup's proxy here, which finds its toolchains from the real home.
      RUSTUP_HOME: process.env.RUSTUP_HOME ?? join(homedir(), '.rustup'),
      GOPROXY: `${base}/go,direct`,
      STASHBASE_OSV_URL: `${base}/osv`,
    };
  });
  after(async () => {
    await stub?.close();
    t.cleanup();
  });

  const check = async (ecosystem: string, names: string[], cwd = t.dir, extra: NodeJS.ProcessEnv = {}) => {
    const r = await cli(['agent', 'hooks', 'deps', 'check', '--ecosystem', ecosystem, '--json', ...names], { env: { ...env, ...extra }, cwd });
    assert.ok(r.code === 0 || r.code === 1, r.stderr);
    return { code: r.code, decisions: JSON.parse(r.stdout) as Decision[] };
  };
  const verdicts = (ds: Decision[]) => Object.fromEntries(ds.map((d) => [d.name ?? d.spec, d.verdict]));

  test('npm: missing and malicious names are blocked, new ones, near misses and new install scripts warned about', { timeout: 30_000 }, async () => {
    const { code, decisions } = await check('npm', ['sb-no-such-package', 'sb-evil-thing', 'sb-brand-new', 'lodahs', 'sb-runs-scripts', 'sb-taken-down', 'sb-clean-helper@1.0.0', '@sbscope/tool@^3']);
    assert.equal(code, 1);
    assert.deepEqual(verdicts(decisions), {
      'sb-no-such-package': 'block', 'sb-evil-thing': 'block', 'sb-brand-new': 'warn', lodahs: 'warn',
      'sb-runs-scripts': 'warn', 'sb-taken-down': 'block', 'sb-clean-helper': 'ok', '@sbscope/tool': 'ok',
    });
    const reason = (n: string) => decisions.find((d) => d.name === n)?.reasons.join(' | ') ?? '';
    assert.match(reason('sb-no-such-package'), /does not exist in the npm registry \(http:\/\/127\.0\.0\.1:\d+\/npm\/\): the name may be misspelled or made up/);
    assert.match(reason('sb-evil-thing'), /OSV lists it as malicious: MAL-2025-0001 \(Malicious code in sb-evil-thing \(npm\)\)/);
    assert.match(reason('sb-brand-new'), /first published 3\d hours ago .* under the 7-day minimum age/);
    assert.match(reason('lodahs'), /one edit away from "lodash", a far more popular package/);
    assert.match(reason('sb-runs-scripts'), /version 2\.0\.0 runs postinstall script when installed, and it is new to this repository/);
    assert.match(reason('sb-taken-down'), /security holding package/);
    // The scoped name went to the scoped path; no tarball was ever asked for.
    assert.ok(stub.requests.some((q) => q.path === '/npm/@sbscope/tool'));
    assert.ok(!stub.requests.some((q) => q.path.endsWith('.tgz')));
  });

  test('npm: an install script of a package the repository already has is nothing new', { timeout: 30_000 }, async () => {
    const { decisions } = await check('npm', ['sb-runs-scripts'], work);
    assert.deepEqual(verdicts(decisions), { 'sb-runs-scripts': 'ok' });
  });

  test('PyPI, Cargo and Go: a missing name is blocked, a known one passes, a near miss is warned about', { timeout: 30_000 }, async () => {
    assert.deepEqual(verdicts((await check('pypi', ['sb-no-such-py', 'sb_clean_py==1.2.0', 'reqeusts'])).decisions), { 'sb-no-such-py': 'block', 'sb-clean-py': 'ok', reqeusts: 'warn' });
    assert.deepEqual(verdicts((await check('crates', ['sb-no-such-crate', 'sb-clean-crate@0.3.1'])).decisions), { 'sb-no-such-crate': 'block', 'sb-clean-crate': 'ok' });
    assert.deepEqual(verdicts((await check('go', ['example.test/sb/nope@v1.0.0', 'example.test/sb/mod/sub/pkg@latest'])).decisions), { 'example.test/sb/nope': 'block', 'example.test/sb/mod/sub/pkg': 'ok' });
    // OSV was asked about the Go module, not the package path.
    assert.ok(stub.requests.some((q) => q.path === '/osv/v1/query' && JSON.parse(q.body).package.purl === 'pkg:golang/example.test/sb/mod'));
  });

  test("(review, round 34) a project's .cargo/config.toml tells the check where crates come from, nothing else: its http.proxy and a registry's credential-provider (unlisted: a net.git-fetch-with-cli) are not given to cargo; control: given whole, as before, cargo sends its index requests to that proxy and runs the provider", { timeout: 60_000 }, async () => {
    const marker = join(t.dir, 'PWNED-cargo-provider');
    // The agent's listener: a proxy (absolute form) and a sparse index that wants credentials.
    const seen: Array<{ url: string; agent: string; auth: string }> = [];
    const trap = createServer((req, res) => {
      seen.push({ url: req.url ?? '', agent: String(req.headers['user-agent'] ?? ''), auth: String(req.headers.authorization ?? '') });
      if ((req.url ?? '').endsWith('/index/config.json')) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        return res.end(JSON.stringify({ dl: `http://127.0.0.1:${port}/dl`, 'auth-required': true }));
      }
      res.writeHead(404);
      res.end();
    });
    await new Promise<void>((r) => trap.listen(0, '127.0.0.1', r));
    const port = (trap.address() as import('node:net').AddressInfo).port;
    try {
      const project = join(t.dir, 'cargo-project');
      const config = writeFile(join(project, '.cargo', 'config.toml'), [
        '[http]', `proxy = "127.0.0.1:${port}"`,
        '[net]', 'git-fetch-with-cli = true',
        '[registries.evil]', `index = "sparse+http://127.0.0.1:${port}/index/"`, `credential-provider = ["cargo:token-from-stdout", "sh", "-c", "touch ${marker}; echo tok"]`,
        '[source.crates-io]', 'replace-with = "evil"', '',
      ].join('\n'));
      const { decisions } = await check('crates', ['sb-some-crate'], project);
      // The index it names is asked (by the check, through its own HTTP), never through the agent's proxy by cargo.
      assert.ok(seen.every((q) => !q.agent.startsWith('cargo')), JSON.stringify(seen));
      assert.ok(seen.every((q) => !q.url.startsWith('http://')), JSON.stringify(seen));
      assert.equal(existsSync(marker), false);
      assert.equal(decisions.length, 1);
      // What the probe gives cargo: the sources alone.
      assert.equal(cargoSourcesConfig([config]), `[source."crates-io"]\nreplace-with = "evil"\n[registries."evil"]\nindex = "sparse+http://127.0.0.1:${port}/index/"\n`);
      // Control: the file given to cargo whole (the probe's command before), its proxy and provider used.
      const probe = join(t.dir, 'cargo-probe');
      writeFile(join(probe, 'Cargo.toml'), PROBE_MANIFEST);
      writeFile(join(probe, 'lib.rs'), '');
      seen.length = 0;
      const ctl = await new Promise<string>((resolve) => {
        const c = spawn('cargo', ['--config', config, 'add', '--dry-run', '--quiet', '--manifest-path', join(probe, 'Cargo.toml'), 'stashbase-registry-probe'], { cwd: '/', env: { ...env, CARGO_HTTP_PROXY: 'http://127.0.0.1:9', CARGO_NET_RETRY: '0' }, stdio: ['ignore', 'ignore', 'pipe'] });
        let err = '';
        c.stderr.on('data', (d: Buffer) => (err += d.toString()));
        c.on('close', () => resolve(err));
        c.on('error', (e) => resolve(e.message));
      });
      assert.ok(seen.some((q) => q.agent.startsWith('cargo') && q.url.startsWith(`http://127.0.0.1:${port}/index/`)), `${JSON.stringify(seen)} ${ctl}`);
      assert.equal(existsSync(marker), true);
      // (Review of that change) an index by git:// or ssh://, which cargo's libgit2 reaches straight, past any proxy: not given.
      const { createServer: tcpServer } = await import('node:net');
      let dialed = 0;
      const git = tcpServer((c) => {
        dialed++;
        c.destroy();
      });
      await new Promise<void>((r) => git.listen(0, '127.0.0.1', r));
      const gitPort = (git.address() as import('node:net').AddressInfo).port;
      try {
        const gitProject = join(t.dir, 'cargo-git-project');
        const gitConfig = writeFile(join(gitProject, '.cargo', 'config.toml'), `[source.crates-io]\nreplace-with = "g"\n[source.g]\nregistry = "git://127.0.0.1:${gitPort}/x"\n[registries.s]\nindex = "ssh://git@127.0.0.1:${gitPort}/y"\n`);
        await check('crates', ['sb-some-crate'], gitProject);
        assert.equal(dialed, 0);
        assert.equal(cargoSourcesConfig([gitConfig]), '[source."crates-io"]\nreplace-with = "g"\n');
        // Control: given whole, cargo dials it.
        await new Promise<void>((resolve) => {
          const c = spawn('cargo', ['--config', gitConfig, 'add', '--dry-run', '--quiet', '--manifest-path', join(probe, 'Cargo.toml'), 'stashbase-registry-probe'], { cwd: '/', env: { ...env, CARGO_HTTP_PROXY: 'http://127.0.0.1:9', CARGO_NET_RETRY: '0' }, stdio: 'ignore' });
          c.on('close', () => resolve());
          c.on('error', () => resolve());
        });
        assert.ok(dialed > 0);
      } finally {
        git.close();
      }
    } finally {
      trap.close();
    }
  });

  test('a registry or OSV that answers garbage, or nothing in time, leaves the package unchecked, never ok', { timeout: 30_000 }, async () => {
    stub.state.garbage.add('osv');
    try {
      const { decisions } = await check('npm', ['sb-clean-helper']);
      assert.equal(decisions[0]?.verdict, 'unchecked');
      assert.match(decisions[0]?.reasons.join() ?? '', /OSV could not be asked about malicious versions: OSV answered something that is not JSON/);
    } finally {
      stub.state.garbage.delete('osv');
    }
    stub.state.slow.add('npm');
    try {
      const started = Date.now();
      const { decisions } = await check('npm', ['sb-clean-helper']);
      assert.ok(Date.now() - started < 12_000, `took ${Date.now() - started} ms`);
      assert.equal(decisions[0]?.verdict, 'unchecked');
      assert.match(decisions[0]?.reasons.join() ?? '', /could not be asked: no answer in time/);
    } finally {
      stub.state.slow.delete('npm');
    }
  });

  test('thresholds: from --profile, or from STASHBASE_DEPENDENCY_CHECK (what a run passes to the hook)', { timeout: 30_000 }, async () => {
    writeFile(join(t.sbHome, 'agents', 'lenient.toml'), '[hooks.dependency_check]\nmin_age_days = 1\ntyposquat_distance = 0\n');
    const r = await cli(['agent', 'hooks', 'deps', 'check', '--profile', 'lenient', '--ecosystem', 'npm', '--json', 'sb-brand-new', 'lodahs'], { env, cwd: t.dir });
    assert.deepEqual(verdicts(JSON.parse(r.stdout) as Decision[]), { 'sb-brand-new': 'ok', lodahs: 'ok' });
    stub.state.garbage.add('osv');
    try {
      const input = JSON.stringify({ tool_name: 'Bash', tool_input: { command: 'npm i sb-clean-helper' } });
      const strict = await cli(['agent', 'hooks', 'deps', 'check'], { env: { ...env, STASHBASE_DEPENDENCY_CHECK: '{"on_unchecked":"deny"}' }, cwd: t.dir, input });
      assert.equal(JSON.parse(strict.stdout).hookSpecificOutput.permissionDecision, 'deny');
      const lax = await cli(['agent', 'hooks', 'deps', 'check'], { env: { ...env, STASHBASE_DEPENDENCY_CHECK: '{"on_unchecked":"allow"}' }, cwd: t.dir, input });
      assert.deepEqual([lax.code, lax.stdout], [0, '']);
    } finally {
      stub.state.garbage.delete('osv');
    }
  });

  test('(review, round 29) --profile takes a profile in the folder only once trusted: one planted there (an agent loosening the check) makes the hook ask you, never allow; control: the same profile, trusted, allows', { timeout: 30_000 }, async () => {
    writeFile(join(t.sbHome, 'agents', 'strict.toml'), '[hooks.dependency_check]\non_unchecked = "deny"\n');
    const folder = join(t.home, 'no-repo');
    writeFile(join(folder, '.stashbase', 'agents', 'strict.toml'), '[hooks.dependency_check]\non_unchecked = "allow"\nmin_age_days = 0\ntyposquat_distance = 0\n');
    const input = JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'npm i lodahs' }, cwd: folder });
    const hook = () => cli(['agent', 'hooks', 'deps', 'check', '--profile', 'strict'], { env, cwd: folder, input });
    const planted = await hook();
    assert.equal(planted.code, 0, planted.stderr);
    const out = JSON.parse(planted.stdout) as { hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } };
    assert.equal(out.hookSpecificOutput.permissionDecision, 'ask');
    assert.match(out.hookSpecificOutput.permissionDecisionReason, /could not check this command \(repository profile \.stashbase\/agents\/strict\.toml has not been trusted yet; review it, then trust it with: stashbase agent trust --profile strict --profile-source directory\)/);
    // The control: trusted, the folder's profile is the one used (lodahs, a near miss, passes with its distance 0).
    assert.equal((await cli(['agent', 'trust', '--profile', 'strict', '--profile-source', 'directory'], { env, cwd: folder })).code, 0);
    assert.deepEqual(await hook(), { code: 0, signal: null, stdout: '', stderr: '' });
  });

  test("a package manager that is not installed leaves its ecosystem unchecked", { timeout: 30_000 }, async () => {
    const { decisions } = await check('go', ['example.test/sb/mod@v1.0.0'], t.dir, { GOPROXY: '', PATH: '/nonexistent' });
    assert.equal(decisions[0]?.verdict, 'unchecked');
    assert.match(decisions[0]?.reasons.join() ?? '', /go is not installed and GOPROXY is not set/);
  });

  test('as a Claude Code hook: deny with the reasons, ask for a warning, nothing for a clean or a lockfile install', { timeout: 30_000 }, async () => {
    const hook = (command: string, agent: string[] = []) =>
      cli(['agent', 'hooks', 'deps', 'check', ...agent], { env, cwd: work, input: JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command }, cwd: work }) });
    const denied = await hook('cd web && npm install --save sb-no-such-package');
    assert.equal(denied.code, 0, denied.stderr);
    const out = JSON.parse(denied.stdout) as { hookSpecificOutput: { hookEventName: string; permissionDecision: string; permissionDecisionReason: string } };
    assert.equal(out.hookSpecificOutput.hookEventName, 'PreToolUse');
    assert.equal(out.hookSpecificOutput.permissionDecision, 'deny');
    assert.match(out.hookSpecificOutput.permissionDecisionReason, /^stashbase dependency check blocked this install\..*\n- BLOCKED: npm package "sb-no-such-package": does not exist/s);
    const asked = JSON.parse((await hook('pip install reqeusts')).stdout) as typeof out;
    assert.equal(asked.hookSpecificOutput.permissionDecision, 'ask');
    assert.match(asked.hookSpecificOutput.permissionDecisionReason, /one edit away from "requests"/);
    const codex = JSON.parse((await hook('pip install reqeusts', ['--agent', 'codex'])).stdout) as typeof out;
    assert.equal(codex.hookSpecificOutput.permissionDecision, 'deny');
    assert.match(codex.hookSpecificOutput.permissionDecisionReason, /Codex hooks cannot ask the user/);
    assert.deepEqual(await hook('npm i sb-clean-helper'), { code: 0, signal: null, stdout: '', stderr: '' });
    const before = stub.requests.length;
    assert.deepEqual(await hook('npm ci && npm test'), { code: 0, signal: null, stdout: '', stderr: '' });
    assert.equal(stub.requests.length, before, 'a lockfile install asks no registry');
    // npx runs a binary the project has without fetching anything: nothing to check.
    writeFile(join(work, 'node_modules', '.bin', 'sb-local-tool'), '#!/bin/sh\n');
    const count = stub.requests.length;
    assert.deepEqual(await hook('npx sb-local-tool --fix'), { code: 0, signal: null, stdout: '', stderr: '' });
    assert.equal(stub.requests.length, count);
    assert.equal(JSON.parse((await hook('npx sb-no-such-package')).stdout).hookSpecificOutput.permissionDecision, 'deny');
    const other = await cli(['agent', 'hooks', 'deps', 'check'], { env, cwd: work, input: JSON.stringify({ tool_name: 'Read', tool_input: { file_path: '/x' } }) });
    assert.deepEqual([other.code, other.stdout], [0, '']);
    const broken = JSON.parse((await cli(['agent', 'hooks', 'deps', 'check'], { env, cwd: work, input: 'not json' })).stdout) as typeof out;
    assert.equal(broken.hookSpecificOutput.permissionDecision, 'ask');
    assert.match(broken.hookSpecificOutput.permissionDecisionReason, /could not check this command \(the hook input on stdin is not JSON\)/);
  });

  test('through an HTTP proxy (absolute form) and a CONNECT proxy to an HTTPS registry trusted through SSL_CERT_FILE', { timeout: 30_000 }, async () => {
    const ca = testCa();
    const caFile = join(t.dir, 'ca.pem');
    writeFileSync(caFile, ca.certPem);
    const leaf = new LeafCache(ca).get('registry.sb.test');
    const { startRegistryStub } = (await import(join(REPO, 'test', 'fixtures', 'registry-stub.mjs'))) as { startRegistryStub: StartStub };
    const secure = await startRegistryStub({ packages: PACKAGES, tls: { key: leaf.keyPem, cert: leaf.certPem } });
    const seen: string[] = [];
    // A proxy that wants a password, maps registry.sb.test to loopback, and records what it was asked.
    const proxy = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers['proxy-authorization'] ?? ''}`);
      const u = new URL(req.url ?? '');
      const up = httpRequest({ host: '127.0.0.1', port: u.port, path: u.pathname, method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      req.pipe(up);
    });
    proxy.on('connect', (req, socket) => {
      seen.push(`CONNECT ${req.url} ${req.headers['proxy-authorization'] ?? ''}`);
      const port = Number((req.url ?? '').split(':')[1]);
      const up = connect(port, '127.0.0.1', () => {
        socket.write('HTTP/1.1 200 Connection established\r\n\r\n');
        up.pipe(socket);
        socket.pipe(up);
      });
      up.on('error', () => socket.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const proxyUrl = `http://stashbase:s3cret@127.0.0.1:${(proxy.address() as { port: number }).port}`;
    const auth = `Basic ${Buffer.from('stashbase:s3cret').toString('base64')}`;
    try {
      const plain = await check('npm', ['sb-clean-helper', 'sb-no-such-package'], t.dir, { HTTP_PROXY: proxyUrl, HTTPS_PROXY: proxyUrl, NO_PROXY: '' });
      assert.deepEqual(verdicts(plain.decisions), { 'sb-clean-helper': 'ok', 'sb-no-such-package': 'block' });
      assert.ok(seen.includes(`GET http://127.0.0.1:${stub.port}/npm/sb-clean-helper ${auth}`), seen.join('\n'));
      seen.length = 0;
      const tls = await check('npm', ['sb-clean-helper', 'sb-no-such-package'], t.dir, {
        HTTPS_PROXY: proxyUrl, NO_PROXY: '', SSL_CERT_FILE: caFile,
        npm_config_registry: `https://registry.sb.test:${secure.port}/npm/`, STASHBASE_OSV_URL: `https://registry.sb.test:${secure.port}/osv`,
      });
      assert.deepEqual(verdicts(tls.decisions), { 'sb-clean-helper': 'ok', 'sb-no-such-package': 'block' });
      assert.ok(seen.includes(`CONNECT registry.sb.test:${secure.port} ${auth}`), seen.join('\n'));
      assert.ok(secure.requests.some((q) => q.path === '/npm/sb-clean-helper'));
      // Without the CA the registry's certificate is not trusted: unchecked, not ok.
      const untrusted = await check('npm', ['sb-clean-helper'], t.dir, { HTTPS_PROXY: proxyUrl, NO_PROXY: '', npm_config_registry: `https://registry.sb.test:${secure.port}/npm/` });
      assert.equal(untrusted.decisions[0]?.verdict, 'unchecked');
    } finally {
      proxy.closeAllConnections();
      proxy.close();
      await secure.close();
    }
  });
});
