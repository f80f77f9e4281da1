// The Seatbelt profile as a Mac would get it, rendered here with a Mac's
// home, TMPDIR and links (/var, /tmp and /etc lead into /private), read back
// through a small SBPL reader (test/sbpl.ts), and decided the way Seatbelt
// decides (the last matching rule wins) for the paths that matter.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { canonicalPath } from '../../lib/native/seatbelt-rules.js';
import { portableRegex } from '../../lib/paths/portable-regex.js';
import { defaultProfile } from '../../lib/profile/default.js';
import { loadProfile } from '../../lib/profile/load.js';
import type { Profile } from '../../lib/profile/types.js';
import { weakerSettings } from '../../lib/run/weaker.js';
import { buildSeatbeltProfile, foldCase } from '../../templates/seatbelt.js';
import { MACOS_SERVICE_MACH, SEATBELT_MACH_SERVICES, SEATBELT_SYSCTLS } from '../../templates/seatbelt-base.js';
import { REAL_ANTHROPIC, recipe } from '../agent-recipes.js';
import { golden } from '../golden.js';
import { tempHome, writeFile } from '../helpers.js';
import { decide, readSbpl, type Rule, show } from '../sbpl.js';

const HOME = '/Users/u';
const CWD = '/Users/u/proj';
const TMP = '/var/folders/xy/abc123/T';
const RUN = `/private${TMP}/stashbase-ags_aaaaaaaaaaaaaaaa`;

/** A Mac's links, without a Mac: /var, /tmp and /etc lead into /private; /Users and /private exist. */
const macReal = (p: string): string | null => {
  for (const l of ['/var', '/tmp', '/etc']) if (p === l || p.startsWith(l + '/')) return `/private${p}`;
  return p === '/' || p === '/Users' || p.startsWith('/Users/') || p.startsWith('/private/') || p.startsWith('/usr/') ? p : null;
};

