import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sandboxFilter } from '../../templates/seccomp.js';

function decode(buf: Buffer): number[][] {
  const insns = [];
  for (let i = 0; i < buf.length; i += 8) insns.push([buf.readUInt16LE(i), buf[i + 2]!, buf[i + 3]!, buf.readUInt32LE(i + 4)]);
  return insns;
}

test('the seccomp program, instruction by instruction (x86_64)', () => {
  assert.deepEqual(decode(sandboxFilter('x64', { unixSockets: false })), [
    [0x20, 0, 0, 4], // load arch
    [0x15, 1, 0, 0xc000003e], // x86_64?
    [0x06, 0, 0, 0x00050001], // else EPERM
    [0x20, 0, 0, 0], // load nr
    [0x35, 14, 0, 0x40000000], // x32 -> deny
    [0x15, 13, 0, 248], // add_key -> deny
    [0x15, 12, 0, 249], // request_key -> deny
    [0x15, 11, 0, 250], // keyctl -> deny
    [0x15, 10, 0, 425], // io_uring_setup -> deny
    [0x15, 9, 0, 426], // io_uring_enter -> deny
    [0x15, 8, 0, 427], // io_uring_register -> deny
    [0x15, 4, 0, 41], // socket -> its check
    [0x15, 0, 5, 16], // ioctl? else allow
    [0x20, 0, 0, 24], // load low word of the request
    [0x15, 4, 0, 0x5412], // TIOCSTI -> deny
    [0x15, 3, 2, 0x541c], // TIOCLINUX -> deny, else allow
    [0x20, 0, 0, 16], // load low word of socket's family
    [0x15, 1, 0, 1], // AF_UNIX -> deny, else allow
    [0x06, 0, 0, 0x7fff0000], // allow
    [0x06, 0, 0, 0x00050001], // deny: EPERM
  ]);
});

test('allow_unix_sockets leaves socket(2) alone; arm64 uses its own numbers and no x32 check', () => {
  const open = decode(sandboxFilter('x64', { unixSockets: true }));
  assert.equal(open.some(([code, , , k]) => code === 0x15 && k === 41), false);
  assert.equal(open.length, 17);
  const arm = decode(sandboxFilter('arm64', { unixSockets: false }));
  assert.deepEqual(arm[1], [0x15, 1, 0, 0xc00000b7]);
  assert.deepEqual(arm.slice(4, 12), [[0x15, 13, 0, 217], [0x15, 12, 0, 218], [0x15, 11, 0, 219], [0x15, 10, 0, 425], [0x15, 9, 0, 426], [0x15, 8, 0, 427], [0x15, 4, 0, 198], [0x15, 0, 5, 29]]);
  assert.equal(arm.length, 19);
});
