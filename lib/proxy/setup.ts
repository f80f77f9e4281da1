// The proxy a run uses, from its profile: the egress policy always; when the
// profile binds secrets, TLS interception (lib/proxy/intercepting.ts, loaded
// only then: TLS and HTTPS cost a run without secrets ~3 ms of start-up).
import type { Server } from 'node:net';
import type { Profile } from '../profile/types.js';
import type { Interceptor } from './intercept.js';
import type { BoundSecret } from './secrets.js';
import { deferredServer } from './front.js';
import { DEFAULT_LIMITS, type ProxyLimits } from './limits.js';
import type { AuditSink } from './server.js';
import type { HookHandler } from '../hooks/endpoints.js';
import type { TlsFailure } from './tls-failure.js';

export interface RunProxy {
  server: Server;
  interceptor: Interceptor | null;
  /** When intercepting: the CA certificate the agent must trust, alone and after the system's CAs (PEM). */
  ca: { pem: string; bundle: string } | null;
}

export function boundSecrets(profile: Profile, placeholders: Record<string, string>, env: NodeJS.ProcessEnv): BoundSecret[] {
  return Object.entries(profile.secrets).map(([name, s]) => ({
    name,
    placeholder: placeholders[name] as string,
    real: env[s.source] as string,
    hosts: s.hosts,
    inQuery: s.inQuery,
    allowPlaintext: s.allowPlaintext,
  }));
}

/** The run's limits: the profile's overrides over the defaults. */
export function runLimits(profile: Profile): ProxyLimits {
  return { ...DEFAULT_LIMITS, ...profile.network.limits };
}

export interface RunProxyInput {
  profile: Profile;
  placeholders: Record<string, string>;
  env: NodeJS.ProcessEnv;
  home: string;
  userHome: string;
  cwd: string;
  audit: AuditSink;
  acceptClient?: (address: string) => boolean;
  /** The per-run credential every request must carry (Proxy-Authorization). */
  token: string;
  /** The run's hook endpoints, when its profile allows hooks. */
  hooks?: HookHandler;
  /** Told of upstream TLS failures when the proxy intercepts (lib/proxy/tls-failure.ts). */
  onUpstreamTls?: (f: TlsFailure) => void;
}

export async function proxyForRun(o: RunProxyInput): Promise<RunProxy> {
  const policy = { egressHosts: o.profile.network.egressHosts, denyHosts: o.profile.network.denyHosts, mapped: o.profile.network.hosts };
  const secrets = boundSecrets(o.profile, o.placeholders, o.env);
  const limits = runLimits(o.profile);
  if (secrets.length === 0) {
    const server = deferredServer(async () => (await import('./server.js')).createProxy({ policy, audit: o.audit, acceptClient: o.acceptClient, token: o.token, limits, hooks: o.hooks }), limits);
    return { server, interceptor: null, ca: null };
  }
  const { interceptingProxy } = await import('./intercepting.js');
  return interceptingProxy(o, policy, secrets, limits);
}
