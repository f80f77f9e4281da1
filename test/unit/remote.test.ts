// Remote runs' own pieces: the export's reader (hostile input: the agent
// shapes what its clone's export sends), the setup's tar, and the exact
// commands of the helper containers and the lease.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { readExport } from '../../lib/remote/transfer.js';
import { tarOf } from '../../lib/remote/tar.js';
import { exportCommand, leaseCommand, remoteTeardownCommands } from '../../templates/remote-run.js';
import { sshCheckCommand, sshDestination, sshDialCommand, sshExitCommand, sshMasterCommand, sshShimScript } from '../../templates/remote-ssh.js';
import { remoteEngineApi } from '../../lib/remote/engine-api.js';
import { sha256 } from '../../lib/util/sha256.js';
import { mkdirSync, symlinkSync } from 'node:fs';
import { workspaceName } from '../../lib/remote/execute.js';

const OID = 'a'.repeat(40);
const pack = (n: number) => Buffer.concat([Buffer.from('PACK'), Buffer.alloc(n - 4, 1)]);

async function read(chunks: Buffer[], o: { objectFormat?: 'sha1' | 'sha256'; maxBytes?: number } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'sbexport-'));
  const packFile = join(dir, 'p.pack');
  try {
    const r = await readExport(Readable.from(chunks), { packFile, objectFormat: o.objectFormat ?? 'sha1', maxBytes: o.maxBytes ?? 1 << 20 });
    return { r, kept: existsSync(packFile) ? readFileSync(packFile) : null };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the export: its tip and pack, however the bytes are cut', async () => {
  const body = pack(100);
  const whole = Buffer.concat([Buffer.from(`${OID}\n`), body]);
  for (const cut of [1, 7, 41, 45, whole.length - 1]) {
    const { r, kept } = await read([whole.subarray(0, cut), whole.subarray(cut)]);
    assert.deepEqual(r, { tip: OID, packBytes: 100 });
    assert.deepEqual(kept, body);
  }
  assert.deepEqual((await read([Buffer.from('none\n')])).r, { tip: null });
  assert.deepEqual((await read([Buffer.from(`${'b'.repeat(64)}\n`), pack(40)], { objectFormat: 'sha256' })).r, { tip: 'b'.repeat(64), packBytes: 40 });
});

test('the export, hostile: each wrong shape is refused and nothing of it kept', async () => {
  const cases: Array<[Buffer[], string, { objectFormat?: 'sha1' | 'sha256'; maxBytes?: number }?]> = [
    [[Buffer.from('none\nPACK')], 'the export sent bytes after "none"'],
    [[Buffer.from('x'.repeat(81))], 'the export\'s first line is longer than 80 bytes'],
    [[Buffer.from(`${OID.toUpperCase()}\n`), pack(40)], `the export's first line is neither an object id nor "none": "${OID.toUpperCase()}"`],
    // The other format's length.
    [[Buffer.from(`${OID}\n`), pack(40)], `the export's first line is neither an object id nor "none": "${OID}"`, { objectFormat: 'sha256' }],
    // Not named: a carriage return before the newline, a NUL in the line.
    [[Buffer.from(`${OID}\r\n`), pack(40)], `the export's first line is neither an object id nor "none": "${OID}\\r"`],
    [[Buffer.from(`${OID.slice(0, 39)}\0\n`), pack(40)], `the export's first line is neither an object id nor "none": "${OID.slice(0, 39)}\\u0000"`],
    [[Buffer.from(`${OID}\nPK\x03\x04`), Buffer.alloc(100)], 'what follows the export\'s first line is not a git pack'],
    [[Buffer.from(`${OID}\n`), pack(2000)], 'the export\'s pack is larger than 1000 bytes (STASHBASE_REMOTE_MAX_PACK sets another limit)', { maxBytes: 1000 }],
    [[Buffer.from(`${OID}\n`), pack(600), pack(600)], 'the export\'s pack is larger than 1000 bytes (STASHBASE_REMOTE_MAX_PACK sets another limit)', { maxBytes: 1000 }],
    [[Buffer.from(OID)], 'the export ended before its first line'],
    [[Buffer.from(`${OID}\nPACK`)], 'the export\'s pack is cut short'],
  ];
  for (const [chunks, problem, o] of cases) {
    const { r, kept } = await read(chunks, o);
    // Found before its end: stashbase stopped reading it (its exit then says nothing new).
    const atEnd = /ended before|cut short/.test(problem);
    assert.deepEqual(r, atEnd ? { problem } : { problem, stopped: true }, problem);
    assert.equal(kept, null, `nothing kept: ${problem}`);
  }
});

