// The proxy a run uses, from its profile: the egress policy always; when the
// profile binds secrets, TLS interception with the install's CA, the bound
// secrets (placeholder and real value) and the upstream CAs.
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { rootCertificates } from 'node:tls';
import { ConfigError } from '../errors.js';
import { expandHome } from '../paths/rules.js';
import type { Profile } from '../profile/types.js';
import { loadOrCreateCa } from '../tls/ca.js';
import { LeafCache } from '../tls/leaves.js';
import { Interceptor } from './intercept.js';
import type { BoundSecret } from './secrets.js';
import { type AuditSink, createProxy, hostHeaderProblem } from './server.js';

export interface RunProxy {
  server: Server;
  interceptor: Interceptor | null;
  /** The CA certificate the agent must trust (PEM), when intercepting. */
  caPem: string | null;
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

export interface RunProxyInput {
  profile: Profile;
  placeholders: Record<string, string>;
  env: NodeJS.ProcessEnv;
  home: string;
  userHome: string;
  cwd: string;
  audit: AuditSink;
  acceptClient?: (address: string) => boolean;
}

export async function proxyForRun(o: RunProxyInput): Promise<RunProxy> {
  const policy = { egressHosts: o.profile.network.egressHosts, denyHosts: o.profile.network.denyHosts, mapped: o.profile.network.hosts };
  const secrets = boundSecrets(o.profile, o.placeholders, o.env);
  if (secrets.length === 0) return { server: createProxy({ policy, audit: o.audit, acceptClient: o.acceptClient }), interceptor: null, caPem: null };
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
  const ca = await loadOrCreateCa(o.home);
  const interceptor = new Interceptor({ leaves: new LeafCache(ca), secrets, upstreamCa, audit: o.audit }, hostHeaderProblem);
  return { server: createProxy({ policy, audit: o.audit, interceptor, secrets, acceptClient: o.acceptClient }), interceptor, caPem: ca.certPem };
}
