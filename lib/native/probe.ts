// Probes of the real tools behind selectMechanism.
import { existsSync } from 'node:fs';
import whichSync from 'which';
import { probe } from '../exec.js';
import type { NativeProbe } from './select.js';

function find(name: string, env: NodeJS.ProcessEnv): string | null {
  return whichSync.sync(name, { nothrow: true, path: env.PATH ?? '' }) ?? null;
}

/** bwrap exactly as a run uses it: own PID and network namespaces, no capabilities. */
export function bwrapProbeArgs(): string[] {
  return ['--die-with-parent', '--unshare-pid', '--unshare-net', '--cap-drop', 'ALL', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--', 'true'];
}

export function probeNative(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): NativeProbe {
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
  if (bwrap) {
    const r = probe({ file: bwrap, args: bwrapProbeArgs() });
    result.bwrap = { path: bwrap, usable: r.code === 0, error: r.code === 0 ? undefined : (r.stderr.trim().split('\n').pop() || `exit ${r.code}`) };
  }
  if (!result.bwrap.usable) {
    const sd = find('systemd-run', env);
    if (sd) {
      const r = probe({ file: 'systemctl', args: ['--user', 'show-environment'] });
      result.systemdRun = { path: sd, usable: r.code === 0, error: r.code === 0 ? undefined : (r.stderr.trim().split('\n').pop() || `exit ${r.code}`) };
    }
  }
  return result;
}
