// What a deny-by-default Seatbelt profile lets every agent do, by name, with
// where each allowance comes from: Codex's seatbelt_base_policy.sbpl (itself
// after Chrome's renderer policy), sandbox-runtime's macOS profile builder,
// or Apple's documentation. docs/sandboxing.md has the same lists. Anything
// not named here (lsopen, appleevent-send, job-creation, user-preference-write,
// the pasteboard's and the Keychain's services, other processes' signals and
// task ports) stays refused by `(deny default)`.

export interface Allowance {
  name: string;
  /** A prefix (sysctl-name-prefix, global-name-prefix) rather than a full name. */
  prefix?: true;
  from: string;
}

const CODEX = "Codex's base policy";
const SRT = "sandbox-runtime's profile";
const BOTH = 'Codex and sandbox-runtime';

/** sysctls readable by name. Never kern.procargs2 (every process's command line and environment) or kern.proc.all (the process table). */
export const SEATBELT_SYSCTLS: readonly Allowance[] = [
  ...['hw.activecpu', 'hw.busfrequency_compat', 'hw.byteorder', 'hw.cacheconfig', 'hw.cachelinesize_compat', 'hw.cpufamily', 'hw.cpufrequency', 'hw.cpufrequency_compat', 'hw.cputype',
    'hw.l1dcachesize_compat', 'hw.l1icachesize_compat', 'hw.l2cachesize_compat', 'hw.l3cachesize_compat', 'hw.logicalcpu', 'hw.logicalcpu_max', 'hw.machine', 'hw.memsize', 'hw.ncpu',
    'hw.nperflevels', 'hw.packages', 'hw.pagesize', 'hw.pagesize_compat', 'hw.physicalcpu', 'hw.physicalcpu_max', 'hw.tbfrequency_compat', 'hw.vectorunit', 'kern.argmax', 'kern.hostname',
    'kern.maxfilesperproc', 'kern.maxproc', 'kern.osproductversion', 'kern.osrelease', 'kern.ostype', 'kern.osvariant_status', 'kern.osversion', 'kern.secure_kernel', 'kern.usrstack64',
    'kern.version', 'machdep.cpu.brand_string', 'sysctl.proc_cputype', 'vm.loadavg'].map((name): Allowance => ({ name, from: BOTH })),
  ...['hw.model'].map((name): Allowance => ({ name, from: CODEX })),
  ...['kern.maxfiles', 'kern.ngroups', 'kern.tcsm_available', 'kern.tcsm_enable', 'kern.willshutdown', 'machdep.ptrauth_enabled', 'security.mac.lockdown_mode_state'].map((name): Allowance => ({ name, from: SRT })),
  // CPU feature flags: Codex and sandbox-runtime name the arm ones; the same prefix covers an Intel Mac's.
  { name: 'hw.optional.', prefix: true, from: BOTH },
  { name: 'hw.perflevel', prefix: true, from: BOTH },
  { name: 'kern.proc.pgrp.', prefix: true, from: BOTH },
  { name: 'kern.proc.pid.', prefix: true, from: BOTH },
  { name: 'machdep.cpu.', prefix: true, from: SRT },
  { name: 'net.routetable.', prefix: true, from: BOTH },
];

/** sysctls that userspace "writes" to read: Java's CPU type (Codex), V8's thread setting (sandbox-runtime). */
export const SEATBELT_SYSCTL_WRITES: readonly Allowance[] = [
  { name: 'kern.grade_cputype', from: CODEX },
  { name: 'kern.tcsm_enable', from: SRT },
];

/** Mach services every run may look up. */
export const SEATBELT_MACH_SERVICES: ReadonlyArray<Allowance & { why: string }> = [
  { name: 'com.apple.system.opendirectoryd.libinfo', from: BOTH, why: 'user and group lookups (getpwuid)' },
  { name: 'com.apple.system.opendirectoryd.membership', from: SRT, why: 'group membership' },
  { name: 'com.apple.PowerManagement.control', from: BOTH, why: 'power assertions' },
  { name: 'com.apple.logd', from: SRT, why: 'os_log' },
  { name: 'com.apple.system.logger', from: SRT, why: 'syslog' },
  { name: 'com.apple.system.notification_center', from: SRT, why: 'notify(3)' },
  { name: 'com.apple.bsd.dirhelper', from: SRT, why: "the per-user temp and cache folders (confstr's _CS_DARWIN_USER_TEMP_DIR)" },
];

/** What `[sandbox] macos_allow` may add, each weaker, with its rules and what it costs. */
export type MacosService = 'keychain' | 'pasteboard' | 'trustd' | 'localhost';
export const MACOS_SERVICES: readonly MacosService[] = ['keychain', 'pasteboard', 'trustd', 'localhost'];

export const MACOS_SERVICE_COST: Record<MacosService, string> = {
  keychain: "the Keychain's services (and ~/Library/Keychains readable): the agent can read every item your login keychain hands this program without a prompt (git credential-osxkeychain, gh and Claude Code logins, saved passwords)",
  pasteboard: 'the pasteboard: the agent reads and writes what you copy',
  trustd: 'the certificate trust daemon (Go and Security-framework TLS): trustd fetches revocation data and intermediates from the URLs in certificates the agent shows it, outside the sandbox and past the proxy',
  localhost: 'every port on your loopback: the agent reaches your local databases, dev servers and any API listening on 127.0.0.1 (not only its own)',
};

/** Mach services of the opt-ins (Apple's service names, as sandbox-runtime names the Keychain's and trustd's). */
export const MACOS_SERVICE_MACH: Record<Exclude<MacosService, 'localhost'>, readonly string[]> = {
  keychain: ['com.apple.SecurityServer', 'com.apple.securityd.xpc'],
  pasteboard: ['com.apple.pasteboard.1'],
  trustd: ['com.apple.trustd', 'com.apple.trustd.agent'],
};
