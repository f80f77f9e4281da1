// Which native mechanism enforces a run on this platform, and why. The choice
// is pure over probe results so every branch is unit-tested; the probes
// themselves run the real tools.
import { SandboxUnavailableError } from '../errors.js';

export interface NativeProbe {
  platform: NodeJS.Platform;
  bwrap: { path: string | null; usable: boolean; error?: string };
  systemdRun: { path: string | null; usable: boolean; error?: string };
  sandboxExec: { path: string | null };
}

export type Mechanism =
  | { kind: 'bwrap'; path: string; why: string }
  | { kind: 'systemd-run'; path: string; why: string }
  | { kind: 'seatbelt'; path: string; why: string };

export function selectMechanism(p: NativeProbe): Mechanism {
  if (p.platform === 'linux') {
    if (p.bwrap.path && p.bwrap.usable) return { kind: 'bwrap', path: p.bwrap.path, why: `bubblewrap at ${p.bwrap.path} works` };
    const bwrapWhy = p.bwrap.path ? `bubblewrap at ${p.bwrap.path} is unusable (${p.bwrap.error ?? 'failed'})` : 'bubblewrap is not installed';
    if (p.systemdRun.path && p.systemdRun.usable) {
      return { kind: 'systemd-run', path: p.systemdRun.path, why: `${bwrapWhy}; using systemd-run --user instead` };
    }
    const sdWhy = p.systemdRun.path ? `systemd-run cannot reach a systemd user manager (${p.systemdRun.error ?? 'failed'})` : 'systemd-run is not installed';
    throw new SandboxUnavailableError(
      `no native sandbox mechanism works here: ${bwrapWhy}; ${sdWhy}.\n` +
        'Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and allow unprivileged user namespaces ' +
        '(Ubuntu 24.04: an AppArmor profile for bwrap, or sysctl kernel.apparmor_restrict_unprivileged_userns=0), ' +
        'or use the Docker backend (--docker-sandbox true).',
    );
  }
  if (p.platform === 'darwin') {
    if (p.sandboxExec.path) return { kind: 'seatbelt', path: p.sandboxExec.path, why: `sandbox-exec at ${p.sandboxExec.path}` };
    throw new SandboxUnavailableError('sandbox-exec was not found at /usr/bin/sandbox-exec; the native backend needs macOS Seatbelt');
  }
  throw new SandboxUnavailableError(
    `the native backend does not support ${p.platform}; nothing was run. Use the Docker backend (--docker-sandbox true, or [sandbox] backend = "docker").`,
  );
}
