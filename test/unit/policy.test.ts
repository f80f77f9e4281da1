import assert from 'node:assert/strict';
import { test } from 'node:test';
import { refusedAddress } from '../../lib/proxy/addresses.js';
import { decide, normalizeHost } from '../../lib/proxy/policy.js';

const policy = {
  egressHosts: ['github.com', '*.githubusercontent.com', 'bücher.example', '127.0.0.1', 'api.internal.test'],
  denyHosts: ['gist.github.com', '*.evil.githubusercontent.com'],
  mapped: { 'api.internal.test': '127.0.0.1:8443' },
};

const TABLE: Array<[string, number, boolean, string]> = [
  ['github.com', 443, true, 'egress_hosts "github.com"'],
  ['GitHub.COM.', 443, true, 'egress_hosts "github.com"'],
  ['notgithub.com', 443, false, 'not in egress_hosts'],
  ['github.com.evil.test', 443, false, 'not in egress_hosts'],
  ['raw.githubusercontent.com', 443, true, 'egress_hosts "*.githubusercontent.com"'],
  ['githubusercontent.com', 443, false, 'not in egress_hosts'],
  ['x.evil.githubusercontent.com', 443, false, 'deny_hosts "*.evil.githubusercontent.com"'],
  ['gist.github.com', 443, false, 'deny_hosts "gist.github.com"'],
  ['xn--bcher-kva.example', 443, true, 'egress_hosts "bücher.example"'],
  ['bücher.example', 443, true, 'egress_hosts "bücher.example"'],
  ['127.0.0.1', 443, true, 'egress_hosts "127.0.0.1"'],
  ['2130706433', 443, true, 'egress_hosts "127.0.0.1"'],
  ['0x7f000001', 443, true, 'egress_hosts "127.0.0.1"'],
  ['0177.0.0.1', 443, true, 'egress_hosts "127.0.0.1"'],
  ['10.0.0.1', 443, false, 'IP literal not in egress_hosts'],
  ['[::1]', 443, false, 'IP literal not in egress_hosts'],
  ['::ffff:10.0.0.1', 443, false, 'IP literal not in egress_hosts'],
  ['[fe80::1%25eth0]', 443, false, 'invalid host'],
  ['user@github.com', 443, false, 'invalid host'],
  ['github.com', 0, false, 'port 0 out of range'],
  ['github.com', 65536, false, 'port 65536 out of range'],
  ['github.com', 22, false, 'port 22 not allowed (80 and 443 only, or the port network.hosts maps)'],
  ['api.internal.test', 8443, true, 'egress_hosts "api.internal.test"'],
  ['', 443, false, 'invalid host'],
];

test('egress decisions: the host matching table', () => {
  for (const [host, port, allow, rule] of TABLE) {
    const d = decide(host, port, policy);
    assert.deepEqual([d.allow, d.rule], [allow, rule], `${host}:${port}`);
  }
});

test('deny_hosts wins over egress_hosts', () => {
  const d = decide('gist.github.com', 443, { ...policy, egressHosts: ['*.github.com'] });
  assert.deepEqual([d.allow, d.rule], [false, 'deny_hosts "gist.github.com"']);
});

test('normalisation', () => {
  assert.equal(normalizeHost('ExAmple.COM.'), 'example.com');
  assert.equal(normalizeHost('0x7f.1'), '127.0.0.1');
  assert.equal(normalizeHost('[::FFFF:7f00:1]'), '[::ffff:7f00:1]');
  assert.equal(normalizeHost('a b'), null);
});

test('refused addresses: loopback, link-local, private, mapped, own', () => {
  for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:169.254.169.254', '224.0.0.1', '::127.0.0.1', '::ffff:0:127.0.0.1', '::ffff:0:a9fe:a9fe', '64:ff9b:1::a00:1', '100::1']) {
    assert.notEqual(refusedAddress(a), null, a);
  }
  assert.equal(refusedAddress('93.184.216.34'), null);
  assert.equal(refusedAddress('2606:4700::1111'), null);
});
