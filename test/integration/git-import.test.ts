// The run's own git directory and the import (lib/git/), attacked with real
// git on both backends: each attack of the issue, and one member of each
// class it does not name, with its control outside the sandbox, where the
// same script does its harm; and ordinary work, which comes back whole.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { deflateSync } from 'node:zlib';
import { after, describe, test } from 'node:test';
import { BIN, cli, needs, writeFile } from '../helpers.js';
import { repoHome } from '../worktree-setup.js';

const WORKTREE = /^Worktree: \S+\/\.stashbase\/worktrees\/([a-z]+-[a-z]+-[a-z]+) \(branch stashbase\/\1\)$/m;

/** A copy of the repository, for a control run of the same script outside any sandbox. */
function copyOf(root: string, name: string): string {
  const copy = `${root}-${name}`;
  spawnSync('cp', ['-a', root, copy]);
  return copy;
}

/**
 * A valid pack that is slow to index: a blob of `mib` MiB of zeros and
 * `deltas` objects each copying all of it (a few hundred KB on disk, a second
 * of git index-pack per GiB it inflates).
 */
function slowPack(file: string, mib: number, deltas: number): void {
  const header = (type: number, size: number) => {
    const out = [];
    let b = (type << 4) | (size & 0x0f);
    for (size = Math.floor(size / 16); size > 0; size = Math.floor(size / 128)) {
      out.push(b | 0x80);
      b = size & 0x7f;
    }
    out.push(b);
    return Buffer.from(out);
  };
  const varint = (n: number) => {
    const out = [];
    do {
      let b = n & 0x7f;
      n = Math.floor(n / 128);
      if (n > 0) b |= 0x80;
      out.push(b);
    } while (n > 0);
    return Buffer.from(out);
  };
  const n = mib << 20;
  const zeros = Buffer.alloc(n);
  const oid = createHash('sha1').update(`blob ${n}\0`).update(zeros).digest();
  const count = Buffer.alloc(4);
  count.writeUInt32BE(1 + deltas);
  const parts = [Buffer.from('PACK'), Buffer.from([0, 0, 0, 2]), count, header(3, n), deflateSync(zeros, { level: 1 })];
  const chunk = 0x800000;
  for (let i = 0; i < deltas; i++) {
    const ops = [varint(n), varint(n + 2)];
    for (let off = 0; off < n; off += chunk) ops.push(Buffer.from([0xff, off & 0xff, (off >> 8) & 0xff, (off >> 16) & 0xff, (off >>> 24) & 0xff, chunk & 0xff, (chunk >> 8) & 0xff, (chunk >> 16) & 0xff]));
    ops.push(Buffer.from([2, i & 0xff, (i >> 8) & 0xff]));
    const delta = Buffer.concat(ops);
    parts.push(header(7, delta.length), oid, deflateSync(delta));
  }
  const body = Buffer.concat(parts);
  writeFileSync(file, Buffer.concat([body, createHash('sha1').update(body).digest()]));
}

const outside = (script: string, cwd: string, env: NodeJS.ProcessEnv, timeout = 10_000) => spawnSync('bash', ['-c', script], { cwd, env, encoding: 'utf8', timeout });

