// Reading this host's local addresses from the kernel's tables.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { localV4, localV6, ownAddresses } from '../../lib/proxy/own-addresses.js';

const FIB_TRIE = `Main:
  +-- 0.0.0.0/0 3 0 5
     |-- 0.0.0.0
        /0 universe UNICAST
     +-- 172.16.0.0/12 2 0 2
        |-- 172.17.0.0
           /16 link UNICAST
Local:
  +-- 0.0.0.0/0 3 0 5
     +-- 127.0.0.0/8 2 0 2
        +-- 127.0.0.0/31 1 0 0
           |-- 127.0.0.0
              /8 host LOCAL
           |-- 127.0.0.1
              /32 host LOCAL
        |-- 127.255.255.255
           /32 link BROADCAST
     +-- 172.16.0.0/12 2 0 2
        |-- 172.17.0.1
           /32 host LOCAL
        |-- 172.17.255.255
           /32 link BROADCAST
     |-- 203.0.113.9
        /32 host LOCAL
`;

test('IPv4: the "/32 host LOCAL" entries, not networks, broadcasts or routes', () => {
  assert.deepEqual(localV4(FIB_TRIE).sort(), ['127.0.0.1', '172.17.0.1', '203.0.113.9']);
});

test('IPv6: every address of /proc/net/if_inet6', () => {
  const text = 'fe8000000000000000fc00fffe000001 04 40 20 80     eth0\n00000000000000000000000000000001 01 80 10 80       lo\n20010db8000000000000000000000042 04 40 00 82     eth0\n';
  assert.deepEqual(localV6(text), ['fe80:0000:0000:0000:00fc:00ff:fe00:0001', '0000:0000:0000:0000:0000:0000:0000:0001', '2001:0db8:0000:0000:0000:0000:0000:0042']);
});

test("ownAddresses answers for this host's loopback in either spelling", () => {
  const own = ownAddresses();
  assert.equal(own.check('127.0.0.1', 'ipv4'), true);
  assert.equal(own.check('::1', 'ipv6'), true);
  assert.equal(own.check('0:0:0:0:0:0:0:1', 'ipv6'), true);
  assert.equal(own.check('203.0.113.250', 'ipv4'), false);
});
