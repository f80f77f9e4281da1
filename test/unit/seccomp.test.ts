// The seccomp program, run by a small classic-BPF interpreter over the
// seccomp_data the kernel would pass: what each call gets back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sandboxFilter, type SeccompArch } from '../../templates/seccomp.js';

const AUDIT = { x64: 0xc000003e, arm64: 0xc00000b7 } as const;
const ALLOW = 'allow';

/** Runs the filter on (arch, nr, args) and says what the kernel would do. */
function verdict(prog: Buffer, arch: number, nr: number, args: number[] = []): string {
  const data = Buffer.alloc(64);
  data.writeUInt32LE(nr, 0);
  data.writeUInt32LE(arch >>> 0, 4);
  args.forEach((a, i) => data.writeBigUInt64LE(BigInt(a), 16 + 8 * i));
  let acc = 0;
  for (let pc = 0; pc * 8 < prog.length; pc++) {
    const code = prog.readUInt16LE(pc * 8);
    const jt = prog[pc * 8 + 2]!;
    const jf = prog[pc * 8 + 3]!;
    const k = prog.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) acc = data.readUInt32LE(k);
    else if (code === 0x15) pc += acc === k ? jt : jf;
    else if (code === 0x35) pc += acc >= k ? jt : jf;
    else if (code === 0x45) pc += (acc & k) !== 0 ? jt : jf;
    else if (code === 0x54) acc = (acc & k) >>> 0;
    else if (code === 0x06) return k === 0x7fff0000 ? ALLOW : (k & 0xffff0000) === 0x00050000 ? `errno ${k & 0xffff}` : `ret ${k}`;
    else throw new Error(`unknown instruction ${code}`);
  }
  throw new Error('fell off the end');
}

const EPERM = 'errno 1';
const ENOSYS = 'errno 38';

test('x86_64: what each call gets back', () => {
  const f = sandboxFilter('x64', { unixSockets: false });
  const v = (nr: number, args: number[] = []) => verdict(f, AUDIT.x64, nr, args);
  assert.equal(verdict(f, 0x40000003, 1), EPERM, 'i386 ABI');
  assert.equal(v(0x40000000 | 1), EPERM, 'x32 ABI');
  for (const nr of [248, 249, 250]) assert.equal(v(nr), EPERM, `keyring ${nr}`);
  for (const nr of [425, 426, 427]) assert.equal(v(nr), EPERM, `io_uring ${nr}`);
  assert.deepEqual([v(41, [1, 1]), v(41, [2, 1]), v(41, [10, 2]), v(53, [1, 1])], [EPERM, ALLOW, ALLOW, ALLOW], 'socket: AF_UNIX refused, AF_INET/AF_INET6 and socketpair(AF_UNIX) allowed');
  // (Review, round 35) A datagram pair, with SOCK_NONBLOCK and SOCK_CLOEXEC or without, refused; a sequenced-packet one allowed.
  assert.deepEqual([v(53, [1, 2]), v(53, [1, 2 | 0o4000 | 0o2000000]), v(53, [1, 3]), v(53, [1, 3 | 0o2000000]), v(53, [1, 4]), v(53, [1, 5]), v(53, [1, 1 | 0o2000000])], [EPERM, EPERM, EPERM, EPERM, EPERM, ALLOW, ALLOW], 'socketpair: streams and sequenced packets only (SOCK_RAW is a datagram pair)');
  assert.deepEqual([v(16, [1, 0x5412]), v(16, [1, 0x541c]), v(16, [1, 0x5423]), v(16, [1, 0x5413]), v(16, [1, 0x1_0000_5412])], [EPERM, EPERM, EPERM, ALLOW, EPERM], 'ioctl: TIOCSTI, TIOCLINUX and TIOCSETD refused, TIOCGWINSZ allowed; a request with high bits set compares its low word, as the kernel does');
  assert.deepEqual([v(16, [1, 0x540a]), v(16, [1, 0x540c]), v(16, [1, 0x540d]), v(16, [1, 0x5410])], [EPERM, EPERM, ALLOW, ALLOW], 'ioctl (review, round 36): TCXONC and TIOCEXCL refused; TIOCNXCL and TIOCSPGRP allowed');
  // Setuid and setgid bits: chmod 90, fchmod 91, creat 85, mknod 133 (mode in args[1]); open 2, fchmodat 268, fchmodat2 452, mknodat 259 (args[2]); openat 257 (args[3]).
  const setuid = 0o4755;
  const setgid = 0o2755;
  const plain = 0o755;
  for (const [nr, at] of [[90, 1], [91, 1], [85, 1], [133, 1], [2, 2], [268, 2], [452, 2], [259, 2], [257, 3]] as const) {
    const args = (mode: number) => Array.from({ length: 4 }, (_, i) => (i === at ? mode : 0));
    assert.deepEqual([v(nr, args(setuid)), v(nr, args(setgid)), v(nr, args(plain))], [EPERM, EPERM, ALLOW], `syscall ${nr}`);
  }
  assert.equal(v(437), ENOSYS, 'openat2: its mode is in a struct; callers fall back to openat');
  assert.deepEqual([v(0), v(1), v(59), v(83, [0, 0o2775])], [ALLOW, ALLOW, ALLOW, ALLOW], 'read, write, execve, mkdir of a setgid directory');
});

