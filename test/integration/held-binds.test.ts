// A bind whose source lies in the tree the agent writes is made from a
// descriptor stashbase opened and checked, not from its path: an agent of
// another run in the same tree that swaps the folder for a link after the
// check, before bwrap mounts (the race the path check alone left open), makes
// bwrap fail, and the next try refuses the link by name. Real bwrap, raced by
// a wrapper that swaps as bwrap starts. Control: bwrap binding the same paths
// by name after the same swap writes into the victim folder.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { BIN, cli, needs, needsRoot, tempHome, writeFile } from '../helpers.js';

describe('binds from the tree held by descriptor: a folder swapped for a link after the check (real bwrap)', needs('native'), () => {
  const t = tempHome();
  after(() => t.cleanup());
  const bwrap = spawnSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).stdout.trim();
  writeFile(join(t.sbHome, 'agents', 'pin.toml'), '[filesystem]\ndeny_write = ["sub/x"]\n');

  /** A tree whose `sub` holds a write-denied file (so `sub` is pinned: bound onto itself, writable), a victim folder beside it. */
  const fresh = (name: string) => {
    const dir = join(t.dir, name);
    const tree = join(dir, 'tree');
    writeFile(join(tree, 'sub', 'x'), 'mine\n');
    writeFile(join(dir, 'victim', 'x'), 'VICTIM\n');
    spawnSync('git', ['init', '-q'], { cwd: tree });
    return { dir, tree, victim: join(dir, 'victim') };
  };

  /** A bwrap that first does what a racing agent would (swap `what` for a relative link to `to`), once, as the sandbox starts. */
  const racer = (dir: string, what: string, to: string) => {
    const wrap = join(dir, 'wrap');
    writeFile(join(wrap, 'bwrap'), `#!/bin/sh\ncase " $* " in *" --info-fd "*) if [ ! -L '${what}' ]; then mv '${what}' '${what}.real' && ln -s '${to}' '${what}'; fi ;; esac\nexec '${bwrap}' "$@"\n`);
    spawnSync('chmod', ['+x', join(wrap, 'bwrap')]);
    return { ...t.env, PATH: `${wrap}:${t.env.PATH}` };
  };

  test('a pinned folder swapped for a link to a folder outside: bwrap fails, the next try refuses the link, the victim is untouched', { timeout: 60_000 }, async () => {
    const { dir, tree, victim } = fresh('folder');
    const env = racer(dir, join(tree, 'sub'), '../victim');
    const r = await cli(['agent', 'run', '--profile', 'pin', '--', 'sh', '-c', 'echo pwned > sub/new; echo ran'], { env, cwd: tree, timeoutMs: 50_000 });
    assert.equal(r.code, 4, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /stashbase: bwrap exited \(1\) before setting up the sandbox; nothing was run; trying again \(2 of 3\)\n/);
    assert.match(r.stderr, new RegExp(`\nstashbase: ${join(tree, 'sub')} is reached through a link \\(it leads to ${victim}\\), and the run binds it into the sandbox, which would show what the link names instead: remove the link, or name the real path in the profile; nothing was run\n$`));
    assert.deepEqual(readdirSync(victim), ['x']);
    assert.equal(readFileSync(join(victim, 'x'), 'utf8'), 'VICTIM\n');
  });

  test('(not named) a folder pinned for a read-denied file below it, swapped the same way: refused the same way, the victim unchanged', { timeout: 60_000 }, async () => {
    const { dir, tree, victim } = fresh('deny-read');
    writeFile(join(tree, 'keys', 'k'), 'secret\n');
    writeFile(join(t.sbHome, 'agents', 'dr.toml'), '[filesystem]\ndeny_read = ["keys/k"]\n');
    const env = racer(dir, join(tree, 'keys'), '../victim');
    const r = await cli(['agent', 'run', '--profile', 'dr', '--', 'sh', '-c', 'echo pwned > keys/new; echo ran'], { env, cwd: tree, timeoutMs: 50_000 });
    assert.equal(r.code, 4, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, new RegExp(`\nstashbase: ${join(tree, 'keys')} is reached through a link \\(it leads to ${victim}\\), and the run binds it into the sandbox, which would show what the link names instead: remove the link, or name the real path in the profile; nothing was run\n$`));
    assert.deepEqual(readdirSync(victim), ['x']);
  });

  test('no descriptor of the tree reaches the agent (bwrap closes each it binds): its open descriptors are its terminal\'s and pipes alone', { timeout: 60_000 }, async () => {
    const { tree } = fresh('fds');
    const r = await cli(['agent', 'run', '--silent', '--profile', 'pin', '--', 'sh', '-c', 'for f in /proc/$$/fd/*; do readlink "$f" || true; done'], { env: t.env, cwd: tree, timeoutMs: 50_000 });
    assert.equal(r.code, 0, JSON.stringify(r));
    const targets = r.stdout.trim().split('\n');
    assert.ok(targets.length >= 3, r.stdout);
    assert.deepEqual(targets.filter((x) => x.startsWith(tree)), [], r.stdout);
    // The run bound sub from a descriptor (its plan says so).
    const plan = await cli(['agent', 'run', '--profile', 'pin', '--dry-run', '--', 'true'], { env: t.env, cwd: tree });
    assert.match(plan.stdout, new RegExp(` --bind-fd 9 ${tree} .* --bind-fd \\d+ ${join(tree, 'sub')} .* --ro-bind ${join(tree, 'sub', 'x')} ${join(tree, 'sub', 'x')} `));
  });

  test('(found in review) a worktree run\'s worktree swapped for a link as bwrap starts: held too, refused on the next try; its pointers are not put back through the link (UNSAFE); the victim untouched', { timeout: 60_000 }, async () => {
    const { dir, tree, victim } = fresh('worktree');
    spawnSync('git', ['-C', tree, '-c', 'user.name=a', '-c', 'user.email=a@b', 'commit', '-q', '--allow-empty', '-m', 'init']);
    const wrap = join(dir, 'wrap');
    // The worktree's name is the run's own: the racer takes whichever is there.
    writeFile(join(wrap, 'bwrap'), `#!/bin/sh\ncase " $* " in *" --info-fd "*) for w in '${tree}'/.stashbase/worktrees/*; do if [ ! -L "$w" ]; then mv "$w" "$w.real" && ln -s ../../../victim "$w"; fi; done ;; esac\nexec '${bwrap}' "$@"\n`);
    spawnSync('chmod', ['+x', join(wrap, 'bwrap')]);
    const r = await cli(['agent', 'run', '--worktree', '--', 'sh', '-c', 'echo pwned > new; echo ran'], { env: { ...t.env, PATH: `${wrap}:${t.env.PATH}` }, cwd: tree, timeoutMs: 50_000 });
    assert.equal(r.code, 4, r.stderr);
    assert.equal(r.stdout, '');
    const wt = `${tree}/\\.stashbase/worktrees/[a-z]+-[a-z]+-[a-z]+`;
    // The try after the swap refuses the link by name; the end of the run says the worktree is UNSAFE, and writes nothing there.
    assert.match(r.stderr, new RegExp(`\nwarning: worktree [a-z]+-[a-z]+-[a-z]+ is UNSAFE: ${wt} is no longer the folder git made \\(it leads to ${victim}\\); stashbase wrote nothing there: inspect it by hand before you run git in it\n`));
    assert.match(r.stderr, new RegExp(`\nstashbase: ${wt} is reached through a link \\(it leads to ${victim}\\), and the run binds it into the sandbox, which would show what the link names instead: remove the link, or name the real path in the profile; nothing was run\n$`));
    assert.deepEqual(readdirSync(victim), ['x']);
  });

  test('(round 11) an allow_write path outside the tree reached through a link a run of another profile left in a folder it may write: refused, naming the fix; (not named) a link at a parent folder of it the same; control: the real folder there, the run writes it', { timeout: 60_000 }, async () => {
    const { tree } = fresh('allow-write');
    const home = t.env.HOME as string;
    writeFile(join(home, '.local', 'bin', 'keep'), 'mine\n');
    mkdirSync(join(home, '.cache'), { recursive: true });
    symlinkSync('../.local/bin', join(home, '.cache', 'pip'));
    writeFile(join(t.sbHome, 'agents', 'pipa.toml'), '[filesystem]\nallow_write = ["~/.cache/pip"]\n');
    const r = await cli(['agent', 'run', '--profile', 'pipa', '--', 'sh', '-c', 'echo pwned > ~/.cache/pip/evil; echo ran'], { env: t.env, cwd: tree, timeoutMs: 50_000 });
    assert.equal(r.code, 4, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, new RegExp(`stashbase: ${join(home, '.cache', 'pip')} is reached through ${join(home, '.cache', 'pip')}, a link in a folder a run may write \\(an agent could have made it, to aim this writable path elsewhere\\): name the real path in the profile \\(${join(home, '.local', 'bin')}\\); nothing was run\n`));
    assert.deepEqual(readdirSync(join(home, '.local', 'bin')), ['keep']);
    // A link at a parent folder of the path.
    rmSync(join(home, '.cache'), { recursive: true, force: true });
    mkdirSync(join(home, 'elsewhere', 'pip'), { recursive: true });
    symlinkSync('elsewhere', join(home, '.cache'));
    const parent = await cli(['agent', 'run', '--profile', 'pipa', '--', 'true'], { env: t.env, cwd: tree, timeoutMs: 50_000 });
    assert.equal(parent.code, 4, parent.stderr);
    assert.match(parent.stderr, new RegExp(`is reached through ${join(home, '.cache')}, a link in a folder a run may write`));
    // Control: the real folder there, the run writes it.
    rmSync(join(home, '.cache'));
    mkdirSync(join(home, '.cache', 'pip'), { recursive: true });
    const ok = await cli(['agent', 'run', '--silent', '--profile', 'pipa', '--', 'sh', '-c', 'echo fine > ~/.cache/pip/f; echo ran'], { env: t.env, cwd: tree, timeoutMs: 50_000 });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(readFileSync(join(home, '.cache', 'pip', 'f'), 'utf8'), 'fine\n');
  });

  test('(round 14) an allow_write folder outside the tree swapped for a link as bwrap starts (by an agent of a concurrent run allowed to write its parent): held by descriptor, bwrap fails, the next try refuses the link, the folder it named untouched; control: bwrap binding it by name after the same swap writes there', { timeout: 60_000 }, async () => {
    const { dir, tree } = fresh('allow-write-race');
    const home = t.env.HOME as string;
    const pip = join(home, '.rcache', 'pip');
    const bin = join(home, '.rlocal', 'bin');
    mkdirSync(pip, { recursive: true });
    writeFile(join(bin, 'keep'), 'mine\n');
    writeFile(join(t.sbHome, 'agents', 'pipr.toml'), '[filesystem]\nallow_write = ["~/.rcache/pip"]\n');
    const env = racer(dir, pip, '../.rlocal/bin');
    const r = await cli(['agent', 'run', '--profile', 'pipr', '--', 'sh', '-c', `echo pwned > ${pip}/evil; echo ran`], { env, cwd: tree, timeoutMs: 50_000 });
    assert.equal(r.code, 4, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /stashbase: bwrap exited \(1\) before setting up the sandbox; nothing was run; trying again \(2 of 3\)\n/);
    assert.match(r.stderr, new RegExp(`\nstashbase: ${pip} is reached through a link \\(it leads to ${bin}\\), and the run binds it into the sandbox, which would show what the link names instead: remove the link, or name the real path in the profile; nothing was run\n$`));
    assert.deepEqual(readdirSync(bin), ['keep']);
    // Control: bwrap binding the folder by its name after the same swap writes where the link leads.
    const c = spawnSync(bwrap, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--bind', pip, pip, '--', 'sh', '-c', `echo pwned > ${pip}/evil`], { encoding: 'utf8' });
    assert.equal(c.status, 0, c.stderr);
    assert.deepEqual(readdirSync(bin).sort(), ['evil', 'keep']);
  });

  test('(round 18) a folder pinned under an allow_write folder outside the tree (for a write-denied file in it), swapped for a link to another repository\'s .git as bwrap starts: held, bwrap fails, the next try refuses the link; that .git untouched; control: bwrap binding the folder by name after the swap writes there', { timeout: 60_000 }, async () => {
    const { dir, tree } = fresh('pinned-outside');
    const home = t.env.HOME as string;
    const tool = join(home, '.pconfig', 'tool');
    const other = join(home, 'src-other', '.git');
    writeFile(join(tool, 'config'), 'mine\n');
    writeFile(join(other, 'config'), '[core]\n');
    mkdirSync(join(other, 'hooks'), { recursive: true });
    writeFile(join(t.sbHome, 'agents', 'pinout.toml'), '[filesystem]\nallow_write = ["~/.pconfig"]\ndeny_write = ["~/.pconfig/tool/config"]\n');
    const env = racer(dir, tool, '../src-other/.git');
    const r = await cli(['agent', 'run', '--profile', 'pinout', '--', 'sh', '-c', `echo pwned > ${tool}/hooks/pre-commit; echo ran`], { env, cwd: tree, timeoutMs: 50_000 });
    assert.equal(r.code, 4, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /stashbase: bwrap exited \(1\) before setting up the sandbox; nothing was run; trying again \(2 of 3\)\n/);
    assert.match(r.stderr, new RegExp(`\nstashbase: ${tool} is reached through a link \\(it leads to ${other}\\), and the run binds it into the sandbox`));
    assert.deepEqual(readdirSync(join(other, 'hooks')), []);
    // Control: bwrap binding the folder by its name after the same swap writes into the other repository's .git.
    const c = spawnSync(bwrap, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--bind', tool, tool, '--', 'sh', '-c', `echo pwned > ${tool}/hooks/pre-commit`], { encoding: 'utf8' });
    assert.equal(c.status, 0, c.stderr);
    assert.deepEqual(readdirSync(join(other, 'hooks')), ['pre-commit']);
  });

  test('(round 13) as an ordinary user, the link\'s folder closed with chmod 555 after the link was made (it passed for the system\'s): refused all the same; control: as that user, outside, a write through the link lands in ~/.local/bin', needsRoot('it runs stashbase as nobody'), async () => {
    const dir = join(t.dir, 'nobody');
    const home = join(dir, 'home');
    const tree = join(home, 'proj');
    mkdirSync(tree, { recursive: true });
    mkdirSync(join(home, '.local', 'bin'), { recursive: true });
    mkdirSync(join(home, '.cache'), { recursive: true });
    writeFile(join(home, '.stashbase', 'agents', 'pipb.toml'), '[filesystem]\nallow_write = ["~/.cache/pip"]\n');
    spawnSync('chown', ['-R', 'nobody', home]);
    spawnSync('chmod', ['755', t.dir, dir]);
    const env = ['env', '-i', `HOME=${home}`, `PATH=${t.env.PATH}`, `STASHBASE_HOME=${join(home, '.stashbase')}`];
    const asNobody = (cmd: string[]) => spawnSync('runuser', ['-u', 'nobody', '--', ...env, ...cmd], { cwd: tree, encoding: 'utf8', timeout: 50_000 });
    // What a run allowed to write ~/.cache leaves: the link, then its folder closed.
    assert.equal(asNobody(['sh', '-c', 'ln -s ../.local/bin ~/.cache/pip && chmod 555 ~/.cache']).status, 0);
    const r = asNobody([process.execPath, BIN, 'agent', 'run', '--profile', 'pipb', '--', 'sh', '-c', 'echo pwned > ~/.cache/pip/git; echo ran']);
    assert.equal(r.status, 4, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, new RegExp(`stashbase: ${join(home, '.cache', 'pip')} is reached through ${join(home, '.cache', 'pip')}, a link in a folder a run may write \\(an agent could have made it, to aim this writable path elsewhere\\): name the real path in the profile \\(${join(home, '.local', 'bin')}\\); nothing was run\n`));
    assert.deepEqual(readdirSync(join(home, '.local', 'bin')), []);
    // Control: the same write as that user outside a run lands in ~/.local/bin.
    assert.equal(asNobody(['sh', '-c', 'echo pwned > ~/.cache/pip/git']).status, 0);
    assert.deepEqual(readdirSync(join(home, '.local', 'bin')), ['git']);
  });

  test('control: bwrap binding the same folder by name after the same swap writes into the victim', () => {
    const { tree, victim } = fresh('control');
    renameSync(join(tree, 'sub'), join(tree, 'sub.real'));
    symlinkSync('../victim', join(tree, 'sub'));
    assert.ok(lstatSync(join(tree, 'sub')).isSymbolicLink());
    const r = spawnSync(bwrap, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--bind', join(tree, 'sub'), join(tree, 'sub'), '--', 'sh', '-c', `echo pwned > ${join(tree, 'sub', 'new')}`], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readFileSync(join(victim, 'new'), 'utf8'), 'pwned\n');
    assert.equal(existsSync(join(tree, 'sub.real', 'new')), false);
    mkdirSync(join(tree, 'unused'));
  });
});
