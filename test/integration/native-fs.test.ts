// Attacks on the native backend's filesystem rules, with real bwrap. Every
// attack is also run outside the sandbox, where it must succeed.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cli, needs, writeFile } from '../helpers.js';
import { attackHome } from '../native-setup.js';

describe('native filesystem (real bwrap)', needs('bwrap'), () => {
  const a = attackHome();
  const h = a.home;
  // The same rules with the spec's deny-list writes: the home writable, protections as mounts in it.
  const d = attackHome('writes = "deny-list"');
  const dh = d.home;
  after(() => {
    a.cleanup();
    d.cleanup();
  });

  test('a denied file reads as Permission denied', async () => {
    assert.equal((await a.outside(`cat ${h}/secret.txt`)).stdout, 'TOPSECRET\n');
    const r = await a.inside(`cat ${h}/secret.txt`);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /cat: .*secret\.txt: Permission denied/);
  });

  test('a denied directory appears empty', async () => {
    assert.equal((await a.outside(`ls -A ${h}/secretdir`)).stdout, 'inner.txt\n');
    const r = await a.inside(`ls -A ${h}/secretdir; echo "rc=$?"; cat ${h}/secretdir/inner.txt`);
    assert.equal(r.stdout, 'rc=0\n');
    assert.match(r.stderr, /No such file or directory/);
  });

  test('a denied directory refuses writes; after a chmod they stay in the sandbox, and the host copy is untouched', async () => {
    const r = await a.inside(
      `echo x > ${h}/secretdir/new; chmod 700 ${h}/secretdir && echo y > ${h}/secretdir/new && cat ${h}/secretdir/new; ls -A ${h}/secretdir`,
    );
    assert.equal(r.stdout, 'y\nnew\n');
    assert.match(r.stderr, /secretdir\/new: Permission denied/);
    assert.deepEqual([(await a.outside(`ls -A ${h}/secretdir`)).stdout, existsSync(join(h, 'secretdir', 'new'))], ['inner.txt\n', false]);
  });

  test('through a symlink made beforehand and through /proc/self/root', async () => {
    assert.equal((await a.outside(`cat ${h}/link-to-secret /proc/self/root${h}/secret.txt`)).stdout, 'TOPSECRET\nTOPSECRET\n');
    const r = await a.inside(`cat ${h}/link-to-secret; cat /proc/self/root${h}/secret.txt; cat /proc/1/root${h}/secret.txt`);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr.match(/Permission denied/g)?.length, 3, r.stderr);
  });

  test('through /proc/<pid>/cwd of a process sitting in the denied directory', async () => {
    assert.equal((await a.outside(`cd ${h}/secretdir && sh -c 'cat /proc/$$/cwd/inner.txt'`)).stdout, 'INNER\n');
    const r = await a.inside(`cd ${h}/secretdir && sleep 5 & sleep 0.3; cat /proc/$!/cwd/inner.txt; ls -A /proc/$!/cwd; cd ${h}/secretdir && cat /proc/self/cwd/inner.txt; kill $! 2>/dev/null; echo end`);
    assert.equal(r.stdout, 'end\n');
    assert.doesNotMatch(r.stdout + r.stderr, /INNER/);
  });

  test('renaming a parent away does not expose it: pinned where the sandbox can write, read-only elsewhere', async () => {
    // deny-list writes: the home is writable, the parents of a denied path are mount points.
    const r = await d.inside(`mv ${dh}/parent ${dh}/parent2; mv ${dh}/parent/child ${dh}/parent/c2; ls ${dh}; cat ${dh}/parent/child/key ${dh}/parent2/child/key ${dh}/parent/c2/key`);
    assert.doesNotMatch(r.stdout, /KEY/);
    assert.match(r.stderr, /mv: cannot move .*Device or resource busy/);
    assert.equal(readFileSync(join(dh, 'parent', 'child', 'key'), 'utf8'), 'KEY\n');
    assert.equal(existsSync(join(dh, 'parent2')), false);
    // allow-list writes: the home is read-only; in the working directory the parent of secrets/*.pem is pinned.
    const ro = await a.inside(`mv ${h}/parent ${h}/parent2; mv secrets secrets2; cat ${h}/parent2/child/key secrets2/a.pem`);
    assert.doesNotMatch(ro.stdout, /KEY|PEM-A/);
    assert.match(ro.stderr, /mv: cannot move .*parent.*Read-only file system/);
    assert.match(ro.stderr, /mv: cannot move 'secrets'.*Device or resource busy/);
    assert.deepEqual([existsSync(join(h, 'parent2')), existsSync(join(a.proj, 'secrets2'))], [false, false]);
    // the same renames work outside
    assert.equal((await d.outside(`mv ${dh}/parent ${dh}/parent2 && mv ${dh}/parent2 ${dh}/parent && mv secrets secrets2 && mv secrets2 secrets && echo ok`)).stdout, 'ok\n');
  });

  test('a hard link made inside the sandbox does not reach the file', async () => {
    const r = await d.inside(`ln ${dh}/secret.txt ${dh}/hl; cat ${dh}/hl`);
    assert.doesNotMatch(r.stdout, /TOPSECRET/);
    assert.match(r.stderr, /ln: failed to create hard link .*Invalid cross-device link/);
    assert.equal(existsSync(join(dh, 'hl')), false);
    // allow-list writes: into the working directory, the one place it can write
    const ro = await a.inside(`ln ${h}/secret.txt hl; cat hl`);
    assert.doesNotMatch(ro.stdout, /TOPSECRET/);
    assert.match(ro.stderr, /ln: failed to create hard link .*Invalid cross-device link/);
    assert.equal((await d.outside(`ln ${dh}/secret.txt ${dh}/hl && cat ${dh}/hl && rm ${dh}/hl`)).stdout, 'TOPSECRET\n');
  });

  test('deny_write paths are read-only', async () => {
    const r = await a.inside(`echo x >> ${h}/ro.txt; touch ${h}/rodir/new; chmod 777 ${h}/ro.txt; cat ${h}/ro.txt`);
    assert.equal(r.stdout, 'RO\n');
    assert.equal(r.stderr.match(/Read-only file system/g)?.length, 3, r.stderr);
    assert.equal(readFileSync(join(h, 'ro.txt'), 'utf8'), 'RO\n');
    assert.equal(existsSync(join(h, 'rodir', 'new')), false);
    assert.equal((await a.outside(`touch ${h}/rodir/new && rm ${h}/rodir/new && echo ok`)).stdout, 'ok\n');
  });

  test('a denied path that did not exist cannot be created, and nothing is left on the host', async () => {
    const r = await a.inside(`mkdir -p ${h}/missing-dir/x; echo x > ${h}/missing-dir/f; echo x > ${h}/missing-read; rmdir ${h}/missing-dir; echo done`);
    assert.equal(r.stdout, 'done\n');
    assert.equal(existsSync(join(h, 'missing-dir')), false);
    assert.equal(existsSync(join(h, 'missing-read')), false);
    assert.equal((await a.outside(`echo x > ${h}/missing-read && rm ${h}/missing-read && echo ok`)).stdout, 'ok\n');
  });

  test('default profile without a ~/.gitconfig: git works inside, the file cannot be planted, and nothing stands in for it on the host', async () => {
    assert.equal(existsSync(join(h, '.gitconfig')), false);
    const marker = join(a.proj, 'run-is-going');
    const script = [
      'git config --global --get user.name; echo "get=$?"',
      'echo "[core] fsmonitor = x" >> ~/.gitconfig 2>/dev/null && echo planted || echo blocked',
      'mkdir -p gitrepo && git -C gitrepo init -q && echo init=ok',
      `touch ${marker}; sleep 2`,
    ].join('; ');
    const running = cli(['agent', 'run', '--silent', '--', 'sh', '-c', script], { env: a.env, cwd: a.proj });
    while (!existsSync(marker)) await new Promise((res) => setTimeout(res, 50));
    // The home is read-only inside: no stand-in is needed, so your git sees your home as it is.
    assert.equal(existsSync(join(h, '.gitconfig')), false, 'no stand-in during the run');
    const r = await running;
    assert.deepEqual([r.code, r.stdout], [0, 'get=1\nblocked\ninit=ok\n']);
    assert.equal(existsSync(join(h, '.gitconfig')), false);
    rmSync(join(a.proj, 'gitrepo'), { recursive: true });
    rmSync(marker);
  });

  test('default profile: the git and shell files the host later runs cannot be changed (existing .git/config and hooks, ~/.bashrc, ~/.gitconfig)', async () => {
    const repo = join(a.dir, 'plain-repo');
    const g = (args: string[]) => spawnSync('git', args, { cwd: repo, env: a.env, encoding: 'utf8' });
    mkdirSync(repo, { recursive: true });
    assert.equal(g(['init', '-q']).status, 0);
    assert.equal(g(['-c', 'user.name=me', '-c', 'user.email=me@x', 'commit', '-q', '--allow-empty', '-m', 'init']).status, 0);
    // A linked worktree of yours, and a submodule's git directory: git reads their files too.
    assert.equal(g(['worktree', 'add', '-q', join(a.dir, 'plain-repo-wt')]).status, 0, 'worktree add');
    mkdirSync(join(repo, '.git', 'modules', 'sub', 'hooks'), { recursive: true });
    writeFileSync(join(repo, '.git', 'modules', 'sub', 'config'), '[core]\n\tbare = false\n');
    writeFileSync(join(h, '.bashrc'), '# mine\n');
    writeFileSync(join(h, '.gitconfig'), '[user]\n\tname = Me\n');
    const before = ['.git/config'].map((f) => readFileSync(join(repo, f), 'utf8'));
    // Inside, git's config is yours, read-only; a commondir or config.worktree lands in the run's own git directory. What the host keeps is checked after.
    const script = [
      'try() { if (eval "$1") >/dev/null 2>&1; then echo "WROTE $2"; else echo "blocked $2"; fi; }',
      'git status --short >/dev/null && echo status-ok',
      `try 'git config core.fsmonitor "touch ${a.dir}/PWNED"' fsmonitor`,
      `try 'git config core.sshCommand "touch ${a.dir}/PWNED"' sshCommand`,
      `try 'git config --add include.path /tmp/x' include`,
      `try 'echo "touch ${a.dir}/PWNED" > .git/hooks/pre-commit' hook`,
      `try 'echo "touch ${a.dir}/PWNED" >> ~/.bashrc' bashrc`,
      `try 'git config --global core.pager "touch ${a.dir}/PWNED"' gitconfig`,
      // .git/commondir would send git to another directory's config (and its fsmonitor).
      `try 'echo ${a.dir} > .git/commondir' commondir`,
      `try 'printf "[core]\\n\\tfsmonitor = x\\n" > .git/config.worktree' config.worktree`,
      `try 'echo "[core] fsmonitor = x" >> .git/modules/sub/config' module-config`,
      `try 'echo x > .git/modules/sub/commondir' module-commondir`,
      `try 'echo x > .git/modules/sub/hooks/post-checkout' module-hook`,
      `try 'echo /tmp > .git/worktrees/plain-repo-wt/commondir' worktree-commondir`,
      `try 'echo "[core] fsmonitor = x" > .git/worktrees/plain-repo-wt/config.worktree' worktree-config`,
    ].join('\n');
    const r = await cli(['agent', 'run', '--silent', '--', 'sh', '-c', script], { env: a.env, cwd: repo });
    assert.deepEqual([r.code, r.stdout], [0, 'status-ok\nblocked fsmonitor\nblocked sshCommand\nblocked include\nblocked hook\nblocked bashrc\nblocked gitconfig\nWROTE commondir\nWROTE config.worktree\n' +
      'blocked module-config\nblocked module-commondir\nblocked module-hook\nblocked worktree-commondir\nblocked worktree-config\n']);
    // Said even with --silent: what the sandbox did to git's own files did not reach yours.
    assert.match(r.stderr, /\/\.git: what the sandbox made there beyond refs, HEAD, the index and objects stays in the run's own git directory, not in yours: commondir, config\.worktree$/m);
    assert.equal(readFileSync(join(repo, '.git', 'modules', 'sub', 'config'), 'utf8'), '[core]\n\tbare = false\n');
    assert.equal(g(['-C', join(a.dir, 'plain-repo-wt'), 'status', '--short']).status, 0, 'your worktree still works');
    assert.equal(existsSync(join(repo, '.git', 'commondir')), false, 'no commondir reached your .git');
    assert.equal(existsSync(join(repo, '.git', 'config.worktree')), false, 'nor a config.worktree');
    assert.equal(existsSync(join(a.dir, 'PWNED')), false);
    assert.deepEqual(['.git/config'].map((f) => readFileSync(join(repo, f), 'utf8')), before);
    assert.deepEqual([readFileSync(join(h, '.bashrc'), 'utf8'), readFileSync(join(h, '.gitconfig'), 'utf8'), existsSync(join(repo, '.git', 'hooks', 'pre-commit'))], ['# mine\n', '[user]\n\tname = Me\n', false]);
    // The control: the same writes outside the sandbox work.
    assert.equal((await a.outside(`cd ${repo} && git config core.fsmonitor false && echo ok`)).stdout, 'ok\n');
    rmSync(join(h, '.bashrc'));
    rmSync(join(h, '.gitconfig'));
  });

  test('core.hooksPath folders (the repository one, and a missing global one) cannot be filled with hooks', async () => {
    const repo = join(a.dir, 'husky-repo');
    const g = (args: string[]) => spawnSync('git', args, { cwd: repo, env: a.env, encoding: 'utf8' });
    mkdirSync(join(repo, '.husky'), { recursive: true });
    assert.equal(g(['init', '-q']).status, 0);
    assert.equal(g(['config', 'core.hooksPath', '.husky']).status, 0);
    writeFileSync(join(repo, '.husky', 'pre-commit'), '#!/bin/sh\nnpm test\n');
    writeFileSync(join(h, '.gitconfig'), '[core]\n\thooksPath = ~/.githooks\n');
    const script = [
      'try() { if (eval "$1") >/dev/null 2>&1; then echo "WROTE $2"; else echo "blocked $2"; fi; }',
      `try 'echo "touch ${a.dir}/PWNED" >> .husky/pre-commit' repo-hook`,
      `try 'echo "touch ${a.dir}/PWNED" > .husky/post-checkout' repo-new-hook`,
      `try 'mkdir -p ~/.githooks && echo "touch ${a.dir}/PWNED" > ~/.githooks/pre-commit' global-hook`,
    ].join('\n');
    const r = await cli(['agent', 'run', '--silent', '--', 'sh', '-c', script], { env: a.env, cwd: repo });
    assert.deepEqual([r.code, r.stdout], [0, 'blocked repo-hook\nblocked repo-new-hook\nblocked global-hook\n']);
    assert.deepEqual(readdirSync(join(repo, '.husky')), ['pre-commit']);
    assert.equal(readFileSync(join(repo, '.husky', 'pre-commit'), 'utf8'), '#!/bin/sh\nnpm test\n');
    assert.equal(existsSync(join(h, '.githooks')), false, 'the stand-in is removed after the run');
    // The control: outside, the folder takes a hook.
    assert.equal((await a.outside(`cd ${repo} && echo x > .husky/post-checkout && rm .husky/post-checkout && echo ok`)).stdout, 'ok\n');
    rmSync(join(h, '.gitconfig'));
  });

  test("(review, round 33) files in the tree your git runs because your config or a hook names them are read-only: a clean filter's script, one a hook of yours execs (a hook that is a link into the tree refuses the run: git-link tests); unlisted: core.sshCommand's wrapper; control: outside, the script is rewritten and your git add runs it", async () => {
    const repo = join(a.dir, 'named-repo');
    const g = (args: string[]) => spawnSync('git', args, { cwd: repo, env: a.env, encoding: 'utf8' });
    mkdirSync(join(repo, 'scripts'), { recursive: true });
    assert.equal(g(['init', '-q']).status, 0);
    for (const f of ['clean.sh', 'check', 'ssh-wrap']) writeFileSync(join(repo, 'scripts', f), 'cat\n', { mode: 0o755 });
    writeFileSync(join(repo, '.gitattributes'), '*.txt filter=strip\n');
    assert.equal(g(['config', 'filter.strip.clean', 'sh scripts/clean.sh']).status, 0);
    assert.equal(g(['config', 'core.sshCommand', './scripts/ssh-wrap -F /dev/null']).status, 0);
    writeFileSync(join(repo, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\nexec ./scripts/check "$@"\n', { mode: 0o755 });
    const marker = join(a.dir, 'CLEANED');
    const script = [
      'try() { if (eval "$1") >/dev/null 2>&1; then echo "WROTE $2"; else echo "blocked $2"; fi; }',
      `try 'echo "touch ${marker}; cat" > scripts/clean.sh' filter`,
      `try 'echo "touch ${marker}" >> scripts/check' wrapped-hook`,
      `try 'echo "touch ${marker}" >> scripts/ssh-wrap' ssh-command`,
      `try 'echo x > scripts/other' other-file`,
    ].join('\n');
    const r = await cli(['agent', 'run', '--silent', '--', 'sh', '-c', script], { env: a.env, cwd: repo });
    assert.deepEqual([r.code, r.stdout], [0, 'blocked filter\nblocked wrapped-hook\nblocked ssh-command\nWROTE other-file\n'], r.stderr);
    for (const f of ['clean.sh', 'check', 'ssh-wrap']) assert.equal(readFileSync(join(repo, 'scripts', f), 'utf8'), 'cat\n', f);
    // The control: outside, the script is rewritten, and your next git add runs it.
    assert.equal((await a.outside(`cd ${repo} && echo "touch ${marker}; cat" > scripts/clean.sh && echo x > a.txt && git add a.txt && echo ok`)).stdout, 'ok\n');
    assert.equal(existsSync(marker), true, 'your git add ran the rewritten filter');
  });

  test("(review, round 33, second pass) what your git runs is found however it is named and wherever your git works in the tree: a script after `cd tools &&`, one after `$(git rev-parse --show-toplevel)/`, a submodule's own filter script and hooks folder, your linked worktree's relative hooks folder; a link on the way is put back as the run ends; unlisted: a Python module a filter runs with -m; a file named like a command or a branch (`main`) stays writable; controls: outside, your commit and your status run what the agent wrote", async () => {
    const repo = join(a.dir, 'named-2');
    const g = (args: string[], cwd = repo) => spawnSync('git', args, { cwd, env: a.env, encoding: 'utf8' });
    mkdirSync(join(repo, 'scripts'), { recursive: true });
    mkdirSync(join(repo, 'tools', 'lint'), { recursive: true });
    assert.equal(g(['init', '-q']).status, 0);
    for (const f of ['scripts/check', 'tools/fmt.sh', 'tools/clean-impl.sh', 'tools/lint/__main__.py', 'main']) writeFileSync(join(repo, f), 'true\n', { mode: 0o755 });
    symlinkSync('../tools/clean-impl.sh', join(repo, 'scripts', 'clean.sh'));
    writeFileSync(join(repo, '.gitignore'), 'wt/\n');
    writeFileSync(join(repo, '.gitattributes'), '*.txt filter=a\n');
    assert.equal(g(['add', '-A']).status, 0);
    assert.equal(g(['-c', 'user.name=u', '-c', 'user.email=u@x', 'commit', '-qm', 'i']).status, 0);
    assert.equal(g(['config', 'alias.fmt', '!cd tools && ./fmt.sh']).status, 0);
    assert.equal(g(['config', 'filter.a.clean', 'sh scripts/clean.sh']).status, 0);
    assert.equal(g(['config', 'filter.py.clean', 'python3 -m tools.lint']).status, 0);
    assert.equal(g(['config', 'alias.st', 'status']).status, 0);
    writeFileSync(join(repo, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\nexec "$(git rev-parse --show-toplevel)/scripts/check"\n', { mode: 0o755 });
    // A submodule checked out in the tree, with a filter and a hooks folder of its own.
    const sub = join(repo, 'sub');
    mkdirSync(join(sub, 'scripts'), { recursive: true });
    mkdirSync(join(sub, '.githooks'), { recursive: true });
    assert.equal(g(['init', '-q'], sub).status, 0);
    writeFileSync(join(sub, 'scripts', 'clean.sh'), 'cat\n');
    writeFileSync(join(sub, '.githooks', 'pre-commit'), 'true\n', { mode: 0o755 });
    writeFileSync(join(sub, '.gitattributes'), '*.txt filter=s\n');
    assert.equal(g(['config', 'filter.s.clean', 'sh scripts/clean.sh'], sub).status, 0);
    assert.equal(g(['config', 'core.hooksPath', '.githooks'], sub).status, 0);
    writeFileSync(join(repo, '.gitmodules'), '[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n');
    // Your linked worktree inside the tree, with a relative hooks folder.
    assert.equal(g(['worktree', 'add', '-q', join(repo, 'wt', 'feature')]).status, 0);
    mkdirSync(join(repo, 'wt', 'feature', '.githooks'));
    writeFileSync(join(repo, 'wt', 'feature', '.githooks', 'pre-commit'), 'true\n', { mode: 0o755 });
    assert.equal(g(['config', 'extensions.worktreeConfig', 'true']).status, 0);
    assert.equal(g(['config', '--worktree', 'core.hooksPath', '.githooks'], join(repo, 'wt', 'feature')).status, 0);
    const marker = join(a.dir, 'NAMED-2');
    const script = [
      'try() { if (eval "$1") >/dev/null 2>&1; then echo "WROTE $2"; else echo "blocked $2"; fi; }',
      `try 'echo "touch ${marker}" >> tools/fmt.sh' cd-alias`,
      `try 'echo "touch ${marker}" >> scripts/check' toplevel-hook`,
      `try 'echo "import os" >> tools/lint/__main__.py' python-module`,
      `try 'echo "touch ${marker}; cat" > sub/scripts/clean.sh' submodule-filter`,
      `try 'echo "touch ${marker}" > sub/.githooks/post-commit' submodule-hooks`,
      `try 'echo "touch ${marker}" >> wt/feature/.githooks/pre-commit' worktree-hooks`,
      `try 'echo rebuilt > main' command-named-file`,
      `try 'rm scripts/clean.sh && echo "touch ${marker}; cat" > scripts/clean.sh' link-swap`,
    ].join('\n');
    const r = await cli(['agent', 'run', '--silent', '--', 'sh', '-c', script], { env: a.env, cwd: repo });
    assert.deepEqual([r.code, r.stdout], [0, 'blocked cd-alias\nblocked toplevel-hook\nblocked python-module\nblocked submodule-filter\nblocked submodule-hooks\nblocked worktree-hooks\nWROTE command-named-file\nWROTE link-swap\n'], r.stderr);
    assert.match(r.stderr, /the agent replaced .*\/scripts\/clean\.sh, a symbolic link to \.\.\/tools\/clean-impl\.sh/);
    assert.equal(lstatSync(join(repo, 'scripts', 'clean.sh')).isSymbolicLink(), true, 'the link is back');
    assert.equal(readFileSync(join(repo, 'main'), 'utf8'), 'rebuilt\n');
    assert.equal(existsSync(marker), false);
    // The controls: outside, the hook's script is rewritten and your commit runs it; the submodule's filter, and your status runs it.
    assert.equal((await a.outside(`cd ${repo} && echo "touch ${marker}-hook" >> scripts/check && git -c user.name=u -c user.email=u@x commit -q --allow-empty -m x; echo ok`)).stdout, 'ok\n');
    assert.equal(existsSync(`${marker}-hook`), true, 'your commit ran the hook\'s script');
    assert.equal((await a.outside(`cd ${sub} && echo "touch ${marker}-sub; cat" > scripts/clean.sh && echo x > a.txt && git add a.txt; echo ok`)).stdout, 'ok\n');
    assert.equal(existsSync(`${marker}-sub`), true, "the submodule's git ran the filter");
  });

  test("(review, round 33, third pass) what a hook or driver runs is read as commands: a script after a quoted or backquoted computed top, a name with two dots, a script an include whose condition is not met yet names, one a hook runs only if it is there (made by the agent: moved aside), links to elsewhere on the way (put back); what a hook only reads (go.mod), builds (dist/index.js) or enters (a linked packages folder) stays the agent's; a .gitmodules of blank lines starts at once; controls: outside, your git runs each", { timeout: 120_000 }, async () => {
    const repo = join(a.dir, 'named-3');
    const ext = join(a.dir, 'ext-3');
    const g = (args: string[], cwd = repo) => spawnSync('git', args, { cwd, env: a.env, encoding: 'utf8' });
    for (const d of ['scripts', 'tools2', 'packages/web', '.githooks']) mkdirSync(join(repo, d), { recursive: true });
    mkdirSync(ext, { recursive: true });
    assert.equal(g(['init', '-q']).status, 0);
    for (const f of ['scripts/check.sh', 'scripts/back.sh', 'fmt.clean.sh', 'scripts/rel.sh', 'tools2/pre-commit.sh', 'go.mod']) writeFileSync(join(repo, f), 'true\n', { mode: 0o755 });
    writeFileSync(join(ext, 'local.conf'), '');
    symlinkSync(ext, join(repo, 'conf'));
    symlinkSync('tools2', join(repo, 'hk'));
    symlinkSync('../hk/pre-commit.sh', join(repo, '.githooks', 'pre-commit'));
    symlinkSync('packages/web', join(repo, 'frontend'));
    writeFileSync(join(repo, 'rel.cfg'), '[filter "r"]\n\tclean = sh scripts/rel.sh\n');
    writeFileSync(join(repo, '.gitmodules'), '\n'.repeat(256 * 1024));
    assert.equal(g(['config', 'core.hooksPath', '.githooks']).status, 0);
    assert.equal(g(['config', 'include.path', '../conf/local.conf']).status, 0);
    assert.equal(g(['config', 'includeIf.onbranch:rel.path', '../rel.cfg']).status, 0);
    assert.equal(g(['config', 'filter.d.clean', 'sh fmt.clean.sh']).status, 0);
    writeFileSync(join(repo, '.githooks', 'post-commit'), [
      '#!/bin/sh',
      '[ -f local-hook.sh ] && sh local-hook.sh',
      'git diff --exit-code go.mod go.sum',
      'npm run build && git add dist/index.js',
      '`git rev-parse --show-toplevel`/scripts/back.sh',
      'cd frontend && npm test',
      'exec "$(git rev-parse --show-toplevel)"/scripts/check.sh',
      '',
    ].join('\n'), { mode: 0o755 });
    const marker = join(a.dir, 'NAMED-3');
    const fsmonitor = join(repo, 'plant.cfg');
    writeFileSync(fsmonitor, `[core]\n\tfsmonitor = "touch ${marker}-fsmonitor; false"\n`);
    const script = [
      'try() { if (eval "$1") >/dev/null 2>&1; then echo "WROTE $2"; else echo "blocked $2"; fi; }',
      `try 'echo "touch ${marker}" >> scripts/check.sh' quoted-top`,
      `try 'echo "touch ${marker}" >> scripts/back.sh' backquoted-top`,
      `try 'echo "touch ${marker}" >> fmt.clean.sh' two-dots`,
      `try 'echo "touch ${marker}" >> scripts/rel.sh' waiting-include`,
      `try 'echo "touch ${marker}" > local-hook.sh' made-if-there`,
      `try 'rm conf && mkdir conf && cat ${fsmonitor} > conf/local.conf' link-out`,
      `try 'rm hk && mkdir hk && echo "touch ${marker}" > hk/pre-commit.sh' hook-link-folder`,
      `try 'echo "go 1.22" >> go.mod' read-only-by-hook`,
      `try 'mkdir -p dist && echo built > dist/index.js' built`,
      `try 'echo x > frontend/app.js' entered-folder`,
    ].join('\n');
    const r = await cli(['agent', 'run', '--silent', '--', 'sh', '-c', script], { env: a.env, cwd: repo, timeoutMs: 110_000 });
    assert.deepEqual([r.code, r.stdout], [0, [
      'blocked quoted-top', 'blocked backquoted-top', 'blocked two-dots', 'blocked waiting-include', 'WROTE made-if-there', 'WROTE link-out', 'WROTE hook-link-folder',
      'WROTE read-only-by-hook', 'WROTE built', 'WROTE entered-folder', '',
    ].join('\n')], r.stderr);
    assert.match(r.stderr, /the agent made .*\/local-hook\.sh, which your own tools would run or obey/);
    assert.match(r.stderr, /the agent replaced .*\/conf, a symbolic link to /);
    assert.match(r.stderr, /the agent replaced .*\/hk, a symbolic link to tools2/);
    assert.equal(lstatSync(join(repo, 'conf')).isSymbolicLink(), true);
    assert.equal(lstatSync(join(repo, 'hk')).isSymbolicLink(), true);
    assert.equal(existsSync(join(repo, 'local-hook.sh')), false);
    assert.equal(readFileSync(join(repo, 'dist', 'index.js'), 'utf8'), 'built\n');
    assert.equal(readFileSync(join(repo, 'packages', 'web', 'app.js'), 'utf8'), 'x\n');
    // Your git in the tree now runs nothing of the agent's.
    g(['status', '--short']);
    assert.equal(existsSync(`${marker}-fsmonitor`), false);
    // The controls: outside, the same swaps and writes are made, and your git runs them.
    assert.equal((await a.outside(`cd ${repo} && rm conf && mkdir conf && cat ${fsmonitor} > conf/local.conf && git status --short >/dev/null 2>&1; echo ok`)).stdout, 'ok\n');
    assert.equal(existsSync(`${marker}-fsmonitor`), true, 'your git status ran the swapped include');
    assert.equal((await a.outside(`cd ${repo} && rm -r conf && ln -s ${ext} conf && echo "touch ${marker}-local" > local-hook.sh && git -c user.name=u -c user.email=u@x commit -q --allow-empty -m x; echo ok`)).stdout, 'ok\n');
    assert.equal(existsSync(`${marker}-local`), true, 'your commit ran the script the hook runs if it is there');
  });

  test("(review, round 33, fourth pass) husky 9's hooks (the stub in .husky/_ runs .husky/pre-commit), a script after a subshell's cd, one named from the hook's own folder ($(dirname \"$0\")/..), after bash -e, /usr/bin/env bash, inside $(…) and after xargs -r are kept; what a case pattern or a quoted message names stays the agent's; control: outside, your commit runs the script husky's hook names", async () => {
    const repo = join(a.dir, 'named-4');
    const g = (args: string[]) => spawnSync('git', args, { cwd: repo, env: a.env, encoding: 'utf8' });
    for (const d of ['scripts', 'tools/hooks', '.husky/_', 'src/api', 'docs']) mkdirSync(join(repo, d), { recursive: true });
    assert.equal(g(['init', '-q']).status, 0);
    for (const f of ['scripts/lint.sh', 'scripts/sub.sh', 'tools/check.sh', 'scripts/e.sh', 'scripts/env.sh', 'scripts/inner.sh', 'scripts/x.sh', 'src/api/types.ts', 'docs/guide.md']) writeFileSync(join(repo, f), 'true\n', { mode: 0o755 });
    // husky 9: core.hooksPath = .husky/_, whose stubs source h, which runs .husky/<hook>.
    writeFileSync(join(repo, '.husky', '_', 'h'), '#!/usr/bin/env sh\nn=$(basename "$0")\ns=$(dirname "$(dirname "$0")")/$n\n[ ! -f "$s" ] && exit 0\nsh -e "$s"\n', { mode: 0o755 });
    writeFileSync(join(repo, '.husky', '_', 'pre-commit'), '#!/usr/bin/env sh\n. "${0%/*}/h"\n', { mode: 0o755 });
    writeFileSync(join(repo, '.husky', 'pre-commit'), './scripts/lint.sh\n');
    writeFileSync(join(repo, '.husky', 'post-commit'), [
      '(cd src && true)',
      './scripts/sub.sh',
      'exec_from_hooks=1',
      'bash -e scripts/e.sh',
      '/usr/bin/env bash scripts/env.sh',
      'out=$(./scripts/inner.sh)',
      'echo README | xargs -r ./scripts/x.sh',
      'case "$f" in',
      '  src/api/types.ts) echo "regenerate; then run ./docs/guide.md"; exit 1;;',
      'esac',
      '',
    ].join('\n'));
    writeFileSync(join(repo, '.husky', '_', 'post-commit'), '#!/usr/bin/env sh\n. "${0%/*}/h"\n', { mode: 0o755 });
    assert.equal(g(['config', 'core.hooksPath', '.husky/_']).status, 0);
    const marker = join(a.dir, 'NAMED-4');
    const script = [
      'try() { if (eval "$1") >/dev/null 2>&1; then echo "WROTE $2"; else echo "blocked $2"; fi; }',
      ...['lint', 'sub', 'e', 'env', 'inner', 'x'].map((f) => `try 'echo "touch ${marker}" >> scripts/${f}.sh' ${f}`),
      `try 'echo x >> src/api/types.ts' case-pattern`,
      `try 'echo x >> docs/guide.md' quoted-message`,
    ].join('\n');
    const r = await cli(['agent', 'run', '--silent', '--', 'sh', '-c', script], { env: a.env, cwd: repo });
    assert.deepEqual([r.code, r.stdout], [0, 'blocked lint\nblocked sub\nblocked e\nblocked env\nblocked inner\nblocked x\nWROTE case-pattern\nWROTE quoted-message\n'], r.stderr);
    // The control: outside, the script husky's hook runs is rewritten and your commit runs it.
    assert.equal((await a.outside(`cd ${repo} && echo "touch ${marker}" >> scripts/lint.sh && git -c user.name=u -c user.email=u@x commit -q --allow-empty -m x; echo ok`)).stdout, 'ok\n');
    assert.equal(existsSync(marker), true, "your commit ran the script husky's hook names");
  });

  test("(review, round 34) where your git really runs hooks from is kept: .git/hooks a link into the tree while core.hooksPath names .git/hooks, or to a folder missing at the start, or beside an includeIf's core.hooksPath; the folder a waiting includeIf would name; a linked hook's siblings found by $(readlink -f \"$0\"); a hook linked to a link to nothing yet (made: moved aside); a linked core.hooksPath on the way, replaced (put back); unlisted: a linked .git/info, and a hook linked to a folder allow_write opened outside your home; controls: outside, your commit runs what the agent wrote", { timeout: 180_000 }, async () => {
    const marker = join(a.dir, 'HOOKS-34');
    const evil = `#!/bin/sh\\ntouch ${marker}\\n`;
    const opened = join(a.dir, 'srvhooks');
    writeFile(join(opened, 'pre-commit'), '#!/bin/sh\ntrue\n');
    spawnSync('chmod', ['+x', join(opened, 'pre-commit')]);
    writeFile(join(a.sbHome, 'agents', 'opened.toml'), `[filesystem]\nallow_write = [${JSON.stringify(opened)}]\n`);
    const cases: Array<{ name: string; setup: string; attack: string; profile?: string; branch?: string }> = [
      { name: 'hookspath-link', setup: 'mkdir githooks && rm -rf .git/hooks && ln -s ../githooks .git/hooks && git config core.hooksPath .git/hooks', attack: `printf '${evil}' > githooks/pre-commit && chmod +x githooks/pre-commit` },
      { name: 'missing-target', setup: 'rm -rf .git/hooks && ln -s ../githooks2 .git/hooks', attack: `mkdir -p githooks2 && printf '${evil}' > githooks2/pre-commit && chmod +x githooks2/pre-commit` },
      { name: 'beside-includeif', setup: 'mkdir -p githooks tools/hooks && rm -rf .git/hooks && ln -s ../githooks .git/hooks && printf "[core]\\n\\thooksPath = tools/hooks\\n" > .git/inc && git config includeIf.onbranch:$(git symbolic-ref --short HEAD).path inc', attack: `printf '${evil}' > githooks/pre-commit && chmod +x githooks/pre-commit`, branch: 'other' },
      { name: 'waiting-includeif', setup: 'mkdir -p tools/hooks && printf "[core]\\n\\thooksPath = tools/hooks\\n" > .git/inc && git config includeIf.onbranch:release.path inc', attack: `printf '${evil}' > tools/hooks/pre-commit && chmod +x tools/hooks/pre-commit`, branch: 'release' },
      { name: 'readlink-siblings', setup: 'mkdir -p tools/hooks && echo true > tools/hooks/common.sh && printf "#!/bin/sh\\n. \\"\\$(dirname \\"\\$(readlink -f \\"\\$0\\")\\")/common.sh\\"\\n" > tools/hooks/pre-commit && chmod +x tools/hooks/pre-commit && ln -s ../../tools/hooks/pre-commit .git/hooks/pre-commit', attack: `echo "touch ${marker}" >> tools/hooks/common.sh` },
      { name: 'link-to-nothing', setup: 'ln -s tools/real-hook s1 && ln -s ../../s1 .git/hooks/pre-commit', attack: `mkdir -p tools && printf '${evil}' > tools/real-hook && chmod +x tools/real-hook` },
      { name: 'linked-info', setup: 'mkdir gitinfo && rm -rf .git/info && ln -s ../gitinfo .git/info', attack: 'echo "*.txt filter=x" > gitinfo/attributes' },
      { name: 'opened-outside', setup: `ln -s ${opened}/pre-commit .git/hooks/pre-commit`, attack: `printf '${evil}' > ${opened}/pre-commit`, profile: 'opened' },
    ];
    for (const c of cases) {
      const repo = join(a.dir, `hooks34-${c.name}`);
      mkdirSync(repo, { recursive: true });
      const setup = spawnSync('sh', ['-c', `git init -q && git -c user.name=u -c user.email=u@x commit -q --allow-empty -m init && ${c.setup}`], { cwd: repo, env: a.env, encoding: 'utf8' });
      assert.equal(setup.status, 0, `${c.name}: ${setup.stderr}`);
      const r = await cli(['agent', 'run', '--silent', ...(c.profile ? ['--profile', c.profile] : []), '--', 'sh', '-c', `(${c.attack}) 2>/dev/null && echo wrote || echo blocked`], { env: a.env, cwd: repo, timeoutMs: 60_000 });
      assert.equal(r.code, 0, `${c.name}: ${r.stderr}`);
      if (c.name === 'link-to-nothing') {
        // Made in the run, it is moved aside as it ends.
        assert.equal(r.stdout, 'wrote\n', c.name);
        assert.equal(existsSync(join(repo, 'tools', 'real-hook')), false, c.name);
        assert.match(r.stderr, /the agent made .*\/tools\/real-hook/, c.name);
      } else assert.equal(r.stdout, 'blocked\n', `${c.name}: ${r.stderr}`);
      const commit = spawnSync('sh', ['-c', `${c.branch ? `git checkout -q -b ${c.branch} && ` : ''}git -c user.name=u -c user.email=u@x commit -q --allow-empty -m mine`], { cwd: repo, env: a.env, encoding: 'utf8' });
      assert.equal(existsSync(marker), false, `${c.name}: your commit ran nothing of the agent's (${commit.stderr})`);
    }
    // Controls: outside, the same writes land and your commit runs them.
    for (const c of cases.filter((x) => x.name !== 'linked-info')) {
      const repo = join(a.dir, `hooks34-control-${c.name}`);
      mkdirSync(repo, { recursive: true });
      const ran = spawnSync('sh', ['-c', `git init -q && git -c user.name=u -c user.email=u@x commit -q --allow-empty -m init && ${c.setup} && (${c.attack}) && ${c.branch ? `git checkout -q -b ${c.branch} && ` : ''}git -c user.name=u -c user.email=u@x commit -q --allow-empty -m mine`], { cwd: repo, env: a.env, encoding: 'utf8' });
      assert.equal(existsSync(marker), true, `control ${c.name}: ${ran.stderr}`);
      rmSync(marker);
      if (c.name === 'opened-outside') writeFile(join(opened, 'pre-commit'), '#!/bin/sh\ntrue\n');
    }
  });

  test("(review, round 34, third pass) the scripts a hook finds however it finds them are kept: by BASH_SOURCE, by a folder made absolute, a variable, a dispatcher's $(basename \"$0\"), a cd into a computed folder, sed -f of a filter; lefthook's .lefthook scripts moved aside; a pre-commit framework entry's script kept; controls: outside, your commit or git add runs what the agent wrote", { timeout: 180_000 }, async () => {
    const marker = join(a.dir, 'HOOKS-34c');
    const cases: Array<{ name: string; setup: string; attack: string; then?: string; moved?: string }> = [
      { name: 'bash-source', setup: 'mkdir -p tools/githooks && echo true > tools/lib.sh && printf \'#!/bin/bash\\n. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"\\n\' > tools/githooks/pre-commit && chmod +x tools/githooks/pre-commit && git config core.hooksPath tools/githooks', attack: `echo "touch ${marker}" >> tools/lib.sh` },
      { name: 'here', setup: 'mkdir -p tools/githooks && echo true > tools/lib.sh && printf \'#!/bin/sh\\nHERE="$(cd "$(dirname "$0")" \&\& pwd)"\\n. "$HERE/../lib.sh"\\n\' > tools/githooks/pre-commit && chmod +x tools/githooks/pre-commit && git config core.hooksPath tools/githooks', attack: `echo "touch ${marker}" >> tools/lib.sh` },
      { name: 'dispatcher', setup: 'mkdir -p .githooks && printf \'#!/bin/sh\\ntrue\\n\' > .githooks/pre-commit && chmod +x .githooks/pre-commit && printf \'#!/bin/sh\\nexec "$(git rev-parse --show-toplevel)/.githooks/$(basename "$0")" "$@"\\n\' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit', attack: `echo "touch ${marker}" >> .githooks/pre-commit` },
      { name: 'cd-computed', setup: 'mkdir -p tools && printf \'#!/bin/sh\\ntrue\\n\' > tools/check.sh && chmod +x tools/check.sh && printf \'#!/bin/sh\\ncd "$(git rev-parse --show-toplevel)/tools" \&\& ./check.sh\\n\' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit', attack: `echo "touch ${marker}" >> tools/check.sh` },
      { name: 'sed-f', setup: 'mkdir -p scripts && echo p > scripts/strip.sed && echo "*.txt filter=strip" > .gitattributes && git config filter.strip.clean "sed -f scripts/strip.sed"', attack: `printf '1e touch ${marker}\\n' > scripts/strip.sed`, then: 'echo x > a.txt && git add a.txt' },
      { name: 'pre-commit-entry', setup: `mkdir -p scripts && printf '#!/bin/sh\\ntrue\\n' > scripts/lint.sh && chmod +x scripts/lint.sh && printf 'repos:\\n- repo: local\\n  hooks:\\n  - id: lint\\n    name: lint\\n    entry: scripts/lint.sh\\n    language: script\\n' > .pre-commit-config.yaml && printf '#!/bin/sh\\nsh scripts/lint.sh\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`, attack: `echo "touch ${marker}" >> scripts/lint.sh` },
      { name: 'lefthook-dir', setup: `printf '#!/bin/sh\\nfor f in .lefthook/pre-commit/*; do sh "$f"; done\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`, attack: `mkdir -p .lefthook/pre-commit && echo "touch ${marker}" > .lefthook/pre-commit/check.sh`, moved: '.lefthook' },
    ];
    for (const c of cases) {
      const repo = join(a.dir, `hooks34c-${c.name}`);
      mkdirSync(repo, { recursive: true });
      const setup = spawnSync('sh', ['-c', `git init -q && ${c.setup} && git add -A && git -c user.name=u -c user.email=u@x commit -q --no-verify --allow-empty -m init`], { cwd: repo, env: a.env, encoding: 'utf8' });
      assert.equal(setup.status, 0, `${c.name}: ${setup.stderr}`);
      const r = await cli(['agent', 'run', '--silent', '--', 'sh', '-c', `(${c.attack}) 2>/dev/null && echo wrote || echo blocked`], { env: a.env, cwd: repo, timeoutMs: 60_000 });
      assert.equal(r.code, 0, `${c.name}: ${r.stderr}`);
      if (c.moved !== undefined) {
        assert.equal(existsSync(join(repo, c.moved)), false, c.name);
        assert.match(r.stderr, new RegExp(`the agent made .*/${c.moved.replace('.', '\\.')}, which your own tools would run or obey`), c.name);
      } else assert.equal(r.stdout, 'blocked\n', `${c.name}: ${r.stderr}`);
      spawnSync('sh', ['-c', c.then ?? 'git -c user.name=u -c user.email=u@x commit -q --allow-empty -m mine'], { cwd: repo, env: a.env });
      assert.equal(existsSync(marker), false, `${c.name}: your git ran nothing of the agent's`);
    }
    // Controls: outside, the same writes land and your git runs them.
    for (const c of cases) {
      const repo = join(a.dir, `hooks34c-control-${c.name}`);
      mkdirSync(repo, { recursive: true });
      const ran = spawnSync('sh', ['-c', `git init -q && ${c.setup} && git add -A && git -c user.name=u -c user.email=u@x commit -q --no-verify --allow-empty -m init && (${c.attack}) && ${c.then ?? 'git -c user.name=u -c user.email=u@x commit -q --allow-empty -m mine'}`], { cwd: repo, env: a.env, encoding: 'utf8' });
      assert.equal(existsSync(marker), true, `control ${c.name}: ${ran.stderr}`);
      rmSync(marker);
    }
  });

  test("(review, round 34, third pass) a hook that runs python -m from the top: a module the agent makes there under a name python imports (json.py, which python3 -m json.tool would import first) is moved aside as the run ends; a file of the repository's own under such a name stays the agent's to edit (shown by git); a module of another name stays; control: outside, your commit imports the agent's", { timeout: 60_000 }, async () => {
    const repo = join(a.dir, 'py-m-hook');
    const marker = join(a.dir, 'PY-M-34');
    mkdirSync(repo, { recursive: true });
    const hook = `#!/bin/sh\necho '{}' | python3 -m json.tool >/dev/null\n`;
    const setup = spawnSync('sh', ['-c', `git init -q && printf 'x = 1\\n' > string.py && git add -A && git -c user.name=u -c user.email=u@x commit -q -m init && printf '${hook.replace(/\n/g, '\\n')}' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`], { cwd: repo, env: a.env, encoding: 'utf8' });
    assert.equal(setup.status, 0, setup.stderr);
    const plant = `echo "open('${marker}', 'w')" > json.py && echo mine > mytool_34.py && mkdir -p test email && echo x > test/test_a.py && echo "open('${marker}', 'w')" > email/__init__.py && (echo "y = 2" >> string.py 2>/dev/null && echo wrote-own || echo kept-own)`;
    const r = await cli(['agent', 'run', '--silent', '--', 'sh', '-c', plant], { env: a.env, cwd: repo, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'wrote-own\n');
    assert.equal(existsSync(join(repo, 'json.py')), false);
    assert.match(r.stderr, /the agent made .*\/json\.py, which your own tools would run or obey/);
    assert.equal(readFileSync(join(repo, 'mytool_34.py'), 'utf8'), 'mine\n');
    // A folder of the stdlib's name is the agent's work (no __init__.py: it shadows nothing); a package's __init__.py goes aside.
    assert.deepEqual([readFileSync(join(repo, 'test', 'test_a.py'), 'utf8'), existsSync(join(repo, 'email', '__init__.py'))], ['x\n', false]);
    spawnSync('git', ['-c', 'user.name=u', '-c', 'user.email=u@x', 'commit', '-q', '--allow-empty', '-m', 'mine'], { cwd: repo, env: a.env });
    assert.equal(existsSync(marker), false);
    // Control: outside, the module is made and your commit's python -m imports it.
    spawnSync('sh', ['-c', `echo "open('${marker}', 'w')" > json.py && git -c user.name=u -c user.email=u@x commit -q --allow-empty -m c`], { cwd: repo, env: a.env });
    assert.equal(existsSync(marker), true);
  });

  test("(review, round 33, fourth pass) a script a hook in a hooks folder of the tree names from its own folder ($(dirname \"$0\")/../check.sh) is kept, and a new file of the same name at the top is not moved aside", async () => {
    const repo = join(a.dir, 'named-5');
    const g = (args: string[]) => spawnSync('git', args, { cwd: repo, env: a.env, encoding: 'utf8' });
    mkdirSync(join(repo, 'tools', 'hooks'), { recursive: true });
    assert.equal(g(['init', '-q']).status, 0);
    writeFileSync(join(repo, 'tools', 'check.sh'), 'true\n', { mode: 0o755 });
    writeFileSync(join(repo, 'tools', 'hooks', 'pre-commit'), '#!/bin/sh\nexec "$(dirname "$0")/../check.sh"\n', { mode: 0o755 });
    assert.equal(g(['config', 'core.hooksPath', 'tools/hooks']).status, 0);
    const r = await cli(['agent', 'run', '--', 'sh', '-c', 'echo x >> tools/check.sh 2>/dev/null && echo wrote || echo blocked; echo mine > check.sh && echo made'], { env: a.env, cwd: repo });
    assert.deepEqual([r.code, r.stdout], [0, 'blocked\nmade\n'], r.stderr);
    assert.equal(readFileSync(join(repo, 'check.sh'), 'utf8'), 'mine\n');
    assert.doesNotMatch(r.stderr, /check\.sh\.stashbase-quarantine/);
  });

  test("(review, round 33, fifth pass) the commonest wrapper (exec \"$(dirname \"$0\")/../scripts/pre-commit.sh\" \"$@\") keeps its script, the pre-commit framework's launcher (\"$INSTALL_PYTHON\" -mpre_commit) has a module the run makes moved aside, and a package a hook names under node_modules stays the agent's to install; control: outside, your commit runs the wrapper's script", async () => {
    const repo = join(a.dir, 'named-6');
    const g = (args: string[]) => spawnSync('git', args, { cwd: repo, env: a.env, encoding: 'utf8' });
    for (const d of ['scripts', '.githooks', 'node_modules/lefthook/bin']) mkdirSync(join(repo, d), { recursive: true });
    assert.equal(g(['init', '-q']).status, 0);
    writeFileSync(join(repo, 'scripts', 'pre-commit.sh'), 'true\n', { mode: 0o755 });
    writeFileSync(join(repo, 'node_modules', 'lefthook', 'bin', 'index.js'), '\n');
    writeFileSync(join(repo, '.githooks', 'pre-commit'), '#!/bin/sh\nexec "$(dirname "$0")/../scripts/pre-commit.sh" "$@"\n', { mode: 0o755 });
    writeFileSync(join(repo, '.githooks', 'post-commit'), '#!/usr/bin/env bash\nINSTALL_PYTHON=/usr/bin/python3\nARGS=(hook-impl --hook-type=post-commit)\nexec "$INSTALL_PYTHON" -mpre_commit "${ARGS[@]}"\n', { mode: 0o755 });
    writeFileSync(join(repo, '.githooks', 'pre-push'), '#!/bin/sh\nnode node_modules/lefthook/bin/index.js run pre-push\n', { mode: 0o755 });
    assert.equal(g(['config', 'core.hooksPath', '.githooks']).status, 0);
    const marker = join(a.dir, 'NAMED-6');
    const script = [
      `echo "touch ${marker}" >> scripts/pre-commit.sh 2>/dev/null && echo "wrote wrapper" || echo "blocked wrapper"`,
      `mkdir -p pre_commit && echo "open('${marker}-py', 'w')" > pre_commit/__main__.py && echo "made module"`,
      'echo "// updated" >> node_modules/lefthook/bin/index.js && echo "installed"',
    ].join('\n');
    const r = await cli(['agent', 'run', '--', 'sh', '-c', script], { env: a.env, cwd: repo });
    assert.deepEqual([r.code, r.stdout], [0, 'blocked wrapper\nmade module\ninstalled\n'], r.stderr);
    assert.match(r.stderr, /the agent made .*\/pre_commit\/__main__\.py, which your own tools would run or obey/);
    assert.equal(existsSync(join(repo, 'pre_commit', '__main__.py')), false);
    // The control: outside, the wrapper's script is rewritten and your commit runs it.
    assert.equal((await a.outside(`cd ${repo} && echo "touch ${marker}" >> scripts/pre-commit.sh && git -c user.name=u -c user.email=u@x commit -q --allow-empty -m x --no-verify; git -c user.name=u -c user.email=u@x -c core.hooksPath=.githooks commit -q --allow-empty -m y 2>/dev/null; echo ok`)).stdout, 'ok\n');
    assert.equal(existsSync(marker), true, "your commit ran the wrapper's script");
  });

  test("(review, round 33, regressions) a run starts in a tree holding a linked worktree and a submodule when your config names a path inside a .git (tpope's alias !.git/hooks/ctags): the lookup through a .git file ended the run with ENOTDIR", async () => {
    const repo = join(a.dir, 'named-7');
    const g = (args: string[], cwd = repo) => spawnSync('git', args, { cwd, env: a.env, encoding: 'utf8' });
    mkdirSync(join(repo, 'sub'), { recursive: true });
    assert.equal(g(['init', '-q']).status, 0);
    assert.equal(g(['init', '-q'], join(repo, 'sub')).status, 0);
    writeFileSync(join(repo, '.gitmodules'), '[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n');
    writeFileSync(join(repo, '.gitignore'), 'wt/\n');
    assert.equal(g(['-c', 'user.name=u', '-c', 'user.email=u@x', 'commit', '-q', '--allow-empty', '-m', 'i']).status, 0);
    assert.equal(g(['worktree', 'add', '-q', join(repo, 'wt', 'x')]).status, 0);
    // A submodule's .git as a file (as git submodule makes it) and your alias naming a path inside a .git.
    spawnSync('mv', [join(repo, 'sub', '.git'), join(repo, '.git', 'sub-git')]);
    writeFileSync(join(repo, 'sub', '.git'), `gitdir: ${join(repo, '.git', 'sub-git')}\n`);
    assert.equal(g(['config', 'alias.ctags', '!.git/hooks/ctags']).status, 0);
    const r = await cli(['agent', 'run', '--silent', '--', 'sh', '-c', 'echo ok'], { env: a.env, cwd: repo });
    assert.deepEqual([r.code, r.stdout], [0, 'ok\n'], r.stderr);
    const inWorktree = await cli(['agent', 'run', '--silent', '--', 'sh', '-c', 'echo ok'], { env: a.env, cwd: join(repo, 'wt', 'x') });
    assert.deepEqual([inWorktree.code, inWorktree.stdout], [0, 'ok\n'], inWorktree.stderr);
  });

  test("(review, round 33) a file your git config names is the agent's to write with one profile line naming it (allow_write = [\"scripts/check\"]; a folder above it does not open it), and a missing file a filter names as a path that the agent makes is moved aside and named as the run ends; control: without the line it is read-only", async () => {
    const repo = join(a.dir, 'named-open');
    const g = (args: string[]) => spawnSync('git', args, { cwd: repo, env: a.env, encoding: 'utf8' });
    mkdirSync(join(repo, 'scripts'), { recursive: true });
    assert.equal(g(['init', '-q']).status, 0);
    writeFileSync(join(repo, 'scripts', 'check'), 'true\n', { mode: 0o755 });
    writeFileSync(join(repo, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\nexec ./scripts/check "$@"\n', { mode: 0o755 });
    assert.equal(g(['config', 'filter.strip.smudge', 'sh scripts/smudge.sh']).status, 0);
    writeFile(join(a.sbHome, 'agents', 'open-check.toml'), '[filesystem]\nallow_write = ["scripts/check"]\n');
    writeFile(join(a.sbHome, 'agents', 'open-folder.toml'), '[filesystem]\nallow_write = ["scripts"]\n');
    const script = 'echo "echo edited" >> scripts/check 2>/dev/null && echo "check open" || echo "check blocked"; echo "cat" > scripts/smudge.sh && echo made';
    const folder = await cli(['agent', 'run', '--silent', '--profile', 'open-folder', '--', 'sh', '-c', script], { env: a.env, cwd: repo });
    assert.deepEqual([folder.code, folder.stdout], [0, 'check blocked\nmade\n'], folder.stderr);
    assert.match(folder.stderr, /the agent made .*\/scripts\/smudge\.sh, which your own tools would run or obey .* renamed .*\/scripts\/smudge\.sh\.stashbase-quarantine/);
    assert.equal(existsSync(join(repo, 'scripts', 'smudge.sh')), false);
    const opened = await cli(['agent', 'run', '--silent', '--profile', 'open-check', '--', 'sh', '-c', script], { env: a.env, cwd: repo });
    assert.equal(opened.stdout, 'check open\nmade\n', opened.stderr);
    assert.equal(readFileSync(join(repo, 'scripts', 'check'), 'utf8'), 'true\necho edited\n');
  });

  test("(review, round 33) a config file your git config includes from the tree is read-only even where it is empty or missing (a file stands in while the run lasts, which your git reads as none): the agent wrote core.fsmonitor there; unlisted: an includeIf whose condition does not match yet; control: outside, the missing file is written and your git status runs its fsmonitor", async () => {
    const repo = join(a.dir, 'include-repo');
    const g = (args: string[]) => spawnSync('git', args, { cwd: repo, env: a.env, encoding: 'utf8' });
    mkdirSync(repo, { recursive: true });
    assert.equal(g(['init', '-q']).status, 0);
    writeFileSync(join(repo, 'empty.cfg'), '');
    assert.equal(g(['config', 'include.path', '../missing.cfg']).status, 0);
    assert.equal(g(['config', '--add', 'include.path', '../empty.cfg']).status, 0);
    assert.equal(g(['config', 'includeIf.onbranch:release/**.path', '../release.cfg']).status, 0);
    const marker = join(a.dir, 'FSMONITOR-RAN');
    const planted = join(a.dir, 'fsmonitor.cfg');
    writeFileSync(planted, `[core]\n\tfsmonitor = "touch ${marker}; false"\n`);
    const plant = `cat ${planted}`;
    const script = [
      'try() { if (eval "$1") >/dev/null 2>&1; then echo "WROTE $2"; else echo "blocked $2"; fi; }',
      `try '${plant} > missing.cfg' missing`,
      `try '${plant} >> empty.cfg' empty`,
      `try '${plant} > release.cfg' conditional`,
      'git status --short >/dev/null 2>&1 && echo "git works"',
    ].join('\n');
    const r = await cli(['agent', 'run', '--silent', '--', 'sh', '-c', script], { env: a.env, cwd: repo });
    assert.deepEqual([r.code, r.stdout], [0, 'blocked missing\nblocked empty\nblocked conditional\ngit works\n'], r.stderr);
    assert.deepEqual(readdirSync(repo).sort(), ['.git', '.stashbase', 'empty.cfg'], 'the stand-ins are gone');
    assert.equal(readFileSync(join(repo, 'empty.cfg'), 'utf8'), '');
    assert.equal(g(['status', '--short']).status, 0);
    assert.equal(existsSync(marker), false);
    // The control: outside, the missing file is written and your next git status runs what it names.
    assert.equal((await a.outside(`cd ${repo} && ${plant} > missing.cfg && git status --short >/dev/null 2>&1; echo ok`)).stdout, 'ok\n');
    assert.equal(existsSync(marker), true, 'your git status ran the planted fsmonitor');
  });

  test('unshare, mount and umount cannot detach a bind', async () => {
    const r = await a.inside(
      `umount ${h}/secret.txt; unshare -rm sh -c 'umount -l ${h}/secret.txt; umount ${h}/secretdir; cat ${h}/secret.txt; ls -A ${h}/secretdir'; ` +
        `unshare -rm sh -c 'mount --bind / /mnt && cat /mnt${h}/secret.txt'; echo end`,
    );
    assert.doesNotMatch(r.stdout, /TOPSECRET|inner\.txt/);
    assert.match(r.stdout, /end\n$/);
  });

  test('glob entries cover hidden and gitignored files, and only what they match', async () => {
    const r = await a.inside('cat secrets/b.txt; cat secrets/a.pem; cat secrets/.h.pem');
    assert.equal(r.stdout, 'TXT-B\n');
    assert.equal(r.stderr.match(/Permission denied/g)?.length, 2, r.stderr);
  });

  test("stashbase's own state (the CA key's home) is hidden", async () => {
    writeFileSync(join(a.sbHome, 'probe'), 'STATE');
    const r = await a.inside(`ls -A ${a.sbHome}; cat ${a.sbHome}/probe`);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /No such file or directory/);
  });
  test("version managers' shim folders are writable copies of the run's own: a shell's rehash works, nothing reaches your shims, through a link of any part of their path too; a denied one stays read-only", async () => {
    mkdirSync(join(h, '.pyenv', 'shims'), { recursive: true });
    writeFileSync(join(h, '.pyenv', 'shims', 'python'), '#!/bin/sh\necho real-shim\n', { mode: 0o755 });
    writeFileSync(join(h, '.pyenv', 'shims', 'pip'), 'PIP\n');
    // An entry that links to a denied file: copied as the link, which still leads to the denial.
    symlinkSync(join(h, 'secret.txt'), join(h, '.pyenv', 'shims', 'secret-link'));
    // A root named by its variable (rbenv), one under a deny_write folder (goenv), a shim folder that is a link (nodenv),
    // and a root that is an absolute link elsewhere (plenv: bwrap would resolve it against its own root).
    writeFile(join(h, 'rb', 'shims', 'ruby'), 'RUBY\n');
    writeFile(join(h, 'rodir', 'shims', 'go'), 'GO\n');
    writeFile(join(h, 'node-real', 'shims', 'node'), 'NODE\n');
    mkdirSync(join(h, '.nodenv'));
    symlinkSync(join(h, 'node-real', 'shims'), join(h, '.nodenv', 'shims'));
    writeFile(join(h, 'plenv-real', 'shims', 'perl'), 'PERL\n');
    symlinkSync(join(h, 'plenv-real'), join(h, '.plenv'));
    const env = { RBENV_ROOT: join(h, 'rb'), GOENV_ROOT: join(h, 'rodir') };
    const script = 'PATH=$HOME/.pyenv/shims:$PATH; python; (set -C; echo > ~/.pyenv/shims/.pyenv-shim) && echo locked; echo evil >> ~/.pyenv/shims/python && echo appended; ' +
      'rm ~/.pyenv/shims/pip && echo removed; echo new > "$RBENV_ROOT/shims/new" && echo rb-written; cat ~/.pyenv/shims/secret-link 2>/dev/null || echo link-denied; ' +
      '(echo g > "$GOENV_ROOT/shims/go") 2>/dev/null || echo go-read-only; echo n > ~/.nodenv/shims/node && echo node-written; echo p > ~/.plenv/shims/perl && echo perl-written';
    const r = await a.inside(script, env);
    assert.equal(r.stdout, 'real-shim\nlocked\nappended\nremoved\nrb-written\nlink-denied\ngo-read-only\nnode-written\nperl-written\n', r.stderr);
    const host = () => [readdirSync(join(h, '.pyenv', 'shims')).sort(), readFileSync(join(h, '.pyenv', 'shims', 'python'), 'utf8'), readdirSync(join(h, 'rb', 'shims')), readFileSync(join(h, 'rodir', 'shims', 'go'), 'utf8'), readFileSync(join(h, 'node-real', 'shims', 'node'), 'utf8'), readFileSync(join(h, 'plenv-real', 'shims', 'perl'), 'utf8')];
    assert.deepEqual(host(), [['pip', 'python', 'secret-link'], '#!/bin/sh\necho real-shim\n', ['ruby'], 'GO\n', 'NODE\n', 'PERL\n']);
    // The control: the same script outside the sandbox changes every one of them, and reads the secret through the link.
    const o = await new Promise<string>((resolve) => {
      const child = spawn('sh', ['-c', script], { env: { ...a.env, ...env }, cwd: a.proj });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.on('close', () => resolve(out));
    });
    assert.equal(o, 'real-shim\nlocked\nappended\nremoved\nrb-written\nTOPSECRET\nnode-written\nperl-written\n');
    assert.deepEqual(host(), [['.pyenv-shim', 'python', 'secret-link'], '#!/bin/sh\necho real-shim\nevil\n', ['new', 'ruby'], 'g\n', 'n\n', 'p\n']);
  });

  test('a shim root that is not a folder, or not readable, leaves the run as it was: a warning, the folder read-only', async () => {
    const r = await a.inside('echo ran', { PYENV_ROOT: '/etc/passwd', RBENV_ROOT: join(h, 'secret.txt') });
    assert.equal(r.stdout, 'ran\n', r.stderr);
    assert.equal(r.code, 0);
  });

  test("(review, round 35) what the agent makes in great number is named by a few, with a count: 3,000 long names left in the run's git directory give one warning line of a few hundred characters; control: they were made (the count says 2,990 more)", { timeout: 120_000 }, async () => {
    const repo = join(a.dir, 'flood-repo');
    const g = (args: string[]) => spawnSync('git', args, { cwd: repo, env: a.env, encoding: 'utf8' });
    mkdirSync(repo, { recursive: true });
    assert.equal(g(['init', '-q']).status, 0);
    assert.equal(g(['-c', 'user.name=me', '-c', 'user.email=me@x', 'commit', '-q', '--allow-empty', '-m', 'init']).status, 0);
    const r = await cli(['agent', 'run', '--silent', '--', 'sh', '-c', `i=0; while [ $i -lt 3000 ]; do : > .git/f$i-${'x'.repeat(200)}; i=$((i+1)); done; echo made`], { env: a.env, cwd: repo });
    assert.deepEqual([r.code, r.stdout], [0, 'made\n'], r.stderr.slice(0, 500));
    const line = r.stderr.split('\n').find((l) => l.includes('what the sandbox made there'));
    assert.ok(line !== undefined, r.stderr.slice(0, 500));
    assert.ok(line.endsWith(' and 2990 more'), line.slice(-200));
    assert.ok(line.length < 4000, `${line.length} characters`);
    assert.ok(r.stderr.length < 20_000, `${r.stderr.length} characters in all`);
  });

  test("(review, round 35) a stand-in for a missing protected path is never made through a link the working tree holds (an earlier run's agent left `config -> <a folder outside>`): the run is refused before anything is made, saying so; control: without the link the stand-in is made in the tree, and made as before, through the link, it lands outside", { timeout: 120_000 }, async () => {
    const tree = join(a.dir, 'linked-tree');
    const outside = join(a.dir, 'outside-of-tree');
    mkdirSync(outside, { recursive: true });
    mkdirSync(join(tree, 'plain'), { recursive: true });
    symlinkSync(outside, join(tree, 'config'));
    writeFileSync(join(a.sbHome, 'agents', 'standins.toml'), '[filesystem]\ndeny_read = ["config/master.key", "plain/master.key"]\n');
    const r = await cli(['agent', 'run', '--profile', 'standins', '--', 'sh', '-c', 'echo ran'], { env: a.env, cwd: tree });
    assert.deepEqual([r.code === 0, r.stdout], [false, '']);
    assert.ok(r.stderr.includes(`${join(tree, 'config', 'master.key')} (a protected path that does not exist) is reached through ${join(tree, 'config')}, a symbolic link in the working tree: its stand-in would be made where the link leads, outside the tree. Remove the link, or make the path where it leads yourself, and run again; nothing was run`), r.stderr);
    assert.equal(existsSync(join(outside, 'master.key')), false);
    // The controls: without the link, the stand-in is made in the tree; made as before, through the link, it lands outside.
    writeFileSync(join(a.sbHome, 'agents', 'standins.toml'), '[filesystem]\ndeny_read = ["plain/master.key"]\n');
    const c = await cli(['agent', 'run', '--profile', 'standins', '--', 'sh', '-c', 'test -d plain/master.key && echo stand-in-in-tree'], { env: a.env, cwd: tree });
    assert.equal(c.stdout, 'stand-in-in-tree\n', c.stderr);
    mkdirSync(join(tree, 'config', 'master.key'), { recursive: true });
    assert.equal(existsSync(join(outside, 'master.key')), true);
  });

});