async function macPrep(profile: Profile, command = ['claude'], interactive = false) {
  const { prepareNative } = await import('../../lib/native/prepare.js');
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = TMP;
  try {
    return prepareNative({
      session: 'ags_aaaaaaaaaaaaaaaa', profile, command, cwd: CWD, env: { PATH: '/usr/bin:/bin' }, home: HOME, stashbaseHome: `${HOME}/.stashbase`,
      mechanism: { kind: 'seatbelt', path: '/usr/bin/sandbox-exec', why: 'sandbox-exec' }, placeholders: {}, proxyToken: 't0ken', hookToken: 'h00k',
      proxyUrl: 'http://127.0.0.1:49152', realPath: macReal, interactive,
    });
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
}

const sbplOf = async (profile: Profile) => {
  const a = (await macPrep(profile)).seatbelt!.args;
  return a[a.indexOf('-p') + 1]!;
};

const t = tempHome();
after(() => t.cleanup());
function loaded(toml: string): Profile {
  writeFile(join(t.sbHome, 'agents', 'p.toml'), toml);
  return loadProfile({ name: 'p', source: 'global', cwd: t.dir, env: { ...t.env, ANTHROPIC_API_KEY: REAL_ANTHROPIC } }).profile;
}

test('golden: the default profile, a recipe, and one with globs, regexes, non-ASCII and /tmp rules, as a Mac gets them', async () => {
  golden('seatbelt-default.sb', await sbplOf(defaultProfile()));
  golden('seatbelt-recipe-claude.sb', await sbplOf(loaded(recipe('claude'))));
  const p = defaultProfile();
  p.filesystem.denyRead.push('secrets/**/*.pem', 're:^~/\\.config/\\w+/token', '~/clés privées', '/tmp/shared-secrets', '/tmp/**/*.key', '/etc/app/*.conf');
  p.filesystem.allowWrite.push('/tmp/build-cache');
  const text = await sbplOf(p);
  golden('seatbelt-rules.sb', text);
  for (const sb of [text, await sbplOf(defaultProfile())]) readSbpl(sb);
});

test('deny by default: no escape operation is allowed, and what is allowed is allowed by name', async () => {
  const rules = readSbpl(await sbplOf(defaultProfile()));
  assert.deepEqual(rules[0], { action: 'deny', operations: ['default'], filters: [] });
  for (const r of rules.filter((x) => x.action === 'allow')) {
    for (const op of ['default', 'lsopen', 'appleevent-send', 'job-creation', 'user-preference-write', 'file*', 'network*', 'distributed-notification-post']) {
      assert.equal(r.operations.includes(op), false, `${op} allowed`);
    }
    // Signals, process info and task ports: this sandbox's processes only (never stashbase, never your shell).
    if (r.operations.some((o) => ['signal', 'process-info*', 'mach-priv-task-port'].includes(o))) assert.deepEqual(r.filters.map(show), ['(target same-sandbox)']);
    // Every lookup, sysctl and IOKit class by name: an allowance without a filter would allow them all.
    if (r.operations.some((o) => ['mach-lookup', 'sysctl-read', 'sysctl-write', 'iokit-open', 'system-socket', 'network-outbound', 'network-bind', 'network-inbound'].includes(o))) assert.notEqual(r.filters.length, 0, JSON.stringify(r));
  }
  const names = (op: string, kind: string) => rules.filter((r) => r.action === 'allow' && r.operations.includes(op)).flatMap((r) => r.filters).map(show).filter((f) => f.startsWith(`(${kind}`));
  assert.deepEqual(names('mach-lookup', 'global-name').sort(), SEATBELT_MACH_SERVICES.map((m) => `(global-name "${m.name}")`).sort());
  const sysctls = names('sysctl-read', 'sysctl-name');
  assert.deepEqual(sysctls.sort(), SEATBELT_SYSCTLS.map((a) => `(sysctl-name${a.prefix ? '-prefix' : ''} "${a.name}")`).sort());
  // kern.procargs2 (every process's command line) is matched by no name and no prefix.
  assert.equal(SEATBELT_SYSCTLS.some((a) => (a.prefix ? 'kern.procargs2'.startsWith(a.name) || 'kern.proc.all'.startsWith(a.name) : a.name === 'kern.procargs2')), false);
  // The Keychain's, the pasteboard's and trustd's services only when asked for.
  const all = Object.values(MACOS_SERVICE_MACH).flat();
  assert.equal(names('mach-lookup', 'global-name').some((f) => all.some((n) => f.includes(`"${n}"`))), false);
  const opted = defaultProfile();
  opted.sandbox.macosAllow = ['keychain', 'pasteboard', 'trustd'];
  const optedRules = readSbpl(await sbplOf(opted));
  const optedNames = optedRules.filter((r) => r.action === 'allow' && r.operations.includes('mach-lookup')).flatMap((r) => r.filters).map(show);
  for (const n of all) assert.equal(optedNames.includes(`(global-name "${n}")`), true, n);
  // The keychain opt-in lifts the Keychain's folder, and only that.
  assert.equal(decide(optedRules, 'file-read-data', `${HOME}/Library/Keychains/login.keychain-db`), 'allow');
  assert.equal(decide(rules, 'file-read-data', `${HOME}/Library/Keychains/login.keychain-db`), 'deny');
  assert.equal(decide(optedRules, 'file-read-data', `${HOME}/Library/Cookies/Cookies.binarycookies`), 'deny');
});

test('network: out only to the proxy port, listeners on the loopback only, Unix sockets by path never (and the always-denied ones even when allowed)', async () => {
  const net = (rules: Rule[]) => rules.filter((r) => r.operations.some((o) => o.startsWith('network'))).map((r) => `${r.action} ${r.operations.join(' ')} ${r.filters.map(show).join(' ')}`);
  assert.deepEqual(net(readSbpl(await sbplOf(defaultProfile()))), [
    'allow network-outbound (remote ip "localhost:49152")',
    'allow network-bind (local ip "localhost:*")',
    'allow network-inbound (local ip "localhost:*")',
  ]);
  const p = defaultProfile();
  p.sandbox.allowUnixSockets = true;
  p.sandbox.macosAllow = ['localhost'];
  const lines = net(readSbpl(await sbplOf(p)));
  assert.equal(lines[1], 'allow network-outbound (remote ip "localhost:*")');
  assert.equal(lines.includes('allow network-outbound (remote unix-socket (path-regex #"^/"))'), true);
  const denied = lines.at(-1)!;
  assert.match(denied, /^deny network-outbound /);
  for (const sock of ['/var/run/docker.sock', `${HOME}/.docker/run/docker.sock`, '/private/tmp/com.apple.launchd.AbC123/Listeners']) {
    const canon = canonicalPath(sock, macReal);
    assert.equal([...denied.matchAll(/path-regex #"([^"]+)"/g)].some((m) => new RegExp(m[1]!).test(canon)), true, sock);
  }
  assert.deepEqual(weakerSettings(p, CWD, HOME).filter((w) => w.startsWith('macos_allow')), ['macos_allow "localhost" is weaker on macOS: every port on your loopback: the agent reaches your local databases, dev servers and any API listening on 127.0.0.1 (not only its own)']);
});

test('canonical paths: the run folder, TMPDIR and every rule under /tmp, /var and /etc in the form Seatbelt matches', async () => {
  assert.equal(canonicalPath('/var/folders/xy/T/new/deeper', macReal), '/private/var/folders/xy/T/new/deeper');
  assert.equal(canonicalPath('/nonexistent/a', macReal), '/nonexistent/a');
  const prep = await macPrep(defaultProfile());
  assert.equal(prep.runDir, RUN);
  assert.deepEqual([prep.agentEnv.set.TMPDIR, prep.agentEnv.set.TMPPREFIX, prep.agentEnv.set.CLAUDE_CODE_TMPDIR, prep.agentEnv.set.xcrun_nocache], [`${RUN}/tmp`, `${RUN}/tmp/zsh`, `${RUN}/tmp`, '1']);
  // On a terminal the agent gets a relayed one of its own; either way sandbox-exec is started by the helper, with none of the agent's environment.
  const tty = await macPrep(defaultProfile(), ['claude'], true);
  assert.deepEqual([tty.seatbelt!.file, ...tty.seatbelt!.args.slice(0, 4), ...tty.seatbelt!.args.slice(5, 8)], ['/usr/bin/script', '-q', '/dev/null', process.execPath, '-e', 'pty', `${HOME}/.stashbase/runs/ags_aaaaaaaaaaaaaaaa/exit-status`, `${HOME}/.stashbase/runs/ags_aaaaaaaaaaaaaaaa/agent-env.json`]);
  assert.deepEqual([tty.seatbelt!.env, tty.seatbelt!.onlyEnv], [{ PATH: '/usr/bin:/bin:/usr/sbin:/sbin' }, true]);
  const p = defaultProfile();
  p.filesystem.denyRead.push('/tmp/shared-secrets', '/tmp/**/*.key', '/etc/app/*.conf');
  p.filesystem.allowWrite.push('/tmp/build-cache');
  const rules = readSbpl(await sbplOf(p));
  const cases: Array<[string, string, 'allow' | 'deny']> = [
    ['file-write-data', `${RUN}/tmp/heredoc`, 'allow'],
    ['file-write-create', '/private/tmp/claude-501/x', 'deny'],
    ['file-write-data', '/private/tmp/build-cache/obj', 'allow'],
    ['file-read-data', '/private/tmp/shared-secrets/a', 'deny'],
    ['file-read-data', '/private/tmp/x/y/server.key', 'deny'],
    ['file-read-data', '/private/etc/app/db.conf', 'deny'],
    ['file-read-data', `/private${TMP}/stashbase-ags_bbbbbbbbbbbbbbbb/tmp/f`, 'deny'],
    ['file-read-data', `/private${TMP.toUpperCase()}/STASHBASE-AGS_bbbbbbbbbbbbbbbb/tmp/f`, 'deny'],
    ['file-read-data', `${RUN}/ca/ca.pem`, 'allow'],
    ['file-write-data', `${CWD}/src/a.ts`, 'allow'],
    ['file-write-data', `${HOME}/.zshrc`, 'deny'],
  ];
  for (const [op, path, want] of cases) assert.equal(decide(rules, op, path), want, `${op} ${path}`);
});

test('denials hold for case variants, both Unicode forms and hard links; allowances are matched as written', async () => {
  const p = defaultProfile();
  p.filesystem.denyRead.push('~/clés privées');
  const rules = readSbpl(await sbplOf(p));
  for (const path of [`${HOME}/.ssh/id_ed25519`, `${HOME}/.SSH/id_ed25519`, `${HOME}/.Ssh`, `${HOME}/.AWS/credentials`, `${HOME}/Library/keychains/login.keychain-db`,
    `${HOME}/clés privées/k`.normalize('NFC'), `${HOME}/clés privées/k`.normalize('NFD'), `${HOME}/CLÉS PRIVÉES/k`.normalize('NFC')]) {
    assert.equal(decide(rules, 'file-read-data', path), 'deny', path);
    // Seatbelt matches a hard link by its own path: making one of a denied file is refused.
    assert.equal(decide(rules, 'file-link', path), 'deny', `link ${path}`);
  }
  assert.equal(decide(rules, 'file-read-data', `${HOME}/.sshx`), 'allow');
  // Under the allow-list no hard link is made at all (a link here to a file outside would make it writable by this path).
  assert.equal(decide(rules, 'file-link', `${CWD}/a`), 'deny');
  assert.equal(foldCase('^/Users/u/\\.ssh(/.*)?$'), '^/[Uu][sS][eE][rR][sS]/[uU]/\\.[sS][sS][hH](/.*)?$');
  assert.equal(foldCase('[a-c_]x[^Q]é'), '[ABCa-c_][xX].(é|É)');
  // A negated class excludes a letter only when it excludes both cases; ranges and a trailing '-' are read as written.
  assert.deepEqual([foldCase('[^a-zA-Z]'), foldCase('[^/]'), foldCase('[a-]'), foldCase('[0-Z]')], ['[^ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz]', '[^/]', '[Aa-]', '[abcdefghijklmnopqrstuvwxyz0-Z]']);
});

test('re: entries: \\d and \\w spelled out, the rest of the subset kept, anything Seatbelt and the walk would read apart refused with the key and line', () => {
  assert.deepEqual(portableRegex('^~/\\.config/\\w+/t\\d?[\\d\\w-]$'), { source: '^~/\\.config/[A-Za-z0-9_]+/t[0-9]?[0-9A-Za-z0-9_-]$' });
  assert.deepEqual(portableRegex('^/a/(?:b|c)*\\.pem$'), { source: '^/a/(?:b|c)*\\.pem$' });
  for (const [src, why] of [['a(?=b)', /lookarounds/], ['a\\sb', /\\s is not supported/], ['a{2}', /counted repetition/], ['a*?', /lazy/], ['a^b', /\^ is supported only/], ['[[:alpha:]]', /POSIX/], ['\\1', /\\1 is not/], ['[]a]', /begins with "\]"/], ['[^]a]', /begins with "\]"/], ['[a\\]]', /inside a class/]] as const) {
    const r = portableRegex(src);
    assert.ok('problem' in r && why.test(r.problem), `${src}: ${JSON.stringify(r)}`);
  }
  writeFile(join(t.sbHome, 'agents', 'p.toml'), '[filesystem]\ndeny_read = [\n  "~/ok",\n  "re:^~/x(?!y)",\n]\n[sandbox]\nmacos_allow = ["keychain", "camera"]\n');
  assert.throws(() => loadProfile({ name: 'p', source: 'global', cwd: t.dir, env: t.env }), (e: Error) => {
    assert.match(e.message, /p\.toml:2 filesystem\.deny_read\[1\]: "re:\^~\/x\(\?!y\)": lookarounds/);
    assert.match(e.message, /p\.toml:7 sandbox\.macos_allow\[1\]: "camera" is not one of "keychain", "pasteboard", "trustd", "localhost"/);
    return true;
  });
});

test('a denied folder\'s links lead nowhere new: their targets are denied too', async () => {
  const { seatbeltInput } = await import('../../lib/native/seatbelt-rules.js');
  const { symlinkSync, linkSync, mkdirSync } = await import('node:fs');
  const h = t.home;
  writeFile(join(h, 'dotfiles', 'ssh', 'id_rsa'), 'KEY');
  mkdirSync(join(h, '.ssh'));
  symlinkSync(join(h, 'dotfiles', 'ssh', 'id_rsa'), join(h, '.ssh', 'id_rsa'));
  writeFile(join(h, '.aws', 'credentials'), 'AWS');
  linkSync(join(h, '.aws', 'credentials'), join(h, 'elsewhere'));
  const built = seatbeltInput({ writes: 'allow-list', allowWrite: [], allowRules: [], runFolders: { regex: '^/nowhere/stashbase-ags_', own: '/nowhere/x', tmp: '/nowhere/x/tmp' }, unixSockets: false, deniedSockets: [], denyRead: ['~/.ssh', '~/.aws'], denyWrite: [], home: h, cwd: h, proxyPort: 1, services: [] });
  assert.deepEqual(built.input.denyRead.filter((r) => r.kind === 'path' && !r.path.endsWith('.ssh') && !r.path.endsWith('.aws')), [{ kind: 'path', path: join(h, 'dotfiles', 'ssh', 'id_rsa'), dir: false }]);
  assert.deepEqual(built.warnings, [`${join(h, '.aws', 'credentials')} has 1 other hard link(s): Seatbelt denies by path, so a link outside the denied folders reads it (remove the link, or use the Docker backend)`]);
  // The control: without the walk the target stays readable by its own path.
  const rules = readSbpl(buildSeatbeltProfile({ ...built.input, denyRead: built.input.denyRead.slice(0, 2) }));
  assert.equal(decide(rules, 'file-read-data', join(h, 'dotfiles', 'ssh', 'id_rsa')), 'allow');
  assert.equal(decide(readSbpl(buildSeatbeltProfile(built.input)), 'file-read-data', join(h, 'dotfiles', 'ssh', 'id_rsa')), 'deny');
});

test('the macOS probe script exists, parses, refuses to run off a Mac, and probes every claim the profile makes', async () => {
  const { spawnSync } = await import('node:child_process');
  const { readFileSync } = await import('node:fs');
  const { REPO } = await import('../helpers.js');
  const script = join(REPO, 'scripts', 'macos-probes.sh');
  assert.equal(spawnSync('bash', ['-n', script]).status, 0);
  const r = spawnSync('bash', [script], { encoding: 'utf8' });
  assert.deepEqual([r.status, r.stderr.trim()], [2, 'macos-probes.sh runs on macOS only (Linux CI checks the profile in test/unit/seatbelt-mac.test.ts)']);
  const text = readFileSync(script, 'utf8');
  const probes = [...text.matchAll(/^probe (\S+)\s+(worked|refused)/gm)].map((m) => `${m[1]} ${m[2]}`);
  for (const p of ['read-denied refused', 'read-denied-case refused', 'read-denied-nfd refused', 'read-link-target refused', 'hard-link-denied refused', 'read-other-run refused',
    'write-tmpdir worked', 'write-tmp refused', 'zsh-heredoc worked', 'lsopen refused', 'apple-events refused', 'launchd-job refused', 'preference-write refused', 'keychain refused',
    'pasteboard refused', 'signal-other refused', 'procargs-other refused', 'nested-sandbox-exec refused', 'raw-loopback refused', 'raw-loopback-opted worked', 'listen-any refused',
    'listen-loopback worked', 'unix-socket refused', 'socketpair worked']) assert.ok(probes.includes(p), p);
  assert.match(text, /tiocsti-reaches-your-shell/);
  assert.match(readFileSync(join(REPO, '.github', 'workflows', 'macos-probes.yml'), 'utf8'), /bash scripts\/macos-probes\.sh --agents/);
});

test('from the hostile review: writes inside the working directory still refused where denied, renames of what holds a denial refused (pinned folders, a pattern\'s fixed parts), hard links of a denied file in the working directory, other terminals, LaunchAgents even under allow_write, run folders in deny-list mode, mixed Unicode forms', async () => {
  const p = defaultProfile();
  p.filesystem.denyRead.push('secrets/**/*.pem', 'config/secret.key', 'keys/*/live/*.key', '~/clés privées');
  p.filesystem.allowWrite.push('~/Library');
  const rules = readSbpl(await sbplOf(p));
  const cases: Array<[string, string, 'allow' | 'deny']> = [
    ['file-write-data', `${CWD}/.git/hooks/pre-commit`, 'deny'],
    ['file-write-data', `${CWD}/.git/config`, 'deny'],
    ['file-write-data', `${CWD}/src/ok.ts`, 'allow'],
    ['file-write-unlink', `${CWD}/secrets`, 'deny'],
    ['file-write-unlink', `${CWD}/Secrets`, 'deny'],
    ['file-write-unlink', `${CWD}/config`, 'deny'],
    ['file-write-unlink', `${CWD}/CONFIG`, 'deny'],
    ['file-write-unlink', `${CWD}/keys/prod/live`, 'deny'],
    ['file-write-unlink', `${CWD}/keys/prod/other`, 'allow'],
    ['file-write-unlink', `${CWD}/src`, 'allow'],
    ['file-link', `${CWD}/secrets/a/b.pem`, 'deny'],
    ['file-link', `${CWD}/config/secret.key`, 'deny'],
    ['file-read-data', '/dev/ttys004', 'deny'],
    ['file-write-data', '/dev/ttys004', 'deny'],
    ['file-write-data', '/dev/null', 'allow'],
    ['file-write-data', `${HOME}/Library/LaunchAgents/evil.plist`, 'deny'],
    ['file-write-data', `${HOME}/Library/Caches/ok`, 'allow'],
    ['file-read-data', `${HOME}/${'cl\u00e9s prive\u0301es'}/k`, 'deny'],
    ['file-read-data', `${HOME}/${'CLE\u0301S PRIVÉES'}/k`, 'deny'],
  ];
  for (const [op, path, want] of cases) assert.equal(decide(rules, op, path), want, `${op} ${path}`);
  // The run's own terminal, once the helper names it, is the one the agent may use.
  const own = readSbpl((await sbplOf(defaultProfile())).split('"/dev/stashbase-own-tty"').join('"/dev/ttys007"'));
  assert.deepEqual([decide(own, 'file-read-data', '/dev/ttys007'), decide(own, 'file-write-data', '/dev/ttys007'), decide(own, 'file-read-data', '/dev/ttys004')], ['allow', 'allow', 'deny']);
  // Deny-list writes: every run's folder but this run's temp is still refused; the denials and the persistence folders hold.
  const dl = defaultProfile();
  dl.filesystem.writes = 'deny-list';
  const d = readSbpl(await sbplOf(dl));
  for (const [op, path, want] of [
    ['file-write-create', `${RUN}/exit-status`, 'deny'], ['file-write-data', `/private${TMP}/stashbase-ags_bbbbbbbbbbbbbbbb/tmp/x`, 'deny'], ['file-write-data', `${RUN}/tmp/x`, 'allow'],
    ['file-write-data', `${HOME}/.zshrc`, 'deny'], ['file-write-data', `${HOME}/Library/LaunchAgents/x.plist`, 'deny'], ['file-write-data', `${HOME}/notes.txt`, 'allow'],
    ['file-read-data', `/private${TMP}/stashbase-ags_bbbbbbbbbbbbbbbb/tmp/x`, 'deny'],
  ] as const) assert.equal(decide(d, op, path), want, `deny-list ${op} ${path}`);
});
