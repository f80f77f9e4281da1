import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ttyInjectionFilter } from '../../templates/seccomp.js';

test('the TIOCSTI filter program, instruction by instruction (x86_64)', () => {
  const buf = ttyInjectionFilter('x64');
  const insns = [];
  for (let i = 0; i < buf.length; i += 8) insns.push([buf.readUInt16LE(i), buf[i + 2], buf[i + 3], buf.readUInt32LE(i + 4)]);
  assert.deepEqual(insns, [
    [0x20, 0, 0, 4],
    [0x15, 1, 0, 0xc000003e],
    [0x06, 0, 0, 0x00050001],
    [0x20, 0, 0, 0],
    [0x35, 5, 0, 0x40000000],
    [0x15, 0, 3, 16],
    [0x20, 0, 0, 24],
    [0x15, 2, 0, 0x5412],
    [0x15, 1, 0, 0x541c],
    [0x06, 0, 0, 0x7fff0000],
    [0x06, 0, 0, 0x00050001],
  ]);
});

test('arm64 uses its own arch and ioctl number', () => {
  const buf = ttyInjectionFilter('arm64');
  assert.equal(buf.readUInt32LE(8 + 4), 0xc00000b7);
  assert.equal(buf.readUInt32LE(5 * 8 + 4), 29);
});
