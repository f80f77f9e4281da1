import assert from 'node:assert/strict';
import { test } from 'node:test';
import { globToRegex } from '../../lib/paths/rules.js';
import { buildSeatbeltCommand, buildSeatbeltProfile, sbplRegex, sbplString, sbplWellFormed } from '../../templates/seatbelt.js';
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
};

test('Seatbelt profile: golden text for every rule kind and awkward paths', () => {
  const profile = buildSeatbeltProfile(input);
  golden('seatbelt-profile.sb', profile);
  assert.equal(sbplWellFormed(profile), true);
});

test('Seatbelt profile: writable carve-outs allowed after the denials, denials inside them repeated last', () => {
  const g = '/Users/u/r/.git';
  const profile = buildSeatbeltProfile({
    writes: 'deny-list',
    allowWrite: [],
    otherRuns: null,
    unixSockets: true,
    denyRead: [],
    denyWrite: [{ kind: 'path', path: g, dir: true }, { kind: 'path', path: `${g}/worktrees/a/gitdir`, dir: false }, { kind: 'regex', source: '^/Users/u/x' }],
    writable: [`${g}/objects`, `${g}/worktrees/a`],
    pinned: [],
    proxyPort: null,
  });
  assert.equal(profile, [
    '(version 1)',
    '(allow default)',
    '(deny file-write*',
    `  (subpath "${g}")`,
    `  (literal "${g}/worktrees/a/gitdir")`,
    '  (regex #"^/Users/u/x")',
    ')',
    '(allow file-write*',
    `  (subpath "${g}/objects")`,
    `  (subpath "${g}/worktrees/a")`,
    ')',
    '(deny file-write*',
    `  (literal "${g}/worktrees/a/gitdir")`,
    '  (regex #"^/Users/u/x")',
    ')',
    '(deny process-info*)',
    '(allow process-info* (target same-sandbox))',
    '',
  ].join('\n'));
  assert.equal(sbplWellFormed(profile), true);
});

test('Seatbelt profile: writes as an allow-list refuse every write but the allowed paths and devices, denials again after; other runs hidden', () => {
  const profile = buildSeatbeltProfile({
    ...input,
    writes: 'allow-list',
    allowWrite: [{ kind: 'path', path: '/Users/u/proj', dir: true }, { kind: 'regex', source: '^/Users/u/\\.claude/projects(/|$)' }],
    otherRuns: { regex: '^/private/var/folders/xy/T/stashbase-ags_', own: '/private/var/folders/xy/T/stashbase-ags_aaaaaaaaaaaaaaaa' },
    denyRead: [],
    denyWrite: [{ kind: 'path', path: '/Users/u/proj/.git/hooks', dir: true }],
    pinned: [],
    proxyPort: null,
  });
  assert.equal(profile, [
    '(version 1)',
    '(allow default)',
    '(deny file-read* (regex #"^/private/var/folders/xy/T/stashbase-ags_"))',
    '(allow file-read* (subpath "/private/var/folders/xy/T/stashbase-ags_aaaaaaaaaaaaaaaa"))',
    '(deny file-write*)',
    '(allow file-write*',
    '  (subpath "/Users/u/proj")',
    '  (regex #"^/Users/u/\\.claude/projects(/|$)")',
    '  (literal "/dev/null")',
    '  (literal "/dev/zero")',
    '  (literal "/dev/dtracehelper")',
    '  (regex #"^/dev/(tty|ttys[0-9]+|ptmx|stdout|stderr)$")',
    '  (regex #"^/dev/fd/")',
    ')',
    '(deny file-write*',
    '  (subpath "/Users/u/proj/.git/hooks")',
    ')',
    '(deny network-outbound (remote unix-socket))',
    '(deny process-info*)',
    '(allow process-info* (target same-sandbox))',
    '',
  ].join('\n'));
  assert.equal(sbplWellFormed(profile), true);
});

test('Seatbelt profile: host network mode has no network rules but the Unix socket one', () => {
  const profile = buildSeatbeltProfile({ ...input, proxyPort: null });
  assert.deepEqual(profile.split('\n').filter((l) => /network/.test(l)), ['(deny network-outbound (remote unix-socket))']);
  assert.equal(sbplWellFormed(profile), true);
});

test('SBPL literals escape quotes and backslashes and refuse control characters', () => {
  assert.equal(sbplString('a"b\\c'), '"a\\"b\\\\c"');
  assert.equal(sbplString('ü [x]'), '"ü [x]"');
  assert.throws(() => sbplString('a\nb'), /control characters/);
  assert.equal(sbplRegex('^/a/(?:[^/]*/)*b"$'), '#"^/a/([^/]*/)*b\\"$"');
  assert.equal(sbplRegex('^\\/x\\\\/y\\.z'), '#"^/x\\\\/y\\.z"');
});

test('the structural check catches broken profiles', () => {
  assert.equal(sbplWellFormed('(version 1)\n(allow default)\n'), true);
  assert.equal(sbplWellFormed('(version 1'), false);
  assert.equal(sbplWellFormed('(deny file-read* (literal "a)"))\n'), true);
  assert.equal(sbplWellFormed('(deny file-read* (literal "a"))) '), false);
  assert.equal(sbplWellFormed('stray (allow default)'), false);
});

test('sandbox-exec command: the profile is one argument', () => {
  const cmd = buildSeatbeltCommand('/usr/bin/sandbox-exec', '(version 1)\n', ['claude', '--x'], '/Users/u/proj', { set: { A: 'b' }, unset: ['T'] });
  assert.deepEqual(cmd, { file: '/usr/bin/sandbox-exec', args: ['-p', '(version 1)\n', 'claude', '--x'], cwd: '/Users/u/proj', env: { A: 'b' }, unsetEnv: ['T'] });
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
  assert.equal(sbplWellFormed(sbpl), true);
  assert.match(sbpl, /\n  \(subpath "\/Users\/u\/\.stashbase"\)\n/);
  assert.match(sbpl, /\n  \(regex #"\^\/Users\/u\/proj\/secrets\/\(\[\^\/\]\*\/\)\*\[\^\/\]\*\\\.pem\$"\)\n/);
  assert.match(sbpl, /\(allow network-outbound \(remote ip "localhost:49152"\)\)/);
  assert.deepEqual(prep.seatbelt!.args.slice(2), ['claude']);
  golden('native-plan-seatbelt.txt', formatPlan(prep.plan).replace(/\/run\/user\/\d+/g, '/run/user/UID'));
});
