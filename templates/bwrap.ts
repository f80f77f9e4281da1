// Turns resolved path rules into a bubblewrap argument list. Pure: every fact
// (which paths exist and as what, the helper files, descriptor numbers) is an
// input, so the output can be golden-tested and printed by --dry-run.
import type { Command, FdFile } from './command.js';
import type { PtyInput } from './pty-relay.js';
import { landlockArgv, type LandlockInput } from './landlock.js';
import { envArgs, GATE_FD, GATE_SCRIPT } from './gate.js';

export interface DeniedPath {
  path: string;
  /** What is there now; placeholders for missing paths are created as dirs first. */
  kind: 'file' | 'dir';
}

/** One bind of a host path (`src`, seen from outside the sandbox) at `dest`. */
export interface BindMount {
  src: string;
  dest: string;
  ro: boolean;
}

/**
 * Kernel interfaces that stay read-only even for root inside: sysctls (a
 * core_pattern pipe runs as root on the host), the sysrq trigger, IRQ
 * affinities, PCI and filesystem tunables (Docker's list for /proc). Those
 * that exist on the host are bound (lib/native/prepare.ts).
 */
export const PROC_READ_ONLY = ['/proc/sys', '/proc/sysrq-trigger', '/proc/irq', '/proc/bus', '/proc/fs'];

export interface BwrapInput {
  /** Stashbase's process group has the terminal: the agent's own group takes it (templates/gate.ts PGRP_LINE). */
  foreground?: boolean;
  /** Where stashbase has a controlling terminal: the sandbox runs on a pseudo-terminal of its own (templates/pty-relay.ts). */
  pty?: PtyInput | null;
  bwrap: string;
  /** coreutils env, used to keep Ctrl+C for the agent alone (see below). */
  envTool: string;
  /** perl inside the sandbox: the gate (templates/gate.ts), before the agent. */
  perl: string;
  command: string[];
  cwd: string;
  /**
   * allow-list: the host is bound read-only and only `binds` with ro false
   * (the working directory, allow_write, the views) are writable; deny-list:
   * the host is bound writable and deny_write paths are read-only.
   */
  writes: 'allow-list' | 'deny-list';
  /** The entries of PROC_READ_ONLY the host has, bound read-only over the sandbox's own /proc. */
  procReadOnly: string[];
  /** The run's own directories bound at /tmp, /var/tmp (and the host's temp folder, when it is another): other runs' files are never visible. */
  privateTmp: Array<{ src: string; dest: string }>;
  /** Private copies (`src`, in the run directory) of version managers' shim folders, bound writable at `from` and discarded with the run. */
  scratch: Array<{ from: string; src: string }>;
  /**
   * Writable roots, views and what is bound into them, and paths under a
   * private temp folder shown again: mounted by depth, before the denials.
   */
  binds: BindMount[];
  denyRead: DeniedPath[];
  denyWrite: DeniedPath[];
  /**
   * Directories under a write-denied one that stay writable (a worktree run's
   * object store, refs and its own admin folder under a read-only .git);
   * anything denied deeper inside them is denied again.
   */
  writable: string[];
  /** Ancestors of protected paths inside writable areas, bound onto themselves so they cannot be renamed away. */
  pinned: string[];
  /** An empty file of mode 000 (bound over denied files: reading gives EACCES). */
  deniedFile: string;
  /** An empty directory, bound read-only over denied directories where bwrap predates `--perms` (0.5.0). */
  emptyDir: string;
  /** bwrap 0.5.0 or later: denied directories get a tmpfs of mode 0555 instead (cheaper to mount). */
  tmpfsPerms: boolean;
  /**
   * Where this bwrap takes `--bind-fd` (0.10, and distributions' backports):
   * the roots below which every writable bind is made from a descriptor the
   * runner opened and checked (FdFile.held). The tree the agent writes (a
   * worktree run's whole worktree, in a folder of the repository: found in
   * review), and each allow_write folder outside it by the real path its check
   * judged (lib/paths/bind-sources.ts refuseAgentLinks), with the folders pinned
   * below it (found in review: an agent of a concurrent run swapped one for a
   * link between the check and the bind by name). A folder swapped for a link
   * after the check makes bwrap fail ("Race condition binding dirfd"), never
   * bind what the link names. A read-only bind stays by path: one swapped
   * protects another file, read-only, and grants nothing (the denials come
   * after it); held, a tree with thousands of write-denied files would need as
   * many descriptors. Empty: binds by path.
   */
  heldRoots: string[];
  /** Own network namespace (only the bridged proxy reaches out); false = host network. */
  isolateNetwork: boolean;
  seccompFile: string;
  /** Denied files a rename on the host could detach: kept unreadable by Landlock (templates/landlock.ts), which runs the agent. */
  landlock: LandlockInput | null;
  /**
   * The agent's whole environment (lib/native/prepare.ts: stashbase's own
   * less what the run removes, plus what it sets). bwrap starts the sandbox with none of it (--clearenv)
   * and gives the agent exactly this: bwrap itself runs as the sandbox's pid 1,
   * whose /proc/1/environ the agent could read where Landlock does not stop
   * it (found in review: the real values of secrets' source variables).
   */
  env: Record<string, string>;
  /**
   * Unprivileged: bwrap makes a user namespace. It then waits for stashbase to
   * write the uid and gid maps (--userns-block-fd), so that the relay can join
   * the user namespace that owns the network namespace before bwrap nests
   * another one inside it.
   */
  userns: boolean;
}

