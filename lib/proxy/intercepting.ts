// The proxy of a run whose profile binds secrets: TLS interception with a CA
// of the run's own (lib/tls/ca.ts), the bound secrets and the upstream CAs.
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { ConfigError } from '../errors.js';
import { expandHome } from '../paths/rules.js';
import { createRunCa } from '../tls/ca.js';
import { LeafCache } from '../tls/leaves.js';
import { Interceptor } from './intercept.js';
import type { EgressPolicy } from './policy.js';
import type { BoundSecret } from './secrets.js';
import { createProxy, hostHeaderProblem } from './server.js';
import type { ProxyLimits } from './limits.js';
import type { McpRemote } from '../mcp/servers.js';
import type { LocalServer } from '../mcp/local-server.js';
import type { RunProxy, RunProxyInput } from './run-proxy.js';

export async function interceptingProxy(o: RunProxyInput, policy: EgressPolicy, secrets: BoundSecret[], limits: ProxyLimits, mcp: McpRemote[] = [], bridges: Map<string, LocalServer> = new Map()): Promise<RunProxy> {
  const upstreamCa = [...rootCertificates];
  const extra = o.profile.network.upstreamCaFile;
  if (extra !== undefined) {
    const file = expandHome(extra, o.userHome, o.cwd);
    try {
      upstreamCa.push(readFileSync(file, 'utf8'));
    } catch (e) {
      throw new ConfigError(`network.upstream_ca_file: cannot read ${file}: ${(e as Error).message}`);
    }
  }
  // Made now, its key in memory only, constrained to the names this run may reach.
  const ca = createRunCa([...o.profile.network.egressHosts, ...Object.keys(o.profile.network.hosts)], o.session);
  const interceptor = new Interceptor({ leaves: new LeafCache(ca), secrets, upstreamCa, audit: o.audit, limits, allowUpgrades: o.profile.network.allowUpgrades, onUpstreamTls: o.onUpstreamTls, mcp, bridges }, hostHeaderProblem);
  // The agent trusts the system's CAs and the run's (its certificate only: the key never leaves this process).
  const bundle = [...rootCertificates, ca.certPem].join('\n');
  return { server: createProxy({ policy, audit: o.audit, interceptor, secrets, acceptClient: o.acceptClient, token: o.token, limits, hooks: o.hooks, mcp }), interceptor, ca: { pem: ca.certPem, bundle } };
}
