// The seccomp profile of a Docker run's agent container: stashbase's own, in
// place of the engine's default. Docker's default lets socket(2) open families
// no network namespace isolates (AF_VSOCK, a virtual machine's channel to its
// host, on engines before its late-2022 change), and every engine's lets a
// 32-bit program reach any family through socketcall(2), which a filter
// cannot read. This one:
// - allows the syscalls of the engine's own architecture that ALLOWED names
//   (no 32-bit or x32 ABI at all: socketcall is not reachable), and refuses
//   (EPERM) everything else, what LEFT_OUT names and whatever a newer kernel adds;
// - socket(2) for AF_UNIX (the container's own sockets: no host socket is
//   there but one in the working directory), AF_INET and AF_INET6 (in the
//   holder's network namespace, behind its firewall) and netlink's route
//   protocol, as the native filter (templates/seccomp.ts), and no other;
// - clone(2) without namespace flags, and clone3(2) answers ENOSYS (its flags
//   are in a struct the filter cannot read; glibc then uses clone);
// - personality(2) for the values programs use (Linux, its 32-bit
//   emulation flags, the query), not the ones that make memory executable.
// The names are the kernel's x86_64 table (aarch64's are a subset of it under
// the same names); a name the engine's libseccomp does not know is skipped by
// the engine.

import { AF_INET, AF_INET6, AF_NETLINK, AF_UNIX, NETLINK_ROUTE } from './seccomp.js';

/** The syscalls allowed as they are. */
export const ALLOWED = `
read write open close stat fstat lstat poll lseek mmap mprotect munmap brk rt_sigaction rt_sigprocmask
rt_sigreturn ioctl pread64 pwrite64 readv writev access pipe select sched_yield mremap msync mincore madvise
shmget shmat shmctl dup dup2 pause nanosleep getitimer alarm setitimer getpid sendfile connect accept sendto
recvfrom sendmsg recvmsg shutdown bind listen getsockname getpeername socketpair setsockopt getsockopt fork
vfork execve exit wait4 kill uname semget semop semctl shmdt msgget msgsnd msgrcv msgctl fcntl flock fsync
fdatasync truncate ftruncate getdents getcwd chdir fchdir rename mkdir rmdir creat link unlink symlink
readlink chmod fchmod chown fchown lchown umask gettimeofday getrlimit getrusage sysinfo times ptrace getuid
getgid setuid setgid geteuid getegid setpgid getppid getpgrp setsid setreuid setregid getgroups setgroups
setresuid getresuid setresgid getresgid getpgid setfsuid setfsgid getsid capget capset rt_sigpending
rt_sigtimedwait rt_sigqueueinfo rt_sigsuspend sigaltstack utime mknod statfs fstatfs getpriority setpriority
sched_setparam sched_getparam sched_setscheduler sched_getscheduler sched_get_priority_max
sched_get_priority_min sched_rr_get_interval mlock munlock mlockall munlockall prctl arch_prctl adjtimex
setrlimit sync gettid readahead setxattr lsetxattr fsetxattr getxattr lgetxattr fgetxattr listxattr llistxattr
flistxattr removexattr lremovexattr fremovexattr tkill time futex sched_setaffinity sched_getaffinity
set_thread_area io_setup io_destroy io_getevents io_submit io_cancel get_thread_area epoll_create
epoll_ctl_old epoll_wait_old remap_file_pages getdents64 set_tid_address restart_syscall semtimedop fadvise64
timer_create timer_settime timer_gettime timer_getoverrun timer_delete clock_gettime clock_getres
clock_nanosleep exit_group epoll_wait epoll_ctl tgkill utimes get_mempolicy mq_open mq_unlink mq_timedsend
mq_timedreceive mq_notify mq_getsetattr waitid ioprio_set ioprio_get inotify_init inotify_add_watch
inotify_rm_watch openat mkdirat mknodat fchownat futimesat newfstatat unlinkat renameat linkat symlinkat
readlinkat fchmodat faccessat pselect6 ppoll set_robust_list get_robust_list splice tee sync_file_range
vmsplice utimensat epoll_pwait signalfd timerfd_create eventfd fallocate timerfd_settime timerfd_gettime
accept4 signalfd4 eventfd2 epoll_create1 dup3 pipe2 inotify_init1 preadv pwritev rt_tgsigqueueinfo recvmmsg
fanotify_mark prlimit64 name_to_handle_at syncfs sendmmsg getcpu process_vm_readv process_vm_writev
sched_setattr sched_getattr renameat2 seccomp getrandom memfd_create execveat membarrier mlock2
copy_file_range preadv2 pwritev2 pkey_mprotect pkey_alloc pkey_free statx io_pgetevents rseq pidfd_send_signal
pidfd_open close_range openat2 pidfd_getfd faccessat2 process_madvise epoll_pwait2 landlock_create_ruleset
landlock_add_rule landlock_restrict_self memfd_secret process_mrelease futex_waitv cachestat fchmodat2
map_shadow_stack futex_wake futex_wait futex_requeue statmount listmount lsm_get_self_attr lsm_set_self_attr
lsm_list_modules mseal setxattrat getxattrat listxattrat removexattrat
`.trim().split(/\s+/);