test('the setup\'s tar: what tar reads back, modes and bytes; a name with a folder or a link is refused', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sbtar-'));
  try {
    const files = [{ name: 'stashbase-relay', data: Buffer.alloc(1025, 7), mode: 0o755 }, { name: 'base', data: Buffer.from(`${OID}\n`), mode: 0o644 }, { name: 'empty', data: Buffer.alloc(0), mode: 0o600 }];
    const r = spawnSync('tar', ['-x', '-C', dir, '--no-same-owner'], { input: Buffer.concat(tarOf(files)) });
    assert.equal(r.status, 0, String(r.stderr));
    for (const f of files) {
      assert.deepEqual(readFileSync(join(dir, f.name)), f.data);
      assert.equal(statSync(join(dir, f.name)).mode & 0o777, f.mode);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  for (const name of ['../x', 'a/b', '', '.'.repeat(100)]) assert.throws(() => tarOf([{ name, data: Buffer.alloc(0), mode: 0o644 }]), /not a plain file name|too large/);
});

test('remote helpers: the setup-and-lease, the export and the teardown, whole argument arrays', () => {
  const S = 'ags_aaaaaaaaaaaaaaaa';
  const n = `stashbase-agent-run-${S}`;
  const labels = ['--label', `stashbase.session=${S}`, '--label', 'stashbase.pid=4242'];
  const confined = ['--network', 'none', '--cap-drop', 'ALL'];
  const lease = leaseCommand({ docker: 'docker', session: S, pid: 4242, image: 'img', workspace: 'ws', fresh: true, branch: 'stashbase/amber-bay-anchor', user: '1000:1000', seconds: 30, origin: 'box' });
  assert.deepEqual(lease.args.slice(0, -1), [
    'run', '--rm', '-i', '--name', `${n}-lease`, ...labels, '--label', 'stashbase.origin=box', '--runtime', 'runc', ...confined, '--cap-add', 'CHOWN', '--cap-add', 'FOWNER', '--cap-add', 'DAC_OVERRIDE', '--cap-add', 'SETUID', '--cap-add', 'SETGID',
    '--security-opt', 'no-new-privileges', '--read-only', '--tmpfs', '/tmp', '--user', '0:0', '--pids-limit', '128',
    '--mount', `type=volume,source=${n}-tools,target=/etc/stashbase`, '--mount', 'type=volume,source=ws,target=/w',
    '--env', 'HOME=/tmp', '--env', 'GIT_CONFIG_NOSYSTEM=1', '--entrypoint', 'sh', 'img', '-c',
  ]);
  assert.equal(lease.args.at(-1), [
    'set -eu', 'mkdir /tmp/in', 'tar -x -b 1 -C /tmp/in --no-same-owner --no-same-permissions', 'install -m 0755 /tmp/in/stashbase-relay /etc/stashbase/stashbase-relay',
    'for f in ca.pem ca-bundle.pem; do if [ -f /tmp/in/$f ]; then install -m 0644 /tmp/in/$f /etc/stashbase/$f; fi; done',
    'git clone -q --no-checkout /tmp/in/repo.bundle /w', 'git -C /w checkout -q -b stashbase/amber-bay-anchor "$(cat /tmp/in/base)"', 'git -C /w remote remove origin', 'chown -R 1000:1000 /w',
    'rm -rf /tmp/in', 'exec setpriv --reuid=2147483645 --regid=2147483645 --clear-groups --inh-caps=-all /etc/stashbase/stashbase-relay lease 30',
  ].join('\n'));
  // A resumed workspace: nothing of git runs as root in what the agent left.
  assert.match(leaseCommand({ docker: 'docker', session: S, pid: 4242, image: 'img', workspace: 'ws', fresh: false, branch: 'stashbase/amber-bay-anchor', user: '1000:1000', seconds: 30, origin: 'box' }).args.at(-1)!, /--no-same-permissions\n[^\n]+\n[^\n]+\ntest -d \/w\/\.git\nrm -rf/);
  const exported = exportCommand({ docker: 'docker', session: S, pid: 4242, image: 'img', workspace: 'ws', user: '1000:1000', branch: 'stashbase/amber-bay-anchor', base: OID, objectFormat: 'sha1', seccomp: '/r/seccomp.json', memory: '2g', cpus: '1.5', origin: 'box', seconds: 30 });
  assert.deepEqual(exported.args.slice(0, -1), [
    'run', '--rm', '-i', '--name', `${n}-export`, ...labels, '--label', 'stashbase.origin=box', '--runtime', 'runc', ...confined, '--security-opt', 'no-new-privileges', '--read-only', '--tmpfs', '/tmp', '--user', '1000:1000',
    '--security-opt', 'seccomp=/r/seccomp.json', '--pids-limit', '64', '--memory', '2g', '--cpus', '1.5',
    '--mount', 'type=volume,source=ws,target=/w,readonly', '--env', 'HOME=/tmp', '--env', 'GIT_CONFIG_NOSYSTEM=1', '--env', 'GIT_CONFIG_GLOBAL=/dev/null', '--env', 'GIT_NO_REPLACE_OBJECTS=1',
    '--entrypoint', 'sh', 'img', '-c',
  ]);
  // No git in the agent's repository: the tip read as text, the objects through a git directory of the export's own.
  const script = exported.args.at(-1)!;
  assert.doesNotMatch(script, /git (-C|--git-dir=?)\s*\/w/);
  assert.match(script, /\ngit init -q --bare --object-format=sha1 \/tmp\/x\nprintf '%s\\n' \/w\/\.git\/objects > \/tmp\/x\/objects\/info\/alternates\nexport GIT_DIR=\/tmp\/x\n/);
  // (Round 34) In your repository's object format: a sha256 one's commits are found.
  assert.match(exportCommand({ docker: 'docker', session: S, pid: 4242, image: 'img', workspace: 'ws', user: '1000:1000', branch: 'b', base: OID, objectFormat: 'sha256', seccomp: '/s', origin: 'box', seconds: 30 }).args.at(-1)!, /\ngit init -q --bare --object-format=sha256 \/tmp\/x\n/);
  assert.match(script, /\ncase "\$tip" in "" \| \*\[!0-9a-f\]\*\) echo none; exit 0 ;; esac\n/);
  // Held from the agent's start: nothing read before its word ("g"), renewed by "." within the lease's length; end of
  // input, silence or anything else ends it.
  assert.match(script, /^set -eu\nwhile :; do c=\$\(timeout 30 dd bs=1 count=1 2>\/dev\/null\) \|\| exit 0; case "\$c" in \.\) ;; g\) break ;; \*\) exit 0 ;; esac; done\nif \[ -n "\$\(find \/w -xdev \\\( -type p -o -xtype p \\\) -print -quit\)" \]; then echo "the clone holds a FIFO \(a named pipe\), or a link to one, which git would wait on" >&2; exit 1; fi\nif \[ -L \/w\/\.git \] \|\| \[ -e \/w\/\.git\/objects\/info\/alternates \] \|\| \[ -L \/w\/\.git\/objects\/info\/alternates \] \|\| \[ -n "\$\(find \/w\/\.git\/objects -xdev -type l -print -quit\)" \]; then echo "the clone's git directory is a link, or its object store holds links or an alternate, which a clone of yours never has" >&2; exit 1; fi\n/);
  assert.deepEqual(remoteTeardownCommands('docker', S).map((c) => c.args), [['rm', '--force', `${n}-agent`, `${n}-lease`, `${n}-export`], ['volume', 'rm', '--force', `${n}-tools`]]);
  assert.match(workspaceName('/home/u/My Project', 'amber-bay-anchor'), /^stashbase-remote-my-project-[0-9a-f]{10}-amber-bay-anchor$/);
  assert.notEqual(workspaceName('/home/u/a/p', 'x-y-z'), workspaceName('/home/u/b/p', 'x-y-z'));
});

