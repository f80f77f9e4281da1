// The dependency check inside real runs. Docker: the mounted stand-in
// forwards `stashbase agent hooks deps check` (fed Claude Code's PreToolUse
// JSON) to the host, which runs the check confined and through the run's
// proxy; the profile maps a made-up registry host to a local stub there, and
// names it in the registry variables its config_env gives the container's
// package managers. Native: the real stashbase in the sandbox checks, and
// reports its decisions to the run's audit log through the report endpoint.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, cli, needs, REPO, tempHome, writeFile } from '../helpers.js';
import { auditOf, type AuditEvent, POST_FN, runSteps, steps } from '../hook-runs.js';
import { PACKAGES } from '../deps-packages.js';

interface Stub { port: number; requests: Array<{ method: string; path: string; host?: string }>; close(): Promise<void> }

const hookJson = (command: string, cwd: string) => JSON.stringify({ session_id: 's', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command }, cwd });
/** A step that feeds the hook's JSON to `check` (a command line) on stdin. */
const feed = (check: string, command: string, cwd: string) => `printf '%s' '${hookJson(command, cwd)}' | ${check}`;
const decision = (out: string) => (out.trim() === '' ? null : (JSON.parse(out) as { hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } }).hookSpecificOutput);
const depEvents = (events: AuditEvent[]) => events.filter((e) => e.type === 'dependency').map((e) => [e.package, e.decision, e.answer, e.reportedBy ?? 'host']);

