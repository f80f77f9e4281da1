import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ttyInjectionFilter } from '../../templates/seccomp.js';

function decode(buf: Buffer): number[][] {
  const insns = [];
  for (let i = 0; i < buf.length; i += 8) insns.push([buf.readUInt16LE(i), buf[i + 2]!, buf[i + 3]!, buf.readUInt32LE(i + 4)]);
  return insns;
}

test('the seccomp program, instruction by instruction (x86_64)', () => {
  assert.deepEqual(decode(ttyInjectionFilter('x64')), [
    [0x20, 0, 0, 4], // load arch
    [0x15, 1, 0, 0xc000003e], // x86_64?
    [0x06, 0, 0, 0x00050001], // else EPERM
    [0x20, 0, 0, 0], // load nr
    [0x35, 8, 0, 0x40000000], // x32 -> deny
    [0x15, 7, 0, 248], // add_key -> deny
    [0x15, 6, 0, 249], // request_key -> deny
    [0x15, 5, 0, 250], // keyctl -> deny
    [0x15, 0, 3, 16], // ioctl? else allow
    [0x20, 0, 0, 24], // load low word of the request
    [0x15, 2, 0, 0x5412], // TIOCSTI -> deny
    [0x15, 1, 0, 0x541c], // TIOCLINUX -> deny
    [0x06, 0, 0, 0x7fff0000], // allow
    [0x06, 0, 0, 0x00050001], // deny: EPERM
  ]);
});

test('arm64 uses its own arch and syscall numbers, and has no x32 check', () => {
  const insns = decode(ttyInjectionFilter('arm64'));
  assert.deepEqual(insns[1], [0x15, 1, 0, 0xc00000b7]);
  assert.deepEqual(insns.slice(4, 8), [[0x15, 7, 0, 217], [0x15, 6, 0, 218], [0x15, 5, 0, 219], [0x15, 0, 3, 29]]);
  assert.equal(insns.length, 13);
});
