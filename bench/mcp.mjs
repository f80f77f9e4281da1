// MCP tool restrictions' cost (lib/mcp/): the time per tools/call against the
// real reference server (scripts/install-test-mcp.sh) behind an HTTPS front,
// by a client straight at the front and by the same client inside a native
// sandbox, through the intercepting proxy that reads each call and filters
// each answer, in the same run. The two clients take slices of calls in turn
// (bench/proxy.mjs explains why); the median pair's added p50 is the result.
// Target: under 1 ms added per call at p50.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { median, orderedClient, setup } from './lib.mjs';

const { LeafCache } = await import('../dist/lib/tls/leaves.js');
const { testCa } = await import('../dist/test/upstream-ca.js');
const { startMcpFront } = await import('../dist/test/mcp-front.js');

const { bin, home, env } = setup(1);
const ca = testCa();
const caFile = join(home, 'upstream-ca.pem');
writeFileSync(caFile, ca.certPem);
const front = await startMcpFront(new LeafCache(ca), 'mcp.test');
const proj = join(home, 'proj');
mkdirSync(join(home, '.stashbase', 'agents'), { recursive: true });
mkdirSync(proj, { recursive: true });
writeFileSync(join(home, '.stashbase', 'agents', 'bench.toml'), [
  '[network]', `upstream_ca_file = "${caFile}"`,
  '[network.hosts]', `"mcp.test" = "127.0.0.1:${front.frontPort}"`,
  '[mcp.servers.everything]', `url = "https://mcp.test:${front.frontPort}/mcp"`, 'allow_tools = ["echo", "get-sum"]', 'deny_tools = ["*long*"]',
].join('\n') + '\n');
const clientJs = new URL('./mcp-client.mjs', import.meta.url).pathname;
const WARM = process.env.WARM ?? '300';
const SLICE = Number(process.env.SLICE ?? 200);
const PAIRS = Number(process.env.PAIRS ?? 15);

/** A client kept running, in the project folder, with the bench's environment (bench/lib.mjs). */
const client = (cmd, args, extraEnv) => orderedClient(cmd, args, { cwd: proj, env: { ...env, ...extraEnv } });

const direct = await client(process.execPath, [clientJs, 'direct', String(front.frontPort), 'mcp.test', WARM], { BENCH_CA: caFile });
const sandboxed = await client(process.execPath, [bin, 'agent', 'run', '--profile', 'bench', '--silent', '--', process.execPath, clientJs, 'proxy', String(front.frontPort), 'mcp.test', WARM], {});
const pairs = [];
for (let i = 0; i < PAIRS; i++) {
  const first = i % 2 === 0 ? direct : sandboxed;
  const a = await first.ask(`call ${SLICE}`);
  const b = await (first === direct ? sandboxed : direct).ask(`call ${SLICE}`);
  const [d, s] = first === direct ? [a, b] : [b, a];
  pairs.push({ direct: d.p50_ms, sandboxed: s.p50_ms, added: s.p50_ms - d.p50_ms });
}
const totals = { direct: await direct.ask('end'), sandboxed: await sandboxed.ask('end') };
await Promise.all([direct.closed, sandboxed.closed]);
front.close();
const added = pairs.map((p) => p.added).sort((a, b) => a - b);
const rows = [
  { subject: 'direct, tools/call (echo)', ...totals.direct, added_p50_ms: 0 },
  { subject: 'native, through the MCP filter', ...totals.sandboxed, added_p50_ms: +median(added).toFixed(3), added_each_pair_ms: added.map((a) => +a.toFixed(3)), pairs_at_target: added.filter((a) => a < 1).length },
];
const out = { benchmark: 'mcp', date: new Date().toISOString(), slice: SLICE, pairs: PAIRS, warm: Number(WARM), target: 'added p50 < 1 ms', rows };
console.log(JSON.stringify(out, null, 2));
const w = Math.max(...rows.map((r) => r.subject.length));
console.log(`\n${'subject'.padEnd(w)}  calls/s  p50 ms  p99 ms  added p50 (median pair)`);
for (const r of rows) console.log(`${r.subject.padEnd(w)}  ${String(r.per_s).padStart(7)}  ${String(r.p50_ms).padStart(6)}  ${String(r.p99_ms).padStart(6)}  ${r.added_p50_ms}`);
console.log(`added p50 of each of ${PAIRS} pairs of ${SLICE}-call slices, lowest first: ${rows[1].added_each_pair_ms.join(' ')} (${rows[1].pairs_at_target} under 1 ms); target < 1 ms`);
process.exit(0);
