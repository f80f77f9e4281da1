// The native backend's cost: `agent run -- true` (default profile, own network
// namespace with the proxy bridged in) against `bwrap --ro-bind / / true` and
// `node -e 0` in the same run; and the time to expand a pattern over 200,000
// entries. Targets: agent run at most 2x node -e 0; the expansion under 1 s.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { median, measure, report, setup, time } from './lib.mjs';

const { bin, home, env, rounds } = setup(20);
const results = measure(
  {
    'node -e 0': () => time(process.execPath, ['-e', '0'], { env }),
    'bwrap --ro-bind / / true': () => time('bwrap', ['--ro-bind', '/', '/', 'true'], { env }),
    'stashbase agent run -- true': () => time(process.execPath, [bin, 'agent', 'run', '--silent', '--', 'true'], { env, cwd: home }),
  },
  rounds,
);
const out = report('native', results, 'node -e 0', { 'stashbase agent run -- true': '<= 2' });

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
rmSync(home, { recursive: true, force: true });
void out;
