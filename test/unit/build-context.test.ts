// A profile's Dockerfile build (lib/docker/build-context.ts, lib/docker/image.ts):
// what COPY and ADD read, what is left out, the digest that tags the image,
// the context stashbase writes, and what a run keeps read-only.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { buildInputs, dockerfileSources, writeBuildContext } from '../../lib/docker/build-context.js';
import { buildReadOnly, chooseImage, dockerfileTag, nativeBuildReadOnly } from '../../lib/docker/image.js';
import { defaultProfile } from '../../lib/profile/default.js';
import { tempHome, writeFile } from '../helpers.js';

const t = tempHome();
after(() => t.cleanup());
const none = () => false;

test('dockerfileSources: the context paths of COPY and ADD, not other stages, URLs, heredocs or comments', () => {
  const text = [
    '# syntax=docker/dockerfile:1',
    'FROM debian AS base',
    'COPY a.txt b/ /dst/',
    'copy --chown=1:1 --chmod=755 c.sh /x',
    'ADD ["d e.txt", "/y/"]',
    'COPY --from=base /etc/passwd /z',
    'ADD https://example.test/f.tgz /w',
    '# COPY secret.txt /s',
    'RUN echo \\',
    '  COPY not-this /q',
    'COPY <<EOF /etc/motd',
    'COPY heredoc-body /h',
    'EOF',
    'COPY src/*.py \\',
    '     /app/',
  ].join('\n');
  assert.deepEqual(dockerfileSources(text), ['a.txt', 'b/', 'c.sh', 'd e.txt', 'src/*.py']);
});

test('buildInputs: deny_read files, links out of the folder and folders behind links are left out; the digest follows content, not place', () => {
  const outside = join(t.dir, 'outside');
  writeFile(join(outside, 'secret'), 'outside secret\n');
  const mk = (name: string) => {
    mkdirSync(join(t.dir, name), { recursive: true });
    const dir = realpathSync(join(t.dir, name));
    writeFile(join(dir, 'Dockerfile'), 'FROM debian\nCOPY . /src/\n');
    writeFile(join(dir, 'app', 'main.py'), 'print(1)\n');
    writeFile(join(dir, '.env'), 'TOKEN=real\n');
    symlinkSync(join(outside, 'secret'), join(dir, 'app', 'leak'));
    symlinkSync(outside, join(dir, 'via'));
    symlinkSync('main.py', join(dir, 'app', 'alias'));
    return dir;
  };
  const a = mk('ctx-a');
  const b = mk('ctx-b');
  const deny = (dir: string) => (abs: string) => abs === join(dir, '.env');
  const ia = buildInputs(join(a, 'Dockerfile'), a, deny(a));
  assert.deepEqual(ia.files.map((f) => [f.rel, f.link]), [['Dockerfile', null], ['app/alias', 'main.py'], ['app/main.py', null]]);
  assert.deepEqual(ia.left.sort(), ['.env (deny_read)', 'app/leak (a link out of the folder)', 'via (a link out of the folder)']);
  assert.deepEqual(ia.roots, [a]);
  const ib = buildInputs(join(b, 'Dockerfile'), b, deny(b));
  // The same content elsewhere (a worktree's copy) is the same image.
  assert.equal(dockerfileTag(ia), dockerfileTag(ib));
  writeFileSync(join(b, 'app', 'main.py'), 'print(2)\n');
  assert.notEqual(buildInputs(join(b, 'Dockerfile'), b, deny(b)).digest, ia.digest);
  // Named through a folder that is a link: not read.
  writeFile(join(a, 'Dockerfile.via'), 'FROM debian\nCOPY via/secret /s\n');
  assert.deepEqual(buildInputs(join(a, 'Dockerfile.via'), a, none).left, ['via/secret (behind a link)']);
  writeFile(join(a, 'Dockerfile.up'), 'FROM debian\nCOPY ../outside/secret /s\n');
  assert.throws(() => buildInputs(join(a, 'Dockerfile.up'), a, none), { message: `sandbox.dockerfile: ${join(a, 'Dockerfile.up')} copies "../outside/secret", outside its folder ${a}` });
});

test('writeBuildContext: the inputs copied with their modes, links as links; an input changed since it was hashed refuses the build', () => {
  const dir = join(t.dir, 'ctx-write');
  writeFile(join(dir, 'Dockerfile'), 'FROM debian\nCOPY run.sh lib/ /app/\n');
  writeFile(join(dir, 'run.sh'), '#!/bin/sh\n');
  writeFile(join(dir, 'lib', 'x.txt'), 'x\n');
  writeFile(join(dir, 'unnamed.txt'), 'not copied\n');
  chmodSync(join(dir, 'run.sh'), 0o755);
  const inputs = buildInputs(join(dir, 'Dockerfile'), dir, none);
  const made = writeBuildContext(inputs, join(t.dir, 'build-1'));
  assert.deepEqual(readdirSync(made.context).sort(), ['lib', 'run.sh']);
  assert.equal(statSync(join(made.context, 'run.sh')).mode & 0o777, 0o755);
  assert.equal(readFileSync(made.dockerfile, 'utf8'), 'FROM debian\nCOPY run.sh lib/ /app/\n');
  writeFileSync(join(dir, 'lib', 'x.txt'), 'y\n');
  assert.throws(() => writeBuildContext(inputs, join(t.dir, 'build-2')), { message: `sandbox.dockerfile: ${join(dir, 'lib', 'x.txt')} changed while the build was prepared; nothing was built` });
});

test('buildReadOnly: the Dockerfile and what it copies; a copy holding the folder the agent writes refuses the run', () => {
  const dir = realpathSync(join(t.dir, 'ctx-write'));
  const base = defaultProfile();
  const profile = { ...base, sandbox: { ...base.sandbox, dockerfile: 'Dockerfile' } };
  const c = { cwd: dir, env: {}, home: t.home, stashbaseHome: t.sbHome };
  assert.deepEqual(buildReadOnly(chooseImage(profile, {}, c), dir), [join(dir, 'Dockerfile'), join(dir, 'lib'), join(dir, 'run.sh')]);
  writeFile(join(dir, 'Dockerfile.all'), 'FROM debian\nCOPY . /app/\n');
  const all = chooseImage({ ...profile, sandbox: { ...profile.sandbox, dockerfile: 'Dockerfile.all' } }, {}, c);
  assert.throws(() => buildReadOnly(all, join(dir, 'lib')), /copies .*ctx-write, which holds the folder the agent writes \(.*ctx-write\/lib\): the run cannot keep it read-only/);
  // Missing: the Dockerfile's path alone, so the agent cannot create it.
  assert.deepEqual(nativeBuildReadOnly({ ...profile, sandbox: { ...profile.sandbox, dockerfile: 'gone.Dockerfile' } }, c, dir), [join(dir, 'gone.Dockerfile')]);
  assert.deepEqual(nativeBuildReadOnly(base, c, dir), []);
});
