import assert from 'node:assert/strict';
import { test } from 'node:test';
import { globToRegex } from '../../lib/paths/rules.js';
import { buildSeatbeltCommand, buildSeatbeltProfile, SEATBELT_HELPER, sbplRegex, sbplString } from '../../templates/seatbelt.js';
import { decide, readSbpl } from '../sbpl.js';
import { golden } from '../golden.js';

const input = {
  writes: 'deny-list' as const,
  allowWrite: [],
  plain: [],
  runFolders: { regex: '^/private/var/folders/xy/T/stashbase-ags_', own: '/private/var/folders/xy/T/stashbase-ags_aaaaaaaaaaaaaaaa', tmp: '/private/var/folders/xy/T/stashbase-ags_aaaaaaaaaaaaaaaa/tmp' },
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
  pinnedPatterns: [],
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
    ['(version 1)\n(deny file-write-create (vnode-type LINK))', /unknown vnode type LINK/],
  ] as const) assert.throws(() => readSbpl(text), why, text);
});

test('sandbox-exec is started by stashbase\'s helper with nothing of the agent\'s environment; on a terminal, under script(1)', async () => {
  const launch = { node: '/usr/local/bin/node', statusFile: '/s/exit-status', envFile: '/s/agent-env.json', pty: false };
  const cmd = buildSeatbeltCommand('/usr/bin/sandbox-exec', '(version 1)\n', ['claude', '--x'], '/Users/u/proj', launch);
  assert.deepEqual(cmd, { file: '/usr/local/bin/node', args: ['-e', SEATBELT_HELPER, 'plain', '/s/exit-status', '/s/agent-env.json', '/usr/bin/sandbox-exec', '-p', '(version 1)\n', 'claude', '--x'], cwd: '/Users/u/proj', env: { PATH: '/usr/bin:/bin:/usr/sbin:/sbin' }, onlyEnv: true });
  const pty = buildSeatbeltCommand('/usr/bin/sandbox-exec', '(version 1)\n', ['claude'], '/Users/u/proj', { ...launch, pty: true });
  assert.deepEqual([pty.file, ...pty.args.slice(0, 5)], ['/usr/bin/script', '-q', '/dev/null', '/usr/local/bin/node', '-e', SEATBELT_HELPER]);
  // The helper, run here with `sh` for sandbox-exec: the agent's environment from the file, never the helper's own; the status written once, never through a link.
  const { spawnSync } = await import('node:child_process');
  const { mkdtempSync, readFileSync, writeFileSync, symlinkSync, rmSync, existsSync } = await import('node:fs');
  const dir = mkdtempSync('/tmp/sbhelper-');
  writeFileSync(`${dir}/env.json`, JSON.stringify({ PATH: process.env.PATH, AGENT_ONLY: 'yes' }));
  const run = (st: string) => spawnSync(process.execPath, ['-e', SEATBELT_HELPER, 'plain', st, `${dir}/env.json`, '/bin/sh', '-c', 'echo "$AGENT_ONLY|$HELPER_SECRET"; exit 7'], { encoding: 'utf8', env: { PATH: process.env.PATH, HELPER_SECRET: 'leak' } });
  const r = run(`${dir}/st`);
  assert.deepEqual([r.status, r.stdout, readFileSync(`${dir}/st`, 'utf8')], [7, 'yes|\n', '7']);
  symlinkSync(`${dir}/victim`, `${dir}/st-link`);
  run(`${dir}/st-link`);
  assert.equal(existsSync(`${dir}/victim`), false);
  // What the agent leaves in its process group dies with it.
  const left = spawnSync(process.execPath, ['-e', SEATBELT_HELPER, 'plain', `${dir}/st2`, `${dir}/env.json`, '/bin/sh', '-c', `(sleep 2; touch ${dir}/survivor) & exit 0`], { encoding: 'utf8' });
  assert.equal(left.status, 0);
  await new Promise((res) => setTimeout(res, 2500));
  assert.equal(existsSync(`${dir}/survivor`), false);
  // The control: the same without the helper leaves the process behind.
  spawnSync('/bin/sh', ['-c', `(sleep 1; touch ${dir}/survivor) & exit 0`]);
  await new Promise((res) => setTimeout(res, 1500));
  assert.equal(existsSync(`${dir}/survivor`), true);
  rmSync(dir, { recursive: true, force: true });
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
  assert.equal(prep.seatbelt?.args[prep.seatbelt.args.indexOf('-p') - 1], '/usr/bin/sandbox-exec');
  const sbpl = prep.seatbelt!.args[prep.seatbelt!.args.indexOf('-p') + 1]!;
  readSbpl(sbpl);
  const rules = readSbpl(sbpl);
  assert.equal(decide(rules, 'file-read-data', '/Users/u/.stashbase/ca/key.pem'), 'deny');
  assert.equal(decide(rules, 'file-read-data', '/Users/u/proj/secrets/a/b.pem'), 'deny');
  assert.equal(decide(rules, 'file-read-data', '/Users/u/.config/x/api-token'), 'deny');
  assert.equal(decide(rules, 'file-read-data', '/Users/u/proj/src/a.ts'), 'allow');
  // The agents' live state, read by your own agents outside any run: files and folders, no link, FIFO or socket (the
  // native backend's Landlock step refuses the same); links in the tree and the run's temp folder stay possible.
  const live = ['/Users/u/.claude/projects/p/s.jsonl', '/Users/u/.codex/sessions/2026/r.jsonl', '/Users/u/.claude/debug/latest'];
  assert.deepEqual(live.map((f) => decide(rules, 'file-write-create', f)), ['allow', 'allow', 'allow']);
  assert.deepEqual(['SYMLINK', 'FIFO', 'SOCKET', 'DIRECTORY'].map((v) => decide(rules, 'file-write-create', live[0]!, v)), ['deny', 'deny', 'deny', 'allow']);
  assert.deepEqual(live.map((f) => decide(rules, 'file-write-create', f, 'SYMLINK')), ['deny', 'deny', 'deny']);
  assert.deepEqual(['/Users/u/.CLAUDE/Projects/p/x', '/Users/u/.claude/projects'].map((f) => decide(rules, 'file-write-create', f, 'SYMLINK')), ['deny', 'deny']);
  assert.equal(decide(rules, 'file-write-create', '/Users/u/proj/node_modules/.bin/tsc', 'SYMLINK'), 'allow');
  // The files carried back by merge are written in place here: no link in their place or their temporaries' either.
  assert.deepEqual(['/Users/u/.claude/history.jsonl', '/Users/u/.claude.json', '/Users/u/.claude.json.tmp.1.ab'].map((f) => [decide(rules, 'file-write-create', f), decide(rules, 'file-write-create', f, 'SYMLINK')]), [['allow', 'deny'], ['allow', 'deny'], ['allow', 'deny']]);
  assert.match(sbpl, /\(allow network-outbound \(remote ip "localhost:49152"\)\)/);
  assert.deepEqual(prep.seatbelt!.args.slice(prep.seatbelt!.args.indexOf('-p') + 2), ['claude']);
  golden('native-plan-seatbelt.txt', formatPlan(prep.plan).replace(/\/run\/user\/\d+/g, '/run/user/UID'));
});

