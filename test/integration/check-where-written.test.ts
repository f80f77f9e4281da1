// The end-of-run check walks the whole repository the run is in, but counts as
// the run's only what changed where it could write (lib/git/planted-repos.ts
// runChanges): found by CI, a run in a folder of a larger repository had a link
// of yours elsewhere in it removed because your side wrote below where it leads.
// Each attack here is something the run could write outside its folder, or
// through a name in it, which the check must still count (real bwrap, a home
// that is itself a repository, as some keep their dotfiles).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import { BIN, cli, inSessionStore, needs, outsideTempBase, tempHome, writeFile } from '../helpers.js';

describe('the end-of-run check counts what the run could write, and only that (real bwrap)', needs('bwrap', 'git'), () => {
  // Outside the temp folders, which the sandbox sees private ones of.
  const t = tempHome(outsideTempBase());
  after(() => t.cleanup());
  // stashbase's own folder beside the home (in it, the dotfiles repository would hold its profiles as the repository's).
  t.sbHome = join(t.dir, 'sbhome');
  t.env.STASHBASE_HOME = t.sbHome;
  const h = t.home;
  const git = (cwd: string, ...a: string[]) => spawnSync('git', ['-c', 'user.name=me', '-c', 'user.email=me@x', ...a], { cwd, env: t.env, encoding: 'utf8' });
  // The home is a repository of its dotfiles; the project is a folder in it with no repository of its own.
  writeFile(join(h, '.gitignore'), '*\n!.gitignore\n!dotfiles/\n!dotfiles/**\n');
  writeFile(join(h, 'dotfiles', 'config', 'app', 'settings'), 'x\n');
  symlinkSync('dotfiles/config', join(h, '.config'));
  writeFile(join(h, 'proj', 'README'), 'x\n');
  writeFile(join(h, 'node_modules', 'pkg', 'index.js'), 'module.exports = 1\n');
  mkdirSync(join(h, '.claude', 'projects'), { recursive: true });
  assert.equal(git(h, 'init', '-q').status, 0);
  assert.equal(git(h, 'add', '.').status, 0);
  assert.equal(git(h, 'commit', '-qm', 'dotfiles').status, 0);
  const proj = join(h, 'proj');

  test('your side writes below where your ~/.config link leads while a run works in ~/proj: the link stays (control: a run that could write there has it removed)', async () => {
    const started = join(proj, 'started');
    const go = join(proj, 'go');
    const child = spawn(process.execPath, [BIN, 'agent', 'run', '--silent', '--', 'sh', '-c', `touch ${started}; while [ ! -e ${go} ]; do sleep 0.05; done; rm ${started} ${go}`], { cwd: proj, env: t.env });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const exited = new Promise<number | null>((r) => child.on('close', r));
    while (!existsSync(started)) {
      assert.equal(child.exitCode, null, err);
      await sleep(50);
    }
    // A program of yours writes its state (ignored by the dotfiles repository, as git shows none of it).
    writeFile(join(h, 'dotfiles', 'config', 'app', 'state', 'cache.json'), '{}\n');
    writeFileSync(go, '');
    assert.equal(await exited, 0, err);
    assert.equal(err, '');
    assert.equal(lstatSync(join(h, '.config')).isSymbolicLink(), true);
    // Control: with deny-list writes the run could have written there, and the same change counts as its.
    writeFile(join(t.sbHome, 'agents', 'open.toml'), '[filesystem]\nwrites = "deny-list"\n');
    const r = await cli(['agent', 'run', '--silent', '--profile', 'open', '--', 'sh', '-c', `echo '{}' > ${join(h, 'dotfiles', 'config', 'app', 'state', 'cache.json')}`], { cwd: proj, env: t.env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`the agent made ${join(h, '.config').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} a link to .*The link was removed`));
    assert.equal(lstatSync(join(h, '.config'), { throwIfNoEntry: false }), undefined);
    symlinkSync('dotfiles/config', join(h, '.config'));
  });

  test('(review) a repository the agent plants in its own state folder (~/.claude/projects): in stashbase\'s store by default, never among your sessions; shared (agent_sessions = "shared"), it is unplugged; control: your git status there runs its fsmonitor', async () => {
    const marker = join(t.dir, 'PWNED-claude');
    const plant = (name: string) => `cd ~/.claude/projects && mkdir -p ${name} && cd ${name} && git init -q && git config core.fsmonitor "touch ${marker}; false" && echo planted`;
    // The control, outside: the same plant, and your git in that folder runs it.
    const ctl = spawnSync('sh', ['-c', plant('evil-control')], { env: t.env, encoding: 'utf8' });
    assert.equal(ctl.stdout, 'planted\n', ctl.stderr);
    git(join(h, '.claude', 'projects', 'evil-control'), 'status');
    assert.equal(existsSync(marker), true, 'the plant works when nothing stops it');
    rmSync(marker);
    rmSync(join(h, '.claude', 'projects', 'evil-control'), { recursive: true });
    const own = await cli(['agent', 'run', '--silent', '--', 'sh', '-c', plant('evil')], { cwd: proj, env: t.env });
    assert.equal(own.code, 0, own.stderr);
    assert.equal(existsSync(join(h, '.claude', 'projects', 'evil')), false);
    assert.ok(inSessionStore(t.sbHome, 'claude', 'projects', 'evil', '.git'));
    writeFile(join(t.sbHome, 'agents', 'shared.toml'), '[sandbox]\nagent_sessions = "shared"\n');
    const r = await cli(['agent', 'run', '--silent', '--profile', 'shared', '--', 'sh', '-c', plant('evil')], { cwd: proj, env: t.env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'planted\n');
    const evil = join(h, '.claude', 'projects', 'evil');
    assert.match(r.stderr, new RegExp(`the agent left a nested repository at ${evil.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, .*core\\.fsmonitor`));
    assert.equal(existsSync(join(evil, '.git')), false);
    git(evil, 'status');
    assert.equal(existsSync(marker), false, 'your git status ran nothing');
  });

  test('(review) a package\'s .npmrc elsewhere in the repository, written through a name of it in ~/proj that the agent then removes: moved aside; control: npm would obey the agent\'s line', async () => {
    const npmrc = writeFile(join(h, 'tools', '.npmrc'), 'save-exact=true\n');
    assert.equal(spawnSync('ln', [npmrc, join(proj, 'npmrc')]).status, 0);
    const r = await cli(['agent', 'run', '--silent', '--', 'sh', '-c', `echo 'script-shell=/tmp/evil' > npmrc && rm npmrc`], { cwd: proj, env: t.env });
    assert.equal(r.code, 0, r.stderr);
    // The control: what lies there now is the agent's.
    assert.equal(readFileSync(`${npmrc}.stashbase-quarantine`, 'utf8'), 'script-shell=/tmp/evil\n');
    assert.match(r.stderr, new RegExp(`the agent made or changed ${npmrc.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, `));
    assert.equal(existsSync(npmrc), false);
  });

  test('(review) installed code elsewhere in the repository, hard-linked from a package store the profile lets the run write (uv\'s cache, pnpm\'s store), written through the store\'s name that the agent then removes: moved aside; control: what lies there is the agent\'s', async () => {
    const store = join(h, '.cache', 'store');
    writeFile(join(store, 'foo-index.js'), 'module.exports = 1\n');
    const index = join(h, 'node_modules', 'foo', 'index.js');
    mkdirSync(join(h, 'node_modules', 'foo'), { recursive: true });
    assert.equal(spawnSync('ln', [join(store, 'foo-index.js'), index]).status, 0);
    writeFile(join(t.sbHome, 'agents', 'store.toml'), '[filesystem]\nallow_write = ["~/.cache/store"]\n');
    const r = await cli(['agent', 'run', '--silent', '--profile', 'store', '--', 'sh', '-c', `echo 'module.exports = 666' > ${join(store, 'foo-index.js')} && rm ${join(store, 'foo-index.js')}`], { cwd: proj, env: t.env });
    assert.equal(r.code, 0, r.stderr);
    // The control: what your node loads from there now is the agent's.
    assert.equal(readFileSync(join(h, 'node_modules.stashbase-quarantine', 'node_modules', 'foo', 'index.js'), 'utf8'), 'module.exports = 666\n');
    assert.match(r.stderr, new RegExp(`the agent changed code in ${join(h, 'node_modules').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} `));
    assert.equal(existsSync(index), false);
  });

});
