// The secret scan's speed: `stashbase scan` over a tree of 10,000 files and
// `--staged` over a 50-file commit, against secretlint's own CLI with the same
// preset where one is installed (SECRETLINT=path, else `secretlint` on PATH)
// and gitleaks where installed (GITLEAKS=path, else on PATH), interleaved in
// the same run; and the confined scan a sandbox's hook asks for. secretlint's
// CLI is timed on the first 1,000 files only (beside stashbase on the same
// ones): its profiler keeps every file's marks and searches them on each new
// one, so its time grows with the square of the file count (2,000 files took
// 13.6 s here, 400 took 1.2 s), and 10,000 would take minutes per round.
// Targets: the tree under 2 s, the commit under 200 ms.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { median, setup } from './lib.mjs';

const { bin, home, env, rounds } = setup(5);

// A deterministic tree of source-like files: 50 folders of 200, 0.5 to 8 KiB.
let seed = 42;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const WORDS = 'const let return function value result index count name path file list map filter reduce config options error message data item user request response handler module export import async await true false null'.split(' ');
const line = () => Array.from({ length: 3 + Math.floor(rnd() * 10) }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ');
const text = (bytes) => {
  const out = [];
  let n = 0;
  while (n < bytes) {
    const l = `  ${line()};`;
    out.push(l);
    n += l.length + 1;
  }
  return out.join('\n') + '\n';
};
// The first 1,000 files are in a/, the rest in b/.
const tree = join(home, 'tree');
const pkg = (d) => join(d < 5 ? 'a' : 'b', `pkg${d}`, 'src');
for (let d = 0; d < 50; d++) {
  mkdirSync(join(tree, pkg(d)), { recursive: true });
  for (let f = 0; f < 200; f++) writeFileSync(join(tree, pkg(d), `f${f}.js`), text(512 + Math.floor(rnd() * 7680)));
}
// Ten planted secrets, built here so this file holds none.
for (let i = 0; i < 10; i++) writeFileSync(join(tree, pkg(i), 'f0.js'), `const key = "AKIA${'QWERTYUIOPASDFG'}${String.fromCharCode(65 + i)}";\n` + text(2000));

// The commit: the tree in a repository, then 50 files each given 20 new lines.
const repo = join(home, 'repo');
spawnSync('cp', ['-a', tree, repo]);
const git = (...a) => spawnSync('git', ['-C', repo, ...a], { env, encoding: 'utf8' });
git('init', '-q');
git('add', '.');
git('-c', 'user.name=b', '-c', 'user.email=b@x', 'commit', '-qm', 'x');
const changed = [];
for (let i = 0; i < 50; i++) {
  const f = join(pkg(10 + (i % 40)), `f${1 + i}.js`);
  writeFileSync(join(repo, f), text(3000) + text(600));
  changed.push(f);
}
git('add', '.');

const found = (dir, exe, args) => () => {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(exe, args, { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0 && r.status !== 1) throw new Error(`${exe} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
};
const which = (name, v) => v ?? (spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim() || null);
const secretlint = which('secretlint', process.env.SECRETLINT);
const gitleaks = which('gitleaks', process.env.GITLEAKS);
const rc = join(home, '.secretlintrc.json');
writeFileSync(rc, JSON.stringify({ rules: [{ id: '@secretlint/secretlint-rule-preset-recommend' }] }));

const subjects = {
  'stashbase scan (10,000 files)': found(tree, process.execPath, [bin, 'scan']),
  'stashbase scan --staged (50-file commit)': found(repo, process.execPath, [bin, 'scan', '--staged']),
  'confined scan --staged (the in-sandbox hook, bwrap)': found(repo, process.execPath, ['--input-type=module', '-e', `
    import { runConfinedScan } from ${JSON.stringify(new URL('../dist/lib/hooks/host-scan.js', import.meta.url).pathname)};
    const r = await runConfinedScan({ args: ['--staged'], cwd: ${JSON.stringify(repo)} }, { workTree: ${JSON.stringify(repo)}, mounts: [{ host: ${JSON.stringify(repo)}, sandbox: ${JSON.stringify(repo)} }], profile: { allowHooks: ['secret_scan'], secrets: {} }, env: process.env });
    process.exitCode = r.exit;`]),
};
subjects['stashbase scan (1,000 files, a/)'] = found(tree, process.execPath, [bin, 'scan', 'a']);
if (secretlint) {
  subjects['secretlint (1,000 files, a/)'] = found(tree, secretlint, ['--secretlintrc', rc, '--secretlintignore', '/dev/null', 'a/**/*']);
  subjects['secretlint (the 50 changed files)'] = found(repo, secretlint, ['--secretlintrc', rc, '--secretlintignore', '/dev/null', ...changed]);
}
if (gitleaks) {
  subjects['gitleaks dir (10,000 files)'] = found(tree, gitleaks, ['dir', '--no-banner', '--exit-code', '1', '.']);
  subjects['gitleaks git --staged (50-file commit)'] = found(repo, gitleaks, ['git', '--staged', '--no-banner', '--exit-code', '1', '.']);
}

// Interleaved: one warm-up each, then round after round of every subject.
const samples = Object.fromEntries(Object.keys(subjects).map((k) => [k, []]));
for (const fn of Object.values(subjects)) fn();
for (let i = 0; i < rounds; i++) for (const [k, fn] of Object.entries(subjects)) samples[k].push(fn());
const targets = { 'stashbase scan (10,000 files)': '< 2000', 'stashbase scan --staged (50-file commit)': '< 200' };
const rows = Object.entries(samples).map(([k, v]) => ({ subject: k, median_ms: +median(v).toFixed(1), min_ms: +Math.min(...v).toFixed(1), runs: v.length, target: targets[k] ?? null }));
const notes = [secretlint ? null : 'secretlint: not installed (set SECRETLINT)', gitleaks ? null : 'gitleaks: not installed (set GITLEAKS)'].filter(Boolean);
console.log(JSON.stringify({ benchmark: 'scan', date: new Date().toISOString(), rows, notes }, null, 2));
const w = Math.max(...rows.map((r) => r.subject.length));
console.log(`\n${'subject'.padEnd(w)}  median ms  min ms  target`);
for (const r of rows) console.log(`${r.subject.padEnd(w)}  ${String(r.median_ms).padStart(9)}  ${String(r.min_ms).padStart(6)}  ${r.target ?? ''}`);
for (const n of notes) console.log(n);
spawnSync('rm', ['-rf', home]);
