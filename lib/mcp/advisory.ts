// What of a project's own MCP configuration stashbase does not enforce: the
// servers in its .mcp.json that the profile does not list. A stdio server
// the agent starts runs inside the agent's sandbox (confined by it, reaching
// only what the proxy allows) but its tools cannot be filtered by name; a
// remote one not listed is reached, if at all, only as egress_hosts allows,
// its tools unfiltered. Read without following links, bounded, parsed into a
// known shape (lib/readback/json.ts): the file is the repository's.
import { join } from 'node:path';
import { isJsonObject, parseJson } from '../readback/json.js';
import { readBackText } from '../readback/file.js';

export function unlistedServers(cwd: string, listed: Record<string, { url: string }>): string[] {
  const text = readBackText(join(cwd, '.mcp.json'), 1 << 20);
  if (text === null) return [];
  const parsed = parseJson(text);
  if (parsed === null || !isJsonObject(parsed.value) || !isJsonObject(parsed.value.mcpServers)) return [];
  const urls = new Set(Object.values(listed).map((s) => s.url));
  const out: string[] = [];
  for (const [name, entry] of Object.entries(parsed.value.mcpServers)) {
    if (!isJsonObject(entry)) continue;
    const shown = JSON.stringify(name.slice(0, 64));
    if (typeof entry.command === 'string') out.push(`.mcp.json's server ${shown} (stdio) runs inside the sandbox: confined by it, but its tools are not restricted by name (list a remote server under [mcp.servers] for that)`);
    else if (typeof entry.url === 'string' && !urls.has(entry.url)) out.push(`.mcp.json's server ${shown} (${JSON.stringify(entry.url.slice(0, 200))}) is not in [mcp.servers]: its tools are not restricted, and it is reached only as egress_hosts allows`);
  }
  return out;
}
