// The secret scan's git hooks inside real runs, native (bwrap) and Docker: the
// hooks are installed with `stashbase scan install` before the run, the agent
// commits and pushes, and the run's proxy scans on the host, confined. Each
// refusal has its control (a clean commit passes, --no-verify skips the hook).
// Then the endpoint itself: a wrong token, a run whose profile lacks the
// entry, and what the installed hook does there.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cli, needs, tempHome, writeFile } from '../helpers.js';
import { auditOf, type BackendName, POST_FN, PROXY_BASE, runSteps, steps } from '../hook-runs.js';

// Built at run time, so that neither this file nor a run's command line holds a whole key.
const AWS_HALVES = ['AKIA', 'ZXCVBNMASDFGHJKL'] as const;
const AWS_ID = AWS_HALVES.join('');
const REAL = 'dpl_' + 'r3alV4lue9x8c7v6b5n4';
const SECRET = '[secrets.DEPLOY_TOKEN]\nsource = "DEPLOY_SRC"\nhosts = ["api.example.test"]\n';

const BACKENDS: Array<[BackendName, { skip?: string }]> = [['native', needs('bwrap', 'git')], ['docker', needs('docker', 'git')]];

for (const [backend, skip] of BACKENDS) {
  describe(`secret scan hooks inside a ${backend} run`, skip, () => {
    const t = tempHome();
    const env = { ...t.env, DEPLOY_SRC: REAL };
    const git = (dir: string, ...args: string[]) => spawnSync('git', ['-c', 'user.name=me', '-c', 'user.email=me@x', '-C', dir, ...args], { env, encoding: 'utf8' });
    let n = 0;
    /** A repository with one commit, the bound secret's real value in a file of its tree, and the hooks installed. */
    const project = async () => {
      const dir = join(t.home, `proj${++n}`);
      writeFile(join(dir, 'bound.js'), `const token = "${REAL}";\n`);
      assert.equal(git(dir, 'init', '-q', '-b', 'main').status, 0);
      assert.equal(git(dir, 'commit', '-q', '--allow-empty', '-m', 'init').status, 0);
      // A bare repository in the tree to push to, at the first commit (pushed before the hooks exist).
      assert.equal(git(dir, 'init', '-q', '--bare', 'remote.git').status, 0);
      assert.equal(git(dir, 'push', '-q', 'remote.git', 'main').status, 0);
      const r = await cli(['scan', 'install'], { env, cwd: dir });
      assert.equal(r.code, 0, r.stderr);
      return dir;
    };
    const run = (profile: string, cwd: string, script: string) => runSteps({ backend, profile, env, cwd, script });
    const scanEvents = async (session: string) => (await auditOf(session, env)).filter((e) => e.type === 'hook');

    before(() => {
      // Docker forwards the host's git identity from here; the native sandbox reads it.
      writeFile(join(t.home, '.gitconfig'), '[user]\n\tname = Agent\n\temail = agent@example.test\n');
      writeFile(join(t.sbHome, 'agents', 'hs.toml'), `allow_hooks = ["secret_scan"]\n${SECRET}`);
      writeFile(join(t.sbHome, 'agents', 'plain.toml'), SECRET);
      writeFile(join(t.sbHome, 'agents', 'deps-only.toml'), `allow_hooks = ["dependency_check"]\n${SECRET}`);
    });
    after(() => t.cleanup());

    test('commits of an AWS key, a private key block and a bound secret are refused with the finding masked; a clean one passes; --no-verify skips; a push of the range is refused', async () => {
      const dir = await project();
      const { privateKey } = generateKeyPairSync('ed25519', { privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
      const keyBody = privateKey.split('\n')[1] as string;
      const r = await run('hs', dir, steps([
        ['aws', `printf 'aws_access_key_id = %s%s\\n' ${AWS_HALVES.join(' ')} > aws.ini && git add aws.ini && git commit -qm aws`],
        ['key', `git reset -q; mkdir -p deploy; cat > deploy/id.txt <<'EOF'\n# deploy key\n${privateKey}EOF\ngit add deploy/id.txt && git commit -qm key`],
        ['bound', 'git reset -q; git add bound.js && git commit -qm bound'],
        ['clean', 'git reset -q; echo "# hello" > README.md && git add README.md && git commit -qm clean'],
        ['no-verify', 'git add aws.ini && git commit -qm skipped --no-verify'],
        ['push', 'git push -q remote.git main'],
        ['push-clean', 'git push -q remote.git main~1:refs/heads/clean'],
        ['log', 'git log --format=%s'],
      ]));
      assert.equal(r.code, 0, r.stderr);
      const s = r.steps;
      assert.deepEqual(Object.fromEntries(Object.entries(s).map(([k, v]) => [k, v.rc])), {
        aws: 1, key: 1, bound: 1, clean: 0, 'no-verify': 0, push: 1, 'push-clean': 0, log: 0,
      }, JSON.stringify(s, null, 1));
      assert.match(s.aws!.out, /^aws\.ini:1 aws\/AWSAccessKeyID AKIA\*{16}$/m);
      assert.match(s.key!.out, /^deploy\/id\.txt:2 private-key -----BEGIN PRIVATE KEY-----$/m);
      assert.match(s.bound!.out, /^bound\.js:1 bound-secret:DEPLOY_TOKEN \*+$/m);
      assert.match(s.clean!.out, /no secrets found \(1 changed file scanned\)/);
      // --no-verify: git ran no hook, so nothing was scanned.
      assert.doesNotMatch(s['no-verify']!.out, /stashbase/);
      assert.match(s.push!.out, /^aws\.ini:1 aws\/AWSAccessKeyID AKIA\*{16} \(commit [0-9a-f]{12}\)$/m);
      assert.match(s.push!.out, /failed to push some refs/);
      assert.equal(s.log!.out, 'skipped\nclean\ninit\n');
      // Masked everywhere: the output holds no key, and neither does the audit log.
      const audit = JSON.stringify(await auditOf(r.session, env));
      for (const text of [r.stdout + r.stderr, audit]) {
        assert.ok(!text.includes(AWS_ID) && !text.includes(REAL), 'a real value was shown');
      }
      assert.ok(!r.stdout.includes(keyBody));
      // One scan request per hook that ran, in order; the push asked for its range.
      const events = await scanEvents(r.session);
      const sha = (rev: string) => git(dir, 'rev-parse', rev).stdout.trim();
      assert.deepEqual(events.map((e) => [e.decision, e.args]), [
        ['found', ['--staged']], ['found', ['--staged']], ['found', ['--staged']], ['clean', ['--staged']],
        ['found', ['--range', `${sha('main~2')}..${sha('main')}`]], ['clean', ['--range', `${'0'.repeat(40)}..${sha('main~1')}`]],
      ]);
      // The commits the hook let through are the host's too.
      assert.equal(git(dir, 'log', '--format=%s').stdout, 'skipped\nclean\ninit\n');
    });

    test('the agent points the scan outside the tree (a staged symlink, a .git redirect, a symlinked folder): nothing of it is read; unconfined, on the host, each is (the controls)', async () => {
      const dir = await project();
      const outside = writeFile(join(t.home, 'outside-secret.txt'), `aws_access_key_id = ${AWS_ID}\n`);
      const other = join(t.home, `other${n}`);
      writeFile(join(other, 'creds.ini'), `aws_access_key_id = ${AWS_ID}\n`);
      assert.equal(git(other, 'init', '-q').status, 0);
      assert.equal(git(other, 'add', 'creds.ini').status, 0);
      const r = await run('hs', dir, `${POST_FN}\n${steps([
        ['symlink', `ln -s '${outside}' leak.txt && git add leak.txt && git commit -qm leak`],
        ['redirect', `mkdir sub && echo 'gitdir: ${other}/.git' > sub/.git && post /scan "{\\"args\\": [\\"--staged\\"], \\"cwd\\": \\"$PWD/sub\\"}"`],
        ['folder', `ln -s '${other}' elsewhere && post /scan "{\\"args\\": [\\"--staged\\"], \\"cwd\\": \\"$PWD/elsewhere\\"}"`],
      ])}`);
      assert.equal(r.code, 0, r.stderr);
      const s = r.steps;
      // The staged symlink is its target's name to git: nothing found, the commit goes through.
      assert.equal(s.symlink!.rc, 0, s.symlink!.out);
      assert.match(s.symlink!.out, /no secrets found/);
      // The redirect and the folder lead nowhere in the confined scan: it fails closed, and says nothing of what is there.
      for (const k of ['redirect', 'folder'] as const) {
        assert.match(s[k]!.out, /^200\n\{"exit":[12],/, s[k]!.out);
        assert.doesNotMatch(s[k]!.out, /AKIA|creds\.ini/);
      }
      // What the scan said is not the agent's (review, round 36): one line of stashbase's; what it said is in the audit.
      for (const k of ['redirect', 'folder'] as const) assert.match(s[k]!.out, /"stderr":"stashbase secret scan: the scan could not run cleanly \(exit \d\); what it said is in the run's audit log, not here\\n"\}/);
      const withheld = (await scanEvents(r.session)).map((e) => String(e.withheld ?? '')).join('\n');
      assert.match(withheld, /not a git repository/);
      assert.match(withheld, /Can't chdir to .*elsewhere: No such file or directory/);
      // The run's end moved the redirect aside (a pointer to a git directory outside the tree); the control plants it again.
      assert.equal(readFileSync(join(dir, 'sub', '.git.stashbase-quarantine'), 'utf8'), `gitdir: ${other}/.git\n`, 'the redirect was really planted, and moved aside');
      writeFileSync(join(dir, 'sub', '.git'), `gitdir: ${other}/.git\n`);
      // The controls: the same reads, unconfined on the host, find the key.
      const direct = await cli(['scan', 'leak.txt'], { env, cwd: dir });
      assert.equal(direct.code, 1);
      assert.match(direct.stdout, /^leak\.txt:1 aws\/AWSAccessKeyID AKIA\*+$/m);
      for (const sub of ['sub', 'elsewhere']) {
        const c = await cli(['scan', '--staged'], { env, cwd: join(dir, sub) });
        assert.equal(c.code, 1, c.stderr);
        assert.match(c.stdout, /^creds\.ini:1 aws\/AWSAccessKeyID AKIA\*+$/m);
      }
    });

    test("the agent's git config cannot make the scan's git run a command (a partial clone's promisor remote with core.sshCommand), and no form of a real value comes back", async () => {
      const dir = await project();
      // A nested repository the agent owns: a missing blob in the index makes git fetch it lazily, through the ssh command it names.
      const plant = [
        'git init -q nested && cd nested',
        'git update-index --add --cacheinfo 100644,1111111111111111111111111111111111111111,x.txt',
        'git config core.repositoryformatversion 1 && git config extensions.partialClone origin',
        'git config remote.origin.url ssh://h/x && git config remote.origin.promisor true && git config remote.origin.partialclonefilter blob:none',
        // A per-protocol allow outranks a -c protocol.allow=never: only the environment's GIT_ALLOW_PROTOCOL does not yield to it.
        'git config protocol.ssh.allow always',
        // Late, so that its lines come last (an error keeps only git's last lines).
        `git config core.sshCommand 'sh -c "(sleep 1; echo RAN-SSH; echo LEAK=\$DEPLOY_TOKEN; printf %s \"\$DEPLOY_TOKEN\" | base64) >&2 </dev/null & exit 1" --'`,
        'cd ..',
      ].join('\n');
      const r = await run('hs', dir, `${POST_FN}\n${plant}\n${steps([['scan', `post /scan '{"args": ["--staged"], "cwd": "'"$PWD/nested"'"}'`]])}`);
      assert.equal(r.code, 0, r.stderr);
      const out = r.steps.scan!.out;
      assert.match(out, /^200\n\{"exit":[1-9]/, out);
      assert.doesNotMatch(out, /RAN-SSH/, 'git ran no command of the agent\'s config');
      for (const form of [REAL, Buffer.from(REAL).toString('base64').slice(0, 20), 'DEPLOY_SRC']) assert.equal(out.includes(form), false, `${form} in ${out}`);
      // The run's end unplugged the nested repository; put back, your own git there runs the command (the control).
      assert.match(r.stderr, /nested repository at .*nested, in a subfolder, .*core\.sshcommand/);
      spawnSync('mv', [join(dir, 'nested', '.git.stashbase-quarantine'), join(dir, 'nested', '.git')]);
      spawnSync('mv', [join(dir, 'nested', '.git', 'HEAD.stashbase-quarantine'), join(dir, 'nested', '.git', 'HEAD')]);
      const control = spawnSync('git', ['-C', join(dir, 'nested'), 'diff', '--cached'], { env, encoding: 'utf8' });
      assert.match(control.stderr, /RAN-SSH\n/);
    });

    test('the endpoint: a wrong or missing token is refused (403), another hook than the profile allows does not exist (404), GET is not a scan', async () => {
      const dir = await project();
      const body = `{"args": ["--staged"], "cwd": "${dir}"}`;
      const r = await run('hs', dir, `${POST_FN}\n${steps([
        ['wrong', `post /scan '${body}' wrong-token`],
        ['none', `curl -sS --noproxy '*' -w '\\n%{http_code}\\n' -X POST --data-binary '${body}' "$STASHBASE_HOOK_URL/scan"`],
        ['other', `post /agent-hooks '{}'`],
        ['report', `post /agent-hooks/report '{"events": []}'`],
        ['get', `curl -sS --noproxy '*' -w '\\n%{http_code}\\n' -H "Authorization: Bearer $STASHBASE_HOOK_TOKEN" "$STASHBASE_HOOK_URL/scan"`],
        ['right', `post /scan '${body}'`],
      ])}`);
      assert.equal(r.code, 0, r.stderr);
      const s = r.steps;
      assert.equal(s.wrong!.out, '403\nstashbase: wrong hook token for this run\n\n');
      assert.equal(s.none!.out, 'stashbase: wrong hook token for this run\n\n403\n');
      for (const k of ['other', 'report'] as const) {
        assert.match(s[k]!.out, /^404\nstashbase: this run offers no \/agent-hooks(\/report)? endpoint \(allow_hooks = \["dependency_check"\] is not in its profile\)\n/);
      }
      assert.equal(s.get!.out, 'stashbase: POST only\n\n405\n');
      assert.match(s.right!.out, /^200\n\{"exit":0,/);
      const events = await auditOf(r.session, env);
      assert.deepEqual(events.filter((e) => e.type === 'hook').map((e) => [e.path, e.decision, e.status ?? null]), [
        ['/scan', 'deny', 403], ['/scan', 'deny', 403], ['/agent-hooks', 'deny', 404], ['/agent-hooks/report', 'deny', 404], ['/scan', 'clean', null],
      ]);
    });

    test('a run whose profile has no allow_hooks: no variables, every hook path answers 404 with the reason', async () => {
      const dir = await project();
      const r = await run('plain', dir, `${PROXY_BASE}\n${steps([
        ['vars', 'env | grep -c "^STASHBASE_HOOK_" || true'],
        ['scan', `curl -sS --noproxy '*' -w '\\n%{http_code}\\n' -X POST -d '{}' "$SB_PROXY/__stashbase/hooks/scan"`],
        ['agent-hooks', `curl -sS --noproxy '*' -w '\\n%{http_code}\\n' -X POST -d '{}' "$SB_PROXY/__stashbase/hooks/agent-hooks"`],
      ])}`);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.steps.vars!.out, '0\n');
      for (const k of ['scan', 'agent-hooks']) assert.equal(r.steps[k]!.out, 'stashbase: this run offers no hook endpoints: its profile sets no allow_hooks\n\n404\n');
    });

    if (backend === 'docker') {
      test('without the entry the installed hook says why it cannot scan, and blocks even a clean commit', async () => {
        const dir = await project();
        const script = steps([['commit', 'echo "# hi" > README.md && git add README.md && git commit -qm clean']]);
        // No hooks at all: only the stand-in stashbase, which says why and blocks.
        const none = await run('plain', dir, script);
        assert.ok(none.steps.commit, `the run reported no step (exit ${none.code}): ${none.stderr}`);
        assert.equal(none.steps.commit!.rc, 1);
        assert.match(none.steps.commit!.out, /stashbase \(sandbox stand-in\): cannot scan: the secret scan runs on the host, and only in a run whose profile sets allow_hooks = \["secret_scan"\]/);
        // Only the dependency hook: the stand-in is there, the scan endpoint is not, and the hook shows the proxy's reason.
        const deps = await run('deps-only', dir, script);
        assert.ok(deps.steps.commit, `the run reported no step (exit ${deps.code}): ${deps.stderr}`);
        assert.equal(deps.steps.commit!.rc, 1);
        assert.match(deps.steps.commit!.out, /cannot scan: the stashbase proxy answered HTTP 404\nstashbase: this run offers no \/scan endpoint \(allow_hooks = \["secret_scan"\] is not in its profile\)/);
        assert.equal(git(dir, 'log', '--format=%s').stdout, 'init\n');
      });
    } else {
      test('without the entry the hook finds the real stashbase in the sandbox and scans there: an AWS key is refused, but a bound secret passes (its real value is not in the sandbox)', async () => {
        const dir = await project();
        const r = await run('plain', dir, steps([
          ['aws', `printf 'id = %s%s\\n' ${AWS_HALVES.join(' ')} > aws.ini && git add aws.ini && git commit -qm aws`],
          ['bound', 'git reset -q; git add bound.js && git commit -qm bound'],
        ]));
        assert.equal(r.steps.aws!.rc, 1);
        assert.match(r.steps.aws!.out, /^aws\.ini:1 aws\/AWSAccessKeyID AKIA\*+$/m);
        assert.equal(r.steps.bound!.rc, 0, r.steps.bound!.out);
        assert.match(r.steps.bound!.out, /no secrets found/);
        assert.equal(git(dir, 'log', '--format=%s').stdout, 'bound\ninit\n');
        assert.deepEqual((await scanEvents(r.session)), [], 'nothing went to the proxy');
        // Hooks installed with --profile cannot load it inside (the sandbox hides STASHBASE_HOME): every commit is refused.
        assert.equal((await cli(['scan', 'install', '--profile', 'plain'], { env, cwd: dir })).code, 0);
        const p = await run('plain', dir, steps([['clean', 'echo "# hi" > README.md && git add README.md && git commit -qm clean']]));
        assert.equal(p.steps.clean!.rc, 1);
        assert.match(p.steps.clean!.out, /profile "plain" not found/);
      });
    }
  });
}
