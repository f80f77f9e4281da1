// A classic-BPF seccomp program for bwrap --seccomp. It refuses (EPERM):
// - socket(2) of every address family but those the sandbox's own network
//   needs: IPv4 and IPv6 (in the run's network namespace, where the proxy is
//   the only way out) and netlink's route protocol (interface and route
//   lookups). An allow-list, because the families no network namespace
//   isolates are a class: AF_UNIX (every host Unix socket is a control channel:
//   a terminal multiplexer's, an editor's, a container engine's, another run's
//   proxy, including ones made after the run started), AF_VSOCK (a virtual
//   machine's channel to its host), and whatever the kernel adds.
//   socketpair(2) stays allowed for streams and sequenced packets: the
//   agent's own processes still talk over anonymous pairs. Any other pair is
//   refused, a datagram one (SOCK_DGRAM, and SOCK_RAW, which the kernel makes
//   one) among them: a datagram socket can be pointed at any socket path with
//   connect(2) or sendto(2), and a read-only mount does not stop a write to a
//   socket (review, round 35: a pair's end reached a host datagram socket,
//   journald's and syslog's kind, and, bound in the tree, got its answers).
//   A profile may allow AF_UNIX (`[sandbox] allow_unix_sockets = true`),
//   datagram pairs with it;
// - io_uring (setup, enter, register): its SOCKET and OPENAT operations run
//   in the kernel without passing this filter;
// - setting a setuid or setgid bit on a file (chmod, fchmod, fchmodat,
//   fchmodat2, and a mode with those bits in open, openat, creat and mknod):
//   a setuid shell left in your repository runs as its owner (root, for a run
//   as root) for anyone on the machine. openat2 passes its mode in a struct
//   the filter cannot read: it answers ENOSYS, and callers fall back to openat;
// - the ioctls by which a sandboxed process could type into the user's terminal
//   (TIOCSTI), drive a virtual console (TIOCLINUX) or change the terminal's
//   line discipline (TIOCSETD: review, round 35, the null one left your
//   terminal blank, stashbase's warnings unseen), suspend its output
//   (TCXONC: review, round 36, tcflow(TCOOFF) with ^C and ^Q turned off left
//   stashbase blocked in its first write after the run, before its checks)
//   or make it exclusive (TIOCEXCL: the same review, stashbase could no longer
//   open it to take it back, and was stopped by the agent's tostop). Only the
//   low 32 bits of the request are compared: the kernel truncates it
//   (CVE-2017-5226);
// - the kernel keyring calls (add_key, request_key, keyctl): the user's session
//   and user keyrings are shared with the host and may hold credentials;
// - every syscall of a foreign ABI (x32, i386 on x86_64), which would slip past
//   the numbers above (i386's socketcall among them).

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_JSET_K = 0x45;
const BPF_RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_EPERM = 0x00050000 | 1;
const RET_ENOSYS = 0x00050000 | 38;
const SETID_BITS = 0o6000;
const OPENAT2 = 437;
/** The refused ioctls, as above: TIOCSTI, TIOCSETD, TCXONC, TIOCEXCL, TIOCLINUX. */
const REFUSED_IOCTLS = [0x5412, 0x5423, 0x540a, 0x540c, 0x541c];
const BPF_ALU_AND_K = 0x54;
const SOCK_TYPE_MASK = 0xf;
const SOCK_STREAM = 1;
const SOCK_SEQPACKET = 5;
/** The socket families both sandboxes allow (Docker's profile, templates/docker-seccomp.ts, takes them from here). */
export const AF_UNIX = 1;
export const AF_INET = 2;
export const AF_INET6 = 10;
export const AF_NETLINK = 16;
export const NETLINK_ROUTE = 0;
const X32_SYSCALL_BIT = 0x40000000;
/** io_uring_setup, io_uring_enter, io_uring_register: the same numbers on every architecture. */
const IO_URING = [425, 426, 427];

/** Per syscall that takes a file mode: the index of its mode argument. */
const ARCHES = {
  x64: {
    audit: 0xc000003e, ioctl: 16, socket: 41, socketpair: 53, keyring: [248, 249, 250], x32: true,
    // chmod, fchmod, creat, mknod; open, fchmodat, fchmodat2, mknodat; openat
    modes: { 1: [90, 91, 85, 133], 2: [2, 268, 452, 259], 3: [257] },
  },
  arm64: {
    audit: 0xc00000b7, ioctl: 29, socket: 198, socketpair: 199, keyring: [217, 218, 219], x32: false,
    // fchmod; fchmodat, fchmodat2, mknodat; openat
    modes: { 1: [52], 2: [53, 452, 33], 3: [56] },
  },
} as const;

export type SeccompArch = keyof typeof ARCHES;

export function seccompSupported(arch: string): arch is SeccompArch {
  return arch in ARCHES;
}

