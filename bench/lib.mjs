// Shared benchmark helpers: interleaved runs (so noise hits every subject
// alike), medians, ratios against a baseline measured in the same run, and
// output as JSON plus a table.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function time(cmd, args, opts = {}) {
  const start = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], ...opts });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** subjects: { name: () => ms }; runs each `rounds` times, interleaved, after one warm-up each. */
export function measure(subjects, rounds) {
  const samples = Object.fromEntries(Object.keys(subjects).map((k) => [k, []]));
  for (const fn of Object.values(subjects)) fn();
  for (let i = 0; i < rounds; i++) for (const [k, fn] of Object.entries(subjects)) samples[k].push(fn());
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, { median_ms: +median(v).toFixed(2), min_ms: +Math.min(...v).toFixed(2), runs: v.length }]));
}

export function report(name, results, baseline, targets = {}) {
  const base = results[baseline].median_ms;
  const rows = Object.entries(results).map(([k, r]) => ({ subject: k, ...r, ratio: +(r.median_ms / base).toFixed(2), target: targets[k] ?? null }));
  const json = { benchmark: name, baseline, date: new Date().toISOString(), rows };
  console.log(JSON.stringify(json, null, 2));
  const w = Math.max(...rows.map((r) => r.subject.length));
  console.log(`\n${'subject'.padEnd(w)}  median ms  ratio  target`);
  for (const r of rows) console.log(`${r.subject.padEnd(w)}  ${String(r.median_ms).padStart(9)}  ${String(r.ratio).padStart(5)}  ${r.target ?? ''}`);
  return json;
}

/** The CLI, a temporary HOME and STASHBASE_HOME, and the round count (ROUNDS). */
export function setup(defaultRounds) {
  const home = mkdtempSync(join(tmpdir(), 'sbbench-'));
  return {
    bin: new URL('../bin/stashbase.cjs', import.meta.url).pathname,
    home,
    env: { PATH: process.env.PATH, HOME: home, STASHBASE_HOME: join(home, '.stashbase') },
    rounds: Number(process.env.ROUNDS ?? defaultRounds),
  };
}

/**
 * The end-of-run check for what the agent left in the working tree
 * (lib/git/nested-repo-guard.ts: planted repositories, module directories, the
 * index's marks), which both backends run, on a repository of 10,000 files in
 * 50 folders. Prints JSON and a line. Target: under 30 ms.
 */
export async function repositoryCheck(home, env) {
  const repo = join(home, 'repo10k');
  for (let d = 0; d < 50; d++) {
    mkdirSync(join(repo, `d${d}`, 'sub'), { recursive: true });
    for (let f = 0; f < 200; f++) writeFileSync(join(repo, `d${d}`, 'sub', `f${f}`), '');
  }
  for (const args of [['init', '-q'], ['add', '.'], ['-c', 'user.name=b', '-c', 'user.email=b@x', 'commit', '-qm', 'x']]) spawnSync('git', ['-C', repo, ...args], { env });
  const { checkNestedRepos } = await import('../dist/lib/git/nested-repo-guard.js');
  const runs = [];
  for (let i = 0; i < 10; i++) {
    const t0 = process.hrtime.bigint();
    checkNestedRepos(repo, env, Date.now());
    runs.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const check = { subject: 'end-of-run repository check, 10,000 files', median_ms: +median(runs).toFixed(1), target: '< 30 ms' };
  console.log(JSON.stringify(check));
  console.log(`${check.subject}: ${check.median_ms} ms (target ${check.target})`);
  return check;
}
