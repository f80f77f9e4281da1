import assert from 'node:assert/strict';
import { linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { expandPattern } from '../../lib/paths/expand.js';
import { planProtection } from '../../lib/paths/protect.js';
import { globToRegex, resolveRule, type Rule } from '../../lib/paths/rules.js';
import { tempHome, writeFile } from '../helpers.js';

const t = tempHome();
after(() => t.cleanup());
const home = '/home/u';
const cwd = '/work/p';

test('entries resolve: ~ is home, relative is the working directory, absolute as written', () => {
  assert.deepEqual(resolveRule('~/.ssh', home, cwd), { kind: 'path', entry: '~/.ssh', path: '/home/u/.ssh' });
  assert.deepEqual(resolveRule('~', home, cwd), { kind: 'path', entry: '~', path: '/home/u' });
  assert.deepEqual(resolveRule('.env', home, cwd), { kind: 'path', entry: '.env', path: '/work/p/.env' });
  assert.deepEqual(resolveRule('../x/./y', home, cwd), { kind: 'path', entry: '../x/./y', path: '/work/x/y' });
  assert.deepEqual(resolveRule('/etc/shadow', home, cwd), { kind: 'path', entry: '/etc/shadow', path: '/etc/shadow' });
});

test('globs: fixed prefix, depth and matching', () => {
  const r = resolveRule('secrets/*.pem', home, cwd) as Extract<Rule, { kind: 'pattern' }>;
  assert.equal(r.root, '/work/p/secrets');
  assert.equal(r.maxDepth, 1);
  assert.equal(r.regex.test('/work/p/secrets/a.pem'), true);
  assert.equal(r.regex.test('/work/p/secrets/sub/a.pem'), false);
  const deep = resolveRule('~/**/id_*', home, cwd) as Extract<Rule, { kind: 'pattern' }>;
  assert.equal(deep.root, '/home/u');
  assert.equal(deep.maxDepth, null);
  assert.equal(deep.regex.test('/home/u/id_rsa'), true);
  assert.equal(deep.regex.test('/home/u/a/b/id_ed25519'), true);
  assert.equal(globToRegex('/a/[!x]?.txt').test('/a/yz.txt'), true);
  assert.equal(globToRegex('/a/[!x]?.txt').test('/a/xz.txt'), false);
});

test('regex entries: ~ is home, the literal prefix is the root', () => {
  const r = resolveRule('re:^~/\\.config/.*token', home, cwd) as Extract<Rule, { kind: 'pattern' }>;
  assert.equal(r.root, '/home/u/.config');
  assert.equal(r.regex.test('/home/u/.config/gh/token.json'), true);
  assert.equal(r.regex.test('/home/u/.configx/token'), false);
  const all = resolveRule('re:^~/.*', home, cwd) as Extract<Rule, { kind: 'pattern' }>;
  assert.equal(all.root, '/home/u');
  const unanchored = resolveRule('re:token$', home, cwd) as Extract<Rule, { kind: 'pattern' }>;
  assert.equal(unanchored.root, '/');
  const rel = resolveRule('re:^keys/.*\\.pem$', home, cwd) as Extract<Rule, { kind: 'pattern' }>;
  assert.equal(rel.root, '/work/p/keys');
});

test('expansion includes hidden and gitignored files, not what it must not', () => {
  const root = join(t.dir, 'tree');
  writeFile(join(root, '.gitignore'), 'secrets/\n');
  writeFile(join(root, 'secrets', 'a.pem'), 'x');
  writeFile(join(root, 'secrets', '.hidden.pem'), 'x');
  writeFile(join(root, 'secrets', 'b.txt'), 'x');
  writeFile(join(root, 'secrets', 'deeper', 'c.pem'), 'x');
  const r = resolveRule('secrets/*.pem', t.home, root) as Extract<Rule, { kind: 'pattern' }>;
  assert.deepEqual(expandPattern(r).paths, [join(root, 'secrets', '.hidden.pem'), join(root, 'secrets', 'a.pem')]);
  const any = resolveRule('**/*.pem', t.home, root) as Extract<Rule, { kind: 'pattern' }>;
  assert.deepEqual(expandPattern(any).paths, [join(root, 'secrets', '.hidden.pem'), join(root, 'secrets', 'a.pem'), join(root, 'secrets', 'deeper', 'c.pem')]);
});

test('expansion stops at the entry limit and the plan warns naming the pattern', () => {
  const root = join(t.dir, 'many');
  mkdirSync(root, { recursive: true });
  for (let i = 0; i < 50; i++) writeFileSync(join(root, `f${i}`), '');
  const r = resolveRule('re:^' + root + '/.*\\.never$', t.home, root) as Extract<Rule, { kind: 'pattern' }>;
  assert.deepEqual(expandPattern(r, 10), { paths: [], truncated: true, visited: 10 });
  assert.equal(expandPattern(r).truncated, false);
});

test('protection: symlinks protect their target, missing paths get stand-ins, ancestors are pinned', () => {
  const h = join(t.dir, 'h');
  writeFile(join(h, 'real', 'key'), 'secret');
  symlinkSync(join(h, 'real'), join(h, 'link'));
  writeFile(join(h, '.bashrc'), '');
  const p = planProtection({
    denyRead: ['~/link', '~/.ssh', '~/.config/gh'],
    denyWrite: ['~/.bashrc', '~/real/key'],
    alwaysDenyRead: ['/nonexistent/docker.sock'],
    alwaysDenyWrite: [],
    stateDir: join(h, '.stashbase'),
    home: h,
    cwd: h,
  });
  assert.deepEqual(p.denyRead, [
    { path: join(h, '.config', 'gh'), kind: 'dir' },
    { path: join(h, '.ssh'), kind: 'dir' },
    { path: join(h, '.stashbase'), kind: 'dir' },
    { path: join(h, 'real'), kind: 'dir' },
  ].sort((a, b) => a.path.split('/').length - b.path.split('/').length || a.path.localeCompare(b.path)));
  // ~/real/key lies under the read-denied ~/real: hidden with it, not mounted again.
  assert.deepEqual(p.denyWrite, [{ path: join(h, '.bashrc'), kind: 'file' }]);
  assert.deepEqual(p.placeholders, [join(h, '.ssh'), join(h, '.config', 'gh')]);
  assert.deepEqual(p.parents, [join(h, '.config')]);
  assert.deepEqual(p.pinned, ['/tmp', t.dir, h, join(h, '.config')]);
});

test('protection: a missing write-denied path under home gets an empty file stand-in (native); elsewhere and on Docker a directory', () => {
  const h = join(t.dir, 'files-home');
  mkdirSync(h, { recursive: true });
  const p = planProtection({ denyRead: ['~/.aws'], denyWrite: ['~/.gitconfig', '~/.config/fish', '.git/hooks'], alwaysDenyRead: [], alwaysDenyWrite: [], stateDir: join(h, '.stashbase'), home: h, cwd: h });
  assert.deepEqual(p.fileStandIns, [join(h, '.gitconfig'), join(h, '.config', 'fish')]);
  assert.deepEqual(p.placeholders, [join(h, '.aws'), join(h, '.git')]);
  assert.deepEqual(p.parents, [join(h, '.config')]);
  assert.deepEqual(p.denyWrite.map((d) => [d.path, d.kind]), [[join(h, '.git'), 'dir'], [join(h, '.gitconfig'), 'file'], [join(h, '.config', 'fish'), 'file']]);
  const docker = planProtection({ denyRead: [], denyWrite: ['~/.gitconfig'], alwaysDenyRead: [], alwaysDenyWrite: [], stateDir: join(h, '.stashbase'), home: h, cwd: h, within: h });
  assert.deepEqual([docker.fileStandIns, docker.placeholders], [[], [join(h, '.gitconfig')]]);
});

test('protection: a missing .git gets its stand-in at .git itself', () => {
  const d = join(t.dir, 'norepo');
  mkdirSync(d, { recursive: true });
  const p = planProtection({ denyRead: [], denyWrite: ['.git/hooks'], alwaysDenyRead: [], alwaysDenyWrite: [], stateDir: join(t.dir, 'sb'), home: join(t.dir, 'elsewhere'), cwd: d });
  assert.deepEqual(p.placeholders, [join(d, '.git')]);
  assert.deepEqual(p.parents, []);
});

test('protection within a directory (Docker): rules outside it vanish, patterns walk from it, links out are dropped, hard links warn', () => {
  const h = join(t.dir, 'within-home');
  const w = join(h, 'proj');
  writeFile(join(h, '.ssh', 'id_ed25519'), 'k');
  writeFile(join(w, '.env'), 'x');
  writeFile(join(w, 'a', 'token.txt'), 'x');
  writeFile(join(h, 'outside-token.txt'), 'x');
  writeFile(join(w, 'orig.pem'), 'x');
  linkSync(join(w, 'orig.pem'), join(w, 'copy.txt'));
  symlinkSync(join(h, '.ssh'), join(w, 'ssh-link'));
  const p = planProtection({
    denyRead: ['~/.ssh', '.env', 're:^~/.*token', 'ssh-link', '*.pem'], denyWrite: ['missing-dir'], alwaysDenyRead: [], alwaysDenyWrite: [],
    stateDir: join(h, '.stashbase'), home: h, cwd: w, within: w,
  });
  assert.deepEqual(p.denyRead.map((d) => [d.path, d.kind]), [[join(w, '.env'), 'file'], [join(w, 'orig.pem'), 'file'], [join(w, 'a', 'token.txt'), 'file']]);
  assert.deepEqual(p.denyWrite.map((d) => d.path), [join(w, 'missing-dir')]);
  assert.deepEqual(p.placeholders, [join(w, 'missing-dir')]);
  assert.deepEqual(p.warnings, [`${join(w, 'orig.pem')} has 2 hard links: its other names are not covered by this rule (deny them too, or remove the extra links)`]);
});
