// The sealed network's relay, as a client sees it: keep-alive HTTPS requests
// (Content-Length and chunked answers) by a client in a sealed container,
// through the relay (relay/main.go, lib/relay/mux.ts) and the intercepting
// proxy (one secret substituted per request), against the same client straight
// to the same local HTTPS server, in the same run, slices in turn (as
// bench/proxy.mjs measures the native backend). With runc and under runsc.
// Target: >= 0.35 of direct (the median pair), as the native relay.
// Needs an image with node (the agents test image by default: IMAGE=...).
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchUpstream, median, orderedClient, setup } from './lib.mjs';


const { bin, home, env } = setup(1);
const IMAGE = process.env.IMAGE ?? 'stashbase-sandbox-agents-test:latest';
const WARM = process.env.WARM ?? '2000';
const SLICE = Number(process.env.SLICE ?? 500);
const PAIRS = Number(process.env.PAIRS ?? 11);
const REAL = 'ghp_realRealRealRealRealRealReal0123456';

const up = await benchUpstream(home);
const upPort = up.port;
const caFile = up.caFile;
const proj = up.profile(['[sandbox]', 'backend = "docker"', `image = "${IMAGE}"`]);
// The client's two files, in the folder the container sees.
for (const f of ['proxy-client.mjs', 'tls-client.mjs']) copyFileSync(new URL(`./${f}`, import.meta.url).pathname, join(proj, f));
const client = (cmd, args, extraEnv) => orderedClient(cmd, args, { cwd: proj, env: { ...env, ...extraEnv } });

const rows = [];
const MODES = [['sealed, runc', ['--docker-network', 'sealed']], ['sealed, runsc', ['--docker-runtime', 'runsc']]].filter(([n]) => !process.env.MODES || process.env.MODES.split(',').some((m) => n.endsWith(m)));
for (const [name, flags] of MODES) {
  const direct = await client(process.execPath, [join(proj, 'proxy-client.mjs'), 'direct', String(upPort), WARM], { BENCH_CA: caFile, BENCH_TOKEN: REAL });
  const sealed = await client(process.execPath, [bin, 'agent', 'run', '--profile', 'bench', '--silent', ...flags, '--', 'node', 'proxy-client.mjs', 'proxy', '0', WARM], { REAL_TOKEN: REAL });
  const ratios = { cl: [], chunked: [] };
  for (let i = 0; i < PAIRS; i++) {
    for (const kind of ['cl', 'chunked']) {
      const order = `${kind} ${SLICE}`;
      const first = i % 2 === 0 ? direct : sealed;
      const a = await first.ask(order);
      const b = await (first === direct ? sealed : direct).ask(order);
      const [d, s] = first === direct ? [a, b] : [b, a];
      ratios[kind].push(s.rps / d.rps);
    }
  }
  const totals = { direct: await direct.ask('end'), sealed: await sealed.ask('end') };
  await Promise.all([direct.closed, sealed.closed]);
  for (const kind of ['cl', 'chunked']) {
    const label = kind === 'cl' ? 'Content-Length' : 'chunked';
    const rs = ratios[kind].sort((a, b) => a - b);
    rows.push({ subject: `direct, ${label} (beside ${name})`, ...totals.direct[kind], ratio: 1 });
    rows.push({
      subject: `${name}, through the relay, intercepted, ${label}`, ...totals.sealed[kind],
      ratio: +median(rs).toFixed(2), ratios: rs.map((r) => +r.toFixed(2)), pairs_at_target: rs.filter((r) => r >= 0.35).length,
      added_p50_ms: +(totals.sealed[kind].p50_ms - totals.direct[kind].p50_ms).toFixed(3), target: '>= 0.35',
    });
  }
}
up.close();
console.log(JSON.stringify({ benchmark: 'docker-relay', date: new Date().toISOString(), slice: SLICE, pairs: PAIRS, warm: Number(WARM), image: IMAGE, rows }, null, 2));
const w = Math.max(...rows.map((r) => r.subject.length));
console.log(`\n${'subject'.padEnd(w)}    rps  ratio  p50 ms  added p50  target`);
for (const r of rows) console.log(`${r.subject.padEnd(w)}  ${String(r.rps).padStart(5)}  ${String(r.ratio).padStart(5)}  ${String(r.p50_ms).padStart(6)}  ${String(r.added_p50_ms ?? 0).padEnd(9)}  ${r.target ?? ''}`);
