// Probes of the real tools behind selectMechanism.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { findTool } from '../util/find-tool.js';
import { probe } from '../exec.js';
import type { NativeProbe } from './select.js';

function find(name: string, env: NodeJS.ProcessEnv): string | null {
  return findTool(name, env) ?? null;
}

/** bwrap exactly as a run uses it: own PID and network namespaces, no capabilities. */
export function bwrapProbeArgs(): string[] {
  return ['--die-with-parent', '--unshare-pid', '--unshare-net', '--cap-drop', 'ALL', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--', 'true'];
}

/**
 * Whether bwrap will work without trying it: as root or setuid it needs no user
 * namespace; otherwise the kernel must allow unprivileged ones. Returns null
 * when only running it can tell (e.g. Ubuntu's AppArmor restriction).
 */
function bwrapStaticallyUsable(bwrap: string): boolean | null {
  if (process.getuid?.() === 0) return true;
  try {
    if ((statSync(bwrap).mode & 0o4000) !== 0) return true;
  } catch {
    return false;
  }
  const read = (f: string) => {
    try {
      return readFileSync(f, 'utf8').trim();
    } catch {
      return null;
    }
  };
  if (read('/proc/sys/user/max_user_namespaces') === '0') return false;
  if (read('/proc/sys/kernel/unprivileged_userns_clone') === '0') return false;
  if (read('/proc/sys/kernel/apparmor_restrict_unprivileged_userns') === '1') return null;
  return true;
}

/**
 * thorough: run bwrap as a run would (agent validate). Otherwise (agent run) the
 * cheap checks decide when they can; a bwrap that still fails makes the run
 * fail closed with bwrap's own message.
 */
export function probeNative(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform, thorough = true): NativeProbe {
  const result: NativeProbe = {
    platform,
    bwrap: { path: null, usable: false },
    systemdRun: { path: null, usable: false },
    sandboxExec: { path: null },
  };
  if (platform === 'darwin') {
    result.sandboxExec.path = existsSync('/usr/bin/sandbox-exec') ? '/usr/bin/sandbox-exec' : null;
    return result;
  }
  if (platform !== 'linux') return result;
  const bwrap = find("bwrap", env);
  const known = bwrap && !thorough ? bwrapStaticallyUsable(bwrap) : null;
  if (bwrap && known !== null) {
    result.bwrap = { path: bwrap, usable: known, error: known ? undefined : 'unprivileged user namespaces are disabled' };
  } else if (bwrap) {
    const r = probe({ file: bwrap, args: bwrapProbeArgs() });
    result.bwrap = { path: bwrap, usable: r.code === 0, error: r.code === 0 ? undefined : (r.stderr.trim().split('\n').pop() || `exit ${r.code}`) };
  }
  if (!result.bwrap.usable) {
    const sd = find('systemd-run', env);
    const systemctl = find('systemctl', env);
    if (sd && systemctl) {
      const r = probe({ file: systemctl, args: ['--user', 'show-environment'] });
      result.systemdRun = { path: sd, usable: r.code === 0, error: r.code === 0 ? undefined : (r.stderr.trim().split('\n').pop() || `exit ${r.code}`) };
    }
  }
  return result;
}
