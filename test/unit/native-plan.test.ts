import assert from 'node:assert/strict';
import { test } from 'node:test';
import { join } from 'node:path';
import { buildBwrapCommand, type BwrapInput } from '../../templates/bwrap.js';
import { buildNativePlan, type NativePlanInput } from '../../templates/native-plan.js';
import { formatPlan, planToJson } from '../../templates/plan.js';
import { buildSystemdRunCommand, type SystemdRunInput } from '../../templates/systemd-run.js';
import { formatCommand } from '../../templates/command.js';
import { GATE_SCRIPT } from '../../templates/gate.js';
import { golden } from '../golden.js';

const RUN = '/tmp/stashbase-ags_aaaaaaaaaaaaaaaa';
const P = '/home/u/my project';
const bwrapInput: BwrapInput = {
  bwrap: '/usr/bin/bwrap',
  envTool: '/usr/bin/env',
  perl: '/usr/bin/perl',
  command: ['claude', '--model', "it's $x"],
  cwd: P,
  writes: 'allow-list',
  procReadOnly: ['/proc/sys', '/proc/sysrq-trigger'],
  privateTmp: [{ src: `${RUN}/tmp-0`, dest: '/tmp' }, { src: `${RUN}/tmp-1`, dest: '/var/tmp' }],
  scratch: [{ from: '/home/u/.pyenv/shims', src: `${RUN}/scratch-0` }],
  binds: [
    { src: P, dest: P, ro: false },
    { src: `${RUN}/views/git`, dest: `${P}/.git`, ro: false },
    { src: `${P}/.git/objects`, dest: `${P}/.git/objects`, ro: false },
    { src: `${P}/.git/hooks`, dest: `${P}/.git/hooks`, ro: true },
    { src: `${RUN}/views/claude`, dest: '/home/u/.claude', ro: false },
    { src: `${RUN}/ca`, dest: `${RUN}/ca`, ro: true },
  ],
  denyRead: [
    { path: '/home/u/.ssh', kind: 'dir' },
    { path: '/home/u/.netrc', kind: 'file' },
    { path: '/home/u/.stashbase', kind: 'dir' },
  ],
  denyWrite: [{ path: `${P}/secrets/keep.txt`, kind: 'file' }],
  writable: [],
  pinned: [`${P}/secrets`],
  deniedFile: `${RUN}/denied`,
  emptyDir: `${RUN}/empty`,
  tmpfsPerms: true,
  heldRoots: [P],
  isolateNetwork: true,
  seccompFile: `${RUN}/seccomp.bpf`,
  landlock: null,
  // The agent's whole environment, as lib/native/prepare.ts makes it (yours less the dropped credentials, plus the run's).
  env: { PATH: '/usr/bin:/bin', HOME: '/home/u', HTTPS_PROXY: 'http://stashbase:t0ken@127.0.0.1:18080', GITHUB_TOKEN: 'ghp_SBPHxxxxxxxxxxxxxxxxxxxx' },
  userns: true,
};

