// The egress decision, pure: a host and port in, allow or deny with the rule
// that decided out. Names are normalised (case, trailing dot, IDN) and IP
// literals in any spelling are canonicalised by the WHATWG host parser, so
// "0x7f.1" and "2130706433" are both 127.0.0.1 and are refused unless listed.
import { isIP } from 'node:net';

export interface EgressPolicy {
  egressHosts: string[];
  denyHosts: string[];
  /** Names mapped to a fixed address (and optional port) by [network.hosts]. */
  mapped: Record<string, string>;
}

export type Decision =
  | { allow: true; host: string; port: number; rule: string }
  | { allow: false; host: string; port: number; rule: string };

/** Hosts normalized lately (each request checks its Host header): short names only, a bounded number. */
const normalized = new Map<string, string | null>();

/** Canonical form of a host, or null when it is not a valid host at all. */
export function normalizeHost(raw: string): string | null {
  if (raw.length > 255) return normalizeUncached(raw);
  let n = normalized.get(raw);
  if (n === undefined) {
    n = normalizeUncached(raw);
    if (normalized.size >= 4096) normalized.clear();
    normalized.set(raw, n);
  }
  return n;
}

function normalizeUncached(raw: string): string | null {
  if (raw === '' || /[%@\s/\\?#]/.test(raw)) return null; // zone ids, userinfo, paths
  const bracketed = raw.startsWith('[') && raw.endsWith(']');
  if (!bracketed && raw.includes(':')) return isIP(raw) === 6 ? normalizeHost(`[${raw}]`) : null;
  try {
    const host = new URL(`http://${raw}/`).hostname.replace(/\.$/, '');
    return host === '' ? null : host;
  } catch {
    return null;
  }
}

export function isIpLiteral(host: string): boolean {
  return isIP(host.replace(/^\[|\]$/g, '')) !== 0;
}

export function matchesHost(pattern: string, host: string): boolean {
  if (pattern.startsWith('*.')) {
    const suffix = normalizeHost(pattern.slice(2));
    return suffix !== null && host.endsWith('.' + suffix);
  }
  return normalizeHost(pattern) === host;
}

const DEFAULT_PORTS = new Set([80, 443]);

export function decide(rawHost: string, port: number, policy: EgressPolicy): Decision {
  const host = normalizeHost(rawHost);
  if (host === null) return { allow: false, host: rawHost, port, rule: 'invalid host' };
  if (!Number.isInteger(port) || port < 1 || port > 65535) return { allow: false, host, port, rule: `port ${port} out of range` };
  const denied = policy.denyHosts.find((p) => matchesHost(p, host));
  if (denied) return { allow: false, host, port, rule: `deny_hosts ${JSON.stringify(denied)}` };
  const allowed = policy.egressHosts.find((p) => matchesHost(p, host));
  if (!allowed) return { allow: false, host, port, rule: isIpLiteral(host) ? 'IP literal not in egress_hosts' : 'not in egress_hosts' };
  const mappedPort = mappedPortOf(policy.mapped, host);
  if (!DEFAULT_PORTS.has(port) && mappedPort !== port) {
    return { allow: false, host, port, rule: `port ${port} not allowed (80 and 443 only, or the port network.hosts maps)` };
  }
  return { allow: true, host, port, rule: `egress_hosts ${JSON.stringify(allowed)}` };
}

export function mappingFor(mapped: Record<string, string>, host: string): { address: string; port: number | null } | null {
  for (const [name, addr] of Object.entries(mapped)) {
    if (normalizeHost(name) !== host) continue;
    const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(addr);
    if (v6) return { address: v6[1] as string, port: v6[2] ? Number(v6[2]) : null };
    if (isIP(addr) === 6) return { address: addr, port: null };
    const [a, p] = addr.split(':');
    return { address: a as string, port: p ? Number(p) : null };
  }
  return null;
}

function mappedPortOf(mapped: Record<string, string>, host: string): number | null {
  return mappingFor(mapped, host)?.port ?? null;
}
