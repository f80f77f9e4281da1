// Which resolved addresses the proxy refuses to dial unless [network.hosts]
// maps the name there on purpose: loopback, link-local (cloud metadata),
// private and unique-local ranges, unspecified, multicast, and this host's own.
import { BlockList, isIP } from 'node:net';
import { ownAddresses } from './own-addresses.js';

const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 3],
] as const) blocked.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  // ::/96 and ::ffff:0:0/96: IPv4-compatible and IPv4-translated spellings of IPv4 addresses (found in review:
  // ::127.0.0.1 passed; no route here, but a translator on the way would take it to this host).
  ['::', 96], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2002::', 16],
] as const) blocked.addSubnet(net, bits, 'ipv6');

/** Why an address may not be dialled, or null when it may. */
export function refusedAddress(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  // IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as the IPv4 address it carries.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return refusedAddress(mapped[1] as string);
  // IPv4-translated (::ffff:0:a.b.c.d, in any spelling): no use but to reach an IPv4 address.
  if (family === 6 && /^0:0:0:0:ffff:0:/.test(expanded(address))) return `${address} is an IPv4-translated address`;
  if (blocked.check(address, family === 4 ? 'ipv4' : 'ipv6')) return `${address} is a loopback, link-local, private or reserved address`;
  if (ownAddresses().check(address, family === 4 ? 'ipv4' : 'ipv6')) return `${address} is an address of this host`;
  return null;
}

/** An IPv6 address as eight groups without leading zeros (an IPv4 tail as two groups). */
function expanded(address: string): string {
  let a = address.toLowerCase().replace(/%.*$/, '');
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  if (v4) {
    const [x, y, z, w] = v4.slice(1).map(Number) as [number, number, number, number];
    a = `${a.slice(0, v4.index)}${((x << 8) | y).toString(16)}:${((z << 8) | w).toString(16)}`;
  }
  const [head = '', tail] = a.split('::');
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.map((g) => parseInt(g, 16).toString(16)).join(':');
}
