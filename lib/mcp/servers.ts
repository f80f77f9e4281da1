// The profile's remote MCP servers as the proxy matches them: each by the
// host of its URL, on any port (a mapped name is reachable on 443 and on the
// port it maps). A server's host is given to MCP alone, at the URL's path and
// query alone: a request there is read as MCP (lib/mcp/request-filter.ts) or
// refused, and one to any other target on that host is refused (found in
// review: a GET or DELETE elsewhere went unread with the host's secret, and a
// POST whose body looked enough like JSON-RPC reached another route).
import type { Profile } from '../profile/types.js';
import { normalizeHost } from '../proxy/policy.js';
import type { ToolPolicy } from './tool-policy.js';

export interface McpRemote {
  name: string;
  url: string;
  /** The request target the server is reached at: the URL's path and query, as a client sends them. */
  target: string;
  host: string;
  port: number;
  policy: ToolPolicy;
  /** A local server stashbase runs and serves itself (lib/mcp/local-server.ts): its host is answered by the proxy, never dialled. */
  local: boolean;
}

export function remoteServers(profile: Pick<Profile, 'mcp'>): McpRemote[] {
  return Object.entries(profile.mcp.servers).map(([name, s]) => {
    const u = new URL(s.url);
    return { name, url: s.url, target: u.pathname + u.search, host: normalizeHost(u.hostname) ?? u.hostname, port: u.port ? Number(u.port) : 443, policy: { server: name, allow: s.allowTools, deny: s.denyTools }, local: s.local !== null };
  });
}

/** The server a request's target host is, if any (the host as the policy normalized it), whatever the port. */
export function serverAt(servers: readonly McpRemote[], host: string): McpRemote | undefined {
  const h = normalizeHost(host);
  return h === null ? undefined : servers.find((s) => s.host === h);
}
