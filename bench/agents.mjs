// What the sandbox costs a real agent turn: one Claude Code turn and one Codex
// turn (each: a model request, a tool call that runs `echo`, the final answer),
// unsandboxed, on the native backend and on the Docker backend, interleaved in
// the same run, against the tests' local HTTPS stand-ins of the two APIs
// (test/fixtures/agent-api-stub.mjs), fully offline. The sandboxed turns use the
// profiles and commands of docs/agents.md. The unsandboxed turns reach the
// same stubs through a bare CONNECT tunnel on loopback (a few lines below:
// nothing is inspected, the agent's TLS goes end to end), which only maps the
// vendor hosts to the stubs, so that no turn leaves this machine.
// Targets: native at most 1.2x, Docker at most 2x the unsandboxed turn.
// Needs `npm run build`, scripts/install-test-agents.sh, and for Docker an
// image with the agents (IMAGE, default the tests' stashbase-sandbox-agents-test:latest).
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { median, report, setup } from './lib.mjs';

const { commandRecipe, recipe, startStubs, wired } = await import('../dist/test/agent-recipes.js');
const { TEST_AGENTS_BIN } = await import('../dist/test/helpers.js');
const { AGENTS_IMAGE } = await import('../test/agents-image.mjs');

const { bin, home, env, rounds } = setup(7);
const image = process.env.IMAGE || AGENTS_IMAGE;
const proj = join(home, 'proj');
mkdirSync(proj, { recursive: true });
spawnSync('git', ['init', '-q'], { cwd: proj });

const KEYS = { ANTHROPIC_API_KEY: 'sk-ant-api03-benchBenchBenchBenchBenchBench-0123456789', OPENAI_API_KEY: 'sk-proj-benchBenchBenchBenchBenchBench0123456789' };
const stubs = await startStubs(home);
for (const s of [stubs.anthropic, stubs.openai]) s.setCommand('echo bench > bench.txt');
for (const name of ['claude', 'codex']) {
  mkdirSync(join(home, '.stashbase', 'agents'), { recursive: true });
  const profile = wired(recipe(name), stubs.wiring);
  writeFileSync(join(home, '.stashbase', 'agents', `${name}.toml`), profile);
  writeFileSync(join(home, '.stashbase', 'agents', `${name}-docker.toml`), `${profile}\n${recipe('docker')}`);
}

// The unsandboxed agents' way to the stubs: CONNECT to a vendor host becomes a tunnel to its stub; anything else is closed.
const ports = { 'api.anthropic.com': stubs.anthropic.port, 'api.openai.com': stubs.openai.port };
const tunnel = createServer((client) => {
  client.once('data', (head) => {
    const m = /^CONNECT ([^:\s]+):\d+ /.exec(head.toString('latin1'));
    const port = m && ports[m[1]];
    if (!port) return client.destroy();
    const up = connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      client.pipe(up).pipe(client);
    });
    up.on('error', () => client.destroy());
    client.on('error', () => up.destroy());
  });
});
await new Promise((r) => tunnel.listen(0, '127.0.0.1', r));
const proxy = `http://127.0.0.1:${tunnel.address().port}`;
const bundle = join(home, 'bundle.pem');
writeFileSync(bundle, [...rootCertificates, readFileSync(stubs.wiring.caFile, 'utf8')].join('\n'));
const plainEnv = {
  ...env, PATH: `${TEST_AGENTS_BIN}:${process.env.PATH}`, HTTPS_PROXY: proxy, https_proxy: proxy, NO_PROXY: '', no_proxy: '',
  NODE_EXTRA_CA_CERTS: stubs.wiring.caFile, SSL_CERT_FILE: bundle, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
};

const claudeArgv = commandRecipe('claude-turn'); // agent run --profile claude -- claude …
const codexArgv = commandRecipe('codex-turn');
const agentPart = (argv) => argv.slice(argv.indexOf('--') + 1);

// Where a sandboxed turn's time goes: the phases STASHBASE_TRACE=1 prints (lib/run/trace.ts), per subject.
const phases = {};

