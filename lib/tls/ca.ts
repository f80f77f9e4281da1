// The CA a run's proxy intercepts TLS with: made when the run starts, its key
// only in the stashbase process's memory (never on disk, never in any
// sandbox), EC P-256, basic constraints CA with path length 0, valid for a
// week (a run's length and a margin; its leaves no longer), and
// name-constrained (RFC 5280 4.2.1.10, critical) to the names the run may
// reach: its egress_hosts (`*.example.com` as `example.com`) and the names
// [network.hosts] maps, and no IP address unless one is allowed by name. Only
// its certificate enters the run's trust bundle.
//
// What a stolen run key can do: mint certificates for those names only,
// trusted only by that run's sandbox (nothing else has the certificate), for
// a week at most. An egress entry a DNS constraint cannot express leaves the
// run's CA unconstrained, said by `constrained` (the rest still holds).
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { buildCertificate, toPem } from './x509.js';

export const ORG = 'stashbase';

export interface LocalCa {
  /** The CA's subject, which its leaves name as their issuer. */
  name: { cn: string; org: string };
  key: KeyObject;
  publicKey: KeyObject;
  certPem: string;
  /** The names it is constrained to; null when it is not. */
  constrained: { dns: string[]; ips: string[] } | null;
  notAfter: Date;
}

/** How long a run's CA and its leaves are valid. */
export const RUN_CA_VALID_MS = 7 * 86_400_000;

/** What a name constraint can say of an egress entry: a DNS subtree, an address, or nothing (null). */
export function constraintOf(entry: string): { dns: string } | { ip: string } | null {
  const e = entry.trim().toLowerCase().replace(/\.$/, '');
  if (isIP(e.replace(/^\[|\]$/g, ''))) return { ip: e.replace(/^\[|\]$/g, '') };
  // The spelling a client's CONNECT and the leaf carry (an IDN as its A-labels); every name the profile's check takes is one.
  const name = e.startsWith('*.') ? e.slice(2) : e;
  const ascii = name.includes('*') ? '' : domainToASCII(name);
  return /^(?=.{1,253}$)[a-z0-9_-]{1,63}(\.[a-z0-9_-]{1,63})*$/.test(ascii) ? { dns: ascii } : null;
}

/** The run's CA for the names it may reach (egress_hosts and mapped names). */
export function createRunCa(names: string[], label: string, now = new Date()): LocalCa {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const dns = new Set<string>();
  const ips = new Set<string>();
  let expressible = true;
  for (const n of names) {
    const c = constraintOf(n);
    if (c === null) expressible = false;
    else if ('dns' in c) dns.add(c.dns);
    else ips.add(c.ip);
  }
  const constrained = expressible && dns.size + ips.size > 0 ? { dns: [...dns].sort(), ips: [...ips].sort() } : null;
  const cn = `stashbase run ${label}`;
  const notAfter = new Date(+now + RUN_CA_VALID_MS);
  const der = buildCertificate({
    subjectCN: cn, issuerCN: cn, org: ORG, publicKey, signingKey: privateKey, issuerPublicKey: publicKey,
    notBefore: new Date(+now - 3600_000), notAfter, ca: true, permitted: constrained ?? undefined,
  });
  return { name: { cn, org: ORG }, key: privateKey, publicKey, certPem: toPem(der), constrained, notAfter };
}
