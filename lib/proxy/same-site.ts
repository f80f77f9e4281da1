// Names the profile allows that are not a secret's own but share its site: a
// service of that site (a raw or CDN alias, an upload host, a second mapped
// name) may serve back what the bound host stores, the credential included.
// Every answer in a run with secrets is scrubbed, so the value comes back as
// its placeholder; the warning says where it could still come back in a form
// scrubbing does not know (docs/proxy.md), so that you bind the secret there
// too or narrow egress_hosts.
//
// The site is the registrable domain, told without the Public Suffix List:
// the last two labels, or three where the second to last is a common
// second-level label under a country code (co.uk, com.au, …). A guess for a
// warning, never a decision.
import { defaultProfile } from '../profile/default.js';
import type { Profile } from '../profile/types.js';

const SECOND_LEVEL = new Set(['co', 'com', 'net', 'org', 'gov', 'ac', 'edu', 'ne', 'or', 'go', 'mil', 'nic', 'gob', 'nom']);

/** The registrable domain of a host name (a leading `*.` ignored); null for an IP address. */
export function siteOf(host: string): string | null {
  const h = host.replace(/^\*\./, '').replace(/\.$/, '').toLowerCase();
  if (/^[\d.]+$/.test(h) || h.includes(':')) return null;
  const labels = h.split('.');
  if (labels.length <= 2) return h;
  const take = labels.length >= 3 && (labels.at(-1) as string).length === 2 && SECOND_LEVEL.has(labels.at(-2) as string) ? 3 : 2;
  return labels.slice(-take).join('.');
}

/**
 * One warning per allowed name that shares a site with a secret's host but is
 * not bound to it; not for two names of the built-in profile's list (the
 * agents' vendors' own hosts), which every run with an API key would repeat.
 */
export function sameSiteWarnings(profile: Profile): string[] {
  const vendors = new Set(defaultProfile().network.egressHosts);
  const allowed = [...new Set([...profile.network.egressHosts, ...Object.keys(profile.network.hosts)])];
  const out: string[] = [];
  for (const [name, s] of Object.entries(profile.secrets)) {
    const bound = new Set(s.hosts.map((h) => h.toLowerCase()));
    const sites = new Map<string | null, string>();
    for (const h of s.hosts) if (!sites.has(siteOf(h))) sites.set(siteOf(h), h);
    for (const a of allowed) {
      if (bound.has(a.toLowerCase()) || (vendors.has(a) && s.hosts.every((h) => vendors.has(h)))) continue;
      const site = siteOf(a);
      const host = site === null ? undefined : sites.get(site);
      if (host === undefined) continue;
      out.push(`egress to ${a} is allowed and shares its site (${site}) with ${host}, which ${name} is bound to: a service there could serve back what ${host} stores; stashbase scrubs it from every answer, but bind ${name} to ${a} as well, or narrow egress_hosts, if it is not one of yours`);
    }
  }
  return out;
}
