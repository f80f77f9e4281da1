// Addresses for tests that make network interfaces of their own: a subnet is
// used only when no route of this host overlaps it (the machine's own network
// may sit in a documentation or private range: this one's eth0 is on
// 192.0.2.0/24, and taking its gateway's address would cut it off).
import { spawnSync } from 'node:child_process';
import { BlockList } from 'node:net';

type Family = 'ipv4' | 'ipv6';

function routes(family: Family): Array<[string, number]> {
  const r = spawnSync('ip', [family === 'ipv4' ? '-4' : '-6', 'route', 'show', 'table', 'all'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip route: ${r.stderr}`);
  const out: Array<[string, number]> = [];
  for (const line of r.stdout.split('\n')) {
    const words = line.trim().split(/\s+/);
    const dest = ['local', 'broadcast', 'unicast', 'anycast', 'multicast', 'unreachable', 'blackhole', 'prohibit', 'throw'].includes(words[0] ?? '') ? words[1] : words[0];
    if (!dest || dest === 'default') continue;
    const [net, bits] = dest.split('/');
    out.push([net as string, bits ? Number(bits) : family === 'ipv4' ? 32 : 128]);
  }
  return out;
}

/** The first candidate subnet ("a.b.c.d/n") that overlaps no route of this host. */
export function unusedSubnet(family: Family, candidates: string[]): string {
  const existing = routes(family);
  for (const c of candidates) {
    const [net, bits] = c.split('/') as [string, string];
    const mine = new BlockList();
    mine.addSubnet(net, Number(bits), family);
    const clash = existing.some(([rn, rb]) => {
      const theirs = new BlockList();
      theirs.addSubnet(rn, rb, family);
      return mine.check(rn, family) || theirs.check(net, family);
    });
    if (!clash) return c;
  }
  throw new Error(`no free subnet among ${candidates.join(', ')}`);
}
