// The proxy's cost, as a client sees it, on the native backend in its own
// network namespace: keep-alive HTTPS requests (Content-Length and chunked
// answers) by a client inside a sandbox, through the intercepting proxy (one
// secret substituted per request), against the same client straight to the
// same local HTTPS server, in the same run; an event stream's lateness; the
// stashbase process's memory while 10,000 unfinished heads arrive; the time to
// mint a new host's certificate and memory under 10,000 unique hosts.
// Targets: intercepted keep-alive >= 0.35 of direct and p50 added < 0.3 ms;
// events < 5 ms late; RSS < 150 MB under the flood.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchUpstream, median, orderedClient, setup } from './lib.mjs';

const { LeafCache } = await import('../dist/lib/tls/leaves.js');
const { createRunCa } = await import('../dist/lib/tls/ca.js');

const { bin, home, env } = setup(1);
// Untimed requests first on each connection (WARM=n): both paths' code warmed up alike,
// and the first seconds of a run (JIT, the start-up heap's collection) left out.
const WARM = process.env.WARM ?? '4000';
const REAL = 'ghp_realRealRealRealRealRealReal0123456';

// Upstream with its own test CA: a small JSON answer with Content-Length, the same chunked, an event stream.
const up = await benchUpstream(home);
const upPort = up.port;
const caFile = up.caFile;
const proj = up.profile();
const clientJs = new URL('./proxy-client.mjs', import.meta.url).pathname;
const flooder = new URL('./proxy-flood.mjs', import.meta.url).pathname;

