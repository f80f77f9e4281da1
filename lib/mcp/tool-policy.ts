// Which tools of an MCP server the agent may call: the profile's globs over
// tool names, deny winning. The MCP specification makes a tool name 1 to 128
// characters of A-Z, a-z, 0-9, "_", "-" and "." and case-sensitive; a server
// may still look names up loosely. So a name outside those characters is
// refused, an allowance must match the name exactly, and a denial matches it
// in any case and Unicode form (never weaker than asked: `delete_*` also
// refuses `Delete_repo`).

/** A tool name as the specification writes it (2025-06-18 and later). */
export const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/** A glob over tool names: the same characters, `*` any run, `?` one. */
export const TOOL_GLOB = /^[A-Za-z0-9_.*?-]{1,128}$/;

export interface ToolPolicy {
  /** The server's name in the profile ([mcp.servers.NAME]). */
  server: string;
  /** null: every tool not denied. */
  allow: string[] | null;
  deny: string[];
}

export interface ToolDecision {
  allow: boolean;
  /** The rule that decided, in the profile's words. */
  rule: string;
}

/**
 * Whether `glob` (`*` any run, `?` one character) matches `text`, by code
 * point, in time linear in their product: one pass, going back only to the
 * last `*` (review, round 34: a glob made a regular expression, `*delete*`
 * as `^.*delete.*$`, took quadratic time over a name of "delete" repeated,
 * a tools/call of 600 KB held stashbase's only thread for a minute).
 */
export function globMatch(glob: string, text: string): boolean {
  const g = Array.from(glob);
  const t = Array.from(text);
  let gi = 0;
  let ti = 0;
  let star = -1;
  let mark = 0;
  while (ti < t.length) {
    if (gi < g.length && (g[gi] === '?' || (g[gi] !== '*' && g[gi] === t[ti]))) {
      gi++;
      ti++;
    } else if (gi < g.length && g[gi] === '*') {
      star = gi++;
      mark = ti;
    } else if (star !== -1) {
      gi = star + 1;
      ti = ++mark;
    } else return false;
  }
  while (gi < g.length && g[gi] === '*') gi++;
  return gi === g.length;
}

/** The name a denial is matched against: its compatibility form, in lower case. */
const loose = (name: string) => name.normalize('NFKC').toLowerCase();

export function toolDecision(p: ToolPolicy, name: unknown): ToolDecision {
  const where = `[mcp.servers.${p.server}]`;
  if (typeof name !== 'string') return { allow: false, rule: `a tools/call without a tool name (${where})` };
  const shown = JSON.stringify(name.length > 140 ? `${name.slice(0, 128)}…` : name);
  // Longer than any name the specification allows: refused before any glob is matched (its cost grows with the name).
  if (name.length > 128) return { allow: false, rule: `tool ${shown} is not a tool name the MCP specification allows (1 to 128 of A-Z a-z 0-9 _ - .), refused by ${where}` };
  for (const d of p.deny) if (globMatch(d.toLowerCase(), loose(name))) return { allow: false, rule: `tool ${shown} is refused by deny_tools ${JSON.stringify(d)} in ${where}` };
  if (!TOOL_NAME.test(name)) return { allow: false, rule: `tool ${shown} is not a tool name the MCP specification allows (1 to 128 of A-Z a-z 0-9 _ - .), refused by ${where}` };
  if (p.allow === null) return { allow: true, rule: `no deny_tools entry names tool ${shown} in ${where}` };
  const hit = p.allow.find((a) => globMatch(a, name));
  return hit !== undefined ? { allow: true, rule: `tool ${shown} is allowed by allow_tools ${JSON.stringify(hit)} in ${where}` } : { allow: false, rule: `tool ${shown} is not in allow_tools of ${where}` };
}

/** Whether a tool is listed to the agent (the same decision). */
export const toolListed = (p: ToolPolicy, name: unknown): boolean => toolDecision(p, name).allow;
