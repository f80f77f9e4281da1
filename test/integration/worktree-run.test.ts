// Worktree runs on both backends, attacked by a hostile agent with real git:
// what it may not touch stays as it was, the refs come out as the spec says,
// the user's git afterwards runs nothing it planted; resume and stale locks.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { BIN, cli, needs } from '../helpers.js';
import { docker } from '../docker-setup.js';
import { HOSTILE, hostileExpected, repoHome } from '../worktree-setup.js';

const NAME = /^Worktree: (\S+)\/\.stashbase\/worktrees\/([a-z]+-[a-z]+-[a-z]+) \(branch stashbase\/\2\)$/m;
const nameOf = (stderr: string) => {
  const m = NAME.exec(stderr);
  assert.ok(m, `no worktree announced in: ${stderr}`);
  return m[2] as string;
};

for (const backend of ['native', 'docker'] as const) {
  describe(`worktree runs, ${backend} backend: a hostile agent`, needs('git', backend === 'native' ? 'bwrap' : 'docker'), () => {
    const r = repoHome();
    after(() => r.cleanup());
    const flags = backend === 'docker' ? ['--docker-sandbox', 'true'] : ['--docker-sandbox', 'false'];
    const run = (args: string[], script: string, cwd = r.root) =>
      cli(['agent', 'run', ...flags, ...args, '--', 'bash', '-c', script], { env: r.env, cwd, timeoutMs: 120_000 });

    test('can commit on its own branch only; git files, pointers, the checkout and other worktrees hold; refs checked; host git runs nothing planted', async () => {
      // Per-worktree config on, as some users have it: git then reads each worktree's config.worktree.
      r.git(['config', 'core.repositoryformatversion', '1']);
      r.git(['config', 'extensions.worktreeConfig', 'true']);
      // A kept worktree from an earlier run: "another worktree" to attack.
      const first = await run(['--worktree'], 'echo draft > draft.txt');
      assert.equal(first.code, 0, first.stderr);
      const other = nameOf(first.stderr);
      const before = { main: r.oid('main'), release: r.oid('release'), dev: r.oid('dev'), v1: r.oid('v1'), v2: r.oid('v2'), config: readFileSync(join(r.root, '.git', 'config'), 'utf8'), hooks: readdirSync(join(r.root, '.git', 'hooks')).sort() };

      const res = await run(['--worktree'], `OTHER=${other}\n${HOSTILE}`);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout.trim(), hostileExpected(backend));
      const name = nameOf(res.stderr);
      const dev = r.oid('dev');
      const newb = r.oid('newb');
      const short = (o: string) => o.slice(0, 12);
      const devLog = r.git(['log', '--format=%h %s', `${before.dev}..${dev}`]).trim();
      // Warnings with their continuation lines (a note's, such as the own branch's commits, are left out).
      let inWarning = false;
      const warnings = res.stderr.split('\n').filter((l) => (inWarning = l.startsWith('warning: ') || (inWarning && l.startsWith('  ')))).join('\n');
      // The agent's rewrite of main is not in the user's repository: its id is read from the warning.
      const agentMain = /rewrote refs\/heads\/main \([0-9a-f]{12} -> ([0-9a-f]{12})\)/.exec(warnings)?.[1];
      assert.ok(agentMain, `main's rewrite named: ${warnings}`);
      assert.equal(warnings, [
        `warning: ${r.root}/.git: what the sandbox made there beyond refs, HEAD, the index and objects stays in the run's own git directory, not in yours: commondir, modules`,
        `warning: the agent added commits to refs/heads/dev: taken (undo: git update-ref refs/heads/dev ${before.dev}):`,
        `  ${devLog}`,
        `warning: the agent rewrote refs/heads/main (${short(before.main)} -> ${agentMain}): not taken (it is checked out in your checkout ${r.root})`,
        `warning: the agent created refs/heads/newb at ${short(newb)}: taken (undo: git update-ref -d refs/heads/newb)`,
        `warning: the agent rewrote refs/heads/release (${short(before.release)} -> ${short(r.oid(`${before.release}~1`))}): not taken (rewrites are not taken)`,
        `warning: the agent deleted refs/tags/v1 (at ${short(before.v1)}): not taken (deletions are not taken)`,
        `warning: the agent moved refs/tags/v2 (${short(before.v2)} -> ${short(r.oid(`${before.v2}~1`))}): not taken (tags are not moved)`,
      ].join('\n'));
      assert.match(res.stderr, new RegExp(`^the agent added commits to refs/heads/stashbase/${name}: taken`, 'm'));
      assert.match(res.stderr, new RegExp(`^Worktree ${name} was clean and is removed; its branch stashbase/${name} is kept \\(stashbase agent run --resume ${name} continues it\\)\\.$`, 'm'));
      // Refs as the spec says (the warnings come in ref order): nothing but what was taken changed.
      assert.equal(r.oid('main'), before.main);
      assert.equal(r.oid('release'), before.release);
      assert.equal(r.git(['merge-base', '--is-ancestor', before.dev, dev]), '');
      assert.equal(r.oid('v1'), before.v1);
      assert.equal(r.oid('v2'), before.v2);
      assert.equal(r.git(['log', '-1', '--format=%s', `stashbase/${name}`]).trim(), 'agent: own work');
      // Nothing planted for the user's git.
      assert.equal(readFileSync(join(r.root, '.git', 'config'), 'utf8'), before.config);
      assert.deepEqual(readdirSync(join(r.root, '.git', 'hooks')).sort(), before.hooks);
      for (const f of ['commondir', 'modules']) assert.equal(existsSync(join(r.root, '.git', f)), false, f);
      assert.equal(readFileSync(join(r.root, 'a.txt'), 'utf8'), 'two\n');
      assert.equal(existsSync(join(r.root, '.envrc')), false);
      assert.equal(readFileSync(join(r.root, '.stashbase', 'worktrees', other, 'a.txt'), 'utf8'), 'two\n');
      assert.equal(readFileSync(join(r.root, '.git', 'worktrees', other, 'HEAD'), 'utf8'), `ref: refs/heads/stashbase/${other}\n`);
      // The user's own git, hooks and fsmonitor enabled as usual, in the checkout and in the kept worktree.
      r.git(['status']);
      r.git(['checkout', '-q', 'dev']);
      r.git(['checkout', '-q', 'main']);
      r.git(['status'], join(r.root, '.stashbase', 'worktrees', other));
      assert.equal(existsSync(join(r.root, '.git', 'worktrees', other, 'config.worktree')), false, 'the empty stand-in config.worktree is gone after the run');
      assert.deepEqual(readdirSync(r.home).filter((f) => f.startsWith('PWNED')), []);
      assert.deepEqual(readdirSync(r.dir).filter((f) => f.startsWith('PWNED')), []);
      r.git(['worktree', 'remove', '--force', join(r.root, '.stashbase', 'worktrees', other)]);
    });

    test('--resume continues a kept worktree (uncommitted work included) and recreates a removed one from its branch', async () => {
      const kept = await run(['--worktree'], 'echo wip > wip.txt');
      const k = nameOf(kept.stderr);
      assert.match(kept.stderr, new RegExp(`^Worktree ${k} has uncommitted changes and is kept: ${r.root}/\\.stashbase/worktrees/${k}$`, 'm'));
      const again = await run(['--resume', k], 'cat wip.txt; git add wip.txt && git -c user.name=a -c user.email=a@b.invalid commit -qm wip && echo done');
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.stdout, 'wip\ndone\n');
      assert.equal(nameOf(again.stderr), k);
      assert.match(again.stderr, new RegExp(`^Worktree ${k} was clean and is removed`, 'm'));
      assert.equal(existsSync(join(r.root, '.stashbase', 'worktrees', k)), false);
      const recreated = await run(['--resume', k], 'git log -1 --format=%s; cat wip.txt; git rev-parse --abbrev-ref HEAD');
      assert.equal(recreated.code, 0, recreated.stderr);
      assert.equal(recreated.stdout, `wip\nwip\nstashbase/${k}\n`);
      const none = await run(['--resume', 'no-such-name'], 'true');
      assert.deepEqual([none.code, none.stderr.trim().split('\n').pop()], [2, 'stashbase: there is no agent worktree or branch stashbase/no-such-name to resume']);
    });

    test("(review, rounds 29 and 31) a worktree is checked out with no hook or filter driver of yours, fresh or recreated by --resume: your post-checkout hook and a smudge filter the agent's .gitattributes names ran on its files outside the sandbox; control: your own git worktree add runs both", async () => {
      const hookLog = join(r.home, 'post-checkout.log');
      const smudgeLog = join(r.home, 'smudge.log');
      const hook = join(r.root, '.git', 'hooks', 'post-checkout');
      writeFileSync(hook, `#!/bin/sh\necho "$(pwd)" >> ${hookLog}\n`, { mode: 0o755 });
      try {
        // Run 1: the agent commits a .gitattributes naming your filter for its file, and leaves its worktree clean
        // (removed, the branch kept). (Round 31) Its fresh worktree ran no hook either: HEAD may hold commits a run
        // without a worktree brought back.
        const first = await run(['--worktree'], "printf '*.dat filter=demo\\n' > .gitattributes && echo data > x.dat && git add .gitattributes x.dat && git -c user.name=a -c user.email=a@b.invalid commit -qm attrs && echo done");
        assert.equal(first.code, 0, first.stderr);
        const k = nameOf(first.stderr);
        assert.match(first.stderr, new RegExp(`^Worktree ${k} was clean and is removed`, 'm'));
        assert.equal(existsSync(hookLog), false, 'the fresh worktree ran no hook of yours');
        // The control for the hook: your own git worktree add runs it.
        const hookCtl = join(r.home, `hook-ctl-${k}`);
        assert.equal(spawnSync('git', ['worktree', 'add', '-q', '--detach', hookCtl, 'HEAD'], { cwd: r.root, env: r.env }).status, 0);
        assert.equal(readFileSync(hookLog, 'utf8').trim().split('\n').length, 1, 'control: your git worktree add ran your hook');
        spawnSync('git', ['worktree', 'remove', '--force', hookCtl], { cwd: r.root, env: r.env });
        // Your filter, set up after the agent's run (inside, its git would run it on git add).
        r.git(['config', 'filter.demo.smudge', `sh -c 'echo smudged >> ${smudgeLog}; cat'`]);
        r.git(['config', 'filter.demo.clean', 'cat']);
        r.git(['config', 'filter.demo.required', 'true']);
        // The control for the filter: your git checks the branch out with it.
        const ctl = join(r.home, `ctl-${k}`);
        assert.equal(spawnSync('git', ['-c', 'core.hooksPath=/dev/null', 'worktree', 'add', '-q', ctl, `stashbase/${k}`], { cwd: r.root, env: r.env }).status, 0);
        assert.match(readFileSync(smudgeLog, 'utf8'), /smudged/, 'control: your filter ran on the branch');
        spawnSync('git', ['worktree', 'remove', '--force', ctl], { cwd: r.root, env: r.env });
        rmSync(smudgeLog);
        const resumed = await run(['--resume', k], 'cat x.dat; echo done');
        assert.equal(resumed.code, 0, resumed.stderr);
        assert.equal(resumed.stdout, 'data\ndone\n');
        assert.equal(readFileSync(hookLog, 'utf8').trim().split('\n').length, 1, 'your hook did not run on the recreated worktree');
        assert.equal(existsSync(smudgeLog), false, 'your filter did not run on its files');
      } finally {
        rmSync(hook, { force: true });
        rmSync(hookLog, { force: true });
        spawnSync('git', ['config', '--remove-section', 'filter.demo'], { cwd: r.root, env: r.env });
      }
    });

    test("(review, round 30) the end of a worktree run checks it with none of your filter drivers: the agent's .gitattributes named your clean filter for its file, and stashbase's git status ran it on the host; control: your git status in the worktree runs it", async () => {
      const cleanLog = join(r.home, 'clean.log');
      r.git(['config', 'filter.demo.clean', `sh -c 'echo cleaned >> ${cleanLog}; cat'`]);
      r.git(['config', 'filter.demo.smudge', 'cat']);
      try {
        // The same size as a.txt's own content: git must read it (through the clean filter) to know it changed.
        const res = await run(['--worktree'], "printf '*.txt filter=demo\\n' > .gitattributes && sleep 1 && printf 'TWO\\n' > a.txt && echo done");
        assert.equal(res.code, 0, res.stderr);
        assert.equal(res.stdout, 'done\n');
        const k = nameOf(res.stderr);
        assert.match(res.stderr, new RegExp(`^Worktree ${k} has uncommitted changes and is kept`, 'm'));
        assert.equal(existsSync(cleanLog), false, 'no filter of yours ran on the host');
        const listed = await cli(['agent', 'worktrees', 'list'], { env: r.env, cwd: r.root });
        assert.equal(listed.code, 0, listed.stderr);
        assert.equal(existsSync(cleanLog), false, 'nor on agent worktrees list');
        // The control: your own git status there runs your filter on the agent's file.
        spawnSync('git', ['status', '--porcelain'], { cwd: join(r.root, '.stashbase', 'worktrees', k), env: r.env });
        assert.match(readFileSync(cleanLog, 'utf8'), /cleaned/);
        assert.equal((await cli(['agent', 'worktrees', 'remove', k, '--yes'], { env: r.env, cwd: r.root })).code, 0);
      } finally {
        spawnSync('git', ['config', '--remove-section', 'filter.demo'], { cwd: r.root, env: r.env });
        rmSync(cleanLog, { force: true });
      }
    });

    test("(review, round 33) a filter of yours with an empty name (`[filter \"\"]`, which an attribute `filter=` names) is emptied too: the end-of-run status ran it on the agent's file; control: your git status in the worktree runs it", async () => {
      const cleanLog = join(r.home, 'unnamed.log');
      r.git(['config', 'filter..clean', `sh -c 'echo cleaned >> ${cleanLog}; cat'`]);
      try {
        const res = await run(['--worktree'], "printf '*.txt filter=\\n' > .gitattributes && sleep 1 && printf 'TWO\\n' > a.txt && echo done");
        assert.equal(res.code, 0, res.stderr);
        assert.equal(res.stdout, 'done\n');
        const k = nameOf(res.stderr);
        assert.equal(existsSync(cleanLog), false, 'no filter of yours ran on the host');
        spawnSync('git', ['status', '--porcelain'], { cwd: join(r.root, '.stashbase', 'worktrees', k), env: r.env });
        assert.match(readFileSync(cleanLog, 'utf8'), /cleaned/, 'control: your git status runs it');
        assert.equal((await cli(['agent', 'worktrees', 'remove', k, '--yes'], { env: r.env, cwd: r.root })).code, 0);
      } finally {
        spawnSync('git', ['config', '--remove-section', 'filter.'], { cwd: r.root, env: r.env });
        rmSync(cleanLog, { force: true });
      }
    });

    test("(review, round 33) the end-of-run check reads a split index without your fsmonitor hook: its git ls-files ran the hook in the agent's worktree; control: your git ls-files there runs it", async () => {
      const log = join(r.home, 'fsmonitor.log');
      const hook = join(r.home, 'fsmonitor-hook');
      writeFileSync(hook, `#!/bin/sh\necho "ran in $PWD" >> ${log}\nexit 1\n`, { mode: 0o755 });
      r.git(['config', 'core.fsmonitor', hook]);
      r.git(['config', 'core.splitIndex', 'true']);
      try {
        const res = await run(['--worktree'], 'echo done');
        assert.equal(res.code, 0, res.stderr);
        assert.equal(res.stdout, 'done\n');
        assert.equal(existsSync(log), false, existsSync(log) ? readFileSync(log, 'utf8') : '');
        // The control: your own git ls-files in the checkout (a split index) runs it.
        spawnSync('git', ['ls-files', '--stage'], { cwd: r.root, env: r.env });
        assert.match(readFileSync(log, 'utf8'), /ran in /);
      } finally {
        spawnSync('git', ['config', '--unset', 'core.fsmonitor'], { cwd: r.root, env: r.env });
        spawnSync('git', ['config', '--unset', 'core.splitIndex'], { cwd: r.root, env: r.env });
        rmSync(log, { force: true });
      }
    });

    /**
     * A filter of yours that logs when it runs (its name, `log`), defined in a file of its own that your ~/.gitconfig
     * includes under `condition` once `include()` is called; `undo()` puts ~/.gitconfig back.
     */
    const conditionalFilter = (name: string, condition: string) => {
      const log = join(r.home, `${name}.log`);
      const file = join(r.home, `.gitconfig-${name}`);
      writeFileSync(file, `[filter "${name}"]\n\tclean = "sh -c 'echo cleaned >> ${log}; cat'"\n\tsmudge = "sh -c 'echo smudged >> ${log}; cat'"\n`);
      const global = join(r.home, '.gitconfig');
      const before = readFileSync(global, 'utf8');
      return {
        log,
        ran: () => (existsSync(log) ? readFileSync(log, 'utf8') : ''),
        include: () => writeFileSync(global, `${before}[includeIf "${condition}"]\n\tpath = ${file}\n`),
        undo: () => (writeFileSync(global, before), rmSync(log, { force: true })),
      };
    };

    test("(review, round 31) a nested repository the agent registers as a submodule, whose remote URL matches your config's conditional include naming a clean filter: stashbase's status runs no git inside it, and the worktree, holding a submodule, is kept (it ended the run with exit 1); control: your git status there runs the filter", async () => {
      const corp = conditionalFilter('corp', 'hasconfig:remote.*.url:https://git.corp.example/**');
      try {
        const plant = [
          'git init -q nested && cd nested && git config remote.origin.url https://git.corp.example/x',
          "printf '* filter=corp\\n' > .gitattributes && echo payload > f && git add . && git -c user.name=a -c user.email=a@b.invalid commit -qm s && cd ..",
          'git update-index --add --cacheinfo "160000,$(git -C nested rev-parse HEAD),nested" && git -c user.name=a -c user.email=a@b.invalid commit -qm "add sub" && sleep 1 && printf "PAYLOAD\\n" > nested/f && echo done',
        ].join(' && ');
        const res = await run(['--worktree'], plant);
        assert.equal(res.code, 0, res.stderr);
        assert.equal(res.stdout, 'done\n');
        const k = nameOf(res.stderr);
        // Kept: it holds a submodule (git worktree remove refuses one, and the run ended with exit 1).
        assert.match(res.stderr, new RegExp(`^Worktree ${k} has uncommitted changes and is kept`, 'm'));
        // Your conditional include, in place from now on (inside the run your filter would have run in the sandbox).
        corp.include();
        assert.equal((await cli(['agent', 'worktrees', 'list'], { env: r.env, cwd: r.root })).code, 0);
        assert.equal(corp.ran(), '', 'no filter of yours ran on agent worktrees list');
        // The control: your git status in the worktree recurses into the submodule, where your include matches.
        const ctl = spawnSync('git', ['status', '--porcelain'], { cwd: join(r.root, '.stashbase', 'worktrees', k), env: r.env, encoding: 'utf8' });
        assert.match(corp.ran(), /cleaned/, `${ctl.stdout}${ctl.stderr}`);
        rmSync(corp.log);
        assert.equal((await cli(['agent', 'worktrees', 'remove', k, '--yes'], { env: r.env, cwd: r.root })).code, 0);
        assert.equal(corp.ran(), '', 'nor on agent worktrees remove');
      } finally {
        corp.undo();
      }
    });

    test("(review, round 32) a worktree's files are checked out in it, with the drivers your config names there emptied: an includeIf \"onbranch:stashbase/**\" named a smudge filter the listing in your checkout never saw; control: your own git worktree add of such a branch runs it", async () => {
      const ob = conditionalFilter('ob', 'onbranch:stashbase/**');
      const start = r.oid('HEAD');
      writeFileSync(join(r.root, '.gitattributes'), '*.txt filter=ob\n');
      r.git(['add', '.gitattributes']);
      r.git(['commit', '-qm', 'attributes']);
      ob.include();
      try {
        const res = await run(['--worktree'], 'cat a.txt');
        assert.equal(res.code, 0, res.stderr);
        assert.equal(ob.ran(), '', 'no filter of yours ran on the checkout');
        // The control: your git checks such a branch out with the filter the include names.
        const ctl = join(r.home, 'onbranch-ctl');
        assert.equal(spawnSync('git', ['-c', 'core.hooksPath=/dev/null', 'worktree', 'add', '-q', '-b', 'stashbase/onbranch-ctl', ctl, 'HEAD'], { cwd: r.root, env: r.env }).status, 0);
        assert.match(ob.ran(), /smudged/);
        spawnSync('git', ['worktree', 'remove', '--force', ctl], { cwd: r.root, env: r.env });
        spawnSync('git', ['branch', '-D', 'stashbase/onbranch-ctl'], { cwd: r.root, env: r.env });
      } finally {
        ob.undo();
        r.git(['reset', '-q', '--hard', start]);
      }
    });

    test('from a subdirectory: the same subdirectory of the worktree; dirty checkout warned; the exclude line written once', async () => {
      r.git(['checkout', '-q', 'main']);
      const sub = join(r.root, 'sub', 'dir');
      const dirtyFile = join(r.root, 'a.txt');
      const orig = readFileSync(dirtyFile, 'utf8');
      (await import('node:fs')).writeFileSync(dirtyFile, 'mine, uncommitted\n');
      const res = await run(['--worktree'], 'pwd; cat ../../a.txt', sub);
      (await import('node:fs')).writeFileSync(dirtyFile, orig);
      assert.equal(res.code, 0, res.stderr);
      const name = nameOf(res.stderr);
      assert.equal(res.stdout, `${r.root}/.stashbase/worktrees/${name}/sub/dir\ntwo\n`);
      assert.match(res.stderr, /^warning: your checkout has uncommitted changes; they are not carried over into the agent's worktree$/m);
      const exclude = readFileSync(join(r.root, '.git', 'info', 'exclude'), 'utf8').split('\n');
      assert.deepEqual(exclude.filter((l) => l === '/.stashbase/worktrees/'), ['/.stashbase/worktrees/']);
      assert.equal(r.git(['status', '--porcelain']), '');
    });

    if (backend === 'docker') {
      test('isolated-path volumes are per worktree and go with it', async () => {
        const list = () => docker(['volume', 'ls', '--filter', 'label=stashbase.isolated-path', '--format', '{{.Name}}|{{.Label "stashbase.repo"}}']).split('\n').filter(Boolean);
        const res = await run(['--worktree', '--docker-isolated-paths', 'node_modules'], 'echo x > node_modules/dep.js && echo wip > wip.txt');
        assert.equal(res.code, 0, res.stderr);
        const name = nameOf(res.stderr);
        const path = join(r.root, '.stashbase', 'worktrees', name);
        assert.equal(list().filter((v) => v.endsWith(`|${path}`)).length, 1);
        const removed = await cli(['agent', 'worktrees', 'remove', name, '--yes'], { env: r.env, cwd: r.root });
        assert.equal(removed.code, 0, removed.stderr);
        assert.deepEqual(list().filter((v) => v.endsWith(`|${path}`)), []);
        const clean = await run(['--worktree', '--docker-isolated-paths', 'node_modules'], 'echo x > node_modules/dep.js');
        const p2 = join(r.root, '.stashbase', 'worktrees', nameOf(clean.stderr));
        assert.equal(existsSync(p2), false);
        assert.deepEqual(list().filter((v) => v.endsWith(`|${p2}`)), []);
      });
    }
  });
}

