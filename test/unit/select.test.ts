import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type NativeProbe, selectMechanism } from '../../lib/native/select.js';

const base: NativeProbe = { platform: 'linux', bwrap: { path: null, usable: false }, systemdRun: { path: null, usable: false }, sandboxExec: { path: null } };

test('Linux: bwrap when it works', () => {
  assert.deepEqual(selectMechanism({ ...base, bwrap: { path: '/usr/bin/bwrap', usable: true } }), { kind: 'bwrap', path: '/usr/bin/bwrap', why: 'bubblewrap at /usr/bin/bwrap works' });
});

test('Linux: systemd-run when bwrap is missing or unusable, saying why', () => {
  const sd = { path: '/usr/bin/systemd-run', usable: true };
  assert.deepEqual(selectMechanism({ ...base, systemdRun: sd }), { kind: 'systemd-run', path: '/usr/bin/systemd-run', why: 'bubblewrap is not installed; using systemd-run --user instead' });
  assert.deepEqual(selectMechanism({ ...base, bwrap: { path: '/usr/bin/bwrap', usable: false, error: 'bwrap: setting up uid map: Permission denied' }, systemdRun: sd }), {
    kind: 'systemd-run',
    path: '/usr/bin/systemd-run',
    why: 'bubblewrap at /usr/bin/bwrap is unusable (bwrap: setting up uid map: Permission denied); using systemd-run --user instead',
  });
});

test('Linux: neither works fails closed naming what to install or enable', () => {
  assert.throws(() => selectMechanism({ ...base, systemdRun: { path: '/usr/bin/systemd-run', usable: false, error: 'Failed to connect to bus' } }), {
    name: 'SandboxUnavailableError',
    message:
      'no native sandbox mechanism works here: bubblewrap is not installed; systemd-run cannot reach a systemd user manager (Failed to connect to bus).\n' +
      'Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and allow unprivileged user namespaces (Ubuntu 24.04: an AppArmor profile for bwrap, or sysctl kernel.apparmor_restrict_unprivileged_userns=0), or use the Docker backend (--docker-sandbox true).',
  });
});

test('macOS: Seatbelt; Windows and others fail closed', () => {
  assert.equal(selectMechanism({ ...base, platform: 'darwin', sandboxExec: { path: '/usr/bin/sandbox-exec' } }).kind, 'seatbelt');
  assert.throws(() => selectMechanism({ ...base, platform: 'darwin' }), { message: 'sandbox-exec was not found at /usr/bin/sandbox-exec; the native backend needs macOS Seatbelt' });
  assert.throws(() => selectMechanism({ ...base, platform: 'win32' }), {
    name: 'SandboxUnavailableError',
    message: 'the native backend does not support win32; nothing was run. Use the Docker backend (--docker-sandbox true, or [sandbox] backend = "docker").',
  });
  assert.throws(() => selectMechanism({ ...base, platform: 'freebsd' }), { name: 'SandboxUnavailableError' });
});