test('ssh:// engines: the destination read as the docker CLI reads it, or null for what ssh could take as an option; the master, its check and exit, and the shim, whole', () => {
  assert.deepEqual(sshDestination('ssh://root@172.17.0.2'), { user: 'root', host: '172.17.0.2', port: null });
  assert.deepEqual(sshDestination('ssh://me@build-box.example:2222'), { user: 'me', host: 'build-box.example', port: '2222' });
  assert.deepEqual(sshDestination('ssh://build-box'), { user: null, host: 'build-box', port: null });
  assert.deepEqual(sshDestination('ssh://[::1]:22'), { user: null, host: '::1', port: '22' });
  for (const a of ['tcp://1.2.3.4:2375', 'ssh://', 'ssh://me:pw@box', 'ssh://-oProxyCommand=x@box', 'ssh://box?x=1', 'ssh://box#f', 'not a url']) assert.equal(sshDestination(a), null, a);
  const d = sshDestination('ssh://me@box:2222')!;
  assert.deepEqual(sshMasterCommand('/usr/bin/ssh', d, '/r/ssh/mux'), { file: '/usr/bin/ssh', args: ['-T', '-o', 'ControlMaster=yes', '-o', 'ControlPath=/r/ssh/mux', '-o', 'ControlPersist=30', '-o', 'BatchMode=yes', '-l', 'me', '-p', '2222', '--', 'box', 'true'] });
  assert.deepEqual(sshCheckCommand('/usr/bin/ssh', d, '/r/ssh/mux').args, ['-o', 'ControlPath=/r/ssh/mux', '-O', 'check', '-l', 'me', '-p', '2222', '--', 'box']);
  assert.deepEqual(sshExitCommand('/usr/bin/ssh', d, '/r/ssh/mux').args, ['-o', 'ControlPath=/r/ssh/mux', '-O', 'exit', '-l', 'me', '-p', '2222', '--', 'box']);
  // The API's connections: what the docker CLI runs for one, on the run's connection.
  assert.deepEqual(sshDialCommand('/usr/bin/ssh', d, '/r/ssh/mux'), { file: '/usr/bin/ssh', args: ['-o', 'ControlPath=/r/ssh/mux', '-o', 'ControlMaster=no', '-o', 'ConnectTimeout=30', '-T', '-l', 'me', '-p', '2222', '--', 'box', 'docker', 'system', 'dial-stdio'] });
  for (const a of ['ssh://%E0@box', 'ssh://%2Dx@box']) assert.equal(sshDestination(a), null, a);
  // The shim, run: the run's connection only for the engine as the docker CLI names it (found in review: the master
  // would run any client's command on its own host); any other ssh as yours. Its paths quoted.
  const dir = mkdtempSync(join(tmpdir(), "stashbase shim's-"));
  try {
    const fake = join(dir, 'real ssh');
    writeFileSync(fake, '#!/bin/sh\nprintf "%s|" "$@"\n', { mode: 0o755 });
    const shim = join(dir, 'ssh');
    writeFileSync(shim, sshShimScript(fake, "/r/it's/mux", d), { mode: 0o755 });
    const run = (...args: string[]) => execFileSync(shim, args, { encoding: 'utf8' });
    assert.equal(run('-o', 'ConnectTimeout=30', '-T', '-l', 'me', '-p', '2222', '--', 'box', 'docker', 'system', 'dial-stdio'), "-o|ControlPath=/r/it's/mux|-o|ControlMaster=no|-o|ConnectTimeout=30|-T|-l|me|-p|2222|--|box|docker|system|dial-stdio|");
    for (const other of [['-l', 'me', '-p', '2222', '--', 'elsewhere', 'id'], ['-l', 'root', '-p', '2222', '--', 'box', 'id'], ['-l', 'me', '--', 'box', 'id'], ['-l', 'me', '-p', '2222', 'box', 'id'], ['git@forge.example', 'git-upload-pack', "'x'"]]) {
      assert.equal(run(...other), `${other.join('|')}|`, other.join(' '));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a remote engine\'s API: over ssh:// only through the run\'s SSH connection; plain tcp:// when nothing of TLS is set, in the environment or the context\'s store; otherwise the CLI', () => {
  const dial = { file: '/usr/bin/ssh', args: ['x'] };
  const mux = { stop: async () => {}, exit: { file: 'ssh', args: [] }, dial };
  const t = (host: string, context: string | null = null) => ({ host, context, settings: context, from: 'test' });
  assert.deepEqual(remoteEngineApi(t('ssh://root@box'), {}, '/nowhere', mux), { dial, address: 'ssh://root@box' });
  assert.equal(remoteEngineApi(t('ssh://root@box'), {}, '/nowhere', null), null, 'no connection of the run\'s');
  assert.equal(remoteEngineApi(t('ssh://root@box/run/docker.sock'), {}, '/nowhere', { ...mux, dial: null }), null, 'a socket named there');
  assert.deepEqual(remoteEngineApi(t('tcp://10.0.0.2:2375'), {}, '/nowhere', null), { host: '10.0.0.2', port: 2375, address: 'tcp://10.0.0.2:2375' });
  assert.deepEqual(remoteEngineApi(t('tcp://[fd00::2]:2375/'), {}, '/nowhere', null), { host: 'fd00::2', port: 2375, address: 'tcp://[fd00::2]:2375/' });
  for (const v of ['DOCKER_TLS_VERIFY', 'DOCKER_CERT_PATH', 'DOCKER_TLS']) assert.equal(remoteEngineApi(t('tcp://10.0.0.2:2376'), { [v]: '1' }, '/nowhere', null), null, v);
  for (const host of ['tcp://10.0.0.2', 'tcp://10.0.0.2:0', 'tcp://10.0.0.2:99999', 'tcp://me@10.0.0.2:2375', 'tcp://10.0.0.2:2375/path', 'http://10.0.0.2:2375', 'npipe:////./pipe/x']) assert.equal(remoteEngineApi(t(host), {}, '/nowhere', null), null, host);
  // A context: its metadata read from the store as the CLI keeps it; any TLS of its, or anything unreadable, is the CLI's.
  const home = mkdtempSync(join(tmpdir(), 'stashbase-ctx-'));
  try {
    const id = sha256('box');
    const meta = join(home, '.docker', 'contexts', 'meta', id);
    mkdirSync(meta, { recursive: true });
    const write = (docker: Record<string, unknown>) => writeFileSync(join(meta, 'meta.json'), JSON.stringify({ Name: 'box', Metadata: {}, Endpoints: { docker } }));
    write({ Host: 'tcp://10.0.0.2:2375', SkipTLSVerify: false });
    assert.deepEqual(remoteEngineApi(t('tcp://10.0.0.2:2375', 'box'), {}, home, null), { host: '10.0.0.2', port: 2375, address: 'tcp://10.0.0.2:2375' });
    assert.equal(remoteEngineApi(t('tcp://10.0.0.2:2375', 'other'), {}, home, null), null, 'no metadata');
    assert.equal(remoteEngineApi(t('tcp://10.0.0.3:2375', 'box'), {}, home, null), null, 'another address than the store says');
    write({ Host: 'tcp://10.0.0.2:2375', SkipTLSVerify: true });
    assert.equal(remoteEngineApi(t('tcp://10.0.0.2:2375', 'box'), {}, home, null), null, 'TLS without verification');
    // Go reads these names in any case (found in review: "skipTLSVerify": true was TLS for the CLI, plain here).
    write({ Host: 'tcp://10.0.0.2:2375', skipTLSVerify: true });
    assert.equal(remoteEngineApi(t('tcp://10.0.0.2:2375', 'box'), {}, home, null), null, 'skipTLSVerify');
    // Nor in a spelling Go folds onto it (found in review: ſ is an s to Go).
    write({ Host: 'tcp://10.0.0.2:2375', '\u017fkipTLSVerify': true });
    assert.equal(remoteEngineApi(t('tcp://10.0.0.2:2375', 'box'), {}, home, null), null, 'ſkipTLSVerify');
    write({ Host: 'tcp://10.0.0.2:2375', host: 'tcp://10.0.0.9:2376' });
    assert.equal(remoteEngineApi(t('tcp://10.0.0.2:2375', 'box'), {}, home, null), null, 'a second host in another case');
    write({ Host: 'tcp://10.0.0.2:2375' });
    assert.ok(remoteEngineApi(t('tcp://10.0.0.2:2375', 'box'), {}, home, null));
    // DOCKER_CONFIG moves the store, as for the CLI.
    assert.equal(remoteEngineApi(t('tcp://10.0.0.2:2375', 'box'), { DOCKER_CONFIG: join(home, 'elsewhere') }, home, null), null);
    mkdirSync(join(home, '.docker', 'contexts', 'tls', id, 'docker'), { recursive: true });
    assert.equal(remoteEngineApi(t('tcp://10.0.0.2:2375', 'box'), {}, home, null), null, 'certificates stored');
    rmSync(join(home, '.docker', 'contexts', 'tls'), { recursive: true });
    // Metadata through a link is not read (nor anything past its bound): the CLI.
    writeFileSync(join(home, 'meta.json'), JSON.stringify({ Name: 'box', Endpoints: { docker: { Host: 'tcp://10.0.0.2:2375' } } }));
    rmSync(join(meta, 'meta.json'));
    symlinkSync(join(home, 'meta.json'), join(meta, 'meta.json'));
    assert.equal(remoteEngineApi(t('tcp://10.0.0.2:2375', 'box'), {}, home, null), null, 'a link');
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('a remote engine\'s API, the context chosen by DOCKER_CONTEXT or `docker context use` (found in review: its TLS was not looked at, and stashbase spoke plain HTTP where the CLI spoke TLS): its stored settings decide, as for --remote; DOCKER_HOST has none', async () => {
  const home = mkdtempSync(join(tmpdir(), 'stashbase-ctx-'));
  try {
    const docker = join(home, 'docker');
    // The docker CLI as engineFor asks it: `docker context inspect --format … NAME` prints the context's address.
    writeFileSync(docker, '#!/bin/sh\n[ "$1 $2" = "context show" ] && { echo tlsctx; exit 0; }\nfor a; do last=$a; done\ncase "$last" in tlsctx|plainctx) echo tcp://10.0.0.2:2376 ;; *) exit 1 ;; esac\n', { mode: 0o755 });
    const store = join(home, '.docker', 'contexts');
    for (const name of ['tlsctx', 'plainctx']) {
      mkdirSync(join(store, 'meta', sha256(name)), { recursive: true });
      writeFileSync(join(store, 'meta', sha256(name), 'meta.json'), JSON.stringify({ Name: name, Endpoints: { docker: { Host: 'tcp://10.0.0.2:2376', SkipTLSVerify: false } } }));
    }
    mkdirSync(join(store, 'tls', sha256('tlsctx'), 'docker'), { recursive: true });
    writeFileSync(join(store, 'tls', sha256('tlsctx'), 'docker', 'ca.pem'), 'x');
    const { engineFor } = await import('../../lib/remote/target.js');
    const decide = async (env: NodeJS.ProcessEnv) => {
      const e: NodeJS.ProcessEnv = { HOME: home, ...env };
      const t = (await engineFor(docker, e, undefined)).remote!;
      // The context decided is pinned for every later docker command (DOCKER_HOST, when set, wins over any anyway).
      assert.equal(e.DOCKER_CONTEXT, env.DOCKER_HOST ? env.DOCKER_CONTEXT : t.settings);
      return { settings: t.settings, api: remoteEngineApi(t, e, home, null) };
    };
    assert.deepEqual(await decide({ DOCKER_CONTEXT: 'tlsctx' }), { settings: 'tlsctx', api: null });
    assert.deepEqual(await decide({ DOCKER_CONTEXT: 'plainctx' }), { settings: 'plainctx', api: { host: '10.0.0.2', port: 2376, address: 'tcp://10.0.0.2:2376' } });
    writeFileSync(join(home, '.docker', 'config.json'), JSON.stringify({ currentContext: 'tlsctx' }));
    assert.deepEqual(await decide({}), { settings: 'tlsctx', api: null });
    // An empty DOCKER_CONFIG is unset, as for the CLI: the home's config, not one in the working directory.
    assert.deepEqual(await decide({ DOCKER_CONFIG: '' }), { settings: 'tlsctx', api: null });
    // A config the CLI reads otherwise than strict JSON (Go's decoder: names in any case, the first value only): the CLI
    // says which context is current (found in review: read as none, the run was local while the CLI's engine was remote).
    for (const text of [JSON.stringify({ CurrentContext: 'tlsctx' }), `${JSON.stringify({ currentContext: 'tlsctx' })}\n}`]) {
      writeFileSync(join(home, '.docker', 'config.json'), text);
      assert.deepEqual(await decide({}), { settings: 'tlsctx', api: null }, text);
    }
    // No config at all: the default context, this machine's engine, pinned by name.
    rmSync(join(home, '.docker', 'config.json'));
    const local: NodeJS.ProcessEnv = { HOME: home };
    assert.deepEqual(await engineFor(docker, local, undefined), { remote: null, local: { from: 'the default context', host: '' } });
    assert.equal(local.DOCKER_CONTEXT, 'default');
    // DOCKER_HOST wins over any context, and carries no TLS but the environment's.
    assert.deepEqual(await decide({ DOCKER_HOST: 'tcp://10.0.0.3:2375' }), { settings: null, api: { host: '10.0.0.3', port: 2375, address: 'tcp://10.0.0.3:2375' } });
    assert.deepEqual(await decide({ DOCKER_HOST: 'tcp://10.0.0.3:2376', DOCKER_TLS_VERIFY: '1' }), { settings: null, api: null });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('the engine\'s API is left to the CLI where the CLI would reach the engine otherwise: a plain tcp:// engine through the proxy HTTP_PROXY names (never for loopback, as in Go), and any engine when config.json gives headers of the user\'s (HttpHeaders, the name in any case) or cannot be read as strict JSON', async () => {
  const t = (host: string) => ({ host, context: null, settings: null, from: 'test' });
  for (const v of ['HTTP_PROXY', 'http_proxy']) {
    assert.equal(remoteEngineApi(t('tcp://10.0.0.2:2375'), { [v]: 'http://proxy.test:3128' }, '/nowhere', null), null, v);
    assert.equal(remoteEngineApi(t('tcp://box.test:2375'), { [v]: 'http://proxy.test:3128' }, '/nowhere', null), null, `${v}, a name`);
  }
  // HTTPS_PROXY is for TLS (the CLI's anyway), and an empty HTTP_PROXY is none.
  assert.deepEqual(remoteEngineApi(t('tcp://10.0.0.2:2375'), { HTTPS_PROXY: 'http://proxy.test:3128', HTTP_PROXY: '' }, '/nowhere', null), { host: '10.0.0.2', port: 2375, address: 'tcp://10.0.0.2:2375' });
  const { engineApiOf } = await import('../../lib/docker/api.js');
  for (const host of ['tcp://127.0.0.1:2375', 'tcp://localhost:2375', 'tcp://[::1]:2375']) assert.ok(engineApiOf(host, { HTTP_PROXY: 'http://proxy.test:3128' }), host);
  assert.ok(remoteEngineApi(t('tcp://127.255.0.9:2375'), { HTTP_PROXY: 'http://proxy.test:3128' }, '/nowhere', null), 'any loopback address');
  // Go proxies these (found in review): "localhost" only as written, loopback only as Go parses an address.
  for (const host of ['tcp://LOCALHOST:2375', 'tcp://foo.localhost:2375', 'tcp://127.01.0.1:2375', 'tcp://127.0.0.256:2375']) {
    assert.equal(engineApiOf(host, { HTTP_PROXY: 'http://proxy.test:3128' }), null, host);
    assert.equal(remoteEngineApi(t(host), { HTTP_PROXY: 'http://proxy.test:3128' }, '/nowhere', null), null, `${host}, remote`);
  }
  const { runEngineApi } = await import('../../lib/docker/run.js');
  const home = mkdtempSync(join(tmpdir(), 'stashbase-headers-'));
  try {
    const local = { env: { HOME: home }, home, endpoint: { from: 'the default context', host: '' } };
    const remote = { ...local, remote: { target: t('tcp://10.0.0.2:2375') } } as unknown as Parameters<typeof runEngineApi>[0];
    assert.deepEqual(await runEngineApi(local, 'docker', null), { socketPath: '/var/run/docker.sock', address: 'unix:///var/run/docker.sock' }, 'no config');
    mkdirSync(join(home, '.docker'));
    const config = join(home, '.docker', 'config.json');
    writeFileSync(config, JSON.stringify({ auths: {}, currentContext: 'default' }));
    assert.ok(await runEngineApi(local, 'docker', null), 'a config without headers');
    assert.ok(await runEngineApi(remote, 'docker', null), 'a config without headers, remote');
    // "HttpHeaderſ": Go folds ſ onto s (found in review).
    for (const text of [JSON.stringify({ HttpHeaders: { 'X-Engine-Key': 'k' } }), JSON.stringify({ httpheaders: { 'X-Engine-Key': 'k' } }), JSON.stringify({ 'HttpHeader\u017f': { 'X-Engine-Key': 'k' } }), '{"auths": {}', '[]', `${JSON.stringify({ auths: {} })}\n{"HttpHeaders": {"X-Engine-Key": "k"}}`]) {
      writeFileSync(config, text);
      assert.equal(await runEngineApi(local, 'docker', null), null, text);
      assert.equal(await runEngineApi(remote, 'docker', null), null, `${text}, remote`);
    }
    // DOCKER_CONFIG moves it, as for the CLI; a config through a link is not read (the CLI, then).
    assert.ok(await runEngineApi({ ...local, env: { HOME: home, DOCKER_CONFIG: join(home, 'elsewhere') } }, 'docker', null), 'DOCKER_CONFIG');
    // The CLI's home is HOME as set (found in review: a relative HOME was read as the account's home).
    assert.ok(await runEngineApi({ ...local, env: { HOME: join(home, 'other') } }, 'docker', null), 'HOME');
    assert.equal(await runEngineApi({ ...local, home: join(home, 'other') }, 'docker', null), null, 'HOME, not the account\'s');
    // Headers from the environment (docker 28: DOCKER_CUSTOM_HEADERS; found in review).
    writeFileSync(config, '{}');
    assert.equal(await runEngineApi({ ...local, env: { HOME: home, DOCKER_CUSTOM_HEADERS: 'X-Env=1' } }, 'docker', null), null, 'DOCKER_CUSTOM_HEADERS');
    writeFileSync(join(home, 'plain.json'), '{}');
    rmSync(config);
    symlinkSync(join(home, 'plain.json'), config);
    assert.equal(await runEngineApi(local, 'docker', null), null, 'a link');
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
