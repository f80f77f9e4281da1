import assert from 'node:assert/strict';
import { test } from 'node:test';
import { globToRegex } from '../../lib/paths/rules.js';
import { buildSeatbeltCommand, buildSeatbeltProfile, sbplRegex, sbplString } from '../../templates/seatbelt.js';
import { decide, readSbpl } from '../sbpl.js';
import { golden } from '../golden.js';

const input = {
  writes: 'deny-list' as const,
  allowWrite: [],
  otherRuns: null,
  unixSockets: false,
  denyRead: [
    { kind: 'path' as const, path: '/Users/u/.ssh', dir: true },
    { kind: 'path' as const, path: '/Users/u/.netrc', dir: false },
    { kind: 'path' as const, path: '/Users/u/My "Keys" [old]', dir: true },
    { kind: 'path' as const, path: '/Users/u/clés privées', dir: true },
    { kind: 'path' as const, path: '/Users/u/back\\slash', dir: false },
    { kind: 'regex' as const, source: '^/Users/u/\\.config/.*token' },
    { kind: 'regex' as const, source: globToRegex('/Users/u/proj/secrets/**/*.pem').source },
  ],
  denyWrite: [{ kind: 'path' as const, path: '/Users/u/.zshrc', dir: false }],
  writable: [] as string[],
  pinned: ['/Users', '/Users/u'],
  proxyPort: 18080,
  deniedSockets: [],
  services: [],
};

test('Seatbelt profile: golden text for every rule kind and awkward paths', () => {
  const profile = buildSeatbeltProfile(input);
  golden('seatbelt-profile.sb', profile);
  readSbpl(profile);
});

test('SBPL literals escape quotes and backslashes and refuse control characters', () => {
  assert.equal(sbplString('a"b\\c'), '"a\\"b\\\\c"');
  assert.equal(sbplString('ü [x]'), '"ü [x]"');
  assert.throws(() => sbplString('a\nb'), /control characters/);
  assert.equal(sbplRegex('^/a/(?:[^/]*/)*b"$'), '#"^/a/([^/]*/)*b\\"$"');
  assert.equal(sbplRegex('^\\/x\\\\/y\\.z'), '#"^/x\\\\/y\\.z"');
});

test('the SBPL reader refuses what Seatbelt would: unclosed forms, stray text, unknown operations and filters', () => {
  assert.deepEqual(readSbpl('(version 1)\n(deny default)\n; a comment (with a parenthesis\n(allow file-read* (literal "a)"))\n').map((r) => r.operations), [['default'], ['file-read*']]);
  for (const [text, why] of [
    ['(version 1', /not closed/], ['(version 1)\n(deny file-read* (literal "a"))) ', /unexpected/], ['stray (allow default)', /not a list/],
    ['(version 1)\n(allow file-reed* (literal "/"))', /unknown operation file-reed\*/], ['(version 1)\n(allow file-read* (subpaths "/"))', /unknown filter subpaths/],
    ['(version 1)\n(allow network-outbound (remote ip "10.0.0.1:80"))', /ip takes/], ['(version 1)\n(allow system-socket (socket-domain AF_FOO))', /unknown socket domain/],
    ['(version 2)\n(deny default)', /version 1/],
  ] as const) assert.throws(() => readSbpl(text), why, text);
});

test('sandbox-exec command: the profile is one argument', async () => {
  const cmd = buildSeatbeltCommand('/usr/bin/sandbox-exec', '(version 1)\n', ['claude', '--x'], '/Users/u/proj', { set: { A: 'b' }, unset: ['T'] });
  assert.deepEqual(cmd, { file: '/usr/bin/sandbox-exec', args: ['-p', '(version 1)\n', 'claude', '--x'], cwd: '/Users/u/proj', env: { A: 'b' }, unsetEnv: ['T'] });
  // On a terminal: script(1) owns the agent's terminal and relays it; the shell between them writes the agent's status.
  const pty = buildSeatbeltCommand('/usr/bin/sandbox-exec', '(version 1)\n', ['claude'], '/Users/u/proj', { set: {}, unset: [] }, { script: '/usr/bin/script', statusFile: '/r/exit-status' });
  assert.deepEqual([pty.file, ...pty.args], ['/usr/bin/script', '-q', '/dev/null', '/bin/sh', '-c', 'st=$1; shift; "$@"; echo $? > "$st"', 'sh', '/r/exit-status', '/usr/bin/sandbox-exec', '-p', '(version 1)\n', 'claude']);
  // The shell's part, run here: the status is the command's, quoted arguments pass through whole.
  const { spawnSync } = await import('node:child_process');
  const { mkdtempSync, readFileSync } = await import('node:fs');
  const dir = mkdtempSync('/tmp/sbpty-');
  const r = spawnSync('/bin/sh', ['-c', pty.args[4]!, 'sh', `${dir}/st`, 'sh', '-c', 'printf "%s|" "$@"; exit 7', 'x', 'a b', '$HOME'], { encoding: 'utf8' });
  assert.equal(r.stdout, 'a b|$HOME|');
  assert.equal(readFileSync(`${dir}/st`, 'utf8'), '7\n');
  (await import('node:fs')).rmSync(dir, { recursive: true, force: true });
});

test('the macOS plan: sandbox-exec with the profile built from the profile rules, golden', async () => {
  const { prepareNative } = await import('../../lib/native/prepare.js');
  const { defaultProfile } = await import('../../lib/profile/default.js');
  const { formatPlan } = await import('../../templates/plan.js');
  const profile = defaultProfile();
  profile.filesystem.denyRead.push('secrets/**/*.pem', 're:^~/\\.config/.*token');
  const prep = prepareNative({
    session: 'ags_aaaaaaaaaaaaaaaa',
    profile,
    command: ['claude'],
    cwd: '/Users/u/proj',
    env: { PATH: '/usr/bin:/bin' },
    home: '/Users/u',
    stashbaseHome: '/Users/u/.stashbase',
    mechanism: { kind: 'seatbelt', path: '/usr/bin/sandbox-exec', why: 'sandbox-exec at /usr/bin/sandbox-exec' },
    placeholders: {},
    proxyToken: 't0ken', hookToken: 'h00k',
    proxyUrl: 'http://127.0.0.1:49152',
  });
  assert.equal(prep.seatbelt?.file, '/usr/bin/sandbox-exec');
  const sbpl = prep.seatbelt!.args[1]!;
  readSbpl(sbpl);
  const rules = readSbpl(sbpl);
  assert.equal(decide(rules, 'file-read-data', '/Users/u/.stashbase/ca/key.pem'), 'deny');
  assert.equal(decide(rules, 'file-read-data', '/Users/u/proj/secrets/a/b.pem'), 'deny');
  assert.equal(decide(rules, 'file-read-data', '/Users/u/.config/x/api-token'), 'deny');
  assert.equal(decide(rules, 'file-read-data', '/Users/u/proj/src/a.ts'), 'allow');
  assert.match(sbpl, /\(allow network-outbound \(remote ip "localhost:49152"\)\)/);
  assert.deepEqual(prep.seatbelt!.args.slice(2), ['claude']);
  golden('native-plan-seatbelt.txt', formatPlan(prep.plan).replace(/\/run\/user\/\d+/g, '/run/user/UID'));
});