/** Runs a command to its end; samples the memory of the process it starts (stashbase) meanwhile. */
function run(cmd, args, extraEnv = {}) {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { cwd: proj, env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let rssMb = 0;
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    const sample = setInterval(() => {
      try {
        rssMb = Math.max(rssMb, Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${c.pid}/status`, 'utf8'))[1]) / 1024);
      } catch {}
    }, 50);
    c.on('close', (code) => {
      clearInterval(sample);
      if (code !== 0) return reject(new Error(`${cmd} exited ${code}: ${err.slice(-2000)}`));
      resolve({ ...JSON.parse(out.trim().split('\n').at(-1)), rss_mb: +rssMb.toFixed(0) });
    });
  });
}

/** A client kept running, in the project folder, with the bench's environment (bench/lib.mjs). */
const client = (cmd, args, extraEnv) => orderedClient(cmd, args, { cwd: proj, env: { ...env, ...extraEnv } });

// The two clients run side by side, each idle while the other is timed: they
// take slices of SLICE requests in turn (which goes first alternating), so each
// ratio compares two measurements a second or less apart (this machine's speed
// drifts by a third between minutes, and single seconds stall). PAIRS slices of
// each kind; the median pair's ratio is the result.
const SLICE = Number(process.env.SLICE ?? 1000);
const PAIRS = Number(process.env.PAIRS ?? 21);
// CPU_PROF=dir: a V8 CPU profile of the stashbase process, written to dir.
const prof = process.env.CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.CPU_PROF}`] : [];
const direct = await client(process.execPath, [clientJs, 'direct', String(upPort), WARM], { BENCH_CA: caFile, BENCH_TOKEN: REAL });
const sandboxed = await client(process.execPath, [...prof, bin, 'agent', 'run', '--profile', 'bench', '--silent', '--', process.execPath, clientJs, 'proxy', '0', WARM], { REAL_TOKEN: REAL });
const pairs = { cl: [], chunked: [] };
for (let i = 0; i < PAIRS; i++) {
  for (const kind of ['cl', 'chunked']) {
    const order = `${kind} ${SLICE}`;
    const first = i % 2 === 0 ? direct : sandboxed;
    const a = await first.ask(order);
    const b = await (first === direct ? sandboxed : direct).ask(order);
    const [d, s] = first === direct ? [a, b] : [b, a];
    pairs[kind].push({ direct: d.rps, sandboxed: s.rps, ratio: s.rps / d.rps });
  }
}
const sse = { direct: await direct.ask('sse'), native: await sandboxed.ask('sse') };
const totals = { direct: await direct.ask('end'), sandboxed: await sandboxed.ask('end') };
await Promise.all([direct.closed, sandboxed.closed]);
const flood = await run(process.execPath, [bin, 'agent', 'run', '--profile', 'bench', '--silent', '--', process.execPath, flooder, '10000'], { REAL_TOKEN: REAL });
const rows = ['cl', 'chunked'].flatMap((kind) => {
  const name = kind === 'cl' ? 'Content-Length' : 'chunked';
  const ratios = pairs[kind].map((p) => p.ratio).sort((a, b) => a - b);
  const d = totals.direct[kind];
  const s = totals.sandboxed[kind];
  return [
    { subject: `direct, ${name}`, ...d, ratio: 1, added_p50_ms: 0 },
    {
      subject: `native (own network namespace), intercepted, ${name}`, ...s,
      // The median pair's ratio; the ratio of the two clients' requests/s over every slice; each pair's, lowest first.
      ratio: +median(ratios).toFixed(2), pooled_ratio: +(s.rps / d.rps).toFixed(2), ratios: ratios.map((r) => +r.toFixed(2)),
      pairs_at_target: ratios.filter((r) => r >= 0.35).length, added_p50_ms: +(s.p50_ms - d.p50_ms).toFixed(3),
    },
  ];
});

// A new host's certificate, and memory under 10,000 unique hosts.
const ca = createRunCa(['api.test', 'free.test', '*.test'], 'bench');
const leaves = new LeafCache(ca);
const mints = [];
for (let i = 0; i < 200; i++) { const t0 = process.hrtime.bigint(); leaves.get(`h${i}.mint.test`); mints.push(Number(process.hrtime.bigint() - t0) / 1e6); }
mints.sort((a, b) => a - b);
global.gc?.();
const before = process.memoryUsage().heapUsed;
for (let i = 0; i < 10000; i++) leaves.get(`flood${i}.test`);
global.gc?.();
const afterFlood = process.memoryUsage().heapUsed;
const out = {
  benchmark: 'proxy', date: new Date().toISOString(), slice: SLICE, pairs: PAIRS, warm: Number(WARM), rows,
  sse_late_ms: { ...sse, target: '< 5' },
  heads_flood: { connections: 10000, opened: flood.opened, normal_request: flood.normal, normal_ms: flood.normal_ms, stashbase_rss_mb: flood.rss_mb, target: '< 150 MB' },
  mint_p50_ms: +mints[100].toFixed(3), hosts_flood: { hosts: 10000, cached: leaves.size, heap_growth_mb: +((afterFlood - before) / 2 ** 20).toFixed(1) },
};
console.log(JSON.stringify(out, null, 2));
const w = Math.max(...rows.map((r) => r.subject.length));
console.log(`\n${'subject'.padEnd(w)}    rps  ratio  p50 ms  p99 ms  added p50  >1 ms (share of time)`);
for (const r of rows) console.log(`${r.subject.padEnd(w)}  ${String(r.rps).padStart(5)}  ${String(r.ratio).padStart(5)}  ${String(r.p50_ms).padStart(6)}  ${String(r.p99_ms).padStart(6)}  ${String(r.added_p50_ms).padEnd(9)}  ${r.over_1ms} (${r.over_1ms_time_share})`);
for (const r of rows.filter((x) => x.ratios)) console.log(`${r.subject.split(', ').at(-1)}: ratio of each of ${PAIRS} pairs of ${SLICE}-request slices, lowest first: ${r.ratios.join(' ')} (${r.pairs_at_target} at 0.35 or more; both clients' whole time: ${r.pooled_ratio})`);
console.log(`targets: intercepted >= 0.35 of direct (the median pair), added p50 < 0.3 ms`);
console.log(`event stream, ms late (median / max): direct ${sse.direct.median_ms} / ${sse.direct.max_ms}, native ${sse.native.median_ms} / ${sse.native.max_ms} (target < 5)`);
console.log(`10,000 unfinished heads: ${flood.opened} opened, the normal request got "${flood.normal}" in ${flood.normal_ms} ms, stashbase RSS ${flood.rss_mb} MB (target < 150)`);
console.log(`new host certificate: ${out.mint_p50_ms} ms (median); 10,000-host flood: ${leaves.size} cached, heap +${out.hosts_flood.heap_growth_mb} MB`);
up.close();
process.exit(0);
