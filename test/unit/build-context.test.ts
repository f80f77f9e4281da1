// A profile's Dockerfile build (lib/docker/build-context.ts, lib/docker/image.ts):
// what COPY and ADD read, what is left out or refused, the digest that tags
// the image and that trust pins, the context stashbase writes, and what a run
// keeps read-only. From two hostile reviews: links among the inputs, a folder
// swapped for a link while the inputs are read, a Dockerfile that is a link,
// ADD of a URL, patterns, a home under a link.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { buildRoots, dockerfileSources, makeContext, readDockerfile } from '../../lib/docker/build-context.js';
import { buildReadOnly, chooseImage, dockerfileTag, nativeBuildReadOnly, readDenied } from '../../lib/docker/image.js';
import { defaultProfile } from '../../lib/profile/default.js';
import { tempHome, writeFile } from '../helpers.js';

const t = tempHome();
after(() => t.cleanup());
const none = () => false;
const folder = (name: string) => {
  mkdirSync(join(t.dir, name), { recursive: true });
  return realpathSync(join(t.dir, name));
};

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

test('makeContext: the inputs written as they were read (bytes and modes), deny_read files left out; the digest follows content, not place, and counts the build network', () => {
  const mk = (name: string) => {
    const dir = folder(name);
    writeFile(join(dir, 'Dockerfile'), 'FROM debian\nCOPY app/ run.sh /src/\n');
    writeFile(join(dir, 'app', 'main.py'), 'print(1)\n');
    writeFile(join(dir, 'app', '.env'), 'TOKEN=real\n');
    writeFile(join(dir, 'run.sh'), '#!/bin/sh\n');
    chmodSync(join(dir, 'run.sh'), 0o750);
    return dir;
  };
  const a = mk('ctx-a');
  const b = mk('ctx-b');
  const deny = (dir: string) => (abs: string) => abs === join(dir, 'app', '.env');
  const fa = readDockerfile('Dockerfile', a, 'sandbox.dockerfile');
  const out = join(t.dir, 'build-a');
  mkdirSync(out);
  const made = makeContext(fa, deny(a), false, out);
  assert.deepEqual(made.files, ['app/main.py', 'run.sh']);
  assert.deepEqual(made.left, ['app/.env (deny_read)']);
  assert.deepEqual(readdirSync(join(out, 'context')).sort(), ['app', 'run.sh']);
  assert.equal(statSync(join(out, 'context', 'run.sh')).mode & 0o777, 0o750);
  assert.equal(readFileSync(join(out, 'Dockerfile'), 'utf8'), fa.text);
  assert.equal(existsSync(join(out, 'context', 'app', '.env')), false);
  const fb = readDockerfile('Dockerfile', b, 'sandbox.dockerfile');
  // The same content elsewhere (a worktree's copy) is the same image; an edit, or the network, another.
  assert.equal(makeContext(fb, deny(b), false, null).digest, made.digest);
  assert.notEqual(makeContext(fb, deny(b), true, null).digest, made.digest);
  writeFileSync(join(b, 'app', 'main.py'), 'print(2)\n');
  assert.notEqual(makeContext(fb, deny(b), false, null).digest, made.digest);
  assert.equal(dockerfileTag(made.digest), `stashbase-dockerfile:${made.digest.slice(0, 32)}`);
});

test('links: a link among the inputs, a source reached through a linked folder, and a Dockerfile that is a link are refused (a build reads no link); the control: a plain copy works', () => {
  const dir = folder('ctx-links');
  const outside = folder('outside');
  writeFile(join(outside, 'secret'), 'outside secret\n');
  writeFile(join(dir, 'Dockerfile'), 'FROM debian\nCOPY src/ /src/\n');
  writeFile(join(dir, 'src', 'ok.txt'), 'ok\n');
  const f = readDockerfile('Dockerfile', dir, 'sandbox.dockerfile');
  assert.deepEqual(makeContext(f, none, false, null).files, ['src/ok.txt']);
  // The review's write-anywhere: a link whose text looks inside, resolving out.
  symlinkSync('../../../../../../..', join(dir, 'src', 'L'));
  assert.throws(() => makeContext(f, none, false, null), { message: `sandbox.dockerfile: ${join(dir, 'Dockerfile')} copies ${join(dir, 'src', 'L')}, which is or passes through a symbolic link; a build reads no link: name what it points at` });
  writeFile(join(dir, 'Dockerfile.via'), 'FROM debian\nCOPY via/secret /s\n');
  symlinkSync(outside, join(dir, 'via'));
  assert.throws(() => makeContext(readDockerfile('Dockerfile.via', dir, 'sandbox.dockerfile'), none, false, null), /copies .*\/via, which is or passes through a symbolic link/);
  symlinkSync(join(dir, 'Dockerfile'), join(dir, 'Dockerfile.link'));
  assert.throws(() => readDockerfile('Dockerfile.link', dir, 'sandbox.dockerfile'), { message: `sandbox.dockerfile: ${join(dir, 'Dockerfile.link')} is a symbolic link (name the file it points at)` });
  writeFile(join(dir, 'Dockerfile.up'), 'FROM debian\nCOPY ../outside/secret /s\n');
  assert.throws(() => makeContext(readDockerfile('Dockerfile.up', dir, 'sandbox.dockerfile'), none, false, null), /copies "\.\.\/outside\/secret", outside its folder/);
});

