// The shim folders' private copies (lib/native/scratch.ts): read as planned or
// not at all, whatever another process does to the folder meanwhile. Each
// attack has its control: a plain copy of the same path takes the bait.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fillScratch, scratchCopies, scratchFolders } from '../../lib/native/scratch.js';
import { needsRoot, tempHome, writeFile } from '../helpers.js';

const t = tempHome();
after(() => t.cleanup());
const h = t.home;
let n = 0;
function shims(): { env: NodeJS.ProcessEnv; dir: string } {
  const root = join(h, `py${++n}`);
  writeFile(join(root, 'shims', 'python'), '#!/bin/sh\necho shim\n');
  writeFile(join(h, `secret${n}`, 'id_rsa'), 'SECRET-KEY\n');
  return { env: { PYENV_ROOT: root }, dir: join(root, 'shims') };
}
const plan = (env: NodeJS.ProcessEnv, denied: string[] = []) => scratchFolders(h, env, { writable: [], denied });

test('a folder replaced by a link after it was planned is not read: the copy stays empty (control: a copy by path reads the secret)', () => {
  const { env, dir } = shims();
  const p = plan(env);
  assert.deepEqual(p.folders.map((f) => f.from), [dir]);
  const [c] = scratchCopies(join(h, `run${n}`), p.folders);
  renameSync(dir, `${dir}.away`);
  symlinkSync(join(h, `secret${n}`), dir);
  mkdirSync(join(h, `run${n}`));
  assert.equal(fillScratch(c!), `${dir} could not be opened as planned (ENOTDIR): its copy in this run is empty`);
  assert.deepEqual(readdirSync(c!.src), []);
  // The control: a copy by the path follows the link into the secret folder.
  cpSync(dir, join(h, `followed${n}`), { recursive: true, dereference: true });
  assert.equal(readFileSync(join(h, `followed${n}`, 'id_rsa'), 'utf8'), 'SECRET-KEY\n');
  // Another folder put in its place (not a link) is refused by its identity.
  rmSync(dir);
  mkdirSync(dir);
  writeFileSync(join(dir, 'id_rsa'), 'OTHER\n');
  rmSync(c!.src, { recursive: true });
  assert.equal(fillScratch(c!), `${dir} was replaced since the run was planned: its copy in this run is empty`);
  cpSync(dir, join(h, `control${n}`), { recursive: true, dereference: true });
  assert.equal(readFileSync(join(h, `control${n}`, 'id_rsa'), 'utf8'), 'OTHER\n');
});

test('an entry swapped for a link is copied as the link, never its target; a FIFO is skipped without waiting; a pattern-denied entry is left out', () => {
  const { env, dir } = shims();
  writeFileSync(join(dir, 'server.key'), 'KEY\n');
  execFileSync('mkfifo', [join(dir, 'fifo')]);
  const [c] = scratchCopies(join(h, `run${n}`), plan(env).folders);
  rmSync(join(dir, 'python'));
  symlinkSync(join(h, `secret${n}`, 'id_rsa'), join(dir, 'python'));
  mkdirSync(join(h, `run${n}`));
  assert.equal(fillScratch(c!, [/\.key$/]), null);
  assert.deepEqual(readdirSync(c!.src).sort(), ['python']);
  assert.equal(readlinkSync(join(c!.src, 'python')), join(h, `secret${n}`, 'id_rsa'));
  // The control: a copy of the path follows the link.
  copyFileSync(join(dir, 'python'), join(h, `control${n}`));
  assert.equal(readFileSync(join(h, `control${n}`), 'utf8'), 'SECRET-KEY\n');
});

test('as root: only files of yours, readable by you, are copied, without setuid or setgid bits', needsRoot('it copies files of another user'), () => {
  const { env, dir } = shims();
  writeFileSync(join(dir, 'theirs'), 'THEIRS\n', { mode: 0o600 });
  chownSync(join(dir, 'theirs'), 65534, 65534);
  writeFileSync(join(dir, 'unreadable'), 'HIDDEN\n', { mode: 0o000 });
  writeFileSync(join(dir, 'suid'), '#!/bin/sh\n');
  chmodSync(join(dir, 'suid'), 0o4755);
  const [c] = scratchCopies(join(h, `run${n}`), plan(env).folders);
  mkdirSync(join(h, `run${n}`));
  assert.equal(fillScratch(c!), null);
  assert.deepEqual(readdirSync(c!.src).sort(), ['python', 'suid']);
  assert.equal(statSync(join(c!.src, 'suid')).mode & 0o7000, 0);
  // The control: root reads both anyway.
  assert.equal(readFileSync(join(dir, 'unreadable'), 'utf8'), 'HIDDEN\n');
});

test('planning: by real path (a root that is a link elsewhere), never a folder others can write, never inside a denial as written or resolved, and a root that is no folder is a warning, not a crash', () => {
  const { dir } = shims();
  symlinkSync(join(h, `py${n}`), join(h, `link${n}`));
  assert.deepEqual(plan({ PYENV_ROOT: join(h, `link${n}`) }).folders.map((f) => f.from), [dir]);
  // A denial of the link's path covers the real folder too.
  assert.deepEqual(plan({ PYENV_ROOT: join(h, `link${n}`) }, [join(h, `link${n}`)]).folders, []);
  chmodSync(dir, 0o777);
  assert.deepEqual(plan({ PYENV_ROOT: join(h, `py${n}`) }), { folders: [], warnings: [`${dir}: others can write it or its folder, so it stays read-only in this run (its shims cannot be rehashed)`] });
  chmodSync(dir, 0o755);
  const bad = plan({ PYENV_ROOT: '/etc/passwd' });
  assert.deepEqual(bad, { folders: [], warnings: ['/etc/passwd/shims: ENOTDIR, so it stays read-only in this run'] });
  assert.equal(existsSync(join(h, '.pyenv')), false);
  assert.equal(lstatSync(dir).isDirectory(), true);
});
