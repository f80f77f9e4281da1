// lib/util/ip.ts must answer exactly as node:net's isIP, which it stands in for.
import assert from 'node:assert/strict';
import { isIP as netIsIP } from 'node:net';
import { test } from 'node:test';
import { isIP } from '../../lib/util/ip.js';

const corpus = [
  '', '1.2.3.4', '0.0.0.0', '255.255.255.255', '256.1.1.1', '01.2.3.4', '1.2.3', '1.2.3.4.5', '1.2.3.4 ', ' 1.2.3.4', '1.2.3.4\n',
  '0x7f.0.0.1', '2130706433', '017700000001', '127.1', '::', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', 'fe80::1%eth0', 'fe80::1%',
  '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8:9', '1::2::3', '[::1]', '2001:db8::', 'gggg::1', '12345::1', '1:2:3:4:5:6:1.2.3.4', 'localhost', 'a.b',
  '::ffff:1.2.3.256', 'FE80::ABCD', '64:ff9b::1.2.3.4', '1.2.3.4%eth0', '::1%lo', ':::', '1:', ':1',
];

test('isIP: the same answers as node:net on a corpus of addresses and near-misses', () => {
  for (const s of corpus) assert.equal(isIP(s), netIsIP(s), JSON.stringify(s));
});

test('isIP: the same answers as node:net on 50,000 random strings of address characters', () => {
  const chars = '0123456789abcdefABCDEFx.:%[]- ';
  let seed = 12345;
  const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
  for (let i = 0; i < 50_000; i++) {
    const len = 1 + rnd(20);
    let s = '';
    for (let j = 0; j < len; j++) s += chars[rnd(chars.length)];
    // Splice in real fragments often enough to reach the accepting paths.
    if (i % 3 === 0) s = ['::', '1.2.3.4', 'fe80::', '::ffff:'][rnd(4)] + s;
    assert.equal(isIP(s), netIsIP(s), JSON.stringify(s));
  }
});
