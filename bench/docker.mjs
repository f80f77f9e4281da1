// The Docker backend's cost: `agent run --docker-sandbox true -- true` against a
// plain `docker run --rm <same image> true` in the same run, and where the
// time goes (STASHBASE_TRACE phases: images, prepare, network, holder with its
// firewall self-check, agent, teardown); the run's own git directory made and
// imported (bench/lib.mjs), the code both backends share, and the whole run in
// a repository of 10,000 files and 5,000 commits; the sealed network mode with
// runc (against the plain run; also with home_volume_warn = "0", the volume not
// measured) and under runsc (against a plain runsc run).
// Target: at most 2.5x the plain run (firewall), 1.3x (sealed, each against its
// own plain run); the git directory under 30 ms (nothing changed) and 100 ms (20 commits).
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bigRepository, gitImportBench, median, measure, report, repositoryCheck, setup, time } from './lib.mjs';

const { bin, home, env, rounds } = setup(10);
const image = process.env.STASHBASE_DOCKER_IMAGE || 'stashbase-sandbox:latest';
const proj = join(home, 'proj');
mkdirSync(proj, { recursive: true });
const big = bigRepository(home, env);
mkdirSync(join(env.STASHBASE_HOME, 'agents'), { recursive: true });
writeFileSync(join(env.STASHBASE_HOME, 'agents', 'unmeasured.toml'), `[sandbox]\nbackend = "docker"\nimage = "${image}"\nhome_volume_warn = "0"\n`);
const phases = [];
const results = measure(
  {
    'docker run --rm <image> true': () => time('docker', ['run', '--rm', image, 'true'], { env }),
    'stashbase agent run --docker-sandbox true -- true': () => {
      const start = process.hrtime.bigint();
      const r = spawnSync(process.execPath, [bin, 'agent', 'run', '--silent', '--docker-sandbox', 'true', '--', 'true'], { env: { ...env, STASHBASE_TRACE: '1' }, cwd: proj, encoding: 'utf8' });
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (r.status !== 0) throw new Error(`agent run exited ${r.status}: ${r.stderr}`);
      const line = r.stderr.split('\n').find((l) => l.startsWith('stashbase-trace '));
      if (line) phases.push({ ...JSON.parse(line.slice('stashbase-trace '.length)), process_ms: Math.round(ms) });
      return ms;
    },
    'stashbase agent run --docker-sandbox true -- true, in a repository (10,000 files, 5,000 commits)': () => time(process.execPath, [bin, 'agent', 'run', '--silent', '--docker-sandbox', 'true', '--', 'true'], { env, cwd: big }),
    // The sealed network mode (no network, holder or firewall; the relay), with runc and under gVisor, and gVisor's own plain run.
    'stashbase agent run --docker-sandbox true --docker-network sealed -- true': () => time(process.execPath, [bin, 'agent', 'run', '--silent', '--docker-sandbox', 'true', '--docker-network', 'sealed', '--', 'true'], { env, cwd: proj }),
    // The same without the home volume's measurement (home_volume_warn = "0": never warned, not measured).
    'stashbase agent run --profile unmeasured --docker-network sealed -- true (home_volume_warn = "0")': () => time(process.execPath, [bin, 'agent', 'run', '--silent', '--profile', 'unmeasured', '--docker-network', 'sealed', '--', 'true'], { env, cwd: proj }),
    'docker run --rm --runtime runsc <image> true': () => time('docker', ['run', '--rm', '--runtime', 'runsc', image, 'true'], { env }),
    'stashbase agent run --docker-sandbox true --docker-runtime runsc -- true (sealed)': () => time(process.execPath, [bin, 'agent', 'run', '--silent', '--docker-sandbox', 'true', '--docker-runtime', 'runsc', '--', 'true'], { env, cwd: proj }),
    'stashbase agent run --profile unmeasured --docker-runtime runsc -- true (sealed, home_volume_warn = "0")': () => time(process.execPath, [bin, 'agent', 'run', '--silent', '--profile', 'unmeasured', '--docker-runtime', 'runsc', '--', 'true'], { env, cwd: proj }),
  },
  rounds,
);
report('docker', results, 'docker run --rm <image> true', { 'stashbase agent run --docker-sandbox true -- true': '<= 2.5', 'stashbase agent run --docker-sandbox true --docker-network sealed -- true': '<= 1.3', 'stashbase agent run --profile unmeasured --docker-network sealed -- true (home_volume_warn = "0")': '<= 1.3' });
// gVisor against gVisor's own plain run.
const runsc = Object.fromEntries(Object.entries(results).filter(([k]) => k.includes('runsc')));
report('docker-runsc', runsc, 'docker run --rm --runtime runsc <image> true', { 'stashbase agent run --docker-sandbox true --docker-runtime runsc -- true (sealed)': '<= 1.3', 'stashbase agent run --profile unmeasured --docker-runtime runsc -- true (sealed, home_volume_warn = "0")': '<= 1.3' });
const keys = ['images', 'prepare', 'network', 'holder', 'agent', 'teardown', 'total', 'process_ms'];
const where = Object.fromEntries(keys.map((k) => [k, median(phases.map((p) => p[k] ?? 0))]));
console.log(JSON.stringify({ benchmark: 'docker-phases', median_ms: where }));
console.log('\nwhere the time goes (median ms): ' + keys.map((k) => `${k} ${where[k]}`).join(', '));
// The end-of-run check a Docker run does in stashbase too, after its containers are gone.
await repositoryCheck(home, env);
await gitImportBench(home, env);
rmSync(home, { recursive: true, force: true });