/** What is left out of ALLOWED, and why (documentation; the test checks the two do not meet). */
export const LEFT_OUT: Record<string, string[]> = {
  "kernel keyring (shared with the host; may hold credentials)": ['keyctl', 'add_key', 'request_key'],
  "io_uring (its socket and open operations run past this filter)": ['io_uring_setup', 'io_uring_enter', 'io_uring_register'],
  "new namespaces and joining others (clone takes no namespace flag below; clone3 answers ENOSYS)": ['unshare', 'setns', 'clone', 'clone3'],
  "kernel attack surface an agent has no use for": ['bpf', 'perf_event_open', 'userfaultfd', 'modify_ldt', 'kcmp', 'lookup_dcookie', 'fanotify_init', 'open_by_handle_at', 'vhangup'],
  "the socket families and personalities below only": ['socket', 'personality'],
  "mounts, modules, reboot, clocks, swap, quotas, the kernel log (each needs a capability the container does not have)": ['mount', 'umount2', 'pivot_root', 'chroot', 'move_mount', 'open_tree', 'open_tree_attr', 'fsopen', 'fsconfig', 'fsmount', 'fspick', 'mount_setattr', 'reboot', 'kexec_load', 'kexec_file_load', 'init_module', 'finit_module', 'delete_module', 'create_module', 'query_module', 'get_kernel_syms', 'swapon', 'swapoff', 'acct', 'quotactl', 'quotactl_fd', 'syslog', 'settimeofday', 'clock_settime', 'clock_adjtime', 'iopl', 'ioperm', 'sethostname', 'setdomainname', 'mbind', 'migrate_pages', 'move_pages', 'set_mempolicy', 'set_mempolicy_home_node'],
  "gone or never implemented": ['nfsservctl', 'uselib', 'ustat', 'sysfs', '_sysctl', 'vm86', 'vm86old', 'tuxcall', 'security', 'afs_syscall', 'getpmsg', 'putpmsg', 'vserver'],
};

/** CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET. */
const CLONE_NAMESPACES = 0x7e020000;
/** PER_LINUX, PER_LINUX_32BIT, UNAME26, UNAME26|PER_LINUX_32BIT, and the query (0xffffffff). */
const PERSONALITIES = [0x0, 0x8, 0x20000, 0x20008, 0xffffffff];
const ENOSYS = 38;

