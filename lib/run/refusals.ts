// What the proxy refused during a run, said once at its end where the user
// looks (stderr, unless --silent): an agent that failed because a host was
// not allowed usually says only "connection failed". Each refused host with
// how often, the line of the profile that would allow it, and what the known
// agents use the host for. Host names come from the agent: they are quoted.
import type { AuditEvent } from './audit-read.js';
import { quoted } from './audit-read.js';

/** What the known agents reach these hosts for, and what to do instead of allowing one (a Map: a host named `constructor` found Object's in a plain object: review, round 33). */
const KNOWN = new Map<string, string>(Object.entries({
  'platform.claude.com': "Claude Code: its login, the refresh of a login's token, and an interactive session's first start",
  'claude.ai': "Claude Code: a subscription login",
  'console.anthropic.com': 'Claude Code: an API-key login from the console',
  'statsig.anthropic.com': "Claude Code's feature flags and telemetry (CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 turns them off)",
  'sentry.io': "Claude Code's error reports (CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 turns them off)",
  'chatgpt.com': 'Codex: model discovery with an API key (--disable api_key_model_discovery skips it) or the turns of a ChatGPT login',
  'auth.openai.com': "Codex: its login and the refresh of a login's token",
  'ab.chatgpt.com': "Codex's analytics (-c analytics.enabled=false turns them off)",
}));

export interface Refusal {
  /** Refused for a local MCP server's own proxy (lib/mcp/local-server.ts), not the agent's. */
  server?: string;
  host: string;
  port: number | null;
  rule: string;
  count: number;
}

/** The run's refused destinations, most refused first (exfiltration attempts apart: the audit names those). */
export function refusals(events: AuditEvent[]): Refusal[] {
  const by = new Map<string, Refusal>();
  for (const e of events) {
    const deny = e.decision === 'deny' && e.exfiltration !== true && typeof e.host === 'string';
    if (!deny || (e.type !== 'proxy' && e.type !== 'repeated')) continue;
    const server = typeof e.mcpServer === 'string' ? e.mcpServer : undefined;
    const key = JSON.stringify([server ?? null, e.host, e.port ?? null, e.rule]);
    const r = by.get(key) ?? { ...(server !== undefined ? { server } : {}), host: e.host as string, port: typeof e.port === 'number' ? e.port : null, rule: String(e.rule ?? ''), count: 0 };
    r.count += e.type === 'repeated' ? Number(e.count ?? 0) : 1;
    by.set(key, r);
  }
  return [...by.values()].sort((a, b) => b.count - a.count || a.host.localeCompare(b.host));
}

const SHOWN = 10;

/** The block said at the end of a run; empty when nothing was refused. */
export function refusalBlock(list: Refusal[], profileFile: string | null): string[] {
  if (list.length === 0) return [];
  const where = profileFile === null ? 'a profile of your own (the default allows only the agents\' API hosts; docs/profiles.md)' : profileFile;
  const lines = [`the proxy refused ${list.length === 1 ? 'one destination' : `${list.length} destinations`} during the run (an agent that failed to connect may have failed because of it):`];
  for (const r of list.slice(0, SHOWN)) {
    const name = quoted(r.port === null ? r.host : `${r.host}:${r.port}`);
    // The local MCP server's own proxy allows its hosts alone: the fix is there, not in the agent's egress.
    const fix = r.rule !== 'not in egress_hosts' ? '' : r.server !== undefined ? `; to allow it for that server, add ${quoted(r.host)} to hosts of [mcp.servers.${r.server}] in ${where}` : `; to allow it, add ${quoted(r.host)} to [network] egress_hosts in ${where}`;
    const known = r.server === undefined ? KNOWN.get(r.host.toLowerCase()) : undefined;
    const who = r.server !== undefined ? ` (by the local MCP server ${r.server})` : '';
    lines.push(`  ${name}${who} ×${r.count}: ${r.rule.length > 200 ? `${r.rule.slice(0, 200)}…` : r.rule}${fix}${known ? ` (${known})` : ''}`);
  }
  if (list.length > SHOWN) lines.push(`  and ${list.length - SHOWN} more: stashbase agent audit`);
  return lines;
}
