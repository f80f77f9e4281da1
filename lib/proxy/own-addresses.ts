// This host's own addresses, as the kernel delivers to them: what Node lists
// (interfaces that are up and running) and, on Linux, every local address in
// the kernel's tables, including those on an interface that is up without a
// carrier (a bridge with no container yet), which Node leaves out but which
// still answer locally.
import { BlockList } from 'node:net';
import { networkInterfaces } from 'node:os';
import { readBackText } from '../readback/file.js';

/** The IPv4 addresses /proc/net/fib_trie marks "/32 host LOCAL". */
export function localV4(fibTrie: string): string[] {
  const out = new Set<string>();
  let last: string | null = null;
  for (const line of fibTrie.split('\n')) {
    const node = /^[\s|]*[|+]-- (\d+\.\d+\.\d+\.\d+)(?:\/\d+)?/.exec(line);
    if (node) last = node[1] as string;
    else if (last !== null && /^\s*\/32 host LOCAL\s*$/.test(line)) out.add(last);
  }
  return [...out];
}

/** The IPv6 addresses of /proc/net/if_inet6 (32 hex digits each). */
export function localV6(ifInet6: string): string[] {
  const out: string[] = [];
  for (const line of ifInet6.split('\n')) {
    const hex = /^([0-9a-f]{32})\s/i.exec(line)?.[1];
    if (hex) out.push(hex.match(/.{4}/g)!.join(':'));
  }
  return out;
}

export function ownAddresses(): BlockList {
  const list = new BlockList();
  const add = (a: string, family: 'ipv4' | 'ipv6') => {
    try {
      list.addAddress(a.replace(/%.*$/, ''), family);
    } catch {
      // not an address BlockList takes: nothing to match
    }
  };
  for (const entries of Object.values(networkInterfaces())) for (const e of entries ?? []) add(e.address, e.family === 'IPv6' ? 'ipv6' : 'ipv4');
  if (process.platform === 'linux') {
    for (const a of localV4(readBackText('/proc/net/fib_trie', 1 << 24) ?? '')) add(a, 'ipv4');
    for (const a of localV6(readBackText('/proc/net/if_inet6', 1 << 24) ?? '')) add(a, 'ipv6');
  }
  return list;
}
