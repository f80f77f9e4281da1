// The confinement of a scan run on a sandbox's behalf (lib/hooks/host-scan.ts):
// on Linux a bubblewrap argument list, on macOS a Seatbelt profile
// (templates/confine-seatbelt.ts). The scanner sees the system's programs and
// libraries, a few files of /etc, the node binary, the CLI's package, the run's
// working tree and its git directories, all read-only, and a private /tmp:
// nothing else of your home, no network, no other process. A symlink or a
// .git file that the agent pointed at your other files leads nowhere inside.
// Pure: which paths exist and what they are is resolved before.
import type { Command } from './command.js';

/** System folders bound read-only (those that exist); a symlink such as /bin -> usr/bin is recreated as one. */
export const CONFINE_SYSTEM = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** What of /etc a scan needs: the dynamic loader's cache and config, time zone, user and group names (git looks up the uid), the alternatives' symlinks. */
export const CONFINE_ETC = ['/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/localtime', '/etc/passwd', '/etc/group', '/etc/nsswitch.conf', '/etc/alternatives'];

export interface SystemPath {
  path: string;
  /** Set when the path is a symlink: its target as written (e.g. "usr/bin"). */
  symlink?: string;
}

/** A host path shown at a path of the scan's own (the sandbox's path for it), read-only. */
export interface ConfineBind {
  src: string;
  dest: string;
  /** Writable (a local MCP server's working tree with `workdir = "write"`); read-only otherwise. */
  rw?: boolean;
}

export interface ConfineInput {
  bwrap: string;
  /** The entries of CONFINE_SYSTEM that exist here. */
  system: SystemPath[];
  /** The entries of CONFINE_ETC that exist here. */
  etc: string[];
  /**
   * Bound read-only: the node binary's installation and the CLI's package at
   * their own paths, then the working tree and its git directories where the
   * sandbox sees them (a native run's .git is a view of its own). Real host
   * paths (bwrap would follow a symlink on the host).
   */
  binds: ConfineBind[];
  /** Hidden after the binds (a local MCP server's view of the working tree: what the agent's sandbox hides): an empty tmpfs for a folder, /dev/null for a file. */
  hidden?: Array<{ path: string; dir: boolean }>;
  /**
   * Inside a writable bind: folders bound onto themselves (a mount point
   * cannot be renamed, so what they hold cannot be moved away), then paths
   * bound read-only over themselves (what the agent's sandbox keeps
   * read-only), both before the hidden ones.
   */
  pinned?: string[];
  readOnly?: string[];
  cwd: string;
  command: string[];
  /** The whole environment of the scan: everything inherited is removed first. */
  env: Record<string, string>;
  inherited: string[];
  /** The host's network (a dependency check reaches the run's proxy); none when unset. */
  network?: boolean;
  /** Descriptors passed through to the command (its report channel). */
  pipes?: Command['pipes'];
}

const inside = (p: string, dir: string) => p === dir || p.startsWith(dir === '/' ? '/' : dir + '/');

export function buildConfineCommand(i: ConfineInput): Command {
  const args = ['--unshare-all', ...(i.network ? ['--share-net'] : []), '--die-with-parent', '--new-session', '--cap-drop', 'ALL'];
  for (const s of i.system) args.push(...(s.symlink !== undefined ? ['--symlink', s.symlink, s.path] : ['--ro-bind', s.path, s.path]));
  for (const e of i.etc) args.push('--ro-bind', e, e);
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  // Outermost first (a view before what is bound into it), each once; a
  // folder inside a system folder is there already.
  const system = i.system.filter((s) => s.symlink === undefined).map((s) => s.path);
  const seen = new Set<string>();
  const depth = (p: string) => p.split('/').length;
  for (const b of [...i.binds].sort((x, y) => depth(x.dest) - depth(y.dest))) {
    const key = `${b.src}\0${b.dest}`;
    if (seen.has(key) || (b.src === b.dest && system.some((c) => inside(b.dest, c)))) continue;
    seen.add(key);
    args.push(b.rw ? '--bind' : '--ro-bind', b.src, b.dest);
  }
  for (const p of [...(i.pinned ?? [])].sort((x, y) => depth(x) - depth(y))) args.push('--bind', p, p);
  for (const p of [...(i.readOnly ?? [])].sort((x, y) => depth(x) - depth(y))) args.push('--ro-bind', p, p);
  for (const h of i.hidden ?? []) args.push(...(h.dir ? ['--tmpfs', h.path] : ['--ro-bind', '/dev/null', h.path]));
  args.push('--chdir', i.cwd, '--', ...i.command);
  return { file: i.bwrap, args, env: i.env, unsetEnv: i.inherited.filter((n) => !Object.hasOwn(i.env, n)), ...(i.pipes ? { pipes: i.pipes } : {}) };
}