/** The descriptors bwrap is given; held bind sources (BwrapInput.heldRoots) from `sources` up, in the order bwrap binds them. */
export const BWRAP_FDS = { seccomp: 3, info: 4, block: 5, userns: 6, gate: GATE_FD, sources: GATE_FD + 1 } as const;

const depth = (p: string) => p.split('/').length;

export function buildBwrapCommand(input: BwrapInput): Command {
  const allowList = input.writes === 'allow-list';
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
    // The agent's environment is the gate's to give the agent (templates/gate.ts): the processes that start the
    // sandbox outside it (env, bwrap itself, the sandbox's pid 1) run with a bare PATH, never with yours (whose
    // secrets' sources pid 1's environ would show), and inside it the gate with none, never with what a profile
    // or the agent sets (LD_PRELOAD, PERL5LIB, PERL5OPT: code of the agent's before the gate).
    '--clearenv',
    // bwrap remounts every submount of a read-only bind read-only too: /sys and its cgroups among them.
    allowList ? '--ro-bind' : '--bind', '/', '/',
    ...(allowList ? [] : ['--ro-bind', '/sys', '/sys']),
    '--dev', '/dev',
    '--proc', '/proc',
  ];
  for (const p of input.procReadOnly) args.push('--ro-bind', p, p);
  for (const t of input.privateTmp) args.push('--bind', t.src, t.dest);
  // Everything else by depth: a view's folder before what is bound into it,
  // a path under a private temp folder after that folder. At equal depth the
  // writable first and a denial last, so it wins; pins before what they hold.
  const layers = [
    ...input.binds.map((b) => ({ ...b, rank: b.ro ? 1 : 0 })),
    ...input.scratch.map((c) => ({ src: c.src, dest: c.from, ro: false, rank: 0 })),
    ...input.pinned.map((p) => ({ src: p, dest: p, ro: false, rank: 0 })),
    ...input.writable.map((p) => ({ src: p, dest: p, ro: false, rank: 0 })),
    ...input.denyWrite.map((d) => ({ src: d.path, dest: d.path, ro: true, rank: 2 })),
  ];
  const held: FdFile[] = [];
  for (const l of layers.sort((a, b) => depth(a.dest) - depth(b.dest) || a.rank - b.rank)) {
    if (!l.ro && input.heldRoots.some((h) => l.src === h || l.src.startsWith(`${h}/`))) {
      const fd = BWRAP_FDS.sources + held.length;
      held.push({ fd, path: l.src, held: true });
      args.push(l.ro ? '--ro-bind-fd' : '--bind-fd', String(fd), l.dest);
    } else args.push(l.ro ? '--ro-bind' : '--bind', l.src, l.dest);
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
    // The gate (templates/gate.ts) first: the agent starts on stashbase's word only.
    // PWD as bwrap sets it (found in review: the gate's fresh environment dropped it; the agent got yours).
    ...(input.landlock ? landlockArgv(input.landlock, input.command, { ...input.env, PWD: input.cwd }, input.foreground === true) : [input.perl, '-e', GATE_SCRIPT, ...envArgs({ ...input.env, PWD: input.cwd }, input.foreground === true), ...input.command]),
  );
  return {
    file: input.envTool,
    args,
    env: { PATH: '/usr/bin:/bin' },
    unsetEnv: [],
    onlyEnv: true,
    fds: [{ fd: BWRAP_FDS.seccomp, path: input.seccompFile }, ...held],
    pipes: [
      { fd: BWRAP_FDS.info, direction: 'from-child' },
      { fd: BWRAP_FDS.block, direction: 'to-child' },
      ...(input.userns ? [{ fd: BWRAP_FDS.userns, direction: 'to-child' as const }] : []),
      { fd: BWRAP_FDS.gate, direction: 'to-child' },
    ],
  };
}