export interface FilterOptions {
  /** Let socket(AF_UNIX, ...) through (weaker: every host Unix socket the user can open is reachable). */
  unixSockets: boolean;
}

/** The address families socket(2) may open (netlink for its route protocol only). */
export const SOCKET_FAMILIES = { AF_INET, AF_INET6, AF_NETLINK } as const;

type Target = number | 'allow' | 'deny' | 'enosys' | 'ioctl' | 'socket' | 'socketpair' | 'netlink' | 'mode1' | 'mode2' | 'mode3';
type Insn = [code: number, jt: Target, jf: Target, k: number];

export function sandboxFilter(arch: SeccompArch, opts: FilterOptions): Buffer {
  const a = ARCHES[arch];
  const insns: Insn[] = [
    [BPF_LD_W_ABS, 0, 0, 4], // seccomp_data.arch
    [BPF_JEQ_K, 1, 0, a.audit],
    [BPF_RET_K, 0, 0, RET_EPERM], // a foreign ABI: refuse
    [BPF_LD_W_ABS, 0, 0, 0], // seccomp_data.nr
    ...(a.x32 ? ([[BPF_JGE_K, 'deny', 0, X32_SYSCALL_BIT]] as Insn[]) : []),
    ...[...a.keyring, ...IO_URING].map((nr): Insn => [BPF_JEQ_K, 'deny', 0, nr]),
    [BPF_JEQ_K, 'socket', 0, a.socket],
    ...(opts.unixSockets ? [] : ([[BPF_JEQ_K, 'socketpair', 0, a.socketpair]] as Insn[])),
    [BPF_JEQ_K, 'enosys', 0, OPENAT2],
    ...([1, 2, 3] as const).flatMap((i) => a.modes[i].map((nr): Insn => [BPF_JEQ_K, `mode${i}`, 0, nr])),
    [BPF_JEQ_K, 'ioctl', 'allow', a.ioctl],
  ];
  const labels: Record<string, number> = {};
  labels.ioctl = insns.length;
  insns.push(
    [BPF_LD_W_ABS, 0, 0, 24], // low word of args[1], the request (little-endian)
    ...REFUSED_IOCTLS.map((req, i): Insn => [BPF_JEQ_K, 'deny', i === REFUSED_IOCTLS.length - 1 ? 'allow' : 0, req]),
  );
  labels.socketpair = insns.length;
  insns.push(
    [BPF_LD_W_ABS, 0, 0, 24], // low word of args[1], the type (with SOCK_NONBLOCK and SOCK_CLOEXEC)
    [BPF_ALU_AND_K, 0, 0, SOCK_TYPE_MASK],
    // Streams and sequenced packets alone: SOCK_RAW is a datagram pair too (the kernel's unix_create makes it one;
    // the round's last review), and what else comes is refused rather than known.
    [BPF_JEQ_K, 'allow', 0, SOCK_STREAM],
    [BPF_JEQ_K, 'allow', 'deny', SOCK_SEQPACKET],
  );
  labels.socket = insns.length;
  insns.push(
    [BPF_LD_W_ABS, 0, 0, 16], // low word of args[0], the address family
    [BPF_JEQ_K, 'allow', 0, AF_INET],
    [BPF_JEQ_K, 'allow', 0, AF_INET6],
    ...(opts.unixSockets ? ([[BPF_JEQ_K, 'allow', 0, AF_UNIX]] as Insn[]) : []),
    [BPF_JEQ_K, 'netlink', 'deny', AF_NETLINK],
  );
  labels.netlink = insns.length;
  insns.push(
    [BPF_LD_W_ABS, 0, 0, 32], // low word of args[2], the protocol
    [BPF_JEQ_K, 'allow', 'deny', NETLINK_ROUTE],
  );
  for (const i of [1, 2, 3]) {
    labels[`mode${i}`] = insns.length;
    insns.push(
      [BPF_LD_W_ABS, 0, 0, 16 + 8 * i], // low word of args[i], the mode
      [BPF_JSET_K, 'deny', 'allow', SETID_BITS],
    );
  }
  labels.allow = insns.length;
  insns.push([BPF_RET_K, 0, 0, RET_ALLOW]);
  labels.deny = insns.length;
  insns.push([BPF_RET_K, 0, 0, RET_EPERM]);
  labels.enosys = insns.length;
  insns.push([BPF_RET_K, 0, 0, RET_ENOSYS]);
  const buf = Buffer.alloc(insns.length * 8);
  insns.forEach(([code, jt, jf, k], i) => {
    const rel = (j: Target) => {
      if (typeof j === 'number') return j;
      const off = (labels[j] as number) - i - 1;
      if (off < 0 || off > 255) throw new Error(`seccomp: jump to ${j} out of range`);
      return off;
    };
    buf.writeUInt16LE(code, i * 8);
    buf.writeUInt8(rel(jt), i * 8 + 2);
    buf.writeUInt8(rel(jf), i * 8 + 3);
    buf.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return buf;
}
