// What `agent validate` can tell of a profile's network before a run: a
// secret bound to a host the profile does not let the agent reach is never
// used, and a known agent whose key the profile binds needs its API host
// (and, for some uses, more: said, not required).
import type { Check } from './readiness.js';
import { decide, type EgressPolicy, matchesHost } from '../proxy/policy.js';
import type { Profile } from '../profile/types.js';

interface KnownAgent {
  name: string;
  /** A secret of one of these names means the profile is for this agent. */
  keys: string[];
  needs: string[];
  /** Hosts some uses need, with what for. */
  sometimes: Record<string, string>;
}

const AGENTS: KnownAgent[] = [
  {
    name: 'Claude Code', keys: ['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN'], needs: ['api.anthropic.com'],
    sometimes: { 'platform.claude.com': 'an interactive session\'s first start, a login and its token\'s refresh' },
  },
  {
    name: 'Codex', keys: ['CODEX_API_KEY', 'OPENAI_API_KEY'], needs: ['api.openai.com'],
    sometimes: { 'chatgpt.com': 'model discovery unless --disable api_key_model_discovery, and a ChatGPT login\'s turns', 'auth.openai.com': 'a login and its token\'s refresh' },
  },
];

export function networkChecks(p: Profile): Check[] {
  const policy: EgressPolicy = { egressHosts: p.network.egressHosts, denyHosts: p.network.denyHosts, mapped: p.network.hosts };
  const reachable = (host: string) => decide(host, 443, policy).allow;
  const checks: Check[] = [];
  for (const [name, s] of Object.entries(p.secrets)) {
    const unreachable = s.hosts.filter((h) => !h.startsWith('*.') && !reachable(h));
    if (unreachable.length > 0) checks.push({ name: `secrets.${name}`, ok: false, detail: `bound to ${unreachable.join(', ')}, which egress_hosts does not let the agent reach (or deny_hosts refuses): the secret would never be used there` });
  }
  for (const a of AGENTS) {
    const bound = a.keys.filter((k) => Object.hasOwn(p.secrets, k));
    if (bound.length === 0) continue;
    // Its key must go to its API host, or the agent's requests carry only the placeholder.
    const elsewhere = bound.filter((k) => !a.needs.some((h) => (p.secrets[k] as Profile['secrets'][string]).hosts.some((b) => matchesHost(b, h))));
    if (elsewhere.length > 0) checks.push({ name: a.name, ok: false, detail: `${elsewhere.join(', ')} ${elsewhere.length === 1 ? 'is' : 'are'} not bound to ${a.needs.join(', ')}: the agent's API requests would carry only the placeholder` });
    const missing = a.needs.filter((h) => !reachable(h));
    const optional = Object.entries(a.sometimes).filter(([h]) => !reachable(h));
    checks.push(missing.length > 0
      ? { name: a.name, ok: false, detail: `its API host ${missing.join(', ')} is not in egress_hosts` }
      : { name: a.name, ok: true, detail: `its API host is reachable${optional.length ? `; not reachable, which only some uses need: ${optional.map(([h, why]) => `${h} (${why})`).join('; ')}` : ''}` });
  }
  return checks;
}