test('a folder swapped for a link to a secret while its files are read (unnamed: swapped between two of its files): what is read is the folder that was opened, never the secret', () => {
  const dir = folder('ctx-swap');
  const secret = folder('secret-store');
  writeFile(join(secret, 'id_rsa'), 'PRIVATE KEY\n');
  writeFile(join(secret, 'z'), 'PRIVATE TOO\n');
  writeFile(join(dir, 'Dockerfile'), 'FROM debian\nCOPY conf /conf/\n');
  writeFile(join(dir, 'conf', 'a'), 'mine a\n');
  writeFile(join(dir, 'conf', 'z'), 'mine z\n');
  const f = readDockerfile('Dockerfile', dir, 'sandbox.dockerfile');
  let swapped = false;
  // The deny check runs per entry, mid-walk: the swap happens there.
  const swapping = (abs: string) => {
    if (!swapped && abs === join(dir, 'conf', 'a')) {
      swapped = true;
      renameSync(join(dir, 'conf'), join(dir, 'conf-moved'));
      symlinkSync(secret, join(dir, 'conf'));
    }
    return false;
  };
  const out = join(t.dir, 'build-swap');
  mkdirSync(out);
  let made: ReturnType<typeof makeContext> | null = null;
  try {
    made = makeContext(f, swapping, false, out);
  } catch (e) {
    // Refusing is as good: what matters is that nothing of the secret is read.
    assert.match((e as Error).message, /symbolic link|missing/);
  }
  assert.ok(swapped);
  if (made !== null) {
    for (const name of made.files) assert.doesNotMatch(readFileSync(join(out, 'context', name), 'utf8'), /PRIVATE/, name);
  }
});

test('buildRoots: the Dockerfile, each source, a pattern\'s folder (new matches too) and the .dockerignore, there or not', () => {
  const dir = folder('ctx-roots');
  writeFile(join(dir, 'Dockerfile'), 'FROM debian\nCOPY setup.sh optional.s[h] /opt/\nCOPY conf/*.ini /etc/x/\n');
  const f = readDockerfile('Dockerfile', dir, 'sandbox.dockerfile');
  assert.deepEqual(buildRoots(f), [join(dir, '.dockerignore'), join(dir, 'Dockerfile'), dir, join(dir, 'conf'), join(dir, 'setup.sh')].sort());
  // A pattern in the folder the agent writes: the folder itself would be read-only, so the run is refused.
  const base = defaultProfile();
  const profile = { ...base, sandbox: { ...base.sandbox, dockerfile: 'Dockerfile' } };
  const c = { cwd: dir, env: {}, home: t.home, stashbaseHome: t.sbHome };
  assert.throws(() => buildReadOnly(chooseImage(profile, {}, c), dir), /copies .*ctx-roots, which holds the folder the agent writes/);
  assert.throws(() => nativeBuildReadOnly(profile, c, dir), /which holds the folder the agent writes/);
  assert.deepEqual(nativeBuildReadOnly(profile, c, join(t.dir, 'elsewhere')), buildRoots(f));
  // Missing: the Dockerfile's path alone, so the agent cannot create it.
  assert.deepEqual(nativeBuildReadOnly({ ...profile, sandbox: { ...profile.sandbox, dockerfile: 'gone.Dockerfile' } }, c, dir), [join(dir, 'gone.Dockerfile')]);
  assert.deepEqual(nativeBuildReadOnly(base, c, dir), []);
});

test('ADD of a URL is refused without build_network (the engine downloads it with its own network); with it, it is allowed', () => {
  const dir = folder('ctx-add');
  writeFile(join(dir, 'Dockerfile'), 'FROM debian\nADD http://127.0.0.1:8765/f.txt?exfil=x /x.txt\n');
  const base = defaultProfile();
  const profile = { ...base, sandbox: { ...base.sandbox, dockerfile: 'Dockerfile' } };
  const c = { cwd: dir, env: {}, home: t.home, stashbaseHome: t.sbHome };
  assert.throws(() => chooseImage(profile, {}, c), { message: `sandbox.dockerfile: ${join(dir, 'Dockerfile')} has ADD http://127.0.0.1:8765/f.txt?exfil=x, which the engine downloads with its own network even in a build without one; download it yourself and COPY it, or set build_network = true under [sandbox] (weaker)` });
  assert.equal(chooseImage({ ...profile, sandbox: { ...profile.sandbox, buildNetwork: true } }, {}, c).kind, 'dockerfile');
});

test('deny_read through a home that is a link: the rule names the real file too', () => {
  const realHome = folder('real-home');
  const linkHome = join(t.dir, 'link-home');
  symlinkSync(realHome, linkHome);
  const base = defaultProfile();
  const profile = { ...base, filesystem: { ...base.filesystem, denyRead: ['~/p/docker/secret.txt'] } };
  const denied = readDenied(profile, linkHome, join(linkHome, 'p'), t.sbHome);
  assert.equal(denied(join(realHome, 'p', 'docker', 'secret.txt')), true);
  assert.equal(denied(join(realHome, 'p', 'docker', 'other.txt')), false);
});
