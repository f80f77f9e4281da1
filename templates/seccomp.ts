// A classic-BPF seccomp program for bwrap --seccomp that refuses the ioctls by
// which a sandboxed process could type into the user's terminal (TIOCSTI) or
// drive a virtual console (TIOCLINUX). Only the low 32 bits of the request are
// compared: the kernel truncates it to an unsigned int (CVE-2017-5226).

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
  x64: { audit: 0xc000003e, ioctl: 16 },
  arm64: { audit: 0xc00000b7, ioctl: 29 },
} as const;

export type SeccompArch = keyof typeof ARCHES;

export function seccompSupported(arch: string): arch is SeccompArch {
  return arch in ARCHES;
}

type Insn = [code: number, jt: number, jf: number, k: number];

export function ttyInjectionFilter(arch: SeccompArch): Buffer {
  const a = ARCHES[arch];
  const insns: Insn[] = [
    [BPF_LD_W_ABS, 0, 0, 4], // seccomp_data.arch
    [BPF_JEQ_K, 1, 0, a.audit],
    [BPF_RET_K, 0, 0, RET_EPERM], // a foreign ABI (e.g. i386 on x86_64): refuse
    [BPF_LD_W_ABS, 0, 0, 0], // seccomp_data.nr
    ...(arch === 'x64' ? ([[BPF_JGE_K, 5, 0, X32_SYSCALL_BIT]] as Insn[]) : ([[BPF_JGE_K, 0, 0, 0]] as Insn[])),
    [BPF_JEQ_K, 0, 3, a.ioctl],
    [BPF_LD_W_ABS, 0, 0, 24], // low word of args[1] (little-endian)
    [BPF_JEQ_K, 2, 0, TIOCSTI],
    [BPF_JEQ_K, 1, 0, TIOCLINUX],
    [BPF_RET_K, 0, 0, RET_ALLOW],
    [BPF_RET_K, 0, 0, RET_EPERM],
  ];
  const buf = Buffer.alloc(insns.length * 8);
  insns.forEach(([code, jt, jf, k], i) => {
    buf.writeUInt16LE(code, i * 8);
    buf.writeUInt8(jt, i * 8 + 2);
    buf.writeUInt8(jf, i * 8 + 3);
    buf.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return buf;
}
