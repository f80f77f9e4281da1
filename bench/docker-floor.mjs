// The floor under bench/docker.mjs's sealed rows: what the engine's own
// operations of a sealed run cost with no stashbase around them, against a
// plain `docker run --rm <image> true` in the same run. The sealed run's
// engine work, made here by a small script:
//   the agent's container as a run makes it (--network none, --init, the
//   agent's seccomp profile, --cap-drop ALL, no-new-privileges, the pids
//   limit, the home volume, the relay mounted read-only and its gate as the
//   entrypoint, `true` as the command), started by the docker CLI;
//   the relay's exec through the engine's API as soon as the engine's event
//   stream says the container started, as the relay's own user (the gate runs
//   `true` once it listens);
//   with `measured`: the home volume's measuring container, the command a run
//   starts beside the agent's (templates/docker-volumes.ts), told to measure
//   once the agent's container is gone.
// The floor of a run is that plus `node -e 0` (stashbase is a Node program):
// what the 1.3x target leaves for everything stashbase itself does is the
// difference. RUNTIMES=runc,runsc (the default) measures both; each runtime
// against its own plain run. Prints JSON and a table.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, report, time } from './lib.mjs';

const dist = (p) => new URL(`../dist/${p}`, import.meta.url).pathname;
const { volumeMeasureCommand } = await import(dist('templates/docker-volumes.js'));
const { agentSeccompProfile, measureSeccompProfile } = await import(dist('templates/docker-seccomp.js'));
const { RELAY_PATH, RELAY_UID, HOME_VOLUME } = await import(dist('templates/docker-run.js'));

const image = process.env.STASHBASE_DOCKER_IMAGE || 'stashbase-sandbox:latest';
const rounds = Number(process.env.ROUNDS ?? 9);
const runtimes = (process.env.RUNTIMES ?? 'runc,runsc').split(',');
const arch = process.arch === 'arm64' ? 'arm64' : 'amd64';
const relay = new URL(`../dist/relay/linux-${arch}/stashbase-relay`, import.meta.url).pathname;
const socketPath = '/var/run/docker.sock';
const dir = mkdtempSync(join(tmpdir(), 'sbfloor-'));
const agentSeccomp = join(dir, 'agent-seccomp.json');
const measureSeccomp = join(dir, 'measure-seccomp.json');
const env = { PATH: process.env.PATH, HOME: dir };
const PORT = 3128;

/** One request to the engine's API; resolves with the response (its body left to the caller). */
function api(method, path, body) {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path, headers: { 'content-type': 'application/json' } }, resolve);
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}
async function json(res) {
  let s = '';
  for await (const c of res) s += c;
  return JSON.parse(s);
}

/** The sealed run's engine work; resolves with its wall time in ms. */
async function sealedFloor(runtime, measured) {
  const name = `sbfloor-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  const t0 = process.hrtime.bigint();
  // Heard from before the container is made, as a run hears it.
  const events = await api('GET', `/events?filters=${encodeURIComponent(JSON.stringify({ container: [name], event: ['start'] }))}`);
  const started = new Promise((resolve) => events.once('data', resolve));
  const rt = runtime === 'runc' ? [] : ['--runtime', runtime];
  const agent = spawn('docker', [
    'run', '--rm', '-i', '--name', name, ...rt, '--network', 'none', '--init', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges',
    '--security-opt', `seccomp=${agentSeccomp}`, '--pids-limit', '2048', '--user', `${process.getuid()}:${process.getgid()}`,
    '--mount', `type=volume,source=${HOME_VOLUME},target=/home/agent`, '--mount', `type=bind,source=${relay},target=${RELAY_PATH},readonly`,
    '--entrypoint', RELAY_PATH, image, 'gate', String(PORT), '--', 'true',
  ], { stdio: ['ignore', 'ignore', 'ignore'], env });
  const agentDone = new Promise((resolve) => agent.on('exit', resolve));
  let measure = null;
  if (measured) {
    const cmd = volumeMeasureCommand('docker', image, HOME_VOLUME, `${name}-du`, [], measureSeccomp);
    measure = spawn(cmd.file, cmd.args, { stdio: ['pipe', 'ignore', 'ignore'], env });
  }
  await started;
  events.destroy();
  const exec = await json(await api('POST', `/containers/${name}/exec`, { User: `${RELAY_UID}:${RELAY_UID}`, WorkingDir: '/', AttachStdin: true, AttachStdout: true, AttachStderr: true, Cmd: [RELAY_PATH, 'serve', String(PORT), '64'] }));
  const stream = await api('POST', `/exec/${exec.Id}/start`, { Detach: false, Tty: false });
  stream.resume();
  await agentDone;
  stream.destroy();
  if (measure) {
    measure.stdin.end('go\n');
    await new Promise((resolve) => measure.on('exit', resolve));
  }
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

writeFileSync(agentSeccomp, JSON.stringify(agentSeccompProfile({ gvisor: false })));
writeFileSync(measureSeccomp, JSON.stringify(measureSeccompProfile()));
const rows = {};
for (const runtime of runtimes) {
  const rt = runtime === 'runc' ? [] : ['--runtime', runtime];
  if (runtime !== 'runc') writeFileSync(agentSeccomp, JSON.stringify(agentSeccompProfile({ gvisor: true })));
  const subjects = {
    [`docker run --rm ${runtime} <image> true`]: async () => time('docker', ['run', '--rm', ...rt, image, 'true'], { env }),
    'node -e 0': async () => time(process.execPath, ['-e', '0'], { env }),
    [`engine alone: sealed ${runtime}`]: () => sealedFloor(runtime, false),
    [`engine alone: sealed ${runtime}, measured`]: () => sealedFloor(runtime, true),
  };
  const samples = Object.fromEntries(Object.keys(subjects).map((k) => [k, []]));
  for (const fn of Object.values(subjects)) await fn();
  for (let i = 0; i < rounds; i++) for (const [k, fn] of Object.entries(subjects)) samples[k].push(await fn());
  const results = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, { median_ms: +median(v).toFixed(2), min_ms: +Math.min(...v).toFixed(2), runs: v.length }]));
  const node = results['node -e 0'].median_ms;
  for (const m of ['', ', measured']) {
    const k = `engine alone: sealed ${runtime}${m}`;
    results[`floor: ${k.slice('engine alone: '.length)} + node -e 0`] = { median_ms: +(results[k].median_ms + node).toFixed(2), min_ms: null, runs: null };
  }
  rows[runtime] = report(`docker-floor-${runtime}`, results, `docker run --rm ${runtime} <image> true`);
}
rmSync(dir, { recursive: true, force: true });
// Nothing of the floor's is left behind (the agent's containers and the measuring ones are --rm).
const left = spawnSync('docker', ['ps', '-aq', '--filter', `name=sbfloor-${process.pid}-`], { encoding: 'utf8' }).stdout.trim();
if (left) console.error(`left behind: ${left.split('\n').length} container(s)`);
