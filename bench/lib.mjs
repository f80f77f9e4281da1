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

/**
 * A repository of 10,000 files in 100 folders and 5,000 commits (each changing
 * one file), made by git fast-import; main checked out, its index written.
 */
export function bigRepository(home, env, name = 'repo5k') {
  const repo = join(home, name);
  mkdirSync(repo, { recursive: true });
  const git = (args, input) => {
    const r = spawnSync('git', args, { cwd: repo, env, input, encoding: 'utf8', maxBuffer: 1 << 30 });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  git(['init', '-q', '-b', 'main']);
  const lines = [];
  const when = 1_700_000_000;
  lines.push('commit refs/heads/main', 'mark :1', `committer Bench <b@x> ${when} +0000`, 'data 5', 'first');
  for (let i = 0; i < 10_000; i++) {
    const content = `file ${i}\n`;
    lines.push(`M 100644 inline d${i % 100}/f${i}.txt`, `data ${Buffer.byteLength(content)}`, content.slice(0, -1));
  }
  for (let c = 2; c <= 5000; c++) {
    const content = `file ${c} changed in commit ${c}\n`;
    const msg = `commit ${c}`;
    lines.push('', `commit refs/heads/main`, `mark :${c}`, `committer Bench <b@x> ${when + c} +0000`, `data ${msg.length}`, msg, `from :${c - 1}`, `M 100644 inline d${c % 100}/f${c}.txt`, `data ${Buffer.byteLength(content)}`, content.slice(0, -1));
  }
  git(['fast-import', '--quiet'], lines.join('\n') + '\n');
  git(['reset', '-q', '--hard', 'main']);
  git(['gc', '-q']);
  return repo;
}

/**
 * The run's own git directory on that repository (lib/git/run-git-dir.ts,
 * lib/git/import.ts): made at the start of a run and imported at its end,
 * timed in this process, once with nothing changed by the agent and once after
 * 20 commits of its own (made between the two, untimed). Both backends run
 * the same code. Targets: under 30 ms, and under 100 ms.
 */
export async function gitImportBench(home, env, rounds = 10) {
  const repo = bigRepository(home, env, 'repo5k-import');
  const { createRunGitDir, planRunGitDir } = await import('../dist/lib/git/run-git-dir.js');
  const { importRunGitDir } = await import('../dist/lib/git/import.js');
  const gitDir = join(repo, '.git');
  const nothing = [];
  const commits = [];
  for (let i = 0; i < rounds; i++) {
    const stateDir = join(home, 'runs', `r${i}`);
    let t0 = process.hrtime.bigint();
    const plan = planRunGitDir({ gitDir, admin: null, stateDir: `${stateDir}-a`, hideOthers: false });
    const a = createRunGitDir(plan);
    await importRunGitDir(a.file, { git: 'git', session: 'ags_benchbenchbenchb' });
    nothing.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const plan2 = planRunGitDir({ gitDir, admin: null, stateDir: `${stateDir}-b`, hideOthers: false });
    t0 = process.hrtime.bigint();
    const b = createRunGitDir(plan2);
    let ms = Number(process.hrtime.bigint() - t0) / 1e6;
    // The agent: 20 commits in the run's own directory, your store as its alternate (untimed).
    writeFileSync(join(plan2.dir, 'objects', 'info', 'alternates'), `${join(gitDir, 'objects')}\n`);
    const agentEnv = { ...env, GIT_DIR: plan2.dir, GIT_WORK_TREE: repo, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@x', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@x' };
    writeFileSync(join(plan2.dir, 'config'), '[core]\n\trepositoryformatversion = 0\n');
    for (let c = 0; c < 20; c++) {
      writeFileSync(join(repo, 'd0', `agent-${i}-${c}.txt`), `${c}\n`);
      spawnSync('git', ['add', `d0/agent-${i}-${c}.txt`], { cwd: repo, env: agentEnv });
      spawnSync('git', ['commit', '-qm', `agent ${c}`], { cwd: repo, env: agentEnv });
    }
    t0 = process.hrtime.bigint();
    await importRunGitDir(b.file, { git: 'git', session: 'ags_benchbenchbenchb' });
    ms += Number(process.hrtime.bigint() - t0) / 1e6;
    commits.push(ms);
  }
  const rows = [
    { subject: 'run git directory made + imported, agent changed nothing (10,000 files, 5,000 commits)', median_ms: +median(nothing).toFixed(1), target: '< 30 ms' },
    { subject: 'run git directory made + imported, agent made 20 commits', median_ms: +median(commits).toFixed(1), target: '< 100 ms' },
  ];
  for (const r of rows) {
    console.log(JSON.stringify(r));
    console.log(`${r.subject}: ${r.median_ms} ms (target ${r.target})`);
  }
  return rows;
}

/**
 * A client kept running (bench/proxy-client.mjs, bench/mcp-client.mjs): it
 * says "ready" once connected and warmed up; `ask` sends it an order and
 * resolves with its one line of JSON.
 */
export async function orderedClient(cmd, args, o) {
  const { spawn } = await import('node:child_process');
  const { createInterface } = await import('node:readline');
  const c = spawn(cmd, args, { cwd: o.cwd, env: o.env, stdio: ['pipe', 'pipe', 'pipe'] });
  const closed = new Promise((resolve) => c.on('close', resolve));
  let err = '';
  c.stderr.on('data', (d) => (err += d));
  const lines = createInterface({ input: c.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`${cmd} ${args.slice(-3).join(' ')} ended: ${err.slice(-2000)}`);
    return JSON.parse(value);
  };
  await next();
  return { ask: (order) => (c.stdin.write(`${order}\n`), next()), closed };
}

/**
 * The proxy benchmarks' upstream (bench/proxy.mjs, bench/docker-relay.mjs): an
 * HTTPS server on loopback for api.test with a test CA of its own (written to
 * home/upstream-ca.pem), answering /cl with Content-Length, /chunked chunked,
 * anything else as an event stream of 20 events 50 ms apart.
 */
export async function benchUpstream(home) {
  const { generateKeyPairSync } = await import('node:crypto');
  const { createServer } = await import('node:https');
  const { LeafCache } = await import('../dist/lib/tls/leaves.js');
  const { buildCertificate, toPem } = await import('../dist/lib/tls/x509.js');
  const k = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const now = new Date();
  const upCaPem = toPem(buildCertificate({ subjectCN: 'bench CA', issuerCN: 'bench CA', org: 'bench', publicKey: k.publicKey, signingKey: k.privateKey, issuerPublicKey: k.publicKey, notBefore: new Date(+now - 3600e3), notAfter: new Date(+now + 864e5), ca: true }));
  const upLeaf = new LeafCache({ name: { cn: 'bench CA', org: 'bench' }, key: k.privateKey, publicKey: k.publicKey, certPem: upCaPem, constrained: null, notAfter: new Date(Date.now() + 864e5) }).get('api.test');
  const body = JSON.stringify({ id: 'msg_01', type: 'message', content: [{ type: 'text', text: 'ok' }] });
  const upstream = createServer({ key: upLeaf.keyPem, cert: upLeaf.certPem }, (req, res) => {
    if (req.url === '/cl') return res.end(body);
    if (req.url === '/chunked') {
      res.write(body.slice(0, 40));
      return res.end(body.slice(40));
    }
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.flushHeaders();
    let i = 0;
    const t = setInterval(() => {
      res.write(`data: {"i":${i},"t":${Date.now()}}\n\n`);
      if (++i === 20) { clearInterval(t); res.end(); }
    }, 50);
  });
  // A client kept waiting while the other warms up (a sealed container's start, 2,000 requests through its relay) keeps
  // its connection: Node's default of 5 s closed it under the waiting one, which then waited for good.
  upstream.keepAliveTimeout = 600_000;
  await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
  const caFile = join(home, 'upstream-ca.pem');
  writeFileSync(caFile, upCaPem);
  const port = upstream.address().port;
  return {
    port, caFile, close: () => upstream.close(),
    /** The bench profile (api.test mapped here, its secret bound from REAL_TOKEN) and the project folder, with `sandbox` lines first. */
    profile: (sandbox = []) => {
      const proj = join(home, 'proj');
      mkdirSync(join(home, '.stashbase', 'agents'), { recursive: true });
      mkdirSync(proj, { recursive: true });
      writeFileSync(join(home, '.stashbase', 'agents', 'bench.toml'), [
        ...sandbox,
        '[network]', 'egress_hosts = ["api.test"]', `upstream_ca_file = "${caFile}"`,
        '[network.hosts]', `"api.test" = "127.0.0.1:${port}"`,
        '[secrets.BENCH_TOKEN]', 'source = "REAL_TOKEN"', 'hosts = ["api.test"]',
      ].join('\n') + '\n');
      return proj;
    },
  };
}