test('allow_unix_sockets lets AF_UNIX through; arm64 has its own numbers and no x32', () => {
  const open = sandboxFilter('x64', { unixSockets: true });
  assert.equal(verdict(open, AUDIT.x64, 41, [1, 1]), ALLOW);
  assert.equal(verdict(open, AUDIT.x64, 53, [1, 2]), ALLOW, 'a datagram pair too');
  const arm = (nr: number, args: number[] = []) => verdict(sandboxFilter('arm64' as SeccompArch, { unixSockets: false }), AUDIT.arm64, nr, args);
  assert.deepEqual([arm(198, [1, 1]), arm(198, [2, 1]), arm(199, [1, 1]), arm(199, [1, 2])], [EPERM, ALLOW, ALLOW, EPERM], 'socket, socketpair');
  assert.deepEqual([arm(217), arm(425), arm(437)], [EPERM, EPERM, ENOSYS]);
  assert.deepEqual([arm(52, [0, 0o4755]), arm(53, [0, 0, 0o4755]), arm(56, [0, 0, 0, 0o4755]), arm(56, [0, 0, 0, 0o644])], [EPERM, EPERM, EPERM, ALLOW]);
  assert.equal(arm(0x40000000 | 63), ALLOW, 'no x32 on arm64: a high number is an ordinary (unknown) call');
  assert.equal(verdict(sandboxFilter('arm64', { unixSockets: false }), AUDIT.x64, 29), EPERM, 'another ABI');
});

test('socket(2) by allow-list, family by family: only IPv4, IPv6 and netlink route queries; every other family refused, the ones nobody listed too', () => {
  for (const [arch, nr] of [['x64', 41], ['arm64', 198]] as const) {
    for (const unix of [false, true]) {
      const f = sandboxFilter(arch, { unixSockets: unix });
      const v = (family: number, protocol = 0) => verdict(f, AUDIT[arch], nr, [family, 1, protocol]);
      // Every family number Linux has (0 to 45), and some past it.
      for (let family = 0; family <= 64; family++) {
        const want = family === 2 || family === 10 || family === 16 || (unix && family === 1) ? ALLOW : EPERM;
        assert.equal(v(family), want, `${arch}, unix sockets ${unix}: family ${family}`);
      }
      assert.deepEqual([v(16, 0), v(16, 15), v(16, 9), v(16, 4), v(16, 16)], [ALLOW, EPERM, EPERM, EPERM, EPERM], 'netlink: route only (not uevents, audit, sock_diag, generic)');
      assert.equal(v(40), EPERM, 'AF_VSOCK');
      assert.equal(v(2 + 0x1_0000_0000), ALLOW, 'the family is an int: its low word, as the kernel reads it');
    }
  }
});