interface Arg {
  index: number;
  value: number;
  valueTwo: number;
  op: 'SCMP_CMP_EQ' | 'SCMP_CMP_MASKED_EQ';
}
interface Rule {
  names: string[];
  action: 'SCMP_ACT_ALLOW' | 'SCMP_ACT_ERRNO';
  args?: Arg[];
  errnoRet?: number;
}
export interface SeccompProfile {
  defaultAction: 'SCMP_ACT_ERRNO';
  archMap: Array<{ architecture: string; subArchitectures: string[] }>;
  syscalls: Rule[];
}

const eq = (index: number, value: number): Arg => ({ index, value, valueTwo: 0, op: 'SCMP_CMP_EQ' });

/**
 * `gvisor`: the profile for a container under runsc. gVisor applies a
 * profile's rules (with --oci-seccomp) but answers every refused call EPERM,
 * whatever errno the rule asks for; glibc then takes clone3's EPERM for a
 * failure, not for a missing call, and no thread starts. So there clone3 is
 * passed to gVisor itself, which (Debian's runsc) does not implement it and
 * answers ENOSYS, or (a newer one) makes the namespaces inside its own
 * kernel, never the host's.
 */
export function agentSeccompProfile(o: { gvisor?: boolean } = {}): SeccompProfile {
  return {
    defaultAction: 'SCMP_ACT_ERRNO',
    // The engine's own architecture only: no sub-architectures, so no 32-bit or x32 calls.
    archMap: [
      { architecture: 'SCMP_ARCH_X86_64', subArchitectures: [] },
      { architecture: 'SCMP_ARCH_AARCH64', subArchitectures: [] },
    ],
    syscalls: [
      { names: ALLOWED, action: 'SCMP_ACT_ALLOW' },
      ...[AF_UNIX, AF_INET, AF_INET6].map((family): Rule => ({ names: ['socket'], action: 'SCMP_ACT_ALLOW', args: [eq(0, family)] })),
      { names: ['socket'], action: 'SCMP_ACT_ALLOW', args: [eq(0, AF_NETLINK), eq(2, NETLINK_ROUTE)] },
      { names: ['clone'], action: 'SCMP_ACT_ALLOW', args: [{ index: 0, value: CLONE_NAMESPACES, valueTwo: 0, op: 'SCMP_CMP_MASKED_EQ' }] },
      o.gvisor ? { names: ['clone3'], action: 'SCMP_ACT_ALLOW' } : { names: ['clone3'], action: 'SCMP_ACT_ERRNO', errnoRet: ENOSYS },
      ...PERSONALITIES.map((p): Rule => ({ names: ['personality'], action: 'SCMP_ACT_ALLOW', args: [eq(0, p)] })),
    ],
  };
}

/** What the measuring container may not call beyond the agent's refusals: every socket call, and reading another process. */
const MEASURE_LEFT_OUT = new Set(['connect', 'accept', 'accept4', 'sendto', 'recvfrom', 'sendmsg', 'recvmsg', 'sendmmsg', 'recvmmsg', 'shutdown', 'bind', 'listen', 'getsockname', 'getpeername', 'socketpair', 'setsockopt', 'getsockopt', 'ptrace', 'process_vm_readv', 'process_vm_writev']);

/**
 * The profile of the container that measures the agents' home volume (du as
 * root with DAC_READ_SEARCH, lib/docker/home-volume.ts): the agent's, less
 * every socket call, socket(2) itself included. With it the container needs
 * no network namespace of its own (one costs ~150 ms of a container's start
 * here, and two made at once, the agent's and this one, wait on each other):
 * it runs in the engine's host namespace and cannot open, accept or use a
 * socket there, nor an abstract one, nor netlink; it starts with none.
 */
export function measureSeccompProfile(): SeccompProfile {
  const agent = agentSeccompProfile();
  return {
    ...agent,
    syscalls: agent.syscalls.flatMap((r): Rule[] => {
      if (r.names.includes('socket')) return [];
      const names = r.names.filter((n) => !MEASURE_LEFT_OUT.has(n));
      return names.length === 0 ? [] : [{ ...r, names }];
    }),
  };
}
