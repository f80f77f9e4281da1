// The end-of-run walk (lib/git/planted-repos.ts) as a user who is not root: a
// folder of yours closed to you (the agent writes as you, and can chmod its
// own) hides what lies below, so the walk fails, said, rather than pass it by;
// another user's folder you cannot read is not the agent's and is passed by.
// Control: the same tree open, the planted pointer is found. Real processes
// under setpriv as nobody; needs root to set them up.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { needsRoot } from '../helpers.js';

const NOBODY = 65534;
const walker = new URL('../../lib/git/planted-repos.js', import.meta.url).pathname;
const walk = (root: string) => spawnSync('setpriv', ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', process.execPath, '--input-type=module', '-e',
  `import(${JSON.stringify(walker)}).then((m) => { const w = m.dotGitsUnder(process.argv[1]); console.log(JSON.stringify([w.found, w.unreadable])); })`, root], { encoding: 'utf8' });

test('a folder of yours closed to you is named as unchecked and the walk goes on beside it; another user\'s is passed by; open, the pointer below is found', needsRoot('the walk as nobody needs its folders made for two users'), () => {
  const root = mkdtempSync('/tmp/sb-walk-');
  try {
    const deep = join(root, 'a', 'b');
    mkdirSync(deep, { recursive: true });
    writeFileSync(join(deep, '.git'), 'gitdir: /elsewhere/.git\n');
    for (const p of [root, join(root, 'a'), deep, join(deep, '.git')]) chownSync(p, NOBODY, NOBODY);
    // Control: open, the planted pointer is found.
    assert.equal(walk(root).stdout.trim(), JSON.stringify([[join(deep, '.git')], []]));
    // Closed: named as unchecked; (found in review) the walk goes on beside it: a pointer in another folder is still found.
    const beside = join(root, 'c');
    mkdirSync(beside);
    writeFileSync(join(beside, '.git'), 'gitdir: /elsewhere/.git\n');
    for (const p of [beside, join(beside, '.git')]) chownSync(p, NOBODY, NOBODY);
    chmodSync(join(root, 'a'), 0o111);
    assert.equal(walk(root).stdout.trim(), JSON.stringify([[join(beside, '.git')], [`${join(root, 'a')} (EACCES)`]]));
    // Another user's (root's) folder closed to nobody: not the agent's doing, passed by.
    chownSync(join(root, 'a'), 0, 0);
    chmodSync(join(root, 'a'), 0o700);
    assert.equal(walk(root).stdout.trim(), JSON.stringify([[join(beside, '.git')], []]));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

// From the ninth review: inside a nested repository's git directory, a folder closed to you (chmod 111: git still
// opens what it holds by name) is itself a finding, in the end-of-run check and in the check of a git directory a
// run would import into; before, it read as empty. Control: your git runs the hook behind it.
const guard = new URL('../../lib/git/nested-repo-guard.js', import.meta.url).pathname;
const links = new URL('../../lib/git/git-dir-links.js', import.meta.url).pathname;
const asNobody = (code: string, ...args: string[]) => spawnSync('setpriv', ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', process.execPath, '--input-type=module', '-e', code, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: '/tmp' } });

test('a folder closed to you in a nested repository\'s git directory (its hooks, its logs): a finding, not an empty folder; control: your git runs the hook behind it', needsRoot('the check as nobody needs its folders made for nobody'), () => {
  const root = mkdtempSync('/tmp/sb-guard-');
  try {
    const nobody = (...a: string[]) => spawnSync('setpriv', ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', ...a], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: root, GIT_CONFIG_NOSYSTEM: '1' } });
    chownSync(root, NOBODY, NOBODY);
    const vend = join(root, 'vend');
    const marker = join(root, 'ran');
    assert.equal(nobody('git', 'init', '-q', root).status, 0);
    assert.equal(nobody('git', 'init', '-q', vend).status, 0);
    assert.equal(nobody('git', '-C', vend, '-c', 'user.name=a', '-c', 'user.email=a@b', 'commit', '-q', '--allow-empty', '-m', 'v').status, 0);
    const since = Date.now() - 1;
    assert.equal(nobody('sh', '-c', `printf '#!/bin/sh\\necho ran >> ${marker}\\n' > ${vend}/.git/hooks/post-checkout && chmod +x ${vend}/.git/hooks/post-checkout && chmod 111 ${vend}/.git/hooks ${vend}/.git/logs`).status, 0);
    // The check of a git directory (a later run from vend plans its own over it): the closed folder is named.
    const led = asNobody(`import(${JSON.stringify(links)}).then((m) => console.log(m.gitDirLink(process.argv[1], () => true)))`, join(vend, '.git'));
    assert.equal(led.stdout.trim(), 'hooks (a folder stashbase cannot list: EACCES)', led.stderr);
    const r = asNobody(`import(${JSON.stringify(guard)}).then((m) => console.log(JSON.stringify(m.checkNestedRepos(process.argv[1], { PATH: process.env.PATH, HOME: '/tmp' }, Number(process.argv[2])))))`, root, String(since));
    const warnings = JSON.parse(r.stdout || '[]') as string[];
    assert.equal(warnings.length, 1, r.stdout + r.stderr);
    assert.match(warnings[0] as string, new RegExp(`^the agent left a nested repository at ${vend}, in a subfolder, .*: ${vend}/\\.git/hooks: a folder stashbase cannot list \\(EACCES\\), whose hooks git still runs; its git directory ${vend}/\\.git holds hooks \\(a folder stashbase cannot list: EACCES\\), through which git writes elsewhere\\. Its \\.git was renamed`));
    // Control: the same as it was, your git there runs the hook behind the closed folder.
    assert.equal(nobody('mv', `${vend}/.git.stashbase-quarantine/HEAD.stashbase-quarantine`, `${vend}/.git.stashbase-quarantine/HEAD`).status, 0);
    assert.equal(nobody('mv', `${vend}/.git.stashbase-quarantine`, `${vend}/.git`).status, 0);
    assert.equal(nobody('git', '-C', vend, 'checkout', '-q', '-b', 'x').status, 0);
    assert.equal(readFileSync(marker, 'utf8'), 'ran\n');
  } finally {
    spawnSync('chmod', ['-R', 'u+rwx', root]);
    rmSync(root, { recursive: true, force: true });
  }
});
