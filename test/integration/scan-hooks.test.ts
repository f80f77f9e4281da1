// The secret scan as git hooks, for real: installed with `scan install`, run by
// git on commit and push, outside any sandbox and through the in-sandbox path
// (curl to an endpoint that calls runConfinedScan, as the run's proxy does),
// and the confined scan itself against a symlink and a .git redirect the
// agent planted, each with the control that the same read works unconfined.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { confinedScanCommand, encodeScanAnswer, type HostScanContext, runConfinedScan } from '../../lib/hooks/host-scan.js';
import { thisCli } from '../../lib/hooks/cli-files.js';
import { runCapped } from '../../lib/exec.js';
import type { Profile } from '../../lib/profile/types.js';
import { BIN, cli, needs, REPO, tempHome, writeFile } from '../helpers.js';

// Built at run time: this file holds no token a scanner would flag.
const AWS_ID = 'AKIA' + 'ZXCVBNMASDFGHJKL';
const REAL = 'dpl_' + 'r3alV4lue9x8c7v6b5n4';

describe('secret scan hooks (real git)', needs('git'), () => {
  const t = tempHome();
  after(() => t.cleanup());
  const env = { ...t.env, GIT_AUTHOR_NAME: 'me', GIT_AUTHOR_EMAIL: 'me@x', GIT_COMMITTER_NAME: 'me', GIT_COMMITTER_EMAIL: 'me@x', DEPLOY_SRC: REAL };
  const git = (dir: string, args: string[], extra: NodeJS.ProcessEnv = {}) => spawnSync('git', ['-C', dir, ...args], { env: { ...env, ...extra }, encoding: 'utf8', input: '' });
  let n = 0;
  const repo = () => {
    const dir = join(t.dir, `repo${++n}`);
    mkdirSync(dir);
    assert.equal(git(dir, ['init', '-q', '-b', 'main']).status, 0);
    assert.equal(git(dir, ['commit', '-q', '--allow-empty', '-m', 'init']).status, 0);
    return dir;
  };
  const commitFile = (dir: string, name: string, text: string, flags: string[] = [], extra: NodeJS.ProcessEnv = {}) => {
    writeFile(join(dir, name), text);
    assert.equal(git(dir, ['add', name]).status, 0);
    return git(dir, ['commit', '-m', `add ${name}`, ...flags], extra);
  };
  // While an endpoint in this process answers the hook, git must not block the event loop.
  const gitAsync = (dir: string, args: string[], extra: NodeJS.ProcessEnv = {}) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const c = spawn('git', ['-C', dir, ...args], { env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      c.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      c.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      c.on('close', (status) => resolve({ status, stdout, stderr }));
    });
  const commitAsync = (dir: string, name: string, text: string, extra: NodeJS.ProcessEnv) => {
    writeFile(join(dir, name), text);
    assert.equal(git(dir, ['add', name]).status, 0);
    return gitAsync(dir, ['commit', '-m', `add ${name}`], extra);
  };
  before(() => writeFile(join(t.sbHome, 'agents', 'ci.toml'), '[secrets.DEPLOY_TOKEN]\nsource = "DEPLOY_SRC"\nhosts = ["api.example.test"]\n'));

  test('pre-commit outside a sandbox: an AWS key, a private key block and a bound secret are refused with the finding; clean passes; --no-verify skips', async () => {
    const dir = repo();
    const r = await cli(['scan', 'install', '--profile', 'ci'], { env, cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /\.git\/hooks\/pre-commit: installed\n.*\.git\/hooks\/pre-push: installed\n/s);
    const aws = commitFile(dir, 'cfg/aws.ini', `[default]\naws_access_key_id = ${AWS_ID}\n`);
    assert.equal(aws.status, 1);
    assert.match(aws.stdout + aws.stderr, /cfg\/aws\.ini:2 aws\/AWSAccessKeyID AKIA\*{16}/);
    assert.doesNotMatch(aws.stdout + aws.stderr, new RegExp(AWS_ID));
    const { privateKey } = generateKeyPairSync('ed25519', { privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
    git(dir, ['reset', '-q', 'cfg/aws.ini']);
    const key = commitFile(dir, 'deploy/key.pem', `# key\n${privateKey}`);
    assert.equal(key.status, 1);
    assert.match(key.stdout + key.stderr, /deploy\/key\.pem:2 private-key -----BEGIN PRIVATE KEY-----/);
    git(dir, ['reset', '-q', 'deploy/key.pem']);
    const bound = commitFile(dir, 'src/client.js', `const t = "${REAL}";\n`);
    assert.equal(bound.status, 1);
    assert.match(bound.stdout + bound.stderr, /src\/client\.js:1 bound-secret:DEPLOY_TOKEN \*+\n/);
    assert.doesNotMatch(bound.stdout + bound.stderr, /r3alV4lue/);
    git(dir, ['reset', '-q', 'src/client.js']);
    assert.equal(commitFile(dir, 'README.md', '# hello\nno secrets here\n').status, 0);
    assert.equal(git(dir, ['log', '--format=%s', '-1']).stdout, 'add README.md\n');
    // git commit -a uses a temporary index: the hook scans that one.
    writeFileSync(join(dir, 'README.md'), `# hello\nkey ${AWS_ID}\n`);
    const all = git(dir, ['commit', '-a', '-m', 'all']);
    assert.equal(all.status, 1, all.stderr);
    assert.match(all.stdout + all.stderr, /README\.md:2 aws\/AWSAccessKeyID/);
    const skip = git(dir, ['commit', '-a', '-m', 'skipped', '--no-verify']);
    assert.equal(skip.status, 0, skip.stderr);
    assert.equal(git(dir, ['log', '--format=%s', '-1']).stdout, 'skipped\n');
  });

  test('pre-push with a range: the pushed commits are scanned; a new branch from where the remotes are; a clean push passes', async () => {
    const remote = join(t.dir, `remote${++n}.git`);
    assert.equal(spawnSync('git', ['init', '-q', '--bare', remote]).status, 0);
    const dir = repo();
    assert.equal(git(dir, ['remote', 'add', 'origin', remote]).status, 0);
    assert.equal(git(dir, ['push', '-q', 'origin', 'main']).status, 0);
    assert.equal((await cli(['scan', 'install', '--pre-push'], { env, cwd: dir })).code, 0);
    assert.equal(existsSync(join(dir, '.git', 'hooks', 'pre-commit')), false);
    assert.equal(commitFile(dir, 'a.txt', `id ${AWS_ID}\n`).status, 0);
    assert.equal(commitFile(dir, 'b.txt', 'fine\n').status, 0);
    const push = git(dir, ['push', 'origin', 'main']);
    assert.equal(push.status, 1);
    assert.match(push.stdout + push.stderr, /a\.txt:1 aws\/AWSAccessKeyID AKIA\*+ \(commit [0-9a-f]{12}\)/);
    assert.match(push.stderr, /failed to push/);
    // A new branch: the remote side is all zeros; main on the remote is already known.
    git(dir, ['reset', '-q', '--hard', 'HEAD~2']);
    git(dir, ['checkout', '-q', '-b', 'topic']);
    assert.equal(commitFile(dir, 'c.txt', 'clean\n').status, 0);
    const clean = git(dir, ['push', 'origin', 'topic']);
    assert.equal(clean.status, 0, clean.stderr);
    git(dir, ['checkout', '-q', '-b', 'leaky']);
    assert.equal(commitFile(dir, 'd.txt', `id ${AWS_ID}\n`).status, 0);
    const leaky = git(dir, ['push', 'origin', 'leaky']);
    assert.equal(leaky.status, 1);
    assert.match(leaky.stdout + leaky.stderr, /d\.txt:1 aws\/AWSAccessKeyID/);
    assert.doesNotMatch(leaky.stdout + leaky.stderr, /c\.txt/);
  });

  test('a foreign hook is chained, never overwritten; --uninstall puts it back; core.hooksPath is followed', async () => {
    const dir = repo();
    const hooks = join(dir, 'githooks');
    assert.equal(git(dir, ['config', 'core.hooksPath', 'githooks']).status, 0);
    const mine = `#!/bin/sh\necho mine-ran >> "${join(dir, 'ran.log')}"\n`;
    writeFile(join(hooks, 'pre-commit'), mine);
    chmodSync(join(hooks, 'pre-commit'), 0o755);
    const refused = await cli(['scan', 'install', '--pre-commit'], { env, cwd: dir });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /githooks\/pre-commit exists and is not stashbase's hook; nothing was changed\. Run again with --chain/);
    assert.equal(readFileSync(join(hooks, 'pre-commit'), 'utf8'), mine);
    const chained = await cli(['scan', 'install', '--pre-commit', '--chain'], { env, cwd: dir });
    assert.equal(chained.code, 0, chained.stderr);
    assert.equal(readFileSync(join(hooks, 'pre-commit.stashbase-chained'), 'utf8'), mine);
    assert.equal(commitFile(dir, 'x.txt', `${AWS_ID}\n`).status, 1);
    assert.equal(readFileSync(join(dir, 'ran.log'), 'utf8'), 'mine-ran\n');
    git(dir, ['reset', '-q', 'x.txt']);
    assert.equal(commitFile(dir, 'y.txt', 'ok\n').status, 0);
    assert.equal(readFileSync(join(dir, 'ran.log'), 'utf8'), 'mine-ran\nmine-ran\n');
    // A failing foreign hook still blocks, before the scan.
    writeFileSync(join(hooks, 'pre-commit.stashbase-chained'), '#!/bin/sh\necho no >&2; exit 3\n');
    const blocked = commitFile(dir, 'z.txt', 'ok\n');
    assert.equal(blocked.status, 1);
    assert.doesNotMatch(blocked.stderr, /stashbase scan/);
    writeFileSync(join(hooks, 'pre-commit.stashbase-chained'), mine);
    const un = await cli(['scan', 'install', '--uninstall'], { env, cwd: dir });
    assert.equal(un.code, 0);
    assert.match(un.stderr, /pre-commit: removed; the hook it chained is back\n.*pre-push: not installed/s);
    assert.equal(readFileSync(join(hooks, 'pre-commit'), 'utf8'), mine);
    assert.equal(existsSync(join(hooks, 'pre-commit.stashbase-chained')), false);
    const again = await cli(['scan', 'install', '--uninstall'], { env, cwd: dir });
    assert.match(again.stderr, /pre-commit: left alone: it is not stashbase's/);
  });

  test('in a terminal, scan install asks before chaining a foreign hook: N changes nothing, y chains it', () => {
    const PTY = join(REPO, 'test', 'fixtures', 'pty-run.py');
    const dir = repo();
    const hook = join(dir, '.git', 'hooks', 'pre-commit');
    writeFile(hook, '#!/bin/sh\nexit 0\n');
    chmodSync(hook, 0o755);
    const ask = (answer: string) => JSON.parse(spawnSync('python3', [PTY, '--timeout', '60', '--at', '0', 'wait:[y/N]', '--at', '0.1', `send:${Buffer.from(answer + '\r').toString('hex')}`, '--', process.execPath, BIN, 'scan', 'install', '--pre-commit'], { env, cwd: dir, encoding: 'utf8' }).stdout) as { output: string; exit: number };
    const no = ask('n');
    assert.equal(no.exit, 1, no.output);
    assert.match(no.output, /pre-commit is not stashbase's hook\. Keep it and run it before the scan\? \[y\/N\]/);
    assert.equal(existsSync(hook + '.stashbase-chained'), false);
    const yes = ask('y');
    assert.equal(yes.exit, 0, yes.output);
    assert.equal(readFileSync(hook + '.stashbase-chained', 'utf8'), '#!/bin/sh\nexit 0\n');
    assert.match(readFileSync(hook, 'utf8'), /^#!\/bin\/sh\n# stashbase-scan-hook 1 \(pre-commit\)\n/);
  });

  test('inside a sandbox (the variables set): the hook asks the endpoint with curl and prints its answer; refusals and a missing scan fail closed', async () => {
    const dir = repo();
    assert.equal((await cli(['scan', 'install'], { env, cwd: dir })).code, 0);
    const profile = { allowHooks: ['secret_scan'], secrets: { DEPLOY_TOKEN: { source: 'DEPLOY_SRC', from: { kind: 'env', variable: 'DEPLOY_SRC' }, hosts: [], inQuery: false, allowPlaintext: false } } } as unknown as Profile;
    const ctx: HostScanContext = { workTree: dir, mounts: [{ host: dir, sandbox: dir }], profile, env: { ...process.env, DEPLOY_SRC: REAL } };
    const bodies: unknown[] = [];
    let status = 200;
    const server = createServer((req, res) => {
      let data = '';
      req.on('data', (c: Buffer) => (data += c));
      req.on('end', async () => {
        if (req.url !== '/__stashbase/hooks/scan' || req.headers.authorization !== 'Bearer tok123' || status !== 200) {
          res.writeHead(status === 200 ? 403 : status).end('denied\u001b[2J');
          return;
        }
        const body = JSON.parse(data) as unknown;
        bodies.push(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end(encodeScanAnswer(await runConfinedScan(body, ctx)));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    after(() => server.close());
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/__stashbase/hooks`;
    const inSandbox = { STASHBASE_HOOK_URL: url, STASHBASE_HOOK_TOKEN: 'tok123' };
    const leak = await commitAsync(dir, 'app.cfg', `token=${REAL}\nid=${AWS_ID}\n`, inSandbox);
    assert.equal(leak.status, 1, leak.stderr);
    // git shows a hook's stdout on its stderr.
    assert.match(leak.stderr, /app\.cfg:1 bound-secret:DEPLOY_TOKEN \*+\napp\.cfg:2 aws\/AWSAccessKeyID AKIA\*+\n/);
    assert.match(leak.stderr, /2 possible secrets found/);
    assert.doesNotMatch(leak.stderr, /r3alV4lue/);
    assert.deepEqual(bodies.at(-1), { args: ['--staged'], cwd: dir, indexFile: join(dir, '.git', 'index') });
    git(dir, ['reset', '-q', 'app.cfg']);
    assert.equal((await commitAsync(dir, 'ok.txt', 'fine\n', inSandbox)).status, 0);
    // git commit -a: the temporary index goes along.
    writeFileSync(join(dir, 'ok.txt'), `fine ${AWS_ID}\n`);
    const all = await gitAsync(dir, ['commit', '-a', '-m', 'a'], inSandbox);
    assert.equal(all.status, 1, all.stderr);
    assert.match((bodies.at(-1) as { indexFile: string }).indexFile, /\.git\/(index\.lock|next-index-\d+\.lock)$/);
    git(dir, ['checkout', '-q', 'ok.txt']);
    // The endpoint refuses (a wrong token): the commit is blocked, the answer shown without control characters.
    const wrong = await commitAsync(dir, 'w.txt', 'fine\n', { ...inSandbox, STASHBASE_HOOK_TOKEN: 'nope' });
    assert.equal(wrong.status, 1);
    assert.match(wrong.stderr, /cannot scan: the stashbase proxy answered HTTP 403\ndenied\[2J\n/);
    // No curl in the sandbox.
    const noCurl = join(t.dir, 'nocurl');
    mkdirSync(noCurl, { recursive: true });
    for (const tool of ['git', 'sh', 'dirname', 'cat', 'mktemp']) if (!existsSync(join(noCurl, tool))) symlinkSync(spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim(), join(noCurl, tool));
    const nc = await commitAsync(dir, 'w.txt', 'fine\n', { ...inSandbox, PATH: noCurl });
    assert.equal(nc.status, 1);
    assert.match(nc.stderr, /cannot scan: curl is not installed in this sandbox/);
    // Neither the variables nor a stashbase: the hook says so and names the profile line.
    const hook = join(dir, '.git', 'hooks', 'pre-commit');
    writeFileSync(hook, readFileSync(hook, 'utf8').replace(/^SB_CLI=.*$/m, "SB_CLI='/nonexistent/stashbase.cjs'"));
    const none = await commitAsync(dir, 'w.txt', 'fine\n', { PATH: noCurl });
    assert.equal(none.status, 1);
    assert.match(none.stderr, /cannot scan: stashbase is not installed here.*allow_hooks = \["secret_scan"\]/);
  });
});

describe('the confined scan (real bwrap): the agent points it at files outside the tree', needs('bwrap', 'git'), () => {
  const t = tempHome();
  after(() => t.cleanup());
  const env = { ...t.env, GIT_AUTHOR_NAME: 'me', GIT_AUTHOR_EMAIL: 'me@x', GIT_COMMITTER_NAME: 'me', GIT_COMMITTER_EMAIL: 'me@x' };
  const git = (dir: string, ...args: string[]) => spawnSync('git', ['-C', dir, ...args], { env, encoding: 'utf8' });
  const secretFile = join(t.home, 'secret.txt');
  const profile = { allowHooks: ['secret_scan'], secrets: {} } as unknown as Profile;
  const setup = (name: string) => {
    const tree = join(t.dir, name);
    mkdirSync(tree);
    assert.equal(git(tree, 'init', '-q').status, 0);
    const ctx: HostScanContext = { workTree: tree, mounts: [{ host: tree, sandbox: tree }, { host: join(tree, '.git'), sandbox: join(tree, '.git') }], profile, env: process.env };
    return { tree, ctx };
  };
  before(() => writeFile(secretFile, `aws_access_key_id = ${AWS_ID}\n`));

  test('a symlink to ~/secret.txt, staged: confined, the same scan of it reads nothing; unconfined it finds the key (the control)', async () => {
    const { tree, ctx } = setup('symlink');
    symlinkSync(secretFile, join(tree, 'leak.txt'));
    assert.equal(git(tree, 'add', 'leak.txt').status, 0);
    const staged = await runConfinedScan({ args: ['--staged'], cwd: tree }, ctx);
    assert.equal(staged.exit, 0, staged.stderr);
    assert.doesNotMatch(staged.stdout + staged.stderr, /AKIA/);
    // The scanner told to read the file itself: confined it cannot, unconfined it can.
    const cmd = confinedScanCommand({ args: ['leak.txt'], cwd: tree }, ctx, t.dir, thisCli());
    assert.equal(typeof cmd, 'object');
    const confined = await runCapped(cmd as Exclude<typeof cmd, string>, { timeoutMs: 60_000, maxBytes: 1 << 20 });
    assert.notEqual(confined.code, 1);
    assert.doesNotMatch(confined.stdout + confined.stderr, /AKIA/);
    assert.match(confined.stderr, /leak\.txt: no such file or directory/);
    const control = await cli(['scan', 'leak.txt'], { env, cwd: tree });
    assert.equal(control.code, 1);
    assert.match(control.stdout, /leak\.txt:1 aws\/AWSAccessKeyID AKIA\*+/);
  });

  test('a .git file redirecting to another repository: confined the scan fails closed and shows nothing of it; unconfined it scans that repository (the control)', async () => {
    const { tree, ctx } = setup('redirect');
    const elsewhere = join(t.home, 'other-project');
    mkdirSync(elsewhere);
    assert.equal(git(elsewhere, 'init', '-q').status, 0);
    writeFile(join(elsewhere, 'creds.ini'), `aws_access_key_id = ${AWS_ID}\n`);
    assert.equal(git(elsewhere, 'add', 'creds.ini').status, 0);
    renameSync(join(tree, '.git'), join(t.dir, 'redirect-git-moved'));
    writeFileSync(join(tree, '.git'), `gitdir: ${join(elsewhere, '.git')}\n`);
    const confined = await runConfinedScan({ args: ['--staged'], cwd: tree }, ctx);
    assert.notEqual(confined.exit, 0);
    assert.doesNotMatch(confined.stdout + confined.stderr, /AKIA|creds\.ini/);
    assert.match(confined.stderr, /the scan could not run cleanly \(exit \d+\)/);
    assert.match(confined.withheld ?? '', /not a git repository/);
    const control = await cli(['scan', '--staged'], { env, cwd: tree });
    assert.equal(control.code, 1);
    assert.match(control.stdout, /creds\.ini:1 aws\/AWSAccessKeyID AKIA\*+/);
  });

  test("(review, round 34) what the agent's sandbox hides in the tree (deny_read): named as the index file, refused; (unlisted) read by the scan itself, hidden from it as from the sandbox; control: shown the whole tree, git printed the file's first bytes and the scan finds its key", async () => {
    const { tree, ctx } = setup('denied');
    writeFile(join(tree, 'secrets', 'prod.env'), `SK_LIVE=x\naws_access_key_id = ${AWS_ID}\n`);
    const hidden = { ...ctx, hidden: [{ path: join(tree, 'secrets', 'prod.env'), dir: false }] };
    const asIndex = await runConfinedScan({ args: ['--staged'], cwd: tree, indexFile: join(tree, 'secrets', 'prod.env') }, hidden);
    assert.deepEqual([asIndex.exit, asIndex.stdout], [2, '']);
    assert.match(asIndex.stderr, /indexFile ".*\/secrets\/prod\.env" is not inside the run's git directories/);
    const cmd = confinedScanCommand({ args: ['secrets/prod.env'], cwd: tree }, hidden, t.dir, thisCli());
    const confined = await runCapped(cmd as Exclude<typeof cmd, string>, { timeoutMs: 60_000, maxBytes: 1 << 20 });
    assert.doesNotMatch(confined.stdout + confined.stderr, /AKIA|SK_L/);
    assert.equal(confined.code, 0, confined.stderr);
    // Control: the whole tree shown, and the index anywhere in it (as before): git reads the file's first bytes out.
    const shown = confinedScanCommand({ args: ['--staged'], cwd: tree, indexFile: join(tree, 'secrets', 'prod.env') }, ctx, t.dir, thisCli());
    const leaked = await runCapped(shown as Exclude<typeof shown, string>, { timeoutMs: 60_000, maxBytes: 1 << 20 });
    assert.match(leaked.stderr, /bad signature 0x4c5f4b53/);
    const plain = confinedScanCommand({ args: ['secrets/prod.env'], cwd: tree }, ctx, t.dir, thisCli());
    const found = await runCapped(plain as Exclude<typeof plain, string>, { timeoutMs: 60_000, maxBytes: 1 << 20 });
    assert.match(found.stdout, /prod\.env:2 aws\/AWSAccessKeyID AKIA\*+/);
    // (Review of that change) a link in the git directory to a file of this host's system: refused, not read.
    symlinkSync('/etc/passwd', join(tree, '.git', 'peek'));
    const out = await runConfinedScan({ args: ['--staged'], cwd: tree, indexFile: join(tree, '.git', 'peek') }, hidden);
    assert.deepEqual([out.exit, out.stdout], [2, '']);
    assert.match(out.stderr, /indexFile ".*\/\.git\/peek" leads out of the run's git directories/);
    // Control: named to git as it was, it prints the file's first bytes ("root").
    const peek = confinedScanCommand({ args: ['--staged'], cwd: tree, indexFile: join(tree, '.git', 'peek') }, hidden, t.dir, thisCli());
    const peeked = await runCapped(peek as Exclude<typeof peek, string>, { timeoutMs: 60_000, maxBytes: 1 << 20 });
    assert.match(peeked.stderr, /bad signature 0x746f6f72/);
  });

  test("(review, round 36) git's errors about files of the run's git directory the agent linked to this host's files (packed-refs, alternates; unlisted: shallow) are not given to the agent, only kept for the audit; control: git's own error quotes the file", async () => {
    const { tree, ctx } = setup('quoted');
    writeFile(join(tree, 'a.txt'), 'a\n');
    assert.equal(git(tree, 'add', 'a.txt').status, 0);
    assert.equal(git(tree, 'commit', '-qm', 'a').status, 0);
    const range = ['--range', `${'0'.repeat(40)}..${git(tree, 'rev-parse', 'HEAD').stdout.trim()}`];
    // An object the index names that is nowhere: git looks for it in the alternates.
    assert.equal(git(tree, 'update-index', '--add', '--cacheinfo', `100644,${'12'.repeat(20)},missing.txt`).status, 0);
    const quote = /:x:\d+:\d+:/;
    for (const [file, args] of [['packed-refs', range], [join('objects', 'info', 'alternates'), ['--staged']], ['shallow', range]] as const) {
      const at = join(tree, '.git', file);
      symlinkSync('/etc/passwd', at);
      try {
        const r = await runConfinedScan({ args: [...args], cwd: tree }, ctx);
        assert.notEqual(r.exit, 0, file);
        assert.doesNotMatch(r.stdout + r.stderr, quote, file);
        assert.match(r.stderr, /^stashbase secret scan: the scan could not run cleanly \(exit \d+\); what it said is in the run's audit log, not here\n$/, file);
        assert.match(r.withheld ?? '', quote, file);
        assert.doesNotMatch(encodeScanAnswer(r), quote, file);
        // Control: what the scan said, as git said it.
        const cmd = confinedScanCommand({ args: [...args], cwd: tree }, ctx, t.dir, thisCli());
        const raw = await runCapped(cmd as Exclude<typeof cmd, string>, { timeoutMs: 60_000, maxBytes: 1 << 20 });
        assert.match(raw.stderr, quote, file);
      } finally {
        rmSync(at);
      }
    }
    // A scan that runs cleanly keeps its summary.
    assert.equal(git(tree, 'rm', '-q', '--cached', 'missing.txt').status, 0);
    const clean = await runConfinedScan({ args: ['--staged'], cwd: tree }, ctx);
    assert.deepEqual([clean.exit, clean.stderr, clean.withheld], [0, 'stashbase scan: no secrets found (0 changed files scanned)\n', undefined]);
  });

  test("the sandbox's own view of .git (a native run's copy of the index): the scan reads the agent's index, not the real one", async () => {
    const { tree } = setup('view');
    writeFile(join(tree, 'staged.ini'), `aws_access_key_id = ${AWS_ID}\n`);
    assert.equal(git(tree, 'add', 'staged.ini').status, 0);
    // The run's view: HEAD, config and the agent's index copied; objects and refs the real ones.
    const view = join(t.dir, 'views-git');
    mkdirSync(view);
    for (const f of ['HEAD', 'config', 'index']) writeFileSync(join(view, f), readFileSync(join(tree, '.git', f)));
    for (const d of ['objects', 'refs']) mkdirSync(join(view, d));
    assert.equal(git(tree, 'rm', '-q', '--cached', 'staged.ini').status, 0); // the real index: nothing staged
    const g = join(tree, '.git');
    const mounts = [{ host: tree, sandbox: tree }, { host: view, sandbox: g }, { host: join(g, 'objects'), sandbox: join(g, 'objects') }, { host: join(g, 'refs'), sandbox: join(g, 'refs') }];
    const r = await runConfinedScan({ args: ['--staged'], cwd: tree, indexFile: join(g, 'index') }, { workTree: tree, mounts, profile, env: process.env });
    assert.equal(r.exit, 1, r.stderr);
    assert.match(r.stdout, /^staged\.ini:1 aws\/AWSAccessKeyID AKIA\*+\n$/);
    const real = await runConfinedScan({ args: ['--staged'], cwd: tree }, { workTree: tree, mounts: [{ host: tree, sandbox: tree }], profile, env: process.env });
    assert.equal(real.exit, 0, real.stderr);
  });

  test('a profile without secret_scan, and arguments beyond the allowed ones, are refused', async () => {
    const { tree, ctx } = setup('refused');
    assert.match((await runConfinedScan({ args: ['--staged'], cwd: tree }, { ...ctx, profile: { ...profile, allowHooks: [] } })).stderr, /does not allow it/);
    const r = await runConfinedScan({ args: ['--staged', '--secret-env', 'HOME'], cwd: tree }, ctx);
    assert.equal(r.exit, 2);
    assert.match(r.stderr, /refused: "--secret-env" is not allowed/);
  });
});
