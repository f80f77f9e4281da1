// The host side of the secret_scan hook, pure parts: what a sandbox may ask,
// how its paths map to the host's, the exact confinement, the answer's
// encoding, the hooks' shell text, and secret_scan on Windows.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { encodeScanAnswer, scanSecrets } from '../../lib/hooks/host-scan.js';
import { checkScanArgs, parseScanRequest, plainPath } from '../../lib/hooks/scan-request.js';
import { validateProfile } from '../../lib/profile/validate.js';
import { buildConfineCommand } from '../../templates/confine.js';
import { buildConfineSeatbeltProfile } from '../../templates/confine-seatbelt.js';
import { renderHook } from '../../templates/git-hook.js';
import { readSbpl } from '../sbpl.js';
import { golden } from '../golden.js';

const tree = '/work/repo';
const HEX = 'a'.repeat(40);

test('scan args: only --staged, --range <hex>..<hex> and --json, one source', () => {
  assert.deepEqual(checkScanArgs(['--staged']), ['--staged']);
  assert.deepEqual(checkScanArgs(['--range', `${'0'.repeat(40)}..${HEX}`, '--json']), ['--range', `${'0'.repeat(40)}..${HEX}`, '--json']);
  for (const bad of [[], ['--staged', '--staged'], ['--range', 'HEAD..main'], ['--range'], ['.'], ['--staged', '--range', `${HEX}..${HEX}`], ['--profile', 'x'], ['--json'], [1], 'x', ['--staged', '--json', '--json'], ['--secret-env', 'HOME']]) {
    assert.equal(typeof checkScanArgs(bad), 'string', JSON.stringify(bad));
  }
});

test('sandbox paths: absolute and spelled plainly', () => {
  assert.equal(plainPath('/work/repo'), '/work/repo');
  assert.equal(plainPath('/work/repo/'), '/work/repo');
  assert.equal(plainPath('/work/repo/src/a b'), '/work/repo/src/a b');
  for (const bad of ['/work/repo/../x', '/work/repo/./x', '/work/repo//x', 'work/repo', '', '/work/repo/\n', 'x'.repeat(5000)]) {
    assert.equal(plainPath(bad), null, JSON.stringify(bad));
  }
});