test('(review, round 4) a run in a folder of a repository cannot make a .git there (your git in that folder would take it for the repository while the run lasts); control: in a folder that is no repository it can, and in the folder itself it writes', async () => {
  const { prepareNative } = await import('../../lib/native/prepare.js');
  const { defaultProfile } = await import('../../lib/profile/default.js');
  const { mkdirSync, mkdtempSync, realpathSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { spawnSync } = await import('node:child_process');
  const top = realpathSync(mkdtempSync(join(tmpdir(), 'stashbase-sb-')));
  try {
    const repo = join(top, 'repo');
    const alone = join(top, 'alone');
    mkdirSync(join(repo, 'sub'), { recursive: true });
    mkdirSync(alone);
    assert.equal(spawnSync('git', ['init', '-q', repo]).status, 0);
    const rulesAt = (cwd: string, writes: 'allow-list' | 'deny-list' = 'allow-list') => {
      const profile = defaultProfile();
      profile.filesystem.writes = writes;
      const prep = prepareNative({
        session: 'ags_bbbbbbbbbbbbbbbb', profile, command: ['sh'], cwd, env: { PATH: '/usr/bin:/bin' }, home: join(top, 'home'),
        stashbaseHome: join(top, 'home', '.stashbase'), mechanism: { kind: 'seatbelt', path: '/usr/bin/sandbox-exec', why: 'test' },
        placeholders: {}, proxyToken: 't0ken', hookToken: 'h00k', proxyUrl: 'http://127.0.0.1:49152',
      });
      return readSbpl(prep.seatbelt!.args[prep.seatbelt!.args.indexOf('-p') + 1]!);
    };
    const inRepo = rulesAt(join(repo, 'sub'));
    assert.deepEqual(['.git', '.git/config', 'src.ts'].map((f) => decide(inRepo, 'file-write-create', join(repo, 'sub', f))), ['deny', 'deny', 'allow']);
    // And in a folder between it and the top, where deny-list writes reach (control: a file there is written).
    mkdirSync(join(repo, 'mid', 'deep'), { recursive: true });
    const open = rulesAt(join(repo, 'mid', 'deep'), 'deny-list');
    assert.deepEqual([join(repo, 'mid', '.git'), join(repo, 'mid', 'deep', '.git'), join(repo, 'mid', 'notes.txt')].map((f) => decide(open, 'file-write-create', f)), ['deny', 'deny', 'allow']);
    const noRepo = rulesAt(alone);
    assert.equal(decide(noRepo, 'file-write-create', join(alone, '.git')), 'allow');
    // (review, round 5) In a folder whose name holds a glob's characters, the rule still names it (and the repository's own .git).
    const odd = join(top, 'proj [v2]');
    mkdirSync(join(odd, 'sub'), { recursive: true });
    assert.equal(spawnSync('git', ['init', '-q', odd]).status, 0);
    const inOdd = rulesAt(join(odd, 'sub'));
    assert.deepEqual([join(odd, 'sub', '.git'), join(odd, '.git', 'config'), join(odd, 'sub', 'a.ts')].map((f) => decide(inOdd, 'file-write-create', f)), ['deny', 'deny', 'allow']);
  } finally {
    rmSync(top, { recursive: true, force: true });
  }
});
