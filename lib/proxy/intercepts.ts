// Whether a run's proxy intercepts TLS (its CA then goes into the sandbox):
// for bound secrets and for MCP servers' tools (lib/mcp/), as lib/proxy/setup.ts decides.
import type { Profile } from '../profile/types.js';

export function interceptsTls(p: Pick<Profile, 'secrets' | 'mcp'>): boolean {
  return Object.keys(p.secrets).length > 0 || Object.keys(p.mcp.servers).length > 0;
}