describe('the dependency check inside real runs', needs('git'), () => {
  const t = tempHome();
  let stub: Stub;
  let host: string;
  const dir = join(t.home, 'proj');

  before(async () => {
    const { startRegistryStub } = (await import(join(REPO, 'test', 'fixtures', 'registry-stub.mjs'))) as { startRegistryStub: (o: unknown) => Promise<Stub> };
    stub = await startRegistryStub({ packages: PACKAGES });
    host = `registry.sb.test:${stub.port}`;
    mkdirSync(dir, { recursive: true });
    const network = `[network]\negress_hosts = ["registry.sb.test"]\n[network.hosts]\n"registry.sb.test" = "127.0.0.1:${stub.port}"\n`;
    const registries = `[config_env]\nnpm_config_registry = "http://${host}/npm/"\nSTASHBASE_OSV_URL = "http://${host}/osv"\n`;
    writeFile(join(t.sbHome, 'agents', 'dc.toml'), `allow_hooks = ["dependency_check"]\n${network}${registries}`);
    writeFile(join(t.sbHome, 'agents', 'scan-only.toml'), `allow_hooks = ["secret_scan"]\n${network}${registries}`);
  });
  after(async () => {
    await stub?.close();
    t.cleanup();
  });
  const asked = (from: number) => stub.requests.slice(from).map((q) => `${q.method} ${q.path} ${q.host}`);

  test('Docker: the stand-in gets the host-side block for a made-up name and a malicious one, nothing for a clean one; it refuses other commands; the audit lists it all', needs('docker'), async () => {
    writeFile(join(dir, 'package.json'), '{"name": "proj"}\n');
    const seen = stub.requests.length;
    const check = 'stashbase agent hooks deps check';
    const r = await runSteps({ backend: 'docker', profile: 'dc', env: t.env, cwd: dir, script: steps([
      ['where', 'command -v stashbase'],
      ['made-up', feed(check, 'npm install sb-made-up-in-docker', dir)],
      ['evil', feed(check, 'npm i sb-evil-thing', dir)],
      ['clean', feed(check, 'npm install --save sb-clean-helper', dir)],
      ['wrong-token', `${feed(`STASHBASE_HOOK_TOKEN=nope ${check}`, 'npm i sb-clean-helper', dir)}`],
      ['scan', 'stashbase scan --staged'],
      ['install', 'stashbase agent hooks deps install claude'],
      ['profile', `${check} --profile dc --ecosystem npm x`],
    ]) });
    assert.equal(r.code, 0, r.stderr);
    const s = r.steps;
    assert.equal(s.where!.out, '/usr/local/bin/stashbase\n');
    const madeUp = decision(s['made-up']!.out);
    assert.equal(madeUp?.permissionDecision, 'deny');
    assert.match(madeUp?.permissionDecisionReason ?? '', /"sb-made-up-in-docker": does not exist in the npm registry \(http:\/\/registry\.sb\.test:\d+\/npm\/\)/);
    assert.equal(decision(s.evil!.out)?.permissionDecision, 'deny');
    assert.match(decision(s.evil!.out)?.permissionDecisionReason ?? '', /OSV lists it as malicious: MAL-2025-0001/);
    assert.deepEqual(s.clean, { out: '', rc: 0 });
    assert.deepEqual(s['wrong-token'], { out: 'stashbase (sandbox stand-in): the host answered 403: stashbase: wrong hook token for this run\n', rc: 2 });
    assert.equal(s.scan!.rc, 2);
    assert.match(s.scan!.out, /cannot scan: the secret scan runs on the host, and only in a run whose profile sets allow_hooks = \["secret_scan"\]/);
    assert.deepEqual(s.install, { out: 'stashbase (host): refused: only "stashbase agent hooks deps check" runs on the host from the sandbox\n', rc: 2 });
    assert.deepEqual(s.profile, { out: 'stashbase (host): refused: "--profile" is not allowed from the sandbox\n', rc: 2 });
    // The host-side check reached the stub through the run's proxy (the name exists only in the profile's map), never for a tarball.
    const q = asked(seen);
    for (const want of [`GET /npm/sb-made-up-in-docker ${host}`, `GET /npm/sb-evil-thing ${host}`, `GET /npm/sb-clean-helper ${host}`, `POST /osv/v1/query ${host}`]) assert.ok(q.includes(want), q.join('\n'));
    assert.ok(!q.some((x) => x.includes('.tgz')));
    assert.ok(!q.some((x) => x.startsWith('GET /npm/npm ')), 'npm itself asked nothing (its update check is off)');
    const events = await auditOf(r.session, t.env);
    assert.deepEqual(depEvents(events), [['sb-made-up-in-docker', 'block', 'deny', 'host'], ['sb-evil-thing', 'block', 'deny', 'host'], ['sb-clean-helper', 'ok', 'none', 'host']]);
    assert.deepEqual(events.filter((e) => e.type === 'hook').map((e) => [e.path, e.decision, e.exit ?? e.status]), [
      ['/agent-hooks', 'ran', 0], ['/agent-hooks', 'ran', 0], ['/agent-hooks', 'ran', 0], ['/agent-hooks', 'deny', 403], ['/agent-hooks', 'refused', 2], ['/agent-hooks', 'refused', 2],
    ]);
    assert.ok(events.some((e) => e.type === 'proxy' && e.host === 'registry.sb.test' && e.decision === 'allow'), 'the check went through the proxy');
    const text = await cli(['agent', 'audit', r.session], { env: t.env });
    assert.match(text.stdout, /BLOCK {2}npm "sb-made-up-in-docker" {2}agent told: deny {2}"does not exist in the npm registry/);
    assert.match(text.stdout, /3 dependency decisions: 2 blocked, 0 warned, 0 unchecked, 1 ok/);
  });

  test('Docker, sealed: the stand-in reaches the hook endpoint through the relay, and the host-side check the proxy through its loopback door: a made-up name blocked, a clean one not', needs('docker'), async () => {
    writeFile(join(dir, 'package.json'), '{"name": "proj"}\n');
    const seen = stub.requests.length;
    const check = 'stashbase agent hooks deps check';
    const r = await runSteps({ backend: 'docker-sealed', profile: 'dc', env: t.env, cwd: dir, script: steps([
      ['made-up', feed(check, 'npm install sb-made-up-sealed', dir)],
      ['clean', feed(check, 'npm install --save sb-clean-helper', dir)],
    ]) });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(decision(r.steps['made-up']!.out)?.permissionDecision, 'deny');
    assert.match(decision(r.steps['made-up']!.out)?.permissionDecisionReason ?? '', /"sb-made-up-sealed": does not exist in the npm registry/);
    assert.deepEqual(r.steps.clean, { out: '', rc: 0 });
    const q = asked(seen);
    for (const want of [`GET /npm/sb-made-up-sealed ${host}`, `GET /npm/sb-clean-helper ${host}`]) assert.ok(q.includes(want), q.join('\n'));
    assert.deepEqual(depEvents(await auditOf(r.session, t.env)), [['sb-made-up-sealed', 'block', 'deny', 'host'], ['sb-clean-helper', 'ok', 'none', 'host']]);
  });

  test('Docker: the host-side check is confined: a package.json the agent links to a file outside the tree is not read (unconfined, the same check reads it)', needs('docker', 'bwrap'), async () => {
    // Outside the tree: a package.json that already lists the package with an install script.
    const secret = writeFile(join(t.home, 'secret', 'package.json'), '{"name": "secret", "dependencies": {"sb-runs-scripts": "^2.0.0"}}\n');
    const input = (n: number) => feed('stashbase agent hooks deps check', `npm install sb-runs-scripts # ${n}`, dir);
    const r = await runSteps({ backend: 'docker', profile: 'dc', env: t.env, cwd: dir, script: steps([
      // In the tree the check reads the package.json: the package is not new, nothing to say.
      ['in-tree', `printf '%s' '{"dependencies": {"sb-runs-scripts": "^2.0.0"}}' > package.json && ${input(1)}`],
      ['linked', `ln -sf '${secret}' package.json && ${input(2)}`],
    ]) });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.steps['in-tree'], { out: '', rc: 0 });
    const linked = decision(r.steps.linked!.out);
    assert.equal(linked?.permissionDecision, 'ask');
    assert.match(linked?.permissionDecisionReason ?? '', /runs postinstall script when installed, and it is new to this repository/);
    // The control: the same check on the host, unconfined, follows the link and finds the package listed.
    const control = await cli(['agent', 'hooks', 'deps', 'check'], {
      env: { ...t.env, npm_config_registry: `http://127.0.0.1:${stub.port}/npm/`, STASHBASE_OSV_URL: `http://127.0.0.1:${stub.port}/osv` },
      cwd: dir, input: hookJson('npm install sb-runs-scripts', dir),
    });
    assert.deepEqual([control.code, control.stdout], [0, ''], control.stderr);
  });

  test('Docker: a run whose profile lacks dependency_check has a stand-in that stands aside, and no agent-hooks endpoint', needs('docker'), async () => {
    const r = await runSteps({ backend: 'docker', profile: 'scan-only', env: t.env, cwd: dir, script: `${POST_FN}\n${steps([
      ['where', 'command -v stashbase || echo none'],
      ['aside', feed('stashbase agent hooks deps check', 'npm install sb-made-up-name', dir)],
      ['endpoint', `post /agent-hooks '{"args_b64": [], "stdin_b64": ""}'`],
    ])}` });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.steps.where, { out: '/usr/local/bin/stashbase\n', rc: 0 });
    // A hook installed in the shared home volume must not block every command of a run that offers no check.
    assert.equal(r.steps.aside!.rc, 0);
    assert.equal(r.steps.endpoint!.out, '404\nstashbase: this run offers no /agent-hooks endpoint (allow_hooks = ["dependency_check"] is not in its profile)\n\n');
  });

  test('native: the real stashbase checks inside the run and reports its decisions to the audit log; a report with a wrong token is refused', needs('bwrap'), async () => {
    writeFile(join(dir, 'package.json'), '{"name": "proj"}\n');
    const seen = stub.requests.length;
    const check = `'${process.execPath}' '${BIN}' agent hooks deps check`;
    const forged = '{"events": [{"type": "dependency", "agent": null, "ecosystem": "npm", "package": "forged", "spec": "forged", "decision": "ok", "answer": "none", "reasons": []}]}';
    const r = await runSteps({ backend: 'native', profile: 'dc', env: t.env, cwd: dir, script: `${POST_FN}\n${steps([
      ['made-up', feed(check, 'npm install sb-made-up-native', dir)],
      ['clean', feed(check, 'npm install sb-clean-helper', dir)],
      ['forged', `post /agent-hooks/report '${forged}' wrong-token`],
      ['stand-in', `post /agent-hooks '{"args_b64": [], "stdin_b64": ""}'`],
    ])}` });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(decision(r.steps['made-up']!.out)?.permissionDecision, 'deny');
    assert.deepEqual(r.steps.clean, { out: '', rc: 0 });
    assert.equal(r.steps.forged!.out, '403\nstashbase: wrong hook token for this run\n\n');
    // The native run has the real stashbase: the Docker stand-in's endpoint is not there.
    assert.match(r.steps['stand-in']!.out, /^404\nstashbase: this run offers no \/agent-hooks endpoint/);
    const q = asked(seen);
    assert.ok(q.includes(`GET /npm/sb-made-up-native ${host}`), q.join('\n'));
    const events = await auditOf(r.session, t.env);
    assert.deepEqual(depEvents(events), [['sb-made-up-native', 'block', 'deny', 'sandbox'], ['sb-clean-helper', 'ok', 'none', 'sandbox']]);
    assert.deepEqual(events.filter((e) => e.type === 'hook').map((e) => [e.path, e.decision]), [
      ['/agent-hooks/report', 'reported'], ['/agent-hooks/report', 'reported'], ['/agent-hooks/report', 'deny'], ['/agent-hooks', 'deny'],
    ]);
    const text = await cli(['agent', 'audit', r.session], { env: t.env });
    assert.match(text.stdout, /BLOCK {2}npm "sb-made-up-native" {2}agent told: deny \(reported from inside the sandbox\)/);
  });
});
