// Remote runs' own pieces: the export's reader (hostile input: the agent
// shapes what its clone's export sends), the setup's tar, and the exact
// commands of the helper containers and the lease.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { readExport } from '../../lib/remote/transfer.js';
import { tarOf } from '../../lib/remote/tar.js';
import { exportCommand, leaseCommand, remoteTeardownCommands, setupCommand } from '../../templates/remote-run.js';
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
    assert.deepEqual(r, { problem }, problem);
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

test('remote helpers: setup, export, lease and teardown, whole argument arrays', () => {
  const S = 'ags_aaaaaaaaaaaaaaaa';
  const n = `stashbase-agent-run-${S}`;
  const labels = ['--label', `stashbase.session=${S}`, '--label', 'stashbase.pid=4242'];
  const confined = ['--network', 'none', '--cap-drop', 'ALL'];
  const setup = setupCommand({ docker: 'docker', session: S, pid: 4242, image: 'img', workspace: 'ws', fresh: true, branch: 'stashbase/amber-bay-anchor', user: '1000:1000', labels: [] });
  assert.deepEqual(setup.args.slice(0, -1), [
    'run', '--rm', '-i', '--name', `${n}-setup`, ...labels, ...confined, '--cap-add', 'CHOWN', '--cap-add', 'FOWNER', '--cap-add', 'DAC_OVERRIDE', '--security-opt', 'no-new-privileges', '--read-only', '--tmpfs', '/tmp', '--user', '0:0',
    '--mount', `type=volume,source=${n}-tools,target=/etc/stashbase`, '--mount', 'type=volume,source=ws,target=/w',
    '--env', 'HOME=/tmp', '--env', 'GIT_CONFIG_NOSYSTEM=1', '--entrypoint', 'sh', 'img', '-c',
  ]);
  assert.equal(setup.args.at(-1), [
    'set -eu', 'mkdir /tmp/in', 'tar -x -C /tmp/in --no-same-owner --no-same-permissions', 'install -m 0755 /tmp/in/stashbase-relay /etc/stashbase/stashbase-relay',
    'for f in ca.pem ca-bundle.pem; do if [ -f /tmp/in/$f ]; then install -m 0644 /tmp/in/$f /etc/stashbase/$f; fi; done',
    'git clone -q --no-checkout /tmp/in/repo.bundle /w', 'git -C /w checkout -q -b stashbase/amber-bay-anchor "$(cat /tmp/in/base)"', 'git -C /w remote remove origin', 'chown -R 1000:1000 /w',
  ].join('\n'));
  // A resumed workspace: nothing of git runs as root in what the agent left.
  assert.match(setupCommand({ docker: 'docker', session: S, pid: 4242, image: 'img', workspace: 'ws', fresh: false, branch: 'stashbase/amber-bay-anchor', user: '1000:1000', labels: [] }).args.at(-1)!, /\ntest -d \/w\/\.git$/);
  assert.deepEqual(exportCommand('docker', S, 4242, 'img', 'ws', '1000:1000', 'stashbase/amber-bay-anchor', OID).args, [
    'run', '--rm', '--name', `${n}-export`, ...labels, ...confined, '--security-opt', 'no-new-privileges', '--read-only', '--tmpfs', '/tmp', '--user', '1000:1000',
    '--mount', 'type=volume,source=ws,target=/w,readonly', '--env', 'HOME=/tmp', '--env', 'GIT_CONFIG_NOSYSTEM=1', '--env', 'GIT_CONFIG_GLOBAL=/dev/null', '--entrypoint', 'sh', 'img', '-c',
    ['set -eu', 'cd /w', "tip=$(git rev-parse -q --verify refs/heads/stashbase/amber-bay-anchor) || { echo none; exit 0; }",
      'git cat-file -e "$tip^{commit}" 2>/dev/null || { echo "its branch names no commit the clone holds" >&2; exit 1; }', 'echo "$tip"',
      `if git cat-file -e '${OID}^{commit}' 2>/dev/null; then not=^${OID}; else not=; fi`,
      'printf \'%s\\n%s\\n\' "$tip" "$not" | git pack-objects -q --revs --stdout --delta-base-offset'].join('\n'),
  ]);
  assert.deepEqual(leaseCommand('docker', S, 4242, 'img', 30).args, [
    'run', '--rm', '-i', '--name', `${n}-lease`, ...labels, '--pid', `container:${n}-agent`, ...confined, '--cap-add', 'KILL', '--security-opt', 'no-new-privileges', '--read-only', '--tmpfs', '/tmp',
    '--user', '0:0', '--pids-limit', '8', '--mount', `type=volume,source=${n}-tools,target=/etc/stashbase,readonly`, '--entrypoint', '/etc/stashbase/stashbase-relay', 'img', 'lease', '30',
  ]);
  assert.deepEqual(remoteTeardownCommands('docker', S).map((c) => c.args), [['rm', '--force', `${n}-agent`, `${n}-lease`, `${n}-setup`, `${n}-export`], ['volume', 'rm', '--force', `${n}-tools`]]);
  assert.match(workspaceName('/home/u/My Project', 'amber-bay-anchor'), /^stashbase-remote-my-project-[0-9a-f]{10}-amber-bay-anchor$/);
  assert.notEqual(workspaceName('/home/u/a/p', 'x-y-z'), workspaceName('/home/u/b/p', 'x-y-z'));
});
