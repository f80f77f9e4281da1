// Turns resolved path rules into a bubblewrap argument list. Pure: every fact
// (which paths exist and as what, the helper files, descriptor numbers) is an
// input, so the output can be golden-tested and printed by --dry-run.
import type { Command } from './command.js';

export interface DeniedPath {
  path: string;
  /** What is there now; placeholders for missing paths are created as dirs first. */
  kind: 'file' | 'dir';
}

export interface BwrapInput {
  bwrap: string;
  /** coreutils env, used to keep Ctrl+C for the agent alone (see below). */
  envTool: string;
  command: string[];
  cwd: string;
  denyRead: DeniedPath[];
  denyWrite: DeniedPath[];
  /**
   * Directories under a write-denied one that stay writable (a worktree run's
   * object store, refs and its own admin folder under a read-only .git);
   * anything denied deeper inside them is denied again.
   */
  writable: string[];
  /** Ancestors of protected paths, bound onto themselves so they cannot be renamed away. */
  pinned: string[];
  /** An empty file of mode 000 (bound over denied files: reading gives EACCES). */
  deniedFile: string;
  /** An empty directory, bound read-only over denied directories where bwrap predates `--perms` (0.5.0). */
  emptyDir: string;
  /** bwrap 0.5.0 or later: denied directories get a tmpfs of mode 0555 instead (cheaper to mount). */
  tmpfsPerms: boolean;
  /** Own network namespace (only the bridged proxy reaches out); false = host network. */
  isolateNetwork: boolean;
  seccompFile: string;
  env: { set: Record<string, string>; unset: string[] };
  /**
   * Unprivileged: bwrap makes a user namespace. It then waits for stashbase to
   * write the uid and gid maps (--userns-block-fd), so that the relay can join
   * the user namespace that owns the network namespace before bwrap nests
   * another one inside it.
   */
  userns: boolean;
}

export const BWRAP_FDS = { seccomp: 3, info: 4, block: 5, userns: 6 } as const;

const depth = (p: string) => p.split('/').length;

export function buildBwrapCommand(input: BwrapInput): Command {
  const args: string[] = [
    // bwrap forwards no signals and dies on Ctrl+C before the agent has handled
    // it; ignoring SIGINT here and restoring it for the agent lets the terminal's
    // SIGINT reach the agent alone, as it would outside the sandbox.
    '--ignore-signal=INT',
    input.bwrap,
    '--die-with-parent',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-cgroup-try',
    ...(input.isolateNetwork ? ['--unshare-net'] : []),
    ...(input.userns ? ['--unshare-user', '--userns-block-fd', String(BWRAP_FDS.userns)] : []),
    '--cap-drop', 'ALL',
    '--bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
  ];
  for (const dir of input.pinned) args.push('--bind', dir, dir);
  // Write denials and the writable carve-outs by depth (at equal depth the
  // denial last, so it wins), then read denials over them: a path in both lists ends unreadable.
  const layers = [...input.writable.map((path) => ({ path, ro: false })), ...input.denyWrite.map((d) => ({ path: d.path, ro: true }))];
  for (const l of layers.sort((a, b) => depth(a.path) - depth(b.path) || Number(a.ro) - Number(b.ro))) {
    args.push(l.ro ? '--ro-bind' : '--bind', l.path, l.path);
  }
  // A denied directory gets an empty tmpfs of mode 0555 of its own: it appears
  // empty, writing into it fails, and what the agent writes after a chmod stays
  // in memory and goes with the run. A tmpfs is cheaper for bwrap than a bind
  // (each bind makes it read the whole mount table to remount it read-only).
  // An older bwrap binds an empty directory read-only instead.
  for (const d of [...input.denyRead].sort((a, b) => depth(a.path) - depth(b.path))) {
    if (d.kind === 'file') args.push('--ro-bind', input.deniedFile, d.path);
    else if (input.tmpfsPerms) args.push('--perms', '0555', '--tmpfs', d.path);
    else args.push('--ro-bind', input.emptyDir, d.path);
  }
  args.push(
    '--seccomp', String(BWRAP_FDS.seccomp),
    '--info-fd', String(BWRAP_FDS.info),
    '--block-fd', String(BWRAP_FDS.block),
    '--chdir', input.cwd,
    '--',
    input.envTool, '--default-signal=INT',
    ...input.command,
  );
  return {
    file: input.envTool,
    args,
    env: input.env.set,
    unsetEnv: input.env.unset,
    fds: [{ fd: BWRAP_FDS.seccomp, path: input.seccompFile }],
    pipes: [
      { fd: BWRAP_FDS.info, direction: 'from-child' },
      { fd: BWRAP_FDS.block, direction: 'to-child' },
      ...(input.userns ? [{ fd: BWRAP_FDS.userns, direction: 'to-child' as const }] : []),
    ],
  };
}
