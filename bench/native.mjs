// The native backend's cost: `agent run -- true` (default profile, own network
// namespace with the proxy bridged in) against `bwrap --ro-bind / / true`,
// `node -e 0` and Anthropic's sandbox runtime (`srt --settings <minimal> true`,
// from scripts/install-bench-srt.sh) in the same run; and the time to expand a
// pattern over 200,000 entries; the run's own git directory made and imported
// on a repository of 10,000 files and 5,000 commits (bench/lib.mjs), and the
// whole `agent run -- true` in that repository. Targets: agent run at most
// 1.6x node -e 0 and at most 0.5x srt; the expansion under 1 s; the git
// directory under 30 ms (nothing changed) and 100 ms (20 commits).
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { bigRepository, gitImportBench, median, measure, report, repositoryCheck, setup, time } from './lib.mjs';

const { bin, home, env, rounds } = setup(20);
const big = bigRepository(home, env);
// A project folder in the home, as an agent runs (a run in the home itself makes the whole home writable).
const proj = join(home, 'proj');
mkdirSync(proj);
const srt = join(process.env.STASHBASE_BENCH_SRT ?? '/var/cache/stashbase-bench-srt', 'node_modules', '.bin', 'srt');
if (!existsSync(srt)) throw new Error(`srt is not installed at ${srt}: run scripts/install-bench-srt.sh`);
// srt's smallest settings: no domains, no file rules (its own defaults apply: writes only to the working directory).
const srtSettings = join(home, 'srt-settings.json');
writeFileSync(srtSettings, JSON.stringify({ network: { allowedDomains: [], deniedDomains: [] }, filesystem: { denyRead: [], allowWrite: [], denyWrite: [] } }));
const results = measure(
  {
    'node -e 0': () => time(process.execPath, ['-e', '0'], { env }),
    'bwrap --ro-bind / / true': () => time('bwrap', ['--ro-bind', '/', '/', 'true'], { env }),
    'srt --settings <min> true': () => time(srt, ['--settings', srtSettings, 'true'], { env, cwd: proj }),
    'stashbase agent run -- true': () => time(process.execPath, [bin, 'agent', 'run', '--silent', '--', 'true'], { env, cwd: proj }),
    'stashbase agent run -- true, in a repository (10,000 files, 5,000 commits)': () => time(process.execPath, [bin, 'agent', 'run', '--silent', '--', 'true'], { env, cwd: big }),
  },
  rounds,
);
const out = report('native', results, 'node -e 0', { 'stashbase agent run -- true': '<= 1.6' });
const vsSrt = +(results['stashbase agent run -- true'].median_ms / results['srt --settings <min> true'].median_ms).toFixed(2);
console.log(JSON.stringify({ subject: 'stashbase agent run -- true / srt', ratio: vsSrt, target: '<= 0.5' }));
console.log(`stashbase agent run -- true is ${vsSrt}x srt's time (target <= 0.5)`);

// 200,000 entries in 400 directories, expanded by a regex that matches none.
const tree = join(home, 'tree');
for (let d = 0; d < 400; d++) {
  mkdirSync(join(tree, `d${d}`), { recursive: true });
  for (let f = 0; f < 499; f++) writeFileSync(join(tree, `d${d}`, `f${f}`), '');
}
const { expandPattern } = await import('../dist/lib/paths/expand.js');
const { resolveRule } = await import('../dist/lib/paths/rules.js');
const rule = resolveRule(`re:^${tree}/.*\\.never$`, home, home);
const runs = [];
let visited = 0;
for (let i = 0; i < 5; i++) {
  const t0 = process.hrtime.bigint();
  visited = expandPattern(rule).visited;
  runs.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
const walk = { subject: 'expand 200,000 entries', median_ms: +median(runs).toFixed(1), entries: visited, target: '< 1000 ms' };
console.log(JSON.stringify(walk));
console.log(`${walk.subject}: ${walk.median_ms} ms for ${visited} entries (target ${walk.target})`);

// A run's CA (issue 27): made at every start of a run with secrets, its key in memory, name-constrained.
const { createRunCa } = await import('../dist/lib/tls/ca.js');
const { LeafCache } = await import('../dist/lib/tls/leaves.js');
const caRuns = [];
const names = ['api.anthropic.com', 'platform.claude.com', 'claude.ai', 'console.anthropic.com', 'statsig.anthropic.com', 'api.openai.com', 'auth.openai.com', 'chatgpt.com', '*.githubusercontent.com', 'github.com'];
for (let i = 0; i < 50; i++) {
  const t0 = performance.now();
  const ca = createRunCa(names, `ags_bench${i}`);
  new LeafCache(ca).get('api.anthropic.com');
  caRuns.push(performance.now() - t0);
}
const caGen = { subject: "a run's CA and its first leaf", median_ms: +median(caRuns).toFixed(2), target: '< 5 ms' };
console.log(JSON.stringify(caGen));
console.log(`${caGen.subject}: ${caGen.median_ms} ms (target ${caGen.target})`);

await repositoryCheck(home, env);
await gitImportBench(home, env);
rmSync(home, { recursive: true, force: true });
void out;