test("request: fields, cwd inside the working tree, the index inside its git directories (round 34: not anywhere in the tree, where git printed the first bytes of a denied file)", () => {
  const visible = ['/work/main/.git'];
  assert.deepEqual(parseScanRequest({ args: ['--staged'], cwd: '/work/repo/sub/', indexFile: '/work/main/.git/next-index-1.lock' }, tree, visible), { args: ['--staged'], cwd: '/work/repo/sub', indexFile: '/work/main/.git/next-index-1.lock' });
  for (const cwd of ['/etc', '/work/repo2', '/work/repo/../x', '/work']) {
    assert.match(parseScanRequest({ args: ['--staged'], cwd }, tree, visible) as string, /not inside the run's working tree/, cwd);
  }
  for (const indexFile of ['/home/u/.git/index', '/work/repo/secrets/prod.env', '/work/repo']) {
    assert.equal(parseScanRequest({ args: ['--staged'], cwd: '/work/repo', indexFile }, tree, visible), `indexFile ${JSON.stringify(indexFile)} is not inside the run's git directories`);
  }
  assert.match(parseScanRequest({ args: ['--staged'], cwd: '/work/repo', env: {} }, tree, visible) as string, /unknown field "env"/);
  assert.match(parseScanRequest({ args: ['--json'], cwd: '/work/repo' }, tree, visible) as string, /exactly one of --staged and --range/);
  assert.match(parseScanRequest([], tree, visible) as string, /not a JSON object/);
});

test('confine: the whole bubblewrap argument list (a view before what is bound into it; one bind per pair; system folders not again)', () => {
  const cmd = buildConfineCommand({
    bwrap: '/usr/bin/bwrap',
    system: [{ path: '/usr' }, { path: '/bin', symlink: 'usr/bin' }, { path: '/lib64', symlink: 'usr/lib64' }, { path: '/opt/lib' }],
    etc: ['/etc/ld.so.cache', '/etc/passwd'],
    binds: [
      { src: '/usr/local/node', dest: '/usr/local/node' },
      { src: '/home/u/.npm-global/lib/node_modules/stashbase', dest: '/home/u/.npm-global/lib/node_modules/stashbase' },
      { src: '/home/u/proj/.git/objects', dest: '/home/u/proj/.git/objects' },
      { src: '/tmp/stashbase-ags_x/views/git', dest: '/home/u/proj/.git' },
      { src: '/home/u/proj', dest: '/home/u/proj' },
      { src: '/home/u/proj', dest: '/home/u/proj' },
    ],
    cwd: '/home/u/proj/sub',
    command: ['/usr/local/node/bin/node', '/home/u/.npm-global/lib/node_modules/stashbase/bin/stashbase.cjs', 'scan', '--staged'],
    env: { PATH: '/usr/bin:/bin', HOME: '/tmp', TOKEN: 'real' },
    inherited: ['PATH', 'HOME', 'SSH_AUTH_SOCK', 'AWS_SECRET_ACCESS_KEY'],
  });
  assert.deepEqual(cmd, {
    file: '/usr/bin/bwrap',
    args: [
      '--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL',
      '--ro-bind', '/usr', '/usr',
      '--symlink', 'usr/bin', '/bin',
      '--symlink', 'usr/lib64', '/lib64',
      '--ro-bind', '/opt/lib', '/opt/lib',
      '--ro-bind', '/etc/ld.so.cache', '/etc/ld.so.cache',
      '--ro-bind', '/etc/passwd', '/etc/passwd',
      '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp',
      '--ro-bind', '/home/u/proj', '/home/u/proj',
      '--ro-bind', '/tmp/stashbase-ags_x/views/git', '/home/u/proj/.git',
      '--ro-bind', '/home/u/proj/.git/objects', '/home/u/proj/.git/objects',
      '--ro-bind', '/home/u/.npm-global/lib/node_modules/stashbase', '/home/u/.npm-global/lib/node_modules/stashbase',
      '--chdir', '/home/u/proj/sub',
      '--', '/usr/local/node/bin/node', '/home/u/.npm-global/lib/node_modules/stashbase/bin/stashbase.cjs', 'scan', '--staged',
    ],
    env: { PATH: '/usr/bin:/bin', HOME: '/tmp', TOKEN: 'real' },
    unsetEnv: ['SSH_AUTH_SOCK', 'AWS_SECRET_ACCESS_KEY'],
  });
});

test('confine on macOS: the Seatbelt profile, golden', () => {
  const profile = buildConfineSeatbeltProfile({ readOnly: ['/Users/u/proj', '/Users/u/proj/.git', '/opt/homebrew/Cellar/node/20.1.0', '/Users/u/"odd" dir'], tmp: '/private/var/folders/x/T/stashbase-scan-abc' });
  readSbpl(profile);
  golden('confine-seatbelt.sb', profile);
});

test('the answer: one line of JSON; control characters but newline and tab removed', () => {
  assert.equal(encodeScanAnswer({ exit: 1, stdout: 'a.txt:1 r x**\n', stderr: 'bad\u001b[2J name\tok\r\n' }), '{"exit":1,"stdout":"a.txt:1 r x**\\n","stderr":"bad[2J name\\tok\\n"}');
});

test('hooks: valid sh, the CLI recorded, golden', () => {
  for (const kind of ['pre-commit', 'pre-push'] as const) {
    const text = renderHook({ kind, node: '/usr/bin/node', cli: "/opt/it's here/bin/stashbase.cjs", profileArgs: ['--profile', 'coding'] });
    const r = spawnSync('sh', ['-n'], { input: text });
    assert.equal(r.status, 0, String(r.stderr));
    golden(`hook-${kind}.sh`, text);
  }
});

test('profile: secret_scan fails validation on Windows, dependency_check does not', () => {
  const v = (hooks: string[], platform: NodeJS.Platform) => () =>
    validateProfile({ name: 'p', source: 'global', file: '/p.toml', label: 'p.toml', data: { allow_hooks: hooks }, lines: new Map(), env: {}, platform });
  assert.throws(v(['secret_scan'], 'win32'), /allow_hooks: "secret_scan" is not available on Windows/);
  assert.doesNotThrow(v(['dependency_check'], 'win32'));
  assert.doesNotThrow(v(['secret_scan'], 'linux'));
  assert.doesNotThrow(v(['secret_scan'], 'darwin'));
});

test("(review, round 34) a bound secret too short to be searched for is not handed to the agent's scan, which would say so and so tell its length; (unlisted) an empty one neither; control: one long enough is", () => {
  const secrets = { SHORT: { source: 'S', from: { kind: 'env', variable: 'S' } }, EMPTY: { source: 'E', from: { kind: 'env', variable: 'E' } }, LONG: { source: 'L', from: { kind: 'env', variable: 'L' } } };
  const profile = { secrets } as unknown as Parameters<typeof scanSecrets>[0]['profile'];
  assert.deepEqual(scanSecrets({ profile, env: { S: 'abcdefg', E: '', L: 'abcdefgh' } }), { LONG: 'abcdefgh' });
});

test("(review, round 34) the confined scan's and check's Seatbelt profile denies what the agent's sandbox hides, after the reads it allows", () => {
  const sb = buildConfineSeatbeltProfile({ readOnly: ['/Users/u/proj'], hidden: [{ path: '/Users/u/proj/secrets', dir: true }, { path: '/Users/u/proj/.env', dir: false }], tmp: '/private/tmp/x' });
  const lines = sb.split('\n');
  const allow = lines.findIndex((l) => l.includes('(subpath "/Users/u/proj")'));
  assert.ok(allow > 0);
  assert.deepEqual(lines.filter((l) => l.startsWith('(deny file-read*')), ['(deny file-read* (subpath "/Users/u/proj/secrets"))', '(deny file-read* (literal "/Users/u/proj/.env"))']);
  assert.ok(lines.findIndex((l) => l.startsWith('(deny file-read*')) > allow);
});
