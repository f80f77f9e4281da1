// What stashbase changes in a known agent's command line, and says so. Codex
// brings a sandbox of its own (bubblewrap and seccomp on Linux, Seatbelt on
// macOS) that cannot start inside stashbase's: no user namespace in ours,
// no capabilities in a container, and Seatbelt does not nest. Every command
// Codex ran would then fail. So, on every backend and platform alike, a codex
// command gets its own sandbox turned off (stashbase is the sandbox) unless
// the command line already decides it; an explicit choice is kept and named.
import { basename } from 'node:path';

export const CODEX_SANDBOX_OFF = ['-c', 'sandbox_mode="danger-full-access"'];

export interface AgentArgv {
  command: string[];
  /** What was changed (a notice) or kept against the run's good (a warning). */
  note: { level: 'note' | 'warn'; text: string } | null;
}

/** A `sandbox_mode=…` override's value (TOML: a quoted string, or a bare word), or null when it is not one. */
function sandboxMode(override: string): string | null {
  const m = /^sandbox_mode\s*=\s*(?:"([^"]*)"|'([^']*)'|([A-Za-z-]+))\s*(?:#.*)?$/.exec(override);
  return m ? (m[1] ?? m[2] ?? m[3] ?? '') : /^sandbox_mode\s*=/.test(override) ? '?' : null;
}

/** Whether the command line decides Codex's sandbox itself, and how. */
function codexChoice(args: string[]): 'off' | 'on' | null {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') break;
    if (a === '--dangerously-bypass-approvals-and-sandbox' || a === '--yolo') return 'off';
    if (a === '--full-auto') return 'on';
    // -s X, --sandbox X, --sandbox=X, -s=X, -sX
    const sb = a === '-s' || a === '--sandbox' ? args[i + 1] : /^(?:--sandbox=|-s=?)(.+)$/.exec(a)?.[1];
    if (sb !== undefined && (a === '-s' || a === '--sandbox' || a.startsWith('--sandbox=') || a.startsWith('-s'))) return sb === 'danger-full-access' ? 'off' : 'on';
    // -c K=V, --config K=V, --config=K=V, -cK=V
    const cfg = a === '-c' || a === '--config' ? args[i + 1] : /^(?:--config=|-c)(.+)$/.exec(a)?.[1];
    const mode = cfg === undefined ? null : sandboxMode(cfg);
    if (mode !== null) return mode === 'danger-full-access' ? 'off' : 'on';
  }
  return null;
}

/** A TOML basic string: quote, backslash and every control character (DEL among them) escaped. */
export function tomlString(s: string): string {
  return `"${s.replace(/["\\\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
}

/** The `-c`/`--config` overrides on a codex command line, before any `--`. */
function codexOverrides(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') break;
    const cfg = a === '-c' || a === '--config' ? args[i + 1] : /^(?:--config=|-c)(.+)$/.exec(a)?.[1];
    if (cfg !== undefined) out.push(cfg);
  }
  return out;
}

/**
 * The profile's MCP servers (lib/mcp/) for a known agent's own MCP client:
 * Claude Code gets `--mcp-config` with each server's URL, Codex a
 * `-c mcp_servers.NAME.url="…"` for each server its line does not configure
 * itself (they then list the tools the proxy lets through, and call them
 * through it); other commands are left alone (docs/agents.md says what to
 * give them).
 */
function withMcp(command: string[], servers: Record<string, string>): { command: string[]; note: string | null } {
  const [file, ...args] = command;
  const names = Object.keys(servers);
  if (file === undefined || names.length === 0) return { command, note: null };
  if (basename(file) === 'claude' && !args.includes('--mcp-config')) {
    const config = JSON.stringify({ mcpServers: Object.fromEntries(names.map((n) => [n, { type: 'http', url: servers[n] }])) });
    return { command: [file, '--mcp-config', config, ...args], note: `Claude Code is given the profile's MCP servers (--mcp-config: ${names.join(', ')}), their tools as the profile allows them` };
  }
  if (basename(file) === 'codex') {
    // The key as TOML reads it: spaces around the dots and quoted parts ("w", 'w') are the same key.
    const own = codexOverrides(args).map((c) => c.replace(/\s+/g, '').replace(/"([^"]*)"|'([^']*)'/g, (_m, a: string | undefined, b: string | undefined) => a ?? b ?? ''));
    const given = names.filter((n) => !own.some((c) => c.startsWith(`mcp_servers.${n}.`) || c.startsWith(`mcp_servers.${n}=`) || c.startsWith('mcp_servers=')));
    if (given.length === 0) return { command, note: null };
    // Names are bare TOML keys (letters, digits, "_", "-": lib/profile/validate.ts); the URL a TOML basic string.
    const flags = given.flatMap((n) => ['-c', `mcp_servers.${n}.url=${tomlString(servers[n] as string)}`]);
    return { command: [file, ...flags, ...args], note: `Codex is given the profile's MCP servers (-c mcp_servers.NAME.url: ${given.join(', ')}), their tools as the profile allows them` };
  }
  return { command, note: null };
}

export function agentArgv(original: string[], mcp: Record<string, string> = {}): AgentArgv {
  const served = withMcp(original, mcp);
  const command = served.command;
  const [file, ...args] = command;
  const mcpNote = served.note === null ? null : { level: 'note' as const, text: served.note };
  if (file === undefined || basename(file) !== 'codex') return { command, note: mcpNote };
  const both = (n: AgentArgv['note']): AgentArgv['note'] => (mcpNote === null ? n : n === null ? mcpNote : { level: n.level, text: `${mcpNote.text}; ${n.text}` });
  const choice = codexChoice(args);
  if (choice === 'off') return { command, note: both(null) };
  if (choice === 'on') return { command, note: both({ level: 'warn', text: "Codex's own sandbox is asked for on its command line: it cannot start inside stashbase's, so the commands Codex runs will fail (leave the sandbox flag out and stashbase turns Codex's off; stashbase is the sandbox)" }) };
  return { command: [file, ...CODEX_SANDBOX_OFF, ...args], note: both({ level: 'note', text: `Codex's own sandbox is off inside stashbase's (${CODEX_SANDBOX_OFF.join(' ')}): it cannot nest, and stashbase is the sandbox` }) };
}
