// A classic-BPF seccomp program for bwrap --seccomp. It refuses (EPERM):
// - the ioctls by which a sandboxed process could type into the user's terminal
//   (TIOCSTI) or drive a virtual console (TIOCLINUX). Only the low 32 bits of
//   the request are compared: the kernel truncates it (CVE-2017-5226);
// - the kernel keyring calls (add_key, request_key, keyctl): the user's session
//   and user keyrings are shared with the host and may hold credentials;
// - every syscall of a foreign ABI (x32, i386 on x86_64), which would slip past
//   the numbers above.

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_EPERM = 0x00050000 | 1;
const TIOCSTI = 0x5412;
const TIOCLINUX = 0x541c;
const X32_SYSCALL_BIT = 0x40000000;

const ARCHES = {
  x64: { audit: 0xc000003e, ioctl: 16, denied: [248, 249, 250], x32: true },
  arm64: { audit: 0xc00000b7, ioctl: 29, denied: [217, 218, 219], x32: false },
} as const;

export type SeccompArch = keyof typeof ARCHES;

export function seccompSupported(arch: string): arch is SeccompArch {
  return arch in ARCHES;
}

type Insn = [code: number, jt: number | 'allow' | 'deny', jf: number | 'allow' | 'deny', k: number];

export function ttyInjectionFilter(arch: SeccompArch): Buffer {
  const a = ARCHES[arch];
  const body: Insn[] = [
    [BPF_LD_W_ABS, 0, 0, 4], // seccomp_data.arch
    [BPF_JEQ_K, 1, 0, a.audit],
    [BPF_RET_K, 0, 0, RET_EPERM], // a foreign ABI: refuse
    [BPF_LD_W_ABS, 0, 0, 0], // seccomp_data.nr
    ...(a.x32 ? ([[BPF_JGE_K, 'deny', 0, X32_SYSCALL_BIT]] as Insn[]) : []),
    ...a.denied.map((nr): Insn => [BPF_JEQ_K, 'deny', 0, nr]),
    [BPF_JEQ_K, 0, 'allow', a.ioctl],
    [BPF_LD_W_ABS, 0, 0, 24], // low word of args[1] (little-endian)
    [BPF_JEQ_K, 'deny', 0, TIOCSTI],
    [BPF_JEQ_K, 'deny', 0, TIOCLINUX],
  ];
  const insns: Insn[] = [...body, [BPF_RET_K, 0, 0, RET_ALLOW], [BPF_RET_K, 0, 0, RET_EPERM]];
  const allow = insns.length - 2;
  const deny = insns.length - 1;
  const buf = Buffer.alloc(insns.length * 8);
  insns.forEach(([code, jt, jf, k], i) => {
    const rel = (j: number | 'allow' | 'deny') => (j === 'allow' ? allow - i - 1 : j === 'deny' ? deny - i - 1 : j);
    buf.writeUInt16LE(code, i * 8);
    buf.writeUInt8(rel(jt), i * 8 + 2);
    buf.writeUInt8(rel(jf), i * 8 + 3);
    buf.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return buf;
}