for (const backend of ['native', 'docker'] as const) {
  describe(`the run's own git directory and its import, ${backend} backend (real git)`, needs('git', backend === 'native' ? 'bwrap' : 'docker'), () => {
    const r = repoHome();
    after(() => r.cleanup());
    const flags = ['--docker-sandbox', backend === 'docker' ? 'true' : 'false'];
    const run = (script: string, o: { worktree?: boolean; env?: Record<string, string> } = {}) =>
      cli(['agent', 'run', ...flags, ...(o.worktree ? ['--worktree'] : []), '--', 'env', ...Object.entries(o.env ?? {}).map(([k, v]) => `${k}=${v}`), 'bash', '-c', script], { env: r.env, cwd: r.root, timeoutMs: 120_000 });
    const rc = join(r.home, '.bashrc');
    const refs = () => r.git(['for-each-ref', '--format=%(refname) %(objectname)']);
    const fsckClean = () => r.git(['fsck', '--no-progress', '--no-dangling']) === '';

    test("(review, round 34) a hook of yours linked to a script of the tree (.git/hooks/pre-commit -> ../../scripts/pre-commit, git's common set-up) no longer refuses a run: the agent's commit runs it in the run and comes back, the script read-only there; a hard link there (unlisted) still refuses one, its other name the agent's to write; control: outside, the script is written and your next commit runs it", async () => {
      const marker = join(r.home, `PWNED-hooklink-${backend}`);
      const pre = writeFile(join(r.root, 'scripts', 'pre-commit'), '#!/bin/sh\necho hook-ran\n');
      spawnSync('chmod', ['+x', pre]);
      assert.equal(outside('git add scripts && git -c user.name=u -c user.email=u@x commit -qm scripts && ln -s ../../scripts/pre-commit .git/hooks/pre-commit', r.root, r.env).status, 0);
      try {
        const write = `echo 'touch ${marker}' >> scripts/pre-commit || echo refused`;
        const res = await run(`${write}; git -c user.name=a -c user.email=a@x commit -q --allow-empty -m agent-hooked && echo committed`);
        assert.equal(res.code, 0, res.stderr);
        assert.equal(res.stdout, 'refused\ncommitted\n');
        assert.match(res.stderr, /^hook-ran$/m);
        assert.equal(r.git(['log', '-1', '--format=%s']), 'agent-hooked\n');
        assert.equal(readFileSync(pre, 'utf8'), '#!/bin/sh\necho hook-ran\n');
        r.git(['-c', 'user.name=u', '-c', 'user.email=u@x', 'commit', '-q', '--allow-empty', '-m', 'mine']);
        assert.equal(existsSync(marker), false);
        // A hard link in its place: the run is refused before anything runs.
        spawnSync('sh', ['-c', 'rm .git/hooks/pre-commit && ln scripts/pre-commit .git/hooks/pre-commit'], { cwd: r.root });
        const hard = await run(`${write}; echo ran`);
        assert.equal(hard.code, 4, hard.stderr);
        assert.equal(hard.stdout, '');
        assert.match(hard.stderr, /\.git holds hooks\/pre-commit \(a hard link: the same file has another name\), through which the run's import would write elsewhere/);
        // (Review of that change) a link of another name there, to a folder of scripts your hook runs: refused as before.
        spawnSync('sh', ['-c', 'rm .git/hooks/pre-commit && mkdir -p scripts/pre-commit.d && ln -s ../../scripts/pre-commit.d .git/hooks/pre-commit.d'], { cwd: r.root });
        const folder = await run('echo ran');
        assert.equal(folder.code, 4, folder.stderr);
        assert.match(folder.stderr, /\.git holds hooks\/pre-commit\.d \(a symbolic link\), through which the run's import would write elsewhere/);
        spawnSync('sh', ['-c', 'rm -rf .git/hooks/pre-commit.d scripts/pre-commit.d'], { cwd: r.root });
        // Control: outside, the write lands and your next commit runs it.
        const ctl = copyOf(r.root, 'hooklink-control');
        spawnSync('sh', ['-c', 'rm -f .git/hooks/pre-commit && ln -s ../../scripts/pre-commit .git/hooks/pre-commit'], { cwd: ctl });
        assert.equal(outside(write, ctl, r.env).stdout, '');
        assert.equal(outside('git -c user.name=u -c user.email=u@x commit -q --allow-empty -m c', ctl, r.env).status, 0);
        assert.equal(existsSync(marker), true);
        spawnSync('rm', ['-rf', ctl, marker]);
      } finally {
        spawnSync('rm', ['-f', join(r.root, '.git', 'hooks', 'pre-commit')]);
      }
    });

    test("(review, round 34) your git directory's hooks folder a link into the tree (.git/hooks -> ../githooks): the folder it leads to is read-only in the run, as a core.hooksPath folder is; control: outside, the agent's hook is written and your next commit runs it", async () => {
      const marker = join(r.home, `PWNED-hooksdir-${backend}`);
      const hooks = join(r.root, '.git', 'hooks');
      spawnSync('sh', ['-c', 'mv .git/hooks .git/hooks.mine && mkdir githooks && ln -s ../githooks .git/hooks'], { cwd: r.root });
      try {
        const plant = `printf '#!/bin/sh\\ntouch ${marker}\\n' > githooks/pre-commit && chmod +x githooks/pre-commit && echo planted || echo refused`;
        const res = await run(plant);
        assert.equal(res.code, 0, res.stderr);
        assert.equal(res.stdout, 'refused\n');
        assert.equal(existsSync(join(r.root, 'githooks', 'pre-commit')), false);
        r.git(['-c', 'user.name=u', '-c', 'user.email=u@x', 'commit', '-q', '--allow-empty', '-m', 'mine']);
        assert.equal(existsSync(marker), false);
        // Control: outside, the hook is written, and your commit runs it.
        const ctl = copyOf(r.root, 'hooksdir-control');
        assert.equal(outside(plant, ctl, r.env).stdout, 'planted\n');
        assert.equal(outside('git -c user.name=u -c user.email=u@x commit -q --allow-empty -m c', ctl, r.env).status, 0);
        assert.equal(existsSync(marker), true);
        spawnSync('rm', ['-rf', ctl, marker]);
      } finally {
        spawnSync('sh', ['-c', 'rm -f .git/hooks && rm -rf githooks && mv .git/hooks.mine .git/hooks'], { cwd: r.root });
        assert.equal(lstatSync(hooks).isDirectory(), true);
      }
    });

    test('links in the reflog folders (and, unnamed, COMMIT_EDITMSG): your own commit and cherry-pick afterwards write nothing through them', async () => {
      const links = [
        'ln -sf "$HOSTRC" .git/logs/HEAD',
        'mkdir -p .git/logs/refs/heads && ln -sf "$HOSTRC" .git/logs/refs/heads/dev',
        // Not in the issue: git writes COMMIT_EDITMSG with fopen, through a link, on your next commit.
        'ln -sf "$HOSTRC" .git/COMMIT_EDITMSG',
      ].join('\n');
      // The control: outside, your next commit and cherry-pick write through the links.
      const ctl = copyOf(r.root, 'links-control');
      const ctlRc = join(r.dir, 'control-rc');
      writeFileSync(ctlRc, '# mine\n');
      assert.equal(outside(`${links}\ngit commit -q --allow-empty -m 'echo pwned' && git checkout -q dev && git cherry-pick --allow-empty main >/dev/null`, ctl, { ...r.env, HOSTRC: ctlRc }).status, 0);
      assert.notEqual(readFileSync(ctlRc, 'utf8'), '# mine\n', 'outside, your git writes through the links');

      writeFileSync(rc, '# mine\n');
      // The agent's own commits first: its links reach a read-only ~/.bashrc inside the native sandbox.
      const agent = `echo more >> a.txt && git commit -qam 'agent: $(touch pwned)' && git branch -q -D release\n${links}\necho done`;
      const res = await run(agent, { env: { HOSTRC: rc } });
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout, 'done\n');
      assert.match(res.stderr, /the agent deleted refs\/heads\/release \(at [0-9a-f]{12}\): not taken \(deletions are not taken\)/);
      for (const f of ['logs/HEAD', 'COMMIT_EDITMSG']) assert.equal(lstatSync(join(r.root, '.git', f), { throwIfNoEntry: false })?.isSymbolicLink() ?? false, false, f);
      r.git(['commit', '-q', '--allow-empty', '-m', 'mine']);
      r.git(['checkout', '-q', 'dev']);
      r.git(['cherry-pick', '--allow-empty', 'main~1']);
      r.git(['checkout', '-q', 'main']);
      assert.equal(readFileSync(rc, 'utf8'), '# mine\n', 'your ~/.bashrc is as it was');
      assert.equal(r.git(['log', '-1', '--format=%s', 'main~1']).trim(), 'agent: $(touch pwned)', "the agent's commit came in");
      assert.ok(fsckClean());
    });

    test("(review, round 28e) a .gitmodules committed, then removed from the tree and the index (git submodule reads it from HEAD), and, unlisted, an .npmrc committed without ever being in the tree: the commits come back, the files named with the command to review them; control: after a git reset, git submodule init registers the agent's URL", async () => {
      const agent = [
        "printf '[submodule \"lib\"]\\n\\tpath = lib\\n\\turl = git://127.0.0.1:9/evil.git\\n' > .gitmodules",
        'git add .gitmodules && git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),lib',
        "git update-index --add --cacheinfo 100644,$(printf 'script-shell=/bin/evil\\n' | git hash-object -w --stdin),.npmrc",
        "git commit -qm 'agent: submodule' && rm .gitmodules && git rm -q --cached .gitmodules && echo done",
      ].join(' && ');
      const res = await run(agent);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout, 'done\n');
      const line = res.stderr.split('\n').find((l) => l.includes("the agent's commits on refs/heads/main change files your tools run or obey")) ?? '';
      // (Round 30) the submodule's commit named too.
      assert.match(line, /\(\.gitmodules, \.npmrc, lib\): the run kept them as they were in your tree, but git puts the commits' version there on a checkout, reset, restore or stash of them, and git submodule reads \.gitmodules from HEAD; review them \(git diff [0-9a-f]{40} [0-9a-f]{40} -- <file>\) before you do/, res.stderr);
      assert.equal(r.git(['log', '-1', '--format=%s', 'main']).trim(), 'agent: submodule', "the agent's commit came in");
      // (Round 28g) The index did not come back; yours keeps the three as your working tree holds them (none of them), said.
      assert.match(res.stderr, /your index \(\S+\/index\) keeps the old version of \.gitmodules, \.npmrc, lib, where your working tree does not hold the commits' version \(a file the run kept from the agent, one of yours, a submodule's commit\), while HEAD has the agent's: git status shows them staged in reverse, and your next git commit takes them back to the old version unless you stage the commits' version after reviewing it \(git diff HEAD -- <file>\)/);
      assert.equal(r.git(['diff-index', '--cached', '--name-only', 'HEAD']), '.gitmodules\n.npmrc\nlib\n', 'your index is HEAD\'s but for those');
      spawnSync('git', ['submodule', 'init'], { cwd: r.root, env: r.env, encoding: 'utf8' });
      assert.equal(spawnSync('git', ['config', '--get', 'submodule.lib.url'], { cwd: r.root, env: r.env, encoding: 'utf8' }).stdout, '', 'git submodule init registers nothing');
      // The control: after your git reset (the index made HEAD's), git submodule init takes the agent's URL.
      r.git(['reset', '-q']);
      spawnSync('git', ['submodule', 'init'], { cwd: r.root, env: r.env, encoding: 'utf8' });
      assert.match(spawnSync('git', ['config', '--get', 'submodule.lib.url'], { cwd: r.root, env: r.env, encoding: 'utf8' }).stdout, /127\.0\.0\.1:9\/evil\.git/);
      r.git(['config', '--remove-section', 'submodule.lib']);
      r.git(['reset', '-q', '--hard', 'main~1']);
    });

    test("(round 28g, continued) the agent's commit stages a read-only config other than the tree holds it: its index does not come back, yours follows HEAD for every file the commit changed but that config, which stays as your tree holds it; unlisted: a mode flip of a tracked script", async () => {
      const start = r.git(['rev-parse', 'main']).trim();
      writeFileSync(join(r.root, '.npmrc'), 'fund=false\n');
      writeFileSync(join(r.root, 'run.sh'), 'echo hi\n');
      r.git(['add', '.npmrc', 'run.sh']);
      r.git(['commit', '-qm', 'mine: npmrc']);
      const agent = [
        'echo work >> a.txt && echo new > new.txt && git add a.txt new.txt',
        "git update-index --cacheinfo 100644,$(printf 'script-shell=/tmp/evil\\n' | git hash-object -w --stdin),.npmrc",
        'git update-index --chmod=+x run.sh',
        "git commit -qm 'agent: work' && echo done",
      ].join(' && ');
      const res = await run(agent);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout, 'done\n');
      assert.equal(r.git(['log', '-1', '--format=%s', 'main']).trim(), 'agent: work', "the agent's commit came in");
      assert.match(res.stderr, /the sandbox's index stages \.npmrc/);
      assert.match(res.stderr, /your index \(\S+\/index\) keeps the old version of \.npmrc, run\.sh, where your working tree does not hold the commits' version/);
      // a.txt and new.txt are HEAD's; the config and the mode flip staged in reverse, as the tree holds them.
      assert.equal(r.git(['status', '--porcelain=v1', '-uno']), 'M  .npmrc\nM  run.sh\n');
      assert.equal(r.git(['show', ':.npmrc']), 'fund=false\n');
      r.git(['reset', '-q', '--hard', start]);
    });

    test("(review, round 30) names the agent made in its git directory, holding a newline, are said on their own warning's line: none forges a line of stashbase's (a file, a FIFO among the refs); control: the names hold the forged text", async () => {
      const agent = [
        'g=$(git rev-parse --git-dir)',
        `touch "$g/x
warning: the agent left no files outside the repository"`,
        `mkfifo "$g/refs/f
stashbase: import checked, nothing unusual"`,
        'echo done',
      ].join(' && ');
      const res = await run(agent);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout, 'done\n');
      assert.doesNotMatch(res.stderr, /^(warning: the agent left no files|stashbase: import checked)/m, res.stderr);
      assert.match(res.stderr, /x\\x0awarning: the agent left no files outside the repository/);
    });

    test("(review, round 28f) configs that came in by commits the end state hides: an .npmrc added in one commit and removed in the next, a .cargo committed as a link to a folder of innocent name, and a .gitmodules on a detached HEAD: each named", async () => {
      const start = r.git(['rev-parse', 'main']).trim();
      const agent = [
        "mkdir -p tools/cfg && printf '[build]\\nrustc-wrapper = \"/nonexistent\"\\n' > tools/cfg/config.toml && ln -s tools/cfg .cargo && git add tools .cargo && git commit -qm 'agent: tools'",
        "git update-index --add --cacheinfo 100644,$(printf 'script-shell=/nonexistent\\n' | git hash-object -w --stdin),.npmrc && git commit -qm 'agent: wip' && git rm -q --cached .npmrc && git commit -qm 'agent: feature'",
        "git checkout -q --detach && printf '[submodule \"lib\"]\\n\\tpath = lib\\n\\turl = git://127.0.0.1:9/evil.git\\n' > .gitmodules && git add .gitmodules && git commit -qm 'agent: det' && git rm -q --cached .gitmodules && rm .gitmodules",
        'echo done',
      ].join(' && ');
      const res = await run(agent);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout, 'done\n');
      assert.match(res.stderr, /the agent's commits on refs\/heads\/main change files your tools run or obey \(\.cargo, \.npmrc\)/, res.stderr);
      assert.match(res.stderr, /the commits at the detached HEAD change files your tools run or obey \(\.cargo, \.gitmodules, \.npmrc\)/, res.stderr);
      r.git(['checkout', '-q', '-f', 'main']);
      r.git(['reset', '-q', '--hard', start]);
      spawnSync('sh', ['-c', 'rm -rf .cargo .cargo.stashbase-quarantine tools'], { cwd: r.root });
    });

    test('a commit whose subject is 8 MiB: the list of what came in cuts it to 100 columns (found in review: a 560 MB subject ended stashbase before its end-of-run checks); control: git log prints it whole', async () => {
      const commit = "head -c 8388608 /dev/zero | tr '\\0' a > ../subject.txt && echo s >> s.txt && git add s.txt && git commit -q -F ../subject.txt && rm ../subject.txt && echo committed";
      const res = await run(commit.replaceAll('../subject.txt', '.subject.txt'));
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout, 'committed\n');
      const whole = spawnSync('git', ['-C', r.root, 'log', '-1', '--format=%s', 'main'], { env: r.env, encoding: 'utf8', maxBuffer: 64 << 20 });
      assert.equal(whole.stdout.length, 8388608 + 1, 'control: git log prints the subject whole');
      const listed = res.stderr.split('\n').filter((l) => /^warning: {3}[0-9a-f]{7,} a+/.test(l) || /^ {2}[0-9a-f]{7,} a+/.test(l));
      assert.equal(listed.length, 1, res.stderr.slice(0, 2000));
      assert.ok((listed[0] as string).length < 140, `the line is ${(listed[0] as string).length} long`);
      assert.match(listed[0] as string, /[0-9a-f]{7,} a{98}\.\.$/);
    });

    test("a .git file an agent left naming another repository of yours: a later run from that folder gets none of it, neither its history nor its refs (found in review: it read the history and the import wrote that repository's refs and index); control: outside, git there works on that repository", async () => {
      const other = join(r.home, 'other-repo');
      for (const a of [['init', '-q', other], ['-C', other, '-c', 'user.name=o', '-c', 'user.email=o@x', 'commit', '-q', '--allow-empty', '-m', 'OTHER-SECRET-HISTORY']]) assert.equal(spawnSync('git', a, { env: r.env }).status, 0);
      const before = spawnSync('git', ['-C', other, 'for-each-ref'], { encoding: 'utf8', env: r.env }).stdout;
      const plant = `mkdir -p pointed && printf 'gitdir: ${join(other, '.git')}\\n' > pointed/.git && echo planted`;
      // The run that plants it has it moved aside at its end (found in review: your own git there would take that repository).
      const first = await run(plant);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(first.stdout, 'planted\n');
      assert.match(first.stderr, /it names a git directory outside this tree \(.*other-repo\/\.git\), which your git in that folder would take for its own/);
      assert.equal(existsSync(join(r.root, 'pointed', '.git')), false);
      // Left all the same (by a run killed before its end, say), a later run is held to the rule.
      spawnSync('rm', ['-rf', join(r.root, 'pointed')]);
      assert.equal(outside(plant, r.root, r.env).status, 0);
      assert.match(spawnSync('git', ['log', '--format=%s'], { cwd: join(r.root, 'pointed'), env: r.env, encoding: 'utf8' }).stdout, /OTHER-SECRET-HISTORY/, 'control: outside, git in the folder works on the other repository');
      const later = await cli(['agent', 'run', ...flags, '--', 'bash', '-c', 'git log --format=%s 2>/dev/null | grep -c OTHER-SECRET-HISTORY; git update-ref refs/heads/evil HEAD 2>/dev/null && echo created || echo refused'], { env: r.env, cwd: join(r.root, 'pointed'), timeoutMs: 120_000 });
      // Native reads your other folders anyway (only what deny_read names is hidden); Docker shows nothing of it.
      assert.deepEqual(later.stdout.split('\n').slice(backend === 'docker' ? 0 : 1), [...(backend === 'docker' ? ['0'] : []), 'refused', ''], later.stdout + later.stderr);
      assert.equal(spawnSync('git', ['-C', other, 'for-each-ref'], { encoding: 'utf8', env: r.env }).stdout, before, "the other repository's refs are as they were");
      assert.doesNotMatch(later.stderr, /the agent created refs\/heads\/evil/);
      spawnSync('rm', ['-rf', join(r.root, 'pointed'), other]);
    });

    test("a .git folder whose commondir names another repository of yours (and, unnamed, a pointer naming your own .git from a subfolder): the run's end moves each aside; left all the same, a later run takes no refs into that repository (found in review); control: outside, git there works on it", async () => {
      const other = join(r.home, 'common-other');
      for (const a of [['init', '-q', other], ['-C', other, '-c', 'user.name=o', '-c', 'user.email=o@x', 'commit', '-q', '--allow-empty', '-m', 'COMMON-HISTORY']]) assert.equal(spawnSync('git', a, { env: r.env }).status, 0);
      const before = spawnSync('git', ['-C', other, 'for-each-ref'], { encoding: 'utf8', env: r.env }).stdout;
      const plant = `mkdir -p borrow/.git/objects borrow/.git/refs && echo 'ref: refs/heads/main' > borrow/.git/HEAD && echo ${join(other, '.git')} > borrow/.git/commondir && echo planted`;
      const first = await run(`${plant} && mkdir -p whole && printf 'gitdir: ../.git\\n' > whole/.git`);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(first.stdout, 'planted\n');
      assert.match(first.stderr, /borrow\/\.git has a commondir, whose repository your git in that folder would work on\. Its \.git was renamed/);
      assert.match(first.stderr, /whole, in a subfolder, .*: it names your repository's git directory, so your git would take that folder for the whole work tree/);
      assert.deepEqual([existsSync(join(r.root, 'borrow', '.git')), existsSync(join(r.root, 'whole', '.git'))], [false, false]);
      spawnSync('rm', ['-rf', join(r.root, 'borrow'), join(r.root, 'whole')]);
      assert.equal(outside(plant, r.root, r.env).status, 0);
      assert.match(spawnSync('git', ['log', '--format=%s'], { cwd: join(r.root, 'borrow'), env: r.env, encoding: 'utf8' }).stdout, /COMMON-HISTORY/, 'control: outside, git in the folder works on the other repository');
      // As the review's agent did: a ref written as a plain file, for the import to take.
      const later = await cli(['agent', 'run', ...flags, '--', 'bash', '-c', `mkdir -p .git/refs/heads && echo ${r.oid('HEAD').trim()} > .git/refs/heads/evil; echo done`], { env: r.env, cwd: join(r.root, 'borrow'), timeoutMs: 120_000 });
      assert.equal(later.code, 0, later.stderr);
      assert.doesNotMatch(later.stderr, /the agent created refs\/heads\/evil/);
      assert.equal(spawnSync('git', ['-C', other, 'for-each-ref'], { encoding: 'utf8', env: r.env }).stdout, before, "the other repository's refs are as they were");
      spawnSync('rm', ['-rf', join(r.root, 'borrow'), other]);
    });

    test("a git directory the agent made in the tree with its stash reflog linked to your ~/.bashrc (and, unnamed, a pointer padded past 64 KiB, a core.worktree naming another folder): the run's end moves each aside; left all the same, a later run from there is refused and writes nothing through it (found in review); control: outside, git appends to ~/.bashrc through the link", async () => {
      const bashrc = writeFile(join(r.home, '.bashrc'), '# mine\n');
      const elsewhere = join(r.home, 'elsewhere');
      const plant = `git init -q app && git -C app -c user.name=a -c user.email=a@x commit -q --allow-empty -m one && mkdir -p app/.git/logs/refs && ln -s ${bashrc} app/.git/logs/refs/stash && echo planted`;
      const padded = `mkdir -p big && { printf 'gitdir: ${join(r.home, 'nowhere')}/.git'; head -c 70000 /dev/zero | tr '\\0' '\\n'; } > big/.git`;
      const worktree = `git init -q wt && git -C wt config core.worktree ${elsewhere}`;
      const first = await run(`${plant} && ${padded} && ${worktree}`);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(first.stdout, 'planted\n');
      assert.match(first.stderr, /app\/\.git holds logs\/refs\/stash \(a symbolic link\), through which git writes elsewhere/);
      assert.match(first.stderr, /big, in a subfolder, .*: it names a git directory outside this tree \(\S+\/nowhere\/\.git\)/);
      assert.match(first.stderr, new RegExp(`its core\\.worktree names ${elsewhere.replaceAll('.', '\\.')}, where your git in that folder would check files out`));
      assert.deepEqual(['app', 'big', 'wt'].map((d) => existsSync(join(r.root, d, '.git'))), [false, false, false]);
      spawnSync('rm', ['-rf', join(r.root, 'app'), join(r.root, 'big'), join(r.root, 'wt')]);
      // Control: outside, git appends its reflog line to ~/.bashrc through the link.
      const ctl = copyOf(r.root, 'stash-control');
      assert.equal(outside(`${plant} && git -C app update-ref -m 'touch PWNED' refs/stash HEAD`, ctl, r.env).status, 0);
      assert.match(readFileSync(bashrc, 'utf8'), /touch PWNED/);
      writeFileSync(bashrc, '# mine\n');
      // Left all the same (a killed run's), a later run from there is refused before anything runs.
      assert.equal(outside(plant, r.root, r.env).status, 0);
      const later = await cli(['agent', 'run', ...flags, '--', 'bash', '-c', 'echo ran'], { env: r.env, cwd: join(r.root, 'app'), timeoutMs: 120_000 });
      assert.equal(later.code, 4, later.stderr);
      assert.equal(later.stdout, '');
      assert.match(later.stderr, new RegExp(`stashbase: ${join(r.root, 'app', '.git').replaceAll('.', '\\.')} holds logs/refs/stash \\(a symbolic link\\), through which the run's import would write elsewhere: remove it \\(an agent may have left it there\\), or run from another folder; nothing was run`));
      assert.equal(readFileSync(bashrc, 'utf8'), '# mine\n');
      spawnSync('rm', ['-rf', join(r.root, 'app'), ctl]);
    });

    test("a hard link in a git directory the agent made, to a script of the tree (and a nested repository of yours it changed in place, given a commondir naming another repository): the run's end moves each aside; left all the same, a later run is refused (found in review); control: outside, git appends to the script through the hard link", async () => {
      const script = writeFile(join(r.root, 'build.sh'), 'echo build ok\n');
      const bashrc = writeFile(join(r.home, '.bashrc'), '# mine\n');
      const other = join(r.home, 'inplace-other');
      const vend = join(r.root, 'vend');
      for (const a of [['init', '-q', other], ['init', '-q', vend], ['-C', vend, '-c', 'user.name=v', '-c', 'user.email=v@x', 'commit', '-q', '--allow-empty', '-m', 'v']]) assert.equal(spawnSync('git', a, { env: r.env }).status, 0);
      const plant = 'git init -q hl && git -C hl -c user.name=a -c user.email=a@x commit -q --allow-empty -m one && rm hl/.git/logs/HEAD && ln build.sh hl/.git/logs/HEAD && echo planted';
      const inPlace = `echo ${join(other, '.git')} > vend/.git/commondir`;
      // Not in the first review: logs a link that stays in the git directory, into a folder made in objects/pack (round 7).
      const around = 'git init -q lk && git -C lk -c user.name=a -c user.email=a@x commit -q --allow-empty -m one && mkdir lk/.git/objects/pack/L && mv lk/.git/logs/* lk/.git/objects/pack/L/ && rmdir lk/.git/logs && ln -s objects/pack/L lk/.git/logs';
      const first = await run(`${plant} && ${inPlace} && ${around}`);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(first.stdout, 'planted\n');
      assert.match(first.stderr, /hl\/\.git holds logs\/HEAD \(a hard link: the same file has another name\), through which git writes elsewhere/);
      assert.match(first.stderr, /vend\/\.git has a commondir, whose repository your git in that folder would work on/);
      assert.match(first.stderr, /lk\/\.git holds logs \(a symbolic link\), through which git writes elsewhere/);
      assert.deepEqual(['hl', 'vend', 'lk'].map((d) => existsSync(join(r.root, d, '.git'))), [false, false, false]);
      spawnSync('rm', ['-rf', join(r.root, 'hl'), vend, other, join(r.root, 'lk')]);
      // A repository of yours whose hooks folder is a link out of its git directory (shared hooks) still runs: git only reads it.
      const hooked = join(r.home, 'hooked');
      for (const a of [['init', '-q', hooked], ['-C', hooked, '-c', 'user.name=h', '-c', 'user.email=h@x', 'commit', '-q', '--allow-empty', '-m', 'h']]) assert.equal(spawnSync('git', a, { env: r.env }).status, 0);
      spawnSync('sh', ['-c', 'mkdir githooks && rm -rf .git/hooks && ln -s ../githooks .git/hooks'], { cwd: hooked });
      const plain = await cli(['agent', 'run', ...flags, '--', 'true'], { env: r.env, cwd: hooked, timeoutMs: 120_000 });
      assert.equal(plain.code, 0, plain.stderr);
      spawnSync('rm', ['-rf', hooked]);
      // Control: outside, git appends its reflog line to the script through the hard link.
      const ctl = copyOf(r.root, 'hardlink-control');
      assert.equal(outside(`${plant} && git -C hl -c user.name=a -c user.email=a@x commit -q --allow-empty -m '$(touch PWNED)'`, ctl, r.env).status, 0);
      assert.match(readFileSync(join(ctl, 'build.sh'), 'utf8'), /\$\(touch PWNED\)/);
      // Left all the same, a later run from there is refused before anything runs.
      assert.equal(outside(plant, r.root, r.env).status, 0);
      const later = await cli(['agent', 'run', ...flags, '--', 'bash', '-c', 'echo ran'], { env: r.env, cwd: join(r.root, 'hl'), timeoutMs: 120_000 });
      assert.equal(later.code, 4, later.stderr);
      assert.match(later.stderr, /hl\/\.git holds logs\/HEAD \(a hard link: the same file has another name\), through which the run's import would write elsewhere/);
      assert.equal(readFileSync(script, 'utf8'), 'echo build ok\n');
      assert.equal(readFileSync(bashrc, 'utf8'), '# mine\n');
      spawnSync('rm', ['-rf', join(r.root, 'hl'), script, ctl]);
    });

    test("a link in the tree to another repository's .git and a .git file naming its submodule through it (whose relative core.worktree, read through the link, names the folder): a later run from that folder gets none of it (found in review); control: outside, git there works on that submodule", async () => {
      const id = ['-c', 'user.name=o', '-c', 'user.email=o@x'];
      const lib = join(r.home, 'lib-src');
      const sup = join(r.home, 'super');
      for (const a of [['init', '-q', lib], ['-C', lib, ...id, 'commit', '-q', '--allow-empty', '-m', 'LIB-HISTORY'], ['init', '-q', sup], ['-C', sup, ...id, 'commit', '-q', '--allow-empty', '-m', 's'], ['-C', sup, '-c', 'protocol.file.allow=always', 'submodule', '-q', 'add', lib, 'lib']]) assert.equal(spawnSync('git', a, { env: r.env }).status, 0, a.join(' '));
      const modules = join(sup, '.git', 'modules', 'lib');
      const before = spawnSync('git', ['--git-dir', modules, 'for-each-ref'], { encoding: 'utf8', env: r.env }).stdout;
      // A relative link (the native sandbox's home is your home, at the same path).
      const rel = relative(join(r.root, 'x'), join(sup, '.git'));
      const plant = `mkdir -p x/lib && ln -s ${rel} x/L && printf 'gitdir: ../L/modules/lib\n' > x/lib/.git && echo planted`;
      const first = await run(plant);
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stderr, /it names a git directory outside this tree/);
      // Left all the same, a later run is held to the rule.
      spawnSync('rm', ['-rf', join(r.root, 'x')]);
      assert.equal(outside(plant, r.root, r.env).status, 0);
      assert.match(spawnSync('git', ['log', '--format=%s'], { cwd: join(r.root, 'x', 'lib'), env: r.env, encoding: 'utf8' }).stdout, /LIB-HISTORY/, 'control: outside, git in the folder works on the submodule');
      const later = await cli(['agent', 'run', ...flags, '--', 'bash', '-c', 'git log --format=%s 2>/dev/null | grep -c LIB-HISTORY; git update-ref refs/heads/evil HEAD 2>/dev/null && echo created || echo refused'], { env: r.env, cwd: join(r.root, 'x', 'lib'), timeoutMs: 120_000 });
      assert.deepEqual(later.stdout.split('\n').slice(backend === 'docker' ? 0 : 1), [...(backend === 'docker' ? ['0'] : []), 'refused', ''], later.stdout + later.stderr);
      assert.equal(spawnSync('git', ['--git-dir', modules, 'for-each-ref'], { encoding: 'utf8', env: r.env }).stdout, before, "the submodule's refs are as they were");
      spawnSync('rm', ['-rf', join(r.root, 'x'), lib, sup]);
    });

    test("a .git file in a folder naming a git directory the agent made there, holding a link to your private key: a later run from that folder shows the link as a link, never the key (found in review: the run bound each entry of the git directory, links resolved on this machine); control: outside, the link reads it", async () => {
      const key = writeFile(join(r.home, '.ssh', 'id_review'), 'HOST-PRIVATE-KEY\n');
      // Not in the review: its worktrees folder a link to a folder of yours, whose subfolders the run would bind as other worktrees'.
      writeFile(join(r.home, '.ssh', 'keys', 'id_deep'), 'HOST-DEEP-KEY\n');
      const plant = `mkdir -p pkg && git init -q --bare pkg/.fake && rm -rf pkg/.fake/hooks pkg/.fake/info && ln -s ${key} pkg/.fake/loot && ln -s ${join(r.home, '.ssh')} pkg/.fake/worktrees && printf 'gitdir: .fake\\n' > pkg/.git && echo planted`;
      const first = await run(plant);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(first.stdout, 'planted\n');
      assert.equal(readFileSync(join(r.root, 'pkg', '.fake', 'loot'), 'utf8'), 'HOST-PRIVATE-KEY\n', 'control: outside, the link reads the key');
      assert.equal(readFileSync(join(r.root, 'pkg', '.fake', 'worktrees', 'keys', 'id_deep'), 'utf8'), 'HOST-DEEP-KEY\n');
      const later = await cli(['agent', 'run', ...flags, '--', 'bash', '-c', 'cat .fake/loot 2>/dev/null || echo unreadable; cat .fake/worktrees/keys/id_deep 2>/dev/null || echo unreadable'], { env: r.env, cwd: join(r.root, 'pkg'), timeoutMs: 120_000 });
      assert.equal(later.code, 0, later.stderr);
      assert.equal(later.stdout, 'unreadable\nunreadable\n');
      spawnSync('rm', ['-rf', join(r.root, 'pkg')]);
    });

    test('deleted packs and loose objects (and, unnamed, a pack truncated in place): your object store is not the agent\'s to change', async () => {
      r.git(['gc', '-q']);
      r.git(['commit', '-q', '--allow-empty', '-m', 'a loose one']);
      const attack = [
        'G=$(git rev-parse --path-format=absolute --git-common-dir)',
        'try() { if (eval "$1") >/dev/null 2>&1; then echo "DONE $2"; else echo "blocked $2"; fi; }',
        `try 'rm "$G"/stashbase-objects/pack/*' packs`,
        `try 'rm -r "$G"/stashbase-objects/[0-9a-f][0-9a-f]' loose`,
        `try ': > "$(ls "$G"/stashbase-objects/pack/*.pack | head -1)"' truncate`,
        // Its own store is its own: emptied, the run goes on with yours.
        'rm -rf "$G"/objects/pack/* "$G"/objects/[0-9a-f][0-9a-f]',
        'echo own > own.txt && git add own.txt && git commit -qm own && echo committed',
      ].join('\n');
      const ctl = copyOf(r.root, 'objects-control');
      outside('rm .git/objects/pack/* && rm -r .git/objects/[0-9a-f][0-9a-f]', ctl, r.env);
      assert.notEqual(spawnSync('git', ['-C', ctl, 'log', '--oneline'], { env: r.env }).status, 0, 'outside, your history is gone');

      const res = await run(attack, { worktree: true });
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout, 'blocked packs\nblocked loose\nblocked truncate\ncommitted\n');
      const name = WORKTREE.exec(res.stderr)?.[1];
      assert.ok(name, res.stderr);
      assert.equal(r.git(['log', '-1', '--format=%s', `stashbase/${name}`]).trim(), 'own');
      assert.ok(fsckClean());
      const list = await cli(['agent', 'worktrees', 'list'], { env: r.env, cwd: r.root, timeoutMs: 30_000 });
      assert.equal(list.code, 0, list.stderr);
    });

    test('a dropped stash (and, unnamed, a remote-tracking branch deleted or rewritten): yours stay', async () => {
      writeFileSync(join(r.root, 'a.txt'), 'stash me\n');
      r.git(['stash', '-q']);
      writeFileSync(join(r.root, 'a.txt'), 'and me\n');
      r.git(['stash', '-q']);
      r.git(['update-ref', 'refs/remotes/origin/main', 'main']);
      r.git(['update-ref', 'refs/remotes/origin/dev', 'dev']);
      const before = { stash: r.git(['stash', 'list']), refs: refs() };
      const attack = 'git stash clear && git update-ref -d refs/remotes/origin/main && git update-ref refs/remotes/origin/dev "$(git commit-tree -m x "HEAD^{tree}")" && echo done';
      const ctl = copyOf(r.root, 'stash-control');
      outside(attack, ctl, r.env);
      assert.equal(spawnSync('git', ['-C', ctl, 'stash', 'list'], { env: r.env, encoding: 'utf8' }).stdout, '', 'outside, your stash is gone');

      const res = await run(attack);
      assert.equal(res.code, 0, res.stderr);
      assert.deepEqual([r.git(['stash', 'list']), refs()], [before.stash, before.refs]);
      assert.match(res.stderr, /the agent deleted refs\/stash \(at [0-9a-f]{12}\): not taken/);
      assert.match(res.stderr, /the agent deleted refs\/remotes\/origin\/main \(at [0-9a-f]{12}\): not taken/);
      assert.match(res.stderr, /the agent rewrote refs\/remotes\/origin\/dev \([0-9a-f]{12} -> [0-9a-f]{12}\): not taken \(remote-tracking refs say what a remote holds/);
      r.git(['stash', 'clear']);
    });

    test('refs/replace: the agent\'s Makefile never stands in for yours', async () => {
      writeFileSync(join(r.root, 'Makefile'), 'all:\n\ttrue\n');
      r.git(['add', 'Makefile']);
      r.git(['commit', '-qm', 'a Makefile']);
      const attack = `B=$(printf 'all:\\n\\ttouch PWNED\\n' | git hash-object -w --stdin) && git replace "$(git rev-parse HEAD:Makefile)" "$B" && echo done`;
      const ctl = copyOf(r.root, 'replace-control');
      outside(attack, ctl, r.env);
      assert.match(spawnSync('git', ['-C', ctl, 'show', 'HEAD:Makefile'], { env: r.env, encoding: 'utf8' }).stdout, /PWNED/, 'outside, git shows the agent\'s file as yours');

      const res = await run(attack);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(r.git(['for-each-ref', 'refs/replace']), '');
      assert.equal(r.git(['show', 'HEAD:Makefile']), 'all:\n\ttrue\n');
      assert.match(res.stderr, /the agent created refs\/replace\/[0-9a-f]{40} at [0-9a-f]{12}: not taken \(replace refs are never taken/);
    });

    test('setuid files in every git folder the run writes (and, unnamed, a setgid folder): none reaches yours', async () => {
      const attack = [
        'G=$(git rev-parse --path-format=absolute --git-common-dir); A=$(git rev-parse --absolute-git-dir)',
        'for d in "$G/objects/ab" "$G/refs" "$G/logs" "$A"; do mkdir -p "$d" && cp /bin/sh "$d/suid" && { chmod 4755 "$d/suid" 2>/dev/null && echo set || echo refused; }; done',
        'chmod g+s "$G/refs/heads" 2>/dev/null && echo setgid || echo refused',
      ].join('\n');
      const ctl = copyOf(r.root, 'setuid-control');
      outside(attack, ctl, r.env);
      assert.notEqual(lstatSync(join(ctl, '.git', 'objects', 'ab', 'suid')).mode & 0o4000, 0, 'outside, the bit stays in your .git');

      const res = await run(attack, { worktree: true });
      assert.equal(res.code, 0, res.stderr);
      // Native: the sandbox's filter refuses setuid and setgid modes; Docker: its agent owns the files, sets the bits, and the walk clears them.
      assert.equal(res.stdout, backend === 'docker' ? 'set\nset\nset\nset\nsetgid\n' : 'refused\nrefused\nrefused\nrefused\nrefused\n');
      if (backend === 'docker') assert.match(res.stderr, /held what no git directory should; removed before anything was read: .*objects\/ab\/suid \(setuid or setgid\): the bit cleared.*refs\/heads \(setuid or setgid\): the bit cleared/);
      assert.equal(outside('find .git -perm /6000 -o -name suid', r.root, r.env).stdout, '', 'nothing setuid or setgid, and no planted file, in your .git');
    });

    test('a FIFO at objects/info/alternates (and, unnamed, at the worktree\'s index and at packed-refs): the run ends, your git never blocks', async () => {
      const attack = [
        'G=$(git rev-parse --path-format=absolute --git-common-dir); A=$(git rev-parse --absolute-git-dir)',
        'git branch -q -D dev',
        'rm -f "$G/objects/info/alternates" "$A/index" "$G/packed-refs" && mkfifo "$G/objects/info/alternates" "$A/index" "$G/packed-refs" && echo planted',
      ].join('\n');
      const ctl = copyOf(r.root, 'fifo-control');
      outside('mkfifo .git/objects/info/alternates', ctl, r.env);
      const hung = spawnSync('git', ['-C', ctl, 'log', '--oneline'], { env: r.env, timeout: 3000 });
      assert.equal(hung.signal, 'SIGTERM', 'outside, your git log blocks on it');

      const started = Date.now();
      const res = await run(attack, { worktree: true });
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout, 'planted\n');
      assert.ok(Date.now() - started < 60_000);
      assert.match(res.stderr, /removed before anything was read: .*objects\/info\/alternates \(a FIFO\): removed/);
      assert.match(res.stderr, /packed-refs \(a FIFO\): removed/);
      assert.match(res.stderr, /the agent deleted refs\/heads\/dev \(at [0-9a-f]{12}\): not taken/);
      assert.equal(spawnSync('git', ['-C', r.root, 'log', '--oneline', 'dev'], { env: r.env, timeout: 10_000 }).status, 0);
      const list = await cli(['agent', 'worktrees', 'list'], { env: r.env, cwd: r.root, timeoutMs: 30_000 });
      assert.equal(list.code, 0, list.stderr);
    });

    test('a garbage HEAD with a bare repository planted in the top folder (and, unnamed, HEAD pointing at a tag): your git keeps .git', async () => {
      const plant = 'mkdir -p objects refs && printf "ref: refs/heads/main\\n" > HEAD && printf "[core]\\n\\tbare = true\\n\\tpager = touch PWNED\\n" > config';
      const ctl = copyOf(r.root, 'head-control');
      outside(`echo garbage > .git/HEAD && ${plant}`, ctl, r.env);
      assert.equal(spawnSync('git', ['-C', ctl, 'config', 'core.pager'], { env: r.env, encoding: 'utf8' }).stdout, 'touch PWNED\n', 'outside, your git reads the planted config');

      const headBefore = readFileSync(join(r.root, '.git', 'HEAD'), 'utf8');
      const res = await run(`echo garbage > .git/HEAD && ${plant} && echo planted`);
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stderr, /the sandbox's HEAD is neither a branch nor an object id: not taken/);
      assert.equal(readFileSync(join(r.root, '.git', 'HEAD'), 'utf8'), headBefore);
      assert.equal(r.git(['rev-parse', '--git-dir']).trim(), '.git');
      assert.equal(spawnSync('git', ['-C', r.root, 'config', 'core.pager'], { env: r.env }).status, 1, 'your git reads no planted config');
      for (const f of ['HEAD', 'config', 'objects', 'refs']) spawnSync('rm', ['-rf', join(r.root, f)]);
      // HEAD at a tag: git would take it (your commits would then be made on the tag's object): not taken.
      const tagged = await run('git symbolic-ref HEAD refs/tags/v1 && echo moved');
      assert.equal(tagged.code, 0, tagged.stderr);
      assert.match(tagged.stderr, /the sandbox's HEAD points at refs\/tags\/v1, not a branch: not taken/);
      assert.equal(readFileSync(join(r.root, '.git', 'HEAD'), 'utf8'), headBefore);
    });

    test("(review, round 35) a branch whose name is not ASCII (`feat©`), made and checked out in the run: HEAD comes back on it, as git wrote it (read as Latin-1, it named no ref the run had and was refused); bytes that are not UTF-8 in HEAD are no branch", async () => {
      const headBefore = readFileSync(join(r.root, '.git', 'HEAD'), 'utf8');
      const res = await run("git checkout -q -b 'feat\u00a9' && git -c user.name=a -c user.email=a@x commit -q --allow-empty -m feat && echo switched");
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout, 'switched\n');
      assert.match(res.stderr, /HEAD of .*\/\.git now points at refs\/heads\/feat\u00a9, as the sandbox left it$/m);
      assert.equal(readFileSync(join(r.root, '.git', 'HEAD'), 'utf8'), 'ref: refs/heads/feat\u00a9\n');
      assert.equal(r.git(['log', '-1', '--format=%s', 'feat\u00a9']).trim(), 'feat');
      writeFileSync(join(r.root, '.git', 'HEAD'), headBefore);
      const bad = await run("printf 'ref: refs/heads/\\377x\\n' > .git/HEAD && echo set");
      assert.equal(bad.code, 0, bad.stderr);
      assert.match(bad.stderr, /the sandbox's HEAD is neither a branch nor an object id: not taken/);
      assert.equal(readFileSync(join(r.root, '.git', 'HEAD'), 'utf8'), headBefore);
    });

    test('an index naming a path git would never write (.git/hooks/post-checkout): not taken, and your git checkout . writes nothing into .git', async () => {
      const forge = [
        'mkdir -p abcd/hooks && printf \'#!/bin/sh\\ntouch "$PWNFILE"\\n\' > abcd/hooks/post-checkout && chmod +x abcd/hooks/post-checkout && git add abcd/hooks/post-checkout',
        'I=$(git rev-parse --git-path index)',
        `python3 -c "import hashlib,sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); body=b[:-20]; i=body.find(b'abcd/hooks'); body[i:i+4]=b'.git'; open(p,'wb').write(bytes(body)+hashlib.sha1(bytes(body)).digest())" "$I"`,
        'rm -rf abcd && echo forged',
      ].join('\n');
      const marker = join(r.dir, 'PWNED-index');
      const ctl = copyOf(r.root, 'index-control');
      assert.equal(outside(`${forge}\ngit checkout -- . 2>/dev/null; test -x .git/hooks/post-checkout && echo hook-written`, ctl, { ...r.env, PWNFILE: `${marker}-control` }).stdout, 'forged\nhook-written\n', 'outside, git checkout . writes the hook into .git');

      const res = await run(forge, { env: { PWNFILE: marker } });
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stderr, /the sandbox's index holds an entry git would never write \("\.git\/hooks\/post-checkout": a \.git component\): not taken/);
      spawnSync('git', ['checkout', '--', '.'], { cwd: r.root, env: r.env });
      assert.equal(existsSync(join(r.root, '.git', 'hooks', 'post-checkout')), false);
      r.git(['checkout', '-q', 'main']);
      assert.equal(existsSync(marker), false);
    });

    test("a worktree run keeps to its own branch: another agent's branch, the branch your checkout has, and its HEAD moved to either are not taken (outside, git takes each)", async () => {
      r.git(['branch', 'stashbase/other-agent-run', 'main']);
      const attack = [
        'c() { git commit -q --allow-empty "$@"; }',
        'own=$(git rev-parse --abbrev-ref HEAD)',
        'git update-ref refs/heads/stashbase/other-agent-run "$(git commit-tree -p stashbase/other-agent-run -m "looks like its own work" "HEAD^{tree}")"',
        'git update-ref refs/heads/main "$(git commit-tree -p main -m "on top of main" "HEAD^{tree}")"',
        'c -m "own work"',
        'git symbolic-ref HEAD refs/heads/main && echo moved',
      ].join('\n');
      // The control: outside, in a worktree of the same repository, git does all of it.
      const ctlRoot = copyOf(r.root, 'own-control');
      spawnSync('git', ['worktree', 'add', '-q', '-b', 'stashbase/ctl-run', join(ctlRoot, 'wt')], { cwd: ctlRoot, env: r.env });
      assert.equal(outside(attack, join(ctlRoot, 'wt'), r.env).stdout, 'moved\n');
      assert.equal(spawnSync('git', ['-C', ctlRoot, 'log', '-1', '--format=%s', 'main'], { env: r.env, encoding: 'utf8' }).stdout, 'on top of main\n');

      const before = { main: r.oid('main'), other: r.oid('stashbase/other-agent-run') };
      const res = await run(attack, { worktree: true });
      assert.equal(res.code, 0, res.stderr);
      const name = WORKTREE.exec(res.stderr)?.[1];
      assert.ok(name, res.stderr);
      assert.deepEqual([r.oid('main'), r.oid('stashbase/other-agent-run')], [before.main, before.other]);
      assert.match(res.stderr, /the agent added commits to refs\/heads\/main: not taken \(it is checked out in your checkout /);
      assert.match(res.stderr, /the agent added commits to refs\/heads\/stashbase\/other-agent-run: not taken \(another agent's branch/);
      assert.match(res.stderr, new RegExp(`the sandbox's HEAD points at refs/heads/main, not at the run's own branch refs/heads/stashbase/${name}: not taken`));
      assert.equal(r.git(['log', '-1', '--format=%s', `stashbase/${name}`]), 'own work\n', 'its own work comes in');
      assert.match(res.stderr, new RegExp(`^Worktree ${name} was clean and is removed`, 'm'));
      assert.equal(r.git(['worktree', 'list', '--porcelain']).includes('branch refs/heads/main\n') && r.git(['worktree', 'list', '--porcelain']).split('branch refs/heads/main\n').length, 2, 'main is checked out once');
      r.git(['branch', '-D', 'stashbase/other-agent-run']);
    });

    test('ordinary work comes back whole: commits, an amended commit, a git gc; a tag and a stash of its own, kept aside with the commands to look and keep them', async () => {
      const work = [
        'c() { git commit -q "$@"; }',
        'echo 1 > w1 && git add w1 && c -m w1',
        'echo 2 > w2 && git add w2 && c -m w2',
        'git tag agent-tag',
        'echo 2b > w2 && git add w2 && c --amend -m w2-amended',
        'git gc -q',
        'echo wip > wip && git add wip && git stash -q',
        'git worktree list >/dev/null && echo done',
      ].join('\n');
      const res = await run(work, { worktree: true });
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout, 'done\n');
      const name = WORKTREE.exec(res.stderr)?.[1];
      assert.ok(name, res.stderr);
      const branch = `stashbase/${name}`;
      assert.equal(r.git(['log', '--format=%s', '-2', branch]), 'w2-amended\nw1\n');
      // (Review) its tag is not taken (it would keep a release's name from the real one): the run says how to keep it.
      assert.equal(r.git(['tag', '-l', 'agent-tag']), '');
      const tag = /created refs\/tags\/agent-tag at [0-9a-f]{12}: not taken \(a tag names a release: .*: git tag agent-tag ([0-9a-f]{40}) takes it\)$/m.exec(res.stderr);
      assert.ok(tag, res.stderr);
      r.git(['tag', 'agent-tag', tag[1] as string]);
      assert.equal(r.git(['log', '-1', '--format=%s', 'agent-tag']), 'w2\n');
      r.git(['tag', '-d', 'agent-tag']);
      // Its stash entry is not put on yours (git stash pop would apply it unreviewed): kept as the warning says, it is whole.
      assert.equal(r.git(['stash', 'list']), '');
      const kept = /git stash store -m "from run (ags_[a-z0-9]+)" ([0-9a-f]{40}) puts it on your stash\)$/m.exec(res.stderr);
      assert.ok(kept, res.stderr);
      r.git(['stash', 'store', '-m', `from run ${kept[1]}`, kept[2] as string]);
      assert.match(r.git(['stash', 'list', '--format=%gs%n%s']), new RegExp(`^from run ags_[a-z0-9]+\nWIP on ${branch}: [0-9a-f]+ w2-amended\n$`));
      assert.equal(r.git(['show', 'stash@{0}:wip']), 'wip\n');
      assert.match(res.stderr, new RegExp(`^Worktree ${name} was clean and is removed`, 'm'));
      assert.ok(fsckClean());
      r.git(['stash', 'drop', '-q']);
    });

    test('new refs named for what you type (a short commit id, a remote; and, unnamed, a case variant of a tag): not taken; control: outside, git resolves your words to them', async () => {
      r.git(['tag', 'v-lower']);
      const script = [
        'H=$(git rev-parse --short=9 HEAD~1)',
        'echo EVIL > a.txt && git commit -qam evil && E=$(git rev-parse HEAD) && git reset -q --hard HEAD~1',
        'git branch "$H" "$E" && git tag origin "$E" && git tag V-LOWER "$E" && git branch fine-branch && echo "$H"',
      ].join('\n');
      r.git(['update-ref', 'refs/remotes/origin/main', r.oid('main')]);
      const ctl = copyOf(r.root, 'typed-control');
      const c = outside(script, ctl, r.env);
      assert.equal(c.status, 0, c.stderr);
      const evilSubject = (cwd: string, word: string) => spawnSync('git', ['log', '-1', '--format=%s', word], { cwd, env: r.env, encoding: 'utf8' }).stdout;
      const h = c.stdout.trim();
      assert.equal(evilSubject(ctl, h), 'evil\n', 'outside, the short id names the agent\'s branch');
      assert.equal(evilSubject(ctl, 'origin'), 'evil\n', 'outside, "origin" names the agent\'s tag');
      const res = await run(script);
      assert.equal(res.code, 0, res.stderr);
      const hIn = res.stdout.trim();
      assert.match(res.stderr, new RegExp(`created refs/heads/${hIn} at [0-9a-f]{12}: not taken \\(its short name is hex digits`));
      // (Review) no new tag is taken: these for that first.
      assert.match(res.stderr, /created refs\/tags\/origin at [0-9a-f]{12}: not taken \(a tag names a release/);
      assert.match(res.stderr, /created refs\/tags\/V-LOWER at [0-9a-f]{12}: not taken \(a tag names a release/);
      assert.match(res.stderr, /created refs\/heads\/fine-branch at [0-9a-f]{12}: taken/);
      assert.notEqual(evilSubject(r.root, hIn), 'evil\n');
      assert.notEqual(evilSubject(r.root, 'origin'), 'evil\n');
      r.git(['branch', '-q', '-D', 'fine-branch']);
      r.git(['tag', '-d', 'v-lower']);
    });

    test("a shared repository (git init --shared=group: core.sharedRepository = group): the agent's git add and commit work in the run's own git directory and come back, with nothing for the import's clean-up to clear; entries of GIT_CONFIG_COUNT the agent has already are kept (native: your environment's)", async () => {
      r.git(['config', 'core.sharedRepository', 'group']);
      const file = join(r.root, `shared-${backend}.txt`);
      try {
        writeFileSync(file, 'shared\n');
        // Native: your environment's own command-scope entries reach the agent, and the run's comes after them.
        const env = { ...r.env, GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'user.name', GIT_CONFIG_VALUE_0: 'from-env' };
        const script = `git add ${relative(r.root, file)} && git -c user.name=a -c user.email=a@x commit -qm shared-${backend} && git config core.sharedRepository${backend === 'native' ? ' && git config user.name' : ''}`;
        const res = await cli(['agent', 'run', ...flags, '--', 'bash', '-c', script], { env, cwd: r.root, timeoutMs: 120_000 });
        assert.equal(res.code, 0, res.stderr);
        assert.equal(res.stdout, backend === 'native' ? 'umask\nfrom-env\n' : 'umask\n');
        assert.doesNotMatch(res.stderr, /held what no git directory should|setuid or setgid|unable to create temporary file/);
        assert.equal(r.git(['log', '-1', '--format=%s']), `shared-${backend}\n`);
        assert.equal(fsckClean(), true);
      } finally {
        r.git(['config', '--unset', 'core.sharedRepository']);
      }
    });

    test("(review) a .git whose objects is a link to a store elsewhere (git follows it: your repository all the same), which stashbase takes no run's git directory for: the whole .git is read-only in the run, said; the agent's HEAD, ref and reflog link to a file of yours are refused; control: outside, they land and your next commit writes through the link. Unlisted: refs in the reftable format (Docker left that .git writable too)", async () => {
      const repo = join(r.home, `linked-store-${backend}`);
      const target = join(r.home, `reflog-target-${backend}`);
      writeFileSync(target, 'mine\n');
      const setup = `git init -q ${repo} && cd ${repo} && git commit -q --allow-empty -m one && mv .git/objects ${repo}.objects && ln -s ${repo}.objects .git/objects && git log --format=%s`;
      assert.equal(outside(setup, r.home, r.env).stdout, 'one\n');
      const script = `echo "ref: refs/heads/evil" > .git/HEAD && echo HEAD; rm -f .git/logs/HEAD && ln -s ${target} .git/logs/HEAD && echo LINK; echo 0000 > .git/refs/heads/main && echo REF; true`;
      const commit = 'git -c user.name=u -c user.email=u@x commit -q --allow-empty -m two && git log --format=%s';
      const res = await cli(['agent', 'run', ...flags, '--', 'bash', '-c', script], { env: r.env, cwd: repo, timeoutMs: 120_000 });
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout, '');
      assert.match(res.stderr, new RegExp(`^warning: ${repo}/\\.git has objects as a symbolic link: the run gets no git directory of its own for it, and it is read-only in this run \\(the agent's git cannot commit there\\)$`, 'm'));
      assert.equal(readFileSync(join(repo, '.git', 'HEAD'), 'utf8'), 'ref: refs/heads/main\n');
      assert.equal(lstatSync(join(repo, '.git', 'logs', 'HEAD')).isFile(), true);
      assert.equal(outside(commit, repo, r.env).stdout, 'two\none\n');
      assert.equal(readFileSync(target, 'utf8'), 'mine\n');
      // Control: outside, each write lands, and your next commit (on the branch the link's reflog follows) writes your file.
      const ctl = copyOf(repo, 'control');
      assert.equal(outside(script, ctl, r.env).stdout, 'HEAD\nLINK\nREF\n');
      assert.equal(outside(`echo "ref: refs/heads/main" > .git/HEAD && git -C ${repo} rev-parse main > .git/refs/heads/main && ${commit}`, ctl, r.env).status, 0);
      assert.notEqual(readFileSync(target, 'utf8'), 'mine\n');
      spawnSync('rm', ['-rf', ctl, repo, `${repo}.objects`, target]);
      // Unlisted, the same class: a repository whose config says its refs are in the reftable format (this git, v0, ignores
      // it). Docker left its .git a folder of the tree as well.
      const rt = join(r.home, `reftable-${backend}`);
      assert.equal(outside(`git init -q ${rt} && cd ${rt} && git commit -q --allow-empty -m one && printf '[extensions]\\n\\trefStorage = reftable\\n' >> .git/config && git log --format=%s`, r.home, r.env).stdout, 'one\n');
      const rtRun = await cli(['agent', 'run', ...flags, '--', 'bash', '-c', script], { env: r.env, cwd: rt, timeoutMs: 120_000 });
      assert.equal(rtRun.code, 0, rtRun.stderr);
      assert.equal(rtRun.stdout, '');
      assert.match(rtRun.stderr, new RegExp(`^warning: ${rt}/\\.git keeps its refs in the reftable format, which stashbase does not import: the run gets no git directory of its own for it, and it is read-only in this run`, 'm'));
      assert.equal(readFileSync(join(rt, '.git', 'HEAD'), 'utf8'), 'ref: refs/heads/main\n');
      assert.equal(outside(script, copyOf(rt, 'control'), r.env).stdout, 'HEAD\nLINK\nREF\n', 'control: outside, each lands');
      spawnSync('rm', ['-rf', rt, `${rt}-control`]);
    });

    test("(review) where links in a git directory the run does not take lead into the tree, and a .git file git follows: refs linked to a folder of the tree stay read-only there; a .git file naming a git directory in the tree (whose objects are kept elsewhere) keeps it read-only, hooks and all; a .git file ending in two newlines names its git directory as git reads it, so the agent's commit comes back through the import; control: outside, each write lands", async () => {
      const hook = `printf '#!/bin/sh\\necho HOOK-RAN\\n' > .gd/hooks/pre-commit && chmod +x .gd/hooks/pre-commit && echo HOOK`;
      // Refs linked into the tree.
      const rl = join(r.home, `refs-linked-${backend}`);
      assert.equal(outside(`git init -q ${rl} && cd ${rl} && git commit -q --allow-empty -m one && git commit -q --allow-empty -m two && mv .git/refs gitrefs && ln -s ../gitrefs .git/refs && git log --format=%s`, r.home, r.env).stdout, 'two\none\n');
      const rewind = 'r=$(git rev-parse HEAD~1) && echo $r > gitrefs/heads/main && echo REWOUND; git tag evil 2>/dev/null && echo TAGGED; true';
      const a = await cli(['agent', 'run', ...flags, '--', 'bash', '-c', rewind], { env: r.env, cwd: rl, timeoutMs: 120_000 });
      assert.equal(a.code, 0, a.stderr);
      assert.equal(a.stdout, '');
      assert.match(a.stderr, /\.git has refs as a symbolic link: the run gets no git directory of its own for it, and it is read-only in this run/);
      assert.equal(outside('git log --format=%s && git tag', rl, r.env).stdout, 'two\none\n');
      assert.equal(outside(rewind, copyOf(rl, 'control'), r.env).stdout, 'REWOUND\nTAGGED\n', 'control: outside, both land');
      // A .git file naming a git directory in the tree whose objects are kept elsewhere.
      const pt = join(r.home, `pointer-${backend}`);
      assert.equal(outside(`git init -q --separate-git-dir ${pt}/.gd ${pt} && cd ${pt} && git commit -q --allow-empty -m one && mv .gd/objects ${pt}.objects && ln -s ${pt}.objects .gd/objects && git log --format=%s`, r.home, r.env).stdout, 'one\n');
      const b = await cli(['agent', 'run', ...flags, '--', 'bash', '-c', `${hook}; true`], { env: r.env, cwd: pt, timeoutMs: 120_000 });
      assert.equal(b.code, 0, b.stderr);
      assert.equal(b.stdout, '');
      assert.match(b.stderr, new RegExp(`${pt}/\\.git names ${pt}/\\.gd, which has objects as a symbolic link: the run gets no git directory of its own for it, and it is read-only in this run`));
      assert.equal(existsSync(join(pt, '.gd', 'hooks', 'pre-commit')), false);
      const ctl = copyOf(pt, 'control');
      writeFileSync(join(ctl, '.git'), `gitdir: ${ctl}/.gd\n`);
      assert.equal(outside(hook, ctl, r.env).stdout, 'HOOK\n', 'control: outside, the hook is written');
      // A .git file ending in two newlines (git reads past them): taken, the agent's commit imported, the hooks read-only.
      const two = join(r.home, `pointer-two-${backend}`);
      assert.equal(outside(`git init -q --separate-git-dir ${two}/.gd ${two} && cd ${two} && git commit -q --allow-empty -m one && printf 'gitdir: ${two}/.gd\\n\\n' > .git && git log --format=%s`, r.home, r.env).stdout, 'one\n');
      const c = await cli(['agent', 'run', ...flags, '--', 'bash', '-c', `${hook}; git -c user.name=a -c user.email=a@x commit -q --allow-empty -m agent && echo COMMITTED`], { env: r.env, cwd: two, timeoutMs: 120_000 });
      assert.equal(c.code, 0, c.stderr);
      assert.equal(c.stdout, 'COMMITTED\n');
      assert.match(c.stderr, /the agent added commits to refs\/heads\/main: taken \(undo: git update-ref refs\/heads\/main /);
      assert.equal(existsSync(join(two, '.gd', 'hooks', 'pre-commit')), false);
      spawnSync('rm', ['-rf', rl, `${rl}-control`, pt, `${pt}.objects`, ctl, two]);
    });

    test("(review) an object store your objects/info/alternates names, kept in the tree: read-only in the run (the agent rewrote an object of your history there, and your checkout wrote its script); control: outside, the rewrite lands and your checkout writes it", async () => {
      const alt = join(r.home, `alternates-${backend}`);
      const setUp = `git init -q ${alt} && cd ${alt} && echo 'echo good' > build.sh && git add build.sh && git commit -qm one && mkdir store && mv .git/objects/[0-9a-f][0-9a-f] store/ && echo "$PWD/store" > .git/objects/info/alternates && git show HEAD:build.sh`;
      assert.equal(outside(setUp, r.home, r.env).stdout, 'echo good\n');
      const blob = outside('git rev-parse HEAD:build.sh', alt, r.env).stdout.trim();
      const forge = `p='store/${blob.slice(0, 2)}/${blob.slice(2)}'; chmod 644 "$p" && python3 -c "import zlib,sys; b=b'echo EVIL\\n'; open(sys.argv[1],'wb').write(zlib.compress(b'blob %d\\x00' % len(b) + b))" "$p" && echo FORGED; true`;
      const res = await cli(['agent', 'run', ...flags, '--', 'bash', '-c', forge], { env: r.env, cwd: alt, timeoutMs: 120_000 });
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout, '');
      assert.equal(outside('rm build.sh && git checkout -q -- build.sh && cat build.sh', alt, r.env).stdout, 'echo good\n');
      // Control: outside, the rewrite lands, and your checkout writes the agent's script.
      assert.equal(outside(forge, alt, r.env).stdout, 'FORGED\n');
      assert.equal(outside('rm build.sh && git checkout -q -- build.sh && cat build.sh', alt, r.env).stdout, 'echo EVIL\n');
      spawnSync('rm', ['-rf', alt]);
    });

    test("(review) a local clone of your repository in its tree (git clone . clone: its objects hard links to yours): an object of yours the agent rewrites through the clone's name is said at the run's end, loudly; control: outside, your checkout writes the agent's script", async () => {
      const hl = join(r.home, `hardlinked-${backend}`);
      assert.equal(outside(`git init -q ${hl} && cd ${hl} && echo 'echo good' > build.sh && git add build.sh && git commit -qm one && git clone -q . clone && git show HEAD:build.sh`, r.home, r.env).stdout, 'echo good\n');
      const blob = outside('git rev-parse HEAD:build.sh', hl, r.env).stdout.trim();
      const obj = `objects/${blob.slice(0, 2)}/${blob.slice(2)}`;
      assert.ok(lstatSync(join(hl, '.git', obj)).nlink > 1, 'a hard link');
      const forge = `p=clone/.git/${obj}; chmod 644 "$p" && python3 -c "import zlib,sys; b=b'echo EVIL\\n'; open(sys.argv[1],'r+b').write(zlib.compress(b'blob %d\\x00' % len(b) + b))" "$p" && rm -rf clone && echo FORGED`;
      const res = await cli(['agent', 'run', ...flags, '--', 'bash', '-c', forge], { env: r.env, cwd: hl, timeoutMs: 120_000 });
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout, 'FORGED\n');
      assert.match(res.stderr, new RegExp(`your repository's git directory ${hl}/\\.git holds ${obj} \\(its content is another object's\\), rewritten in the run through another name of the file \\(a hard link, as a local clone makes`));
      // Control: what it says is so: your checkout now writes the agent's script.
      assert.equal(outside('rm build.sh && git checkout -q -- build.sh && cat build.sh', hl, r.env).stdout, 'echo EVIL\n');
      spawnSync('rm', ['-rf', hl]);
    });

    test('a tree nested 30,000 deep (and, unnamed, a tag to one just past the 4096 bound): not taken; control: outside, git show crashes on it', async () => {
      const fi = (ref: string, depth: number) => `commit ${ref}\ncommitter u <u@x> 0 +0000\ndata 4\ndeep\nM 100644 inline ${Array(depth).fill('d').join('/')}/f\ndata 2\nx\n\n`;
      writeFileSync(join(r.root, 'deep.fi'), fi('refs/heads/deep', 30_000) + fi('refs/tags/deep-tag', 4100));
      const script = 'git fast-import --quiet < deep.fi && rm deep.fi && echo made';
      const ctl = copyOf(r.root, 'deep-control');
      assert.equal(outside(script, ctl, r.env).status, 0);
      assert.equal(spawnSync('git', ['show', 'deep'], { cwd: ctl, env: r.env, stdio: 'ignore' }).signal, 'SIGSEGV', 'outside, git show crashes');
      const res = await run(script);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout, 'made\n');
      assert.match(res.stderr, /created refs\/heads\/deep at [0-9a-f]{12}: not taken \(its objects cannot be imported: a tree nested more than 4096 deep \(d\/d\/d/);
      // (A tag is never taken; its objects, which would be kept, cannot be either.)
      assert.match(res.stderr, /created refs\/tags\/deep-tag at [0-9a-f]{12}: not taken \(a tag names a release: .*; its objects could not be kept either\)/);
      assert.equal(r.git(['for-each-ref', 'refs/heads/deep', 'refs/tags/deep-tag']), '');
      // (Review, round 39) and nothing of them stays in your object store (they came in before the depth was known).
      for (const oid of res.stderr.match(/(?<=created refs\/(heads|tags)\/deep(-tag)? at )[0-9a-f]{12}/g) ?? []) {
        assert.notEqual(spawnSync('git', ['cat-file', '-e', oid], { cwd: r.root, env: r.env }).status, 0, `${oid} is not in your store`);
      }
      assert.equal(outside('git cat-file -e deep && git cat-file -e deep-tag && echo there', ctl, r.env).stdout, 'there\n', 'control: outside, they are in the store');
      spawnSync('rm', ['-rf', ctl]);
    });

    test("(review, round 39) a pack of a few hundred KB whose deltas stand for 144 MiB: past the import's size bound (STASHBASE_GIT_IMPORT_MAX_SIZE) the import stops, nothing of it is in your object store (it was written there as loose objects, and stayed after the refusal) and the run's git directory is kept aside; under the bound it comes in as the pack it is; control: outside, unpack-objects writes every object", async () => {
      const bomb = join(r.root, 'bomb.pack');
      const script = [
        'h=$(git index-pack --stdin < bomb.pack | cut -f2) && rm bomb.pack',
        `t=$(git show-index < .git/objects/pack/pack-$h.idx | awk '{printf "100644 blob %s\\tf%d\\n", $2, NR}' | git mktree)`,
        'git update-ref refs/heads/bomb $(git -c user.name=a -c user.email=a@x commit-tree $t -p HEAD -m bomb) && echo $t',
      ].join(' && ');
      const storeKiB = () => Number(spawnSync('du', ['-sk', join(r.root, '.git', 'objects')], { encoding: 'utf8' }).stdout.split('\t')[0]);
      const agent = (env: NodeJS.ProcessEnv) => cli(['agent', 'run', ...flags, '--', 'bash', '-c', script], { env, cwd: r.root, timeoutMs: 120_000 });
      const leftovers = () => readdirSync(join(r.root, '.git', 'objects')).filter((n) => n.startsWith('incoming-'));
      const main = r.oid('main');
      slowPack(bomb, 16, 8);
      const ctl = copyOf(r.root, 'bomb-control');
      const before = storeKiB();
      const res = await agent({ ...r.env, STASHBASE_GIT_IMPORT_MAX_SIZE: String(64 << 20) });
      assert.equal(res.code, 0, res.stderr);
      const tree = res.stdout.trim();
      assert.match(tree, /^[0-9a-f]{40}$/);
      const kept = /the import of the run's git work for \S+ stopped \(its objects come to 144\.\d MiB written out, more than the 64\.0 MiB one import brings into your repository; STASHBASE_GIT_IMPORT_MAX_SIZE, in bytes, sets another bound\): nothing of it is in your repository\. The run's git directory is kept in (\S+):/.exec(res.stderr)?.[1];
      assert.ok(kept, res.stderr);
      assert.equal(r.git(['for-each-ref', 'refs/heads/bomb']), '');
      assert.equal(r.oid('main'), main);
      assert.notEqual(spawnSync('git', ['cat-file', '-e', tree], { cwd: r.root, env: r.env }).status, 0, 'its tree is not in your store');
      assert.deepEqual(leftovers(), []);
      assert.ok(storeKiB() - before < 256, `your store grew by ${storeKiB() - before} KiB`);
      assert.equal(spawnSync('git', ['--git-dir', kept, 'log', '-1', '--format=%s', 'bomb'], { encoding: 'utf8' }).stdout, 'bomb\n', 'the work is kept');
      spawnSync('rm', ['-rf', kept]);
      // Under the bound (the default, 2 GiB), the same work comes in, as the pack it is: a few hundred KB.
      slowPack(bomb, 16, 8);
      const taken = await agent(r.env);
      assert.equal(taken.code, 0, taken.stderr);
      assert.match(taken.stderr, /created refs\/heads\/bomb at [0-9a-f]{12}: taken/);
      assert.equal(spawnSync('git', ['cat-file', '-t', `${taken.stdout.trim()}`], { cwd: r.root, env: r.env, encoding: 'utf8' }).stdout, 'tree\n');
      assert.ok(storeKiB() - before < 2048, `your store grew by ${storeKiB() - before} KiB`);
      assert.deepEqual(leftovers(), []);
      r.git(['branch', '-q', '-D', 'bomb']);
      // Control: outside, the objects written the way they came in before (unpack-objects, under 100 objects) are in the store, whole.
      const c = outside('git unpack-objects -q < bomb.pack && git count-objects', ctl, r.env, 60_000);
      assert.equal(c.status, 0, c.stderr);
      assert.ok(Number(/^(\d+) objects, (\d+) kilobytes$/m.exec(c.stdout)?.[1]) >= 9, c.stdout);
      spawnSync('rm', ['-rf', ctl]);
    });

    test("packs that take long to index (copies, not links, which count once): the import stops at its time limit, the run's git directory is kept aside and the next run starts at once; control: the same work without them comes in. What is kept is data alone: the git you look with obeys nothing of the agent's (a commondir naming its config, whose gpg.program runs at git log)", async () => {
      const env = { ...r.env, STASHBASE_GIT_IMPORT_TIMEOUT: '3' };
      // Found in review: the kept folder held the agent's commondir, and the command printed to look ran its program.
      const mark = join(r.dir, 'kept-pwned');
      const plant = [
        'G=$(git rev-parse --path-format=absolute --git-common-dir)',
        `printf '#!/bin/sh\\ntouch ${mark}\\n' > "$G/gpg.sh" && chmod +x "$G/gpg.sh"`,
        // A commit with a signature header, in the run's refs and in a bare repository whose config runs the program.
        'c=$(printf "tree %s\\nparent %s\\nauthor a <a@x> 1 +0000\\ncommitter a <a@x> 1 +0000\\ngpgsig -----BEGIN PGP SIGNATURE-----\\n x\\n -----END PGP SIGNATURE-----\\n\\nsigned\\n" "$(git rev-parse "HEAD^{tree}")" "$(git rev-parse HEAD)" | git hash-object -t commit -w --stdin)',
        'git update-ref refs/heads/signed "$c"',
        'git init -q --bare "$G/evil" && git --git-dir "$G/evil" config log.showSignature true && git --git-dir "$G/evil" config gpg.program "$G/gpg.sh"',
        'git push -q "$G/evil" "$c:refs/heads/signed"',
        'echo evil > "$G/commondir"',
      ].join('\n');
      const planted = copyOf(r.root, 'kept-control');
      assert.equal(outside(plant, planted, r.env).status, 0);
      spawnSync('git', ['--git-dir', join(planted, '.git'), 'log', '--all'], { env: r.env, maxBuffer: 64 << 20 });
      assert.equal(existsSync(mark), true, 'control: git log in the planted git directory runs the program');
      spawnSync('rm', ['-f', mark]);
      const work = (extra: string) => cli(['agent', 'run', ...flags, '--', 'bash', '-c', `echo s >> s.txt && git add s.txt && git commit -qm "$1" && ${extra} echo done`, 'sh', extra ? 'slow-run' : 'quick-run'], { env, cwd: r.root, timeoutMs: 120_000 });
      const ctl = await work('');
      assert.equal(ctl.code, 0, ctl.stderr);
      assert.equal(r.git(['log', '-1', '--format=%s', 'main']), 'quick-run\n', 'the control comes in within the limit');
      const main = r.oid('main');
      slowPack(join(r.root, 'slow.pack'), 128, 30);
      const res = await work(`for i in 1 2 3; do cp slow.pack .git/objects/pack/p$i.pack; done; rm slow.pack; ${plant.replaceAll('\n', ' && ')} &&`);
      assert.equal(res.code, 0, res.stderr);
      const kept = /the import of the run's git work for \S+ stopped \(it took longer than 3 s\): nothing of it is in your repository\. The run's git directory is kept in (\S+): the agent's objects and refs, not imported \(its config, hooks and other files removed; look with git --git-dir \S+ log --all/.exec(res.stderr)?.[1];
      assert.ok(kept, res.stderr);
      assert.equal(r.oid('main'), main, 'nothing of it came in');
      assert.equal(spawnSync('git', ['--git-dir', kept, 'log', '-1', '--format=%s', 'main'], { encoding: 'utf8' }).stdout, 'slow-run\n', 'the work is kept');
      // The command it prints, run: nothing of the agent's runs.
      const look = spawnSync('git', ['--git-dir', kept, 'log', '--all'], { env: r.env, encoding: 'utf8', maxBuffer: 64 << 20 });
      assert.equal(look.status, 0, `${look.signal} ${look.error?.message ?? ''} ${look.stderr}`);
      assert.match(look.stdout, /signed/);
      assert.equal(existsSync(mark), false, "the agent's gpg.program did not run");
      assert.deepEqual(readdirSync(kept).filter((n) => !['HEAD', 'config', 'logs', 'objects', 'packed-refs', 'refs'].includes(n)), [], 'nothing but its data and the config stashbase wrote');
      const next = await cli(['agent', 'run', ...flags, '--', 'true'], { env: r.env, cwd: r.root, timeoutMs: 60_000 });
      assert.equal(next.code, 0, next.stderr);
      assert.doesNotMatch(next.stderr, /killed run|import/);
      spawnSync('rm', ['-rf', kept]);
    });

    test('Ctrl+C while the import runs stops the import, not stashbase: nothing half-imported, no record left for the next run to import again', async () => {
      slowPack(join(r.root, 'slow.pack'), 128, 30);
      const main = r.oid('main');
      const child = spawn(process.execPath, [BIN, 'agent', 'run', ...flags, '--', 'bash', '-c', 'echo c >> c.txt && git add c.txt && git commit -qm interrupted-run && cp slow.pack .git/objects/pack/p1.pack && cp slow.pack .git/objects/pack/p2.pack && rm slow.pack'], { env: r.env, cwd: r.root, stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += String(d)));
      const exited = new Promise<number | null>((res) => child.on('close', (code) => res(code)));
      for (let i = 0; i < 600 && !/importing the run's git work/.test(err); i++) await new Promise((res) => setTimeout(res, 100));
      assert.match(err, /importing the run's git work into your repository… \(Ctrl\+C stops it/);
      const at = Date.now();
      child.kill('SIGINT');
      assert.equal(await exited, 0, err);
      assert.ok(Date.now() - at < 15_000, `it stopped in ${Date.now() - at} ms`);
      assert.match(err, /stopping the import of the run's git work/);
      const kept = /stopped \(interrupted\): nothing of it is in your repository\. The run's git directory is kept in (\S+):/.exec(err)?.[1];
      assert.ok(kept, err);
      assert.equal(r.oid('main'), main);
      assert.deepEqual(readdirSync(join(r.env.STASHBASE_HOME as string, 'sessions')).filter((f) => f.endsWith('.json')), []);
      const next = await cli(['agent', 'run', ...flags, '--', 'true'], { env: r.env, cwd: r.root, timeoutMs: 60_000 });
      assert.equal(next.code, 0, next.stderr);
      assert.doesNotMatch(next.stderr, /killed run/);
      spawnSync('rm', ['-rf', kept]);
    });

    test('a run killed with SIGKILL: nothing of it is in your repository until the next run imports it, the same way', async () => {
      const child = spawn(process.execPath, [BIN, 'agent', 'run', ...flags, '--', 'bash', '-c', 'echo k > k.txt && git add k.txt && git commit -qm killed-run && git tag -d v2 && echo ready && sleep 60'], { env: r.env, cwd: r.root, stdio: ['ignore', 'pipe', 'pipe'] });
      await new Promise<void>((res) => child.stdout.on('data', (d: Buffer) => String(d).includes('ready') && res()));
      const main = r.oid('main');
      assert.equal(r.git(['log', '-1', '--format=%s', 'main']).includes('killed-run'), false, 'not yet in yours');
      child.kill('SIGKILL');
      await new Promise((res) => child.on('close', res));
      const next = await cli(['agent', 'run', ...flags, '--', 'true'], { env: r.env, cwd: r.root, timeoutMs: 120_000 });
      assert.equal(next.code, 0, next.stderr);
      assert.match(next.stderr, /^warning: from the killed run ags_[a-z2-7]{16}: the agent added commits to refs\/heads\/main: taken /m);
      assert.match(next.stderr, /^warning: from the killed run ags_[a-z2-7]{16}: the agent deleted refs\/tags\/v2 \(at [0-9a-f]{12}\): not taken \(deletions are not taken\)$/m);
      assert.equal(r.git(['log', '-1', '--format=%s', 'main']), 'killed-run\n');
      assert.equal(r.git(['rev-parse', 'main~1']).trim(), main);
      assert.equal(existsSync(join(r.root, '.git', 'refs', 'tags', 'v2')) || r.git(['tag', '-l', 'v2']) === 'v2\n', true);
    });
  });
}