// Asynchronous: the stubs and the tunnel live in this process and must answer while a turn runs.
function turn(cmd, args, runEnv, subject) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(cmd, args, { env: runEnv, cwd: proj, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (code !== 0 || !/stub-finished/.test(out)) return reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${out}\n${err}`));
      const line = err.split('\n').find((l) => l.startsWith('stashbase-trace '));
      if (line && subject) (phases[subject] ??= []).push({ ...JSON.parse(line.slice('stashbase-trace '.length)), process_ms: Math.round(ms) });
      resolve(ms);
    });
  });
}

/** lib.mjs's measure, for subjects that return promises: one warm-up each, then interleaved rounds. */
async function measureAsync(subjects, n) {
  const samples = Object.fromEntries(Object.keys(subjects).map((k) => [k, []]));
  for (const fn of Object.values(subjects)) await fn();
  for (let i = 0; i < n; i++) for (const [k, fn] of Object.entries(subjects)) samples[k].push(await fn());
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, { median_ms: +median(v).toFixed(0), min_ms: +Math.min(...v).toFixed(0), runs: v.length }]));
}

const sandboxed = (argv, profile, extra = {}) => () =>
  turn(process.execPath, [bin, 'agent', 'run', '--silent', '--profile', profile, '--', ...agentPart(argv)], { ...env, PATH: `${TEST_AGENTS_BIN}:${process.env.PATH}`, STASHBASE_TRACE: '1', ...extra }, profile);

// BACKENDS=native (or docker) measures one backend beside the unsandboxed turns.
const backends = (process.env.BACKENDS ?? 'native,docker').split(',');
const wanted = (all) => Object.fromEntries(Object.entries(all).filter(([k]) => k.endsWith('unsandboxed') || backends.some((b) => k.endsWith(b))));
const results = await measureAsync(
  wanted({
    'claude, unsandboxed': () => turn(join(TEST_AGENTS_BIN, 'claude'), agentPart(claudeArgv).slice(1), { ...plainEnv, ANTHROPIC_API_KEY: KEYS.ANTHROPIC_API_KEY }),
    'claude, native': sandboxed(claudeArgv, 'claude', { ANTHROPIC_API_KEY: KEYS.ANTHROPIC_API_KEY }),
    'claude, docker': sandboxed(claudeArgv, 'claude-docker', { ANTHROPIC_API_KEY: KEYS.ANTHROPIC_API_KEY, STASHBASE_DOCKER_IMAGE: image }),
    'codex, unsandboxed': () => turn(join(TEST_AGENTS_BIN, 'codex'), agentPart(codexArgv).slice(1), { ...plainEnv, CODEX_API_KEY: KEYS.OPENAI_API_KEY }),
    'codex, native': sandboxed(codexArgv, 'codex', { OPENAI_API_KEY: KEYS.OPENAI_API_KEY }),
    'codex, docker': sandboxed(codexArgv, 'codex-docker', { OPENAI_API_KEY: KEYS.OPENAI_API_KEY, STASHBASE_DOCKER_IMAGE: image }),
  }),
  rounds,
);
for (const agent of ['claude', 'codex']) {
  const pick = Object.fromEntries(Object.entries(results).filter(([k]) => k.startsWith(agent)));
  report(`agents-${agent}`, pick, `${agent}, unsandboxed`, { [`${agent}, native`]: '<= 1.2', [`${agent}, docker`]: '<= 2' });
}
for (const [subject, list] of Object.entries(phases)) {
  const keys = [...new Set(list.flatMap((p) => Object.keys(p)))];
  const where = Object.fromEntries(keys.map((k) => [k, median(list.map((p) => p[k] ?? 0))]));
  console.log(JSON.stringify({ benchmark: 'agents-phases', profile: subject, median_ms: where }));
  console.log(`where a ${subject} turn's time goes (median ms): ${keys.map((k) => `${k} ${where[k]}`).join(', ')}`);
}
tunnel.close();
await stubs.anthropic.close();
await stubs.openai.close();
rmSync(home, { recursive: true, force: true });
