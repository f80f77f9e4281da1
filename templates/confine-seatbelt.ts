// The macOS side of templates/confine.ts: a Seatbelt profile for
// `sandbox-exec -p`. Default deny; reads of the system, the node binary's
// installation, the CLI's package, the working tree and its git directories;
// writes only to the scan's own temp folder and /dev/null; no network.
import type { Command } from './command.js';
import { sbplString } from './seatbelt.js';
import { SEATBELT_SYSCTLS } from './seatbelt-base.js';

/** System locations a node process and Apple's git need to start and run. */
export const CONFINE_MAC_SYSTEM = ['/usr', '/bin', '/System', '/Library/Developer/CommandLineTools', '/Applications/Xcode.app', '/private/var/db/dyld', '/private/var/db/timezone'];
export const CONFINE_MAC_ETC = ['/private/etc/passwd', '/private/etc/group', '/private/etc/localtime', '/dev/null', '/dev/random', '/dev/urandom'];

export interface ConfineSeatbeltInput {
  readOnly: string[];
  tmp: string;
  /** A loopback port it may connect to (the run's proxy); no network when unset. */
  proxyPort?: number;
  /** Paths inside what it reads that it may not read (what the agent's sandbox hides there): denied after the reads allowed, which the last rule matching decides. */
  hidden?: Array<{ path: string; dir: boolean }>;
}

export function buildConfineSeatbeltProfile(i: ConfineSeatbeltInput): string {
  const reads = [
    '(literal "/")',
    ...CONFINE_MAC_SYSTEM.map((p) => `(subpath ${sbplString(p)})`),
    ...CONFINE_MAC_ETC.map((p) => `(literal ${sbplString(p)})`),
    '(regex #"^/dev/fd/")',
    ...i.readOnly.map((p) => `(subpath ${sbplString(p)})`),
    `(subpath ${sbplString(i.tmp)})`,
  ];
  return [
    '(version 1)',
    '(deny default)',
    '(allow process-fork)',
    '(allow process-exec)',
    '(allow signal (target same-sandbox))',
    // sysctls by name (templates/seatbelt-base.ts): never kern.procargs2, every process's command line.
    '(allow sysctl-read',
    ...SEATBELT_SYSCTLS.map((a) => `  (sysctl-name${a.prefix ? '-prefix' : ''} ${sbplString(a.name)})`),
    ')',
    // Directory traversal metadata everywhere (realpath of a path's parents), never contents.
    '(allow file-read-metadata)',
    '(allow file-read*',
    ...reads.map((r) => `  ${r}`),
    ')',
    '(allow file-write*',
    `  (subpath ${sbplString(i.tmp)})`,
    '  (literal "/dev/null")',
    ')',
    ...(i.hidden ?? []).map((h) => `(deny file-read* (${h.dir ? 'subpath' : 'literal'} ${sbplString(h.path)}))`),
    '(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo"))',
    ...(i.proxyPort !== undefined ? [`(allow network-outbound (remote ip "localhost:${i.proxyPort}"))`] : []),
  ].join('\n') + '\n';
}

export function buildConfineSeatbeltCommand(sandboxExec: string, profile: string, command: string[], cwd: string, env: Record<string, string>, inherited: string[]): Command {
  return { file: sandboxExec, args: ['-p', profile, ...command], cwd, env, unsetEnv: inherited.filter((n) => !Object.hasOwn(env, n)) };
}
