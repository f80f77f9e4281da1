// Remote runs (docs/remote.md) against the engine in a container
// (scripts/start-remote-engine.sh), over tcp:// unless REMOTE=ssh:
// - `agent run -- true` there against a plain `docker run --rm <image> true`
//   on the same engine (target: at most 1.5x), and where its time goes
//   (STASHBASE_TRACE phases);
// - a run in a repository of 10,000 files and 5,000 commits that commits one
//   file: the bundle shipped, cloned there, the commit brought back and imported;
// - 1, 4 and 10 runs of one repository at once, each committing on its own
//   branch: the wall time, per run, and every branch checked to have come back.
// Traffic goes only to that engine, a container of this machine.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bigRepository, measure, median, report, setup, time } from './lib.mjs';

const state = process.env.STASHBASE_REMOTE_STATE ?? '/var/lib/stashbase-remote-engine';
const engine = Object.fromEntries(readFileSync(join(state, 'env'), 'utf8').split('\n').filter(Boolean).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
const { bin, home, env: base, rounds } = setup(5);
const image = process.env.STASHBASE_DOCKER_IMAGE || 'stashbase-sandbox:latest';
const overSsh = process.env.REMOTE === 'ssh';
const env = overSsh
  ? { ...base, DOCKER_HOST: engine.STASHBASE_REMOTE_SSH, PATH: `${engine.STASHBASE_REMOTE_SSH_PATH}:${base.PATH}` }
  : { ...base, DOCKER_HOST: engine.STASHBASE_REMOTE_TCP };
const ID = ['-c', 'user.name=b', '-c', 'user.email=b@x'];

function repository(name) {
  const repo = join(home, name);
  mkdirSync(repo, { recursive: true });
  writeFileSync(join(repo, 'a'), 'a\n');
  for (const a of [['init', '-q'], ['add', 'a'], [...ID, 'commit', '-qm', 'init']]) spawnSync('git', ['-C', repo, ...a], { env });
  return repo;
}
const small = repository('small');
const run = (cwd, cmd, extra = {}) => spawnSync(process.execPath, [bin, 'agent', 'run', '--silent', '--docker-sandbox', 'true', '--', ...cmd], { env: { ...env, ...extra }, cwd, encoding: 'utf8' });
const phases = [];

const results = measure(
  {
    'docker run --rm <image> true (on the engine)': () => time('docker', ['run', '--rm', image, 'true'], { env }),
    'stashbase agent run --remote -- true': () => {
      const t0 = process.hrtime.bigint();
      const r = run(small, ['true'], { STASHBASE_TRACE: '1' });
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (r.status !== 0) throw new Error(`agent run exited ${r.status}: ${r.stderr}`);
      const line = r.stderr.split('\n').find((l) => l.startsWith('stashbase-trace '));
      if (line) phases.push(JSON.parse(line.slice('stashbase-trace '.length)));
      return ms;
    },
  },
  rounds,
);
report(`remote${overSsh ? '-ssh' : ''}`, results, 'docker run --rm <image> true (on the engine)', { 'stashbase agent run --remote -- true': '<= 1.5' });
const keys = ['startup', 'prepare', 'setup', 'relay', 'agent', 'teardown', 'total'];
const where = Object.fromEntries(keys.map((k) => [k, median(phases.map((p) => p[k] ?? 0))]));
console.log(JSON.stringify({ benchmark: 'remote-phases', median_ms: where }));
console.log(`\nwhere the time goes (median ms): ${keys.map((k) => `${k} ${where[k]}`).join(', ')}`);

// The big repository: shipped, one commit made there, brought back and imported.
const big = bigRepository(home, env);
const bigRuns = [];
for (let i = 0; i < Math.max(1, Math.min(rounds, 3)); i++) {
  const t0 = process.hrtime.bigint();
  const r = run(big, ['sh', '-c', `echo ${i} > new${i} && git add new${i} && git -c user.name=b -c user.email=b@x commit -qm new${i}`], { STASHBASE_TRACE: '1' });
  if (r.status !== 0) throw new Error(`agent run exited ${r.status}: ${r.stderr}`);
  bigRuns.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
const shipped = { subject: 'remote run in a repository of 10,000 files and 5,000 commits, one commit back', median_ms: +median(bigRuns).toFixed(1), runs: bigRuns.length };
console.log(JSON.stringify(shipped));
console.log(`${shipped.subject}: ${shipped.median_ms} ms`);

// Runs of one repository at once, each on its own branch.
async function concurrent(n) {
  const repo = repository(`many${n}`);
  const t0 = process.hrtime.bigint();
  const codes = await Promise.all(Array.from({ length: n }, (_, i) => new Promise((resolve) => {
    const c = spawn(process.execPath, [bin, 'agent', 'run', '--silent', '--docker-sandbox', 'true', '--', 'sh', '-c', `echo ${i} > f${i} && git add f${i} && git -c user.name=b -c user.email=b@x commit -qm run${i}`], { env, cwd: repo, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    c.stderr.on('data', (d) => (err += d));
    c.on('exit', (code) => resolve({ code, err }));
  })));
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const failed = codes.filter((c) => c.code !== 0);
  if (failed.length > 0) throw new Error(`${failed.length} of ${n} runs failed: ${failed[0].err}`);
  const back = spawnSync('git', ['-C', repo, 'log', '--format=%s', '--branches=stashbase/*'], { encoding: 'utf8' }).stdout.split('\n').filter((s) => s.startsWith('run'));
  if (new Set(back).size !== n) throw new Error(`${new Set(back).size} of ${n} runs' commits came back`);
  return { subject: `${n} remote runs of one repository at once`, wall_ms: +ms.toFixed(0), per_run_ms: +(ms / n).toFixed(0), came_back: n };
}
const many = [];
for (const n of [1, 4, 10]) many.push(await concurrent(n));
console.log(JSON.stringify({ benchmark: 'remote-concurrent', rows: many }, null, 2));
for (const m of many) console.log(`${m.subject}: ${m.wall_ms} ms in all, ${m.per_run_ms} ms a run; all ${m.came_back} branches back`);

// The workspaces these runs made on the engine.
const ours = spawnSync('docker', ['volume', 'ls', '--filter', 'label=stashbase.workspace', '--format', '{{.Name}}|{{.Label "stashbase.origin"}}'], { env, encoding: 'utf8' }).stdout.split('\n').filter((l) => l.includes(`:${home}/`)).map((l) => l.split('|')[0]);
if (ours.length > 0) spawnSync('docker', ['volume', 'rm', '--force', ...ours], { env });
rmSync(home, { recursive: true, force: true });