describe('worktree runs: a run killed hard leaves a stale lock that is recognised and released', needs('git', 'bwrap'), () => {
  const r = repoHome();
  after(() => r.cleanup());
  /** What the run said once its sandbox is up; a run that ends before fails the test with what it said (never a wait without end). */
  const started = (c: ChildProcess) => new Promise<string>((resolve, reject) => {
    let said = '';
    c.stderr?.setEncoding('utf8').on('data', (d: string) => {
      said += d;
      if (/^Sandbox: /m.test(said)) resolve(said);
    });
    c.on('exit', (code, signal) => reject(new Error(`the run ended (${code ?? signal}) before its sandbox was up: ${said}`)));
  });
  test('SIGKILL during the run: list says stale lock, --resume takes it over, remove releases it', { timeout: 180_000 }, async () => {
    const child = spawn(process.execPath, [BIN, 'agent', 'run', '--worktree', '--', 'sleep', '60'], { env: r.env, cwd: r.root, stdio: ['ignore', 'ignore', 'pipe'] });
    const err = await started(child);
    const name = nameOf(err);
    const running = await cli(['agent', 'worktrees', 'list', '--json'], { env: r.env, cwd: r.root });
    assert.deepEqual(JSON.parse(running.stdout).map((w: { name: string; status: string }) => [w.name, w.status]), [[name, 'running']]);
    const refused = await cli(['agent', 'worktrees', 'remove', name, '--yes'], { env: r.env, cwd: r.root });
    assert.deepEqual([refused.code, refused.stderr], [1, `stashbase: ${name} is running: a run is still using it; nothing was removed\n`]);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('close', resolve));
    const listed = await cli(['agent', 'worktrees', 'list'], { env: r.env, cwd: r.root });
    assert.match(listed.stdout, new RegExp(`^${name}  stashbase/${name}  clean \\(stale lock\\)  0 +${r.root}/\\.stashbase/worktrees/${name}$`, 'm'));
    const resumed = await cli(['agent', 'run', '--resume', name, '--', 'true'], { env: r.env, cwd: r.root });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(existsSync(join(r.root, '.stashbase', 'worktrees', name)), false);
    // Again, then removed by hand: the stale lock is released on removal.
    const again = spawn(process.execPath, [BIN, 'agent', 'run', '--resume', name, '--', 'sleep', '60'], { env: r.env, cwd: r.root, stdio: ['ignore', 'ignore', 'pipe'] });
    await started(again);
    again.kill('SIGKILL');
    await new Promise((resolve) => again.on('close', resolve));
    const removed = await cli(['agent', 'worktrees', 'remove', name, '--keep-branch'], { env: r.env, cwd: r.root });
    assert.deepEqual([removed.code, removed.stdout], [0, `removed worktree ${name}; branch stashbase/${name} kept (stashbase agent run --resume ${name} recreates it)\n`]);
    assert.equal(r.git(['worktree', 'list', '--porcelain']).includes(name), false);
  });
});