test('bwrap (writes as an allow-list): the whole argument list', () => {
  const cmd = buildBwrapCommand(bwrapInput);
  assert.equal(cmd.file, '/usr/bin/env');
  assert.deepEqual(cmd.args, [
    '--ignore-signal=INT', '/usr/bin/bwrap',
    '--die-with-parent', '--unshare-pid', '--unshare-ipc', '--unshare-cgroup-try', '--unshare-net',
    '--unshare-user', '--userns-block-fd', '6',
    '--cap-drop', 'ALL',
    // The gate runs with no environment at all; the agent's is set by the gate (below).
    '--clearenv',
    '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc',
    '--ro-bind', '/proc/sys', '/proc/sys', '--ro-bind', '/proc/sysrq-trigger', '/proc/sysrq-trigger',
    '--bind', `${RUN}/tmp-0`, '/tmp', '--bind', `${RUN}/tmp-1`, '/var/tmp',
    // The tree itself, and sources in it, are bound from descriptors the runner opened and checked (fd 9 up, in this order).
    '--bind-fd', '9', P,
    '--bind', `${RUN}/views/claude`, '/home/u/.claude',
    '--ro-bind', `${RUN}/ca`, `${RUN}/ca`,
    '--bind', `${RUN}/views/git`, `${P}/.git`,
    '--bind', `${RUN}/scratch-0`, '/home/u/.pyenv/shims',
    '--bind-fd', '10', `${P}/secrets`,
    '--bind-fd', '11', `${P}/.git/objects`,
    // Read-only binds stay by path: one swapped protects another file and grants nothing.
    '--ro-bind', `${P}/.git/hooks`, `${P}/.git/hooks`,
    '--ro-bind', `${P}/secrets/keep.txt`, `${P}/secrets/keep.txt`,
    '--perms', '0555', '--tmpfs', '/home/u/.ssh',
    '--ro-bind', `${RUN}/denied`, '/home/u/.netrc',
    '--perms', '0555', '--tmpfs', '/home/u/.stashbase',
    '--seccomp', '3', '--info-fd', '4', '--block-fd', '5',
    '--chdir', P,
    // The agent's whole environment, from none: stashbase's less the dropped credentials, plus what the run sets.
    '--', '/usr/bin/perl', '-e', GATE_SCRIPT, '--', '0', '5', 'PATH', '/usr/bin:/bin', 'HOME', '/home/u',
    'HTTPS_PROXY', 'http://stashbase:t0ken@127.0.0.1:18080', 'GITHUB_TOKEN', 'ghp_SBPHxxxxxxxxxxxxxxxxxxxx', 'PWD', P,
    'claude', '--model', "it's $x",
  ]);
  // The agent's environment is bwrap's to set: bwrap and the sandbox's pid 1 (whose environ the agent could read) run with a bare PATH.
  assert.deepEqual([cmd.env, cmd.unsetEnv, cmd.onlyEnv], [{ PATH: '/usr/bin:/bin' }, [], true]);
  assert.equal(cmd.args.join(' ').includes('ghp_realRealReal'), false);
  assert.equal(cmd.args.join(' ').includes('sk-real'), false);
  assert.deepEqual(cmd.fds, [
    { fd: 3, path: `${RUN}/seccomp.bpf` },
    { fd: 9, path: P, held: true },
    { fd: 10, path: `${P}/secrets`, held: true },
    { fd: 11, path: `${P}/.git/objects`, held: true },
  ]);
  assert.deepEqual(cmd.pipes, [{ fd: 4, direction: 'from-child' }, { fd: 5, direction: 'to-child' }, { fd: 6, direction: 'to-child' }, { fd: 8, direction: 'to-child' }]);
});

test('bwrap without --bind-fd (no heldRoots): every bind by its path', () => {
  const cmd = buildBwrapCommand({ ...bwrapInput, heldRoots: [] });
  const at = cmd.args.indexOf(`${P}/secrets`);
  assert.deepEqual(cmd.args.slice(at - 1, at + 11), [
    '--bind', `${P}/secrets`, `${P}/secrets`,
    '--bind', `${P}/.git/objects`, `${P}/.git/objects`,
    '--ro-bind', `${P}/.git/hooks`, `${P}/.git/hooks`,
    '--ro-bind', `${P}/secrets/keep.txt`, `${P}/secrets/keep.txt`,
  ]);
  assert.deepEqual(cmd.fds, [{ fd: 3, path: `${RUN}/seccomp.bpf` }]);
});

test('bwrap (writes = "deny-list"): the host writable, /sys read-only, deny_write bound read-only', () => {
  const cmd = buildBwrapCommand({
    ...bwrapInput, writes: 'deny-list', privateTmp: [], scratch: [], binds: [], pinned: ['/home', '/home/u'],
    denyWrite: [{ path: '/home/u/.bashrc', kind: 'file' }], env: {},
  });
  const binds = cmd.args.slice(cmd.args.indexOf('--clearenv') + 1, cmd.args.indexOf('--perms'));
  assert.deepEqual(binds, [
    '--bind', '/', '/', '--ro-bind', '/sys', '/sys', '--dev', '/dev', '--proc', '/proc',
    '--ro-bind', '/proc/sys', '/proc/sys', '--ro-bind', '/proc/sysrq-trigger', '/proc/sysrq-trigger',
    '--bind', '/home', '/home', '--bind', '/home/u', '/home/u',
    '--ro-bind', '/home/u/.bashrc', '/home/u/.bashrc',
  ]);
});

