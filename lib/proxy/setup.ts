// The proxy a run uses, from its profile: the egress policy always; when the
// profile binds secrets, TLS interception (lib/proxy/intercepting.ts, loaded
// only then: TLS and HTTPS cost a run without secrets ~3 ms of start-up).
import type { Profile } from '../profile/types.js';
import type { BoundSecret } from './secrets.js';
import { secretValue } from '../secrets/sources.js';
import { deferredServer } from './front.js';
import { remoteServers } from '../mcp/servers.js';
import { LocalServer, localServerCommand } from '../mcp/local-server.js';
import { DEFAULT_LIMITS, type ProxyLimits } from './limits.js';
import type { RunProxy, RunProxyInput } from './run-proxy.js';

export type { RunProxy, RunProxyInput } from './run-proxy.js';

export function boundSecrets(profile: Profile, placeholders: Record<string, string>, env: NodeJS.ProcessEnv): BoundSecret[] {
  return Object.entries(profile.secrets).map(([name, s]) => ({
    name,
    placeholder: placeholders[name] as string,
    real: secretValue(s, env),
    hosts: s.hosts,
    inQuery: s.inQuery,
    allowPlaintext: s.allowPlaintext,
  }));
}

/** The run's limits: the profile's overrides over the defaults. */
export function runLimits(profile: Profile): ProxyLimits {
  return { ...DEFAULT_LIMITS, ...profile.network.limits };
}

export async function proxyForRun(o: RunProxyInput): Promise<RunProxy> {
  const policy = { egressHosts: o.profile.network.egressHosts, denyHosts: o.profile.network.denyHosts, mapped: o.profile.network.hosts };
  const secrets = boundSecrets(o.profile, o.placeholders, o.env);
  const limits = runLimits(o.profile);
  // An MCP server's traffic is read to enforce its tools (lib/mcp/): intercepted as a bound secret's is.
  const mcp = remoteServers(o.profile);
  if (secrets.length === 0 && mcp.length === 0) {
    const server = deferredServer(async () => (await import('./server.js')).createProxy({ policy, audit: o.audit, acceptClient: o.acceptClient, token: o.token, limits, hooks: o.hooks }), limits);
    return { server, interceptor: null, ca: null };
  }
  const { interceptingProxy } = await import('./intercepting.js');
  // Local servers are started now (their secrets read, after trust) and stopped with the interceptor.
  const bridges = new Map<string, LocalServer>();
  for (const [name, cfg] of Object.entries(o.profile.mcp.servers)) {
    if (cfg.local === null) continue;
    const server = mcp.find((m) => m.name === name)!;
    const bridge = new LocalServer(name, localServerCommand(cfg.local, { env: o.env, home: o.userHome, cwd: o.cwd }), server.policy);
    bridge.start();
    bridges.set(name, bridge);
  }
  return interceptingProxy(o, policy, secrets, limits, mcp, bridges);
}
