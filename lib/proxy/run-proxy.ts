// What a run's proxy is and what it is made from: the types setup.ts and
// intercepting.ts share (kept apart so neither imports the other).
import type { Server } from 'node:net';
import type { Profile } from '../profile/types.js';
import type { LocalServerInput } from '../mcp/local-server.js';
import type { HookHandler } from '../hooks/endpoints.js';
import type { Interceptor } from './intercept.js';
import type { AuditSink } from './server.js';
import type { TlsFailure } from './tls-failure.js';

export interface RunProxy {
  server: Server;
  interceptor: Interceptor | null;
  /** When intercepting: the CA certificate the agent must trust, alone and after the system's CAs (PEM). */
  ca: { pem: string; bundle: string } | null;
}

export interface RunProxyInput {
  /** The run's session id (names the run's CA). */
  session: string;
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
  /** What the agent's sandbox protects in its tree, for a local MCP server that writes there (lib/mcp/local-server.ts). */
  tree?: LocalServerInput['tree'];
  /** Told of upstream TLS failures when the proxy intercepts (lib/proxy/tls-failure.ts). */
  onUpstreamTls?: (f: TlsFailure) => void;
}