test('bwrap before 0.5.0 (no --perms): denied directories get a read-only bind of the empty directory', () => {
  const cmd = buildBwrapCommand({ ...bwrapInput, tmpfsPerms: false });
  const binds = cmd.args.slice(cmd.args.lastIndexOf(`${P}/secrets/keep.txt`) + 1, cmd.args.indexOf('--seccomp'));
  assert.deepEqual(binds, [
    '--ro-bind', `${RUN}/empty`, '/home/u/.ssh',
    '--ro-bind', `${RUN}/denied`, '/home/u/.netrc',
    '--ro-bind', `${RUN}/empty`, '/home/u/.stashbase',
  ]);
  assert.equal(cmd.args.includes('--perms'), false);
});

test('bwrap version and --bind-fd: parsed from --version and --help, compared, and asked once per binary (cached)', async () => {
  const { bindFdSupported, bwrapVersion, parseBwrapVersion, versionAtLeast } = await import('../../lib/native/bwrap-version.js');
  assert.equal(parseBwrapVersion('bubblewrap 0.8.0\n'), '0.8.0');
  assert.equal(parseBwrapVersion('bwrap: unknown option\n'), null);
  for (const [v, ok] of [['0.4.1', false], ['0.4.99', false], ['0.5.0', true], ['0.10.0', true], ['1.0.0', true], [null, false]] as const) {
    assert.equal(versionAtLeast(v, [0, 5, 0]), ok, String(v));
  }
  const { mkdtempSync, writeFileSync, chmodSync, readFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(join(tmpdir(), 'stashbase-bwrapv-'));
  try {
    const fake = join(dir, 'bwrap');
    const log = join(dir, 'asked');
    // A version without --bind-fd in its help (0.4 as Debian 11 first shipped it).
    writeFileSync(fake, `#!/bin/sh\necho "x$1" >> ${log}\n[ "$1" = --help ] && echo "    --bind SRC DEST              Bind mount" || echo "bubblewrap 0.4.1"\n`);
    chmodSync(fake, 0o755);
    assert.equal(bwrapVersion(fake, join(dir, 'state')), '0.4.1');
    assert.equal(bwrapVersion(fake, join(dir, 'state')), '0.4.1');
    assert.equal(bindFdSupported(fake, join(dir, 'state')), false);
    assert.equal(readFileSync(log, 'utf8'), 'x--version\nx--help\n', 'asked once');
    // Another binary at the same path (an upgrade, or a security update of the same version that added it): asked again.
    writeFileSync(fake, `#!/bin/sh\necho "y$1" >> ${log}\n[ "$1" = --help ] && echo "    --bind-fd FD DEST            Bind open directory or path fd on DEST" || echo "bubblewrap 0.4.1 "\n`);
    assert.equal(bindFdSupported(fake, join(dir, 'state')), true);
    assert.equal(bwrapVersion(fake, join(dir, 'state')), '0.4.1');
    assert.equal(readFileSync(log, 'utf8'), 'x--version\nx--help\ny--version\ny--help\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('bwrap: writable carve-outs under a read-only directory, denials inside them bound after', () => {
  const g = '/r/.git';
  const cmd = buildBwrapCommand({
    ...bwrapInput,
    writes: 'deny-list',
    privateTmp: [],
    scratch: [],
    binds: [],
    procReadOnly: [],
    denyRead: [],
    pinned: [],
    denyWrite: [{ path: g, kind: 'dir' }, { path: `${g}/config`, kind: 'file' }, { path: `${g}/objects`, kind: 'dir' }, { path: `${g}/worktrees/a/gitdir`, kind: 'file' }],
    writable: [`${g}/worktrees/a`, `${g}/objects`, `${g}/refs`],
  });
  const binds = cmd.args.slice(cmd.args.indexOf('/proc') + 1, cmd.args.indexOf('--seccomp'));
  assert.deepEqual(binds, [
    '--ro-bind', g, g,
    '--bind', `${g}/objects`, `${g}/objects`,
    '--bind', `${g}/refs`, `${g}/refs`,
    '--ro-bind', `${g}/config`, `${g}/config`,
    '--ro-bind', `${g}/objects`, `${g}/objects`,
    '--bind', `${g}/worktrees/a`, `${g}/worktrees/a`,
    '--ro-bind', `${g}/worktrees/a/gitdir`, `${g}/worktrees/a/gitdir`,
  ]);
});

test('bwrap: host network mode leaves --unshare-net out', () => {
  const cmd = buildBwrapCommand({ ...bwrapInput, isolateNetwork: false, userns: false });
  assert.equal(cmd.args.includes('--unshare-net'), false);
  assert.deepEqual(cmd.args.slice(0, 7), ['--ignore-signal=INT', '/usr/bin/bwrap', '--die-with-parent', '--unshare-pid', '--unshare-ipc', '--unshare-cgroup-try', '--cap-drop']);
});

const planInput: NativePlanInput = {
  session: 'ags_aaaaaaaaaaaaaaaa',
  profile: 'default',
  sessionFile: '/home/u/.stashbase/sessions/ags_aaaaaaaaaaaaaaaa.json',
  auditFile: '/home/u/.stashbase/audit/ags_aaaaaaaaaaaaaaaa.jsonl',
  runDir: RUN,
  placeholders: ['/home/u/.ssh'],
  fileStandIns: ['/home/u/.gitconfig'],
  parents: ['/home/u/.config'],
  warnings: ['re:^/.*: stopped after 200000 entries under /; paths beyond them are not protected (start the pattern deeper)'],
  proxyUrl: 'http://127.0.0.1:18080',
  interceptTls: true,
  writes: 'allow-list',
  unixSockets: false,
  views: [
    {
      label: '~/.claude', at: '/home/u/.claude', dir: `${RUN}/views/claude`, live: ['projects'], readOnly: ['commands'], copies: ['settings.json'], empty: ['cache'],
      merge: { 'history.jsonl': 'append' },
    },
  ],
  gitDir: { dir: `${RUN}/git`, at: `${P}/.git`, copies: ['HEAD', 'index', 'logs', 'refs'], readOnly: ['config', 'hooks', 'info'], admin: null, otherWorktrees: [], shared: `${P}/.git/stashbase-objects` },
  sandbox: { kind: 'bwrap', input: bwrapInput, relay: { perl: '/usr/bin/perl', setns: 308, setsid: 112, sendmsg: 46, prctl: 157, userns: true } },
};

test('native plan (bwrap): golden text', () => {
  golden('native-plan-bwrap.txt', formatPlan(buildNativePlan(planInput)));
});

test('native plan: JSON parses and matches the text plan step for step', () => {
  const plan = buildNativePlan(planInput);
  const json = JSON.parse(JSON.stringify(planToJson(plan))) as ReturnType<typeof planToJson>;
  const fromJson = json.steps.flatMap((s) => (s.type === 'internal' ? s.description.split('\n').map((l) => `# ${l}`) : [s.shell]));
  assert.equal([`# ${json.title}`, ...fromJson].join('\n') + '\n', formatPlan(plan));
  for (const [i, s] of json.steps.entries()) {
    const step = plan.steps[i]!;
    if (s.type === 'command' && step.kind === 'command') {
      assert.equal(s.shell, formatCommand(step.command));
      assert.deepEqual([s.file, ...s.args], [step.command.file, ...step.command.args]);
    }
  }
  assert.deepEqual(json.steps.map((s) => s.id), ['session', 'audit-start', 'writes', 'run-dir', 'parents', 'placeholders', 'git-dir', 'view', 'stand-in-files', 'proxy', 'relay-start', 'sandbox', 'relay-wait', 'release', 'warning', 'teardown']);
});

const sdInput: SystemdRunInput = {
  systemdRun: '/usr/bin/systemd-run',
  command: ['codex'],
  cwd: '/home/u/proj',
  writes: 'deny-list',
  writableRoots: [],
  unixSockets: true,
  denyRead: ['/home/u/.ssh', '/home/u/my keys'],
  denyWrite: ['/home/u/.bashrc', '/home/u/with"quote'],
  writable: [],
  isolateNetwork: true,
  envFile: `${RUN}/env`,
  interactive: true,
};

test('systemd-run fallback: the whole argument list', () => {
  assert.deepEqual(buildSystemdRunCommand(sdInput).args, [
    '--user', '--pty', '--wait', '--collect', '--quiet', '--same-dir', '--service-type=exec',
    '--property', `EnvironmentFile=${RUN}/env`,
    '--property', 'NoNewPrivileges=yes', '--property', 'PrivateUsers=yes', '--property', 'CapabilityBoundingSet=',
    '--property', 'RestrictSUIDSGID=yes', '--property', 'LockPersonality=yes', '--property', 'ProtectKernelTunables=yes',
    '--property', 'ProtectControlGroups=yes', '--property', 'PrivateIPC=yes',
    '--property', 'ReadOnlyPaths=-/home/u/.bashrc', '--property', 'ReadOnlyPaths="-/home/u/with\\"quote"',
    '--property', 'InaccessiblePaths=-/home/u/.ssh', '--property', 'InaccessiblePaths="-/home/u/my keys"',
    '--property', 'IPAddressDeny=any', '--property', 'IPAddressAllow=localhost',
    '--', 'codex',
  ]);
});

test('systemd-run fallback, writes as an allow-list and no Unix sockets: a strict system, a read-only home, private temp, the roots writable', () => {
  const args = buildSystemdRunCommand({ ...sdInput, writes: 'allow-list', writableRoots: ['/home/u/proj'], unixSockets: false, denyRead: [], denyWrite: [] }).args;
  const props = args.filter((a, i) => args[i - 1] === '--property').slice(9);
  assert.deepEqual(props, [
    'ProtectSystem=strict', 'ProtectHome=read-only', 'PrivateTmp=yes', 'ReadWritePaths=-/home/u/proj',
    'RestrictAddressFamilies=AF_INET AF_INET6 AF_NETLINK', 'IPAddressDeny=any', 'IPAddressAllow=localhost',
  ]);
});

test('systemd-run fallback: writable carve-outs as ReadWritePaths after the read-only paths', () => {
  const args = buildSystemdRunCommand({ ...sdInput, denyRead: [], denyWrite: ['/r/.git', '/r/.git/worktrees/a/gitdir'], writable: ['/r/.git/objects', '/r/.git/worktrees/a'] }).args;
  const props = args.filter((a) => /^(ReadOnly|ReadWrite)Paths=/.test(a));
  assert.deepEqual(props, ['ReadOnlyPaths=-/r/.git', 'ReadOnlyPaths=-/r/.git/worktrees/a/gitdir', 'ReadWritePaths=-/r/.git/objects', 'ReadWritePaths=-/r/.git/worktrees/a']);
});

test('native plan (systemd-run): golden text', () => {
  golden('native-plan-systemd-run.txt', formatPlan(buildNativePlan({ ...planInput, placeholders: [], fileStandIns: [], parents: [], warnings: [], sandbox: { kind: 'systemd-run', input: sdInput } })));
});

test('systemd-run fallback: the EnvironmentFile escapes values and leaves out what it cannot write', async () => {
  const { environmentFile } = await import('../../lib/native/run-systemd.js');
  assert.deepEqual(environmentFile({ A: 'plain', B: 'q"uo\\te $HOME', C: 'two\nlines', 'BAD-NAME': 'x', D: undefined }), {
    text: 'A="plain"\nB="q\\"uo\\\\te \\$HOME"\n',
    skipped: ['C', 'BAD-NAME'],
  });
});
