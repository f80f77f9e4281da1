// The Linux fallback when bubblewrap is missing or unusable: the same rules as
// properties of a transient systemd user unit. Writes as an allow-list are
// ProtectSystem=strict, a read-only home and PrivateTmp, with the writable roots
// re-opened; git's directory has no view here (its executable files are
// ReadOnlyPaths=, which a rename on the host can detach: docs/sandboxing.md). systemd's InaccessiblePaths= has
// the semantics we want for deny_read (files EACCES, directories empty);
// ReadOnlyPaths= for deny_write. The environment travels in a 0600 file, never
// on the command line. Network: IP traffic only to loopback, where the proxy
// listens (weaker than bwrap's own namespace: other loopback services stay
// reachable; docs/sandboxing.md says so).
import type { Command } from './command.js';

export interface SystemdRunInput {
  systemdRun: string;
  command: string[];
  cwd: string;
  /** allow-list: ProtectSystem=strict and a read-only home, with the writable roots (and PrivateTmp); deny-list: writable but deny_write. */
  writes: 'allow-list' | 'deny-list';
  writableRoots: string[];
  denyRead: string[];
  denyWrite: string[];
  /** Writable again under a read-only path (systemd applies the more specific path last). */
  writable: string[];
  isolateNetwork: boolean;
  /** socket(AF_UNIX) allowed; otherwise RestrictAddressFamilies leaves only IP (and netlink, for interface lookups). */
  unixSockets: boolean;
  envFile: string;
  interactive: boolean;
}

export function buildSystemdRunCommand(input: SystemdRunInput): Command {
  const p = (prop: string) => ['--property', prop];
  const args = [
    '--user',
    input.interactive ? '--pty' : '--pipe',
    '--wait',
    '--collect',
    '--quiet',
    '--same-dir',
    '--service-type=exec',
    ...p(`EnvironmentFile=${input.envFile}`),
    ...p('NoNewPrivileges=yes'),
    ...p('PrivateUsers=yes'),
    ...p('CapabilityBoundingSet='),
    ...p('RestrictSUIDSGID=yes'),
    ...p('LockPersonality=yes'),
    ...p('ProtectKernelTunables=yes'),
    ...p('ProtectControlGroups=yes'),
    ...p('PrivateIPC=yes'),
    ...(input.writes === 'allow-list'
      ? [...p('ProtectSystem=strict'), ...p('ProtectHome=read-only'), ...p('PrivateTmp=yes'), ...input.writableRoots.flatMap((d) => p(`ReadWritePaths=${unitPath(d)}`))]
      : []),
    ...(input.unixSockets ? [] : p('RestrictAddressFamilies=AF_INET AF_INET6 AF_NETLINK')),
    // A leading "-" ignores paths that do not exist; a missing deny_write path is
    // created as a placeholder beforehand, like with bwrap.
    ...input.denyWrite.flatMap((d) => p(`ReadOnlyPaths=${unitPath(d)}`)),
    ...input.writable.flatMap((d) => p(`ReadWritePaths=${unitPath(d)}`)),
    ...input.denyRead.flatMap((d) => p(`InaccessiblePaths=${unitPath(d)}`)),
    ...(input.isolateNetwork ? [...p('IPAddressDeny=any'), ...p('IPAddressAllow=localhost')] : []),
    '--',
    ...input.command,
  ];
  return { file: input.systemdRun, args, cwd: input.cwd };
}

/** A path list entry in systemd's syntax: "-" prefix, quoted when it has spaces or quotes. */
export function unitPath(path: string): string {
  const word = `-${path}`;
  if (!/[\s"'\\]/.test(word)) return word;
  return `"${word.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}
