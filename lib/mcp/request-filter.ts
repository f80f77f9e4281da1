// What the proxy does with a POST to an MCP server: the body parsed as MCP's
// JSON-RPC (lib/mcp/jsonrpc.ts), each tools/call decided by the profile's
// policy (lib/mcp/tool-policy.ts). A body that is not MCP is refused (fail
// closed); a single refused call, or a batch with one among others, never
// reaches the server: the agent gets JSON-RPC errors that name the rule.
import { type Id, type Message, parseMessages } from './jsonrpc.js';
import { type ToolDecision, toolDecision, type ToolPolicy } from './tool-policy.js';

export interface CallRecord {
  tool: string;
  decision: 'allow' | 'deny';
  rule: string;
  argBytes: number;
}

export type RequestVerdict =
  | { forward: true; calls: CallRecord[]; listsTools: boolean }
  | { forward: false; status: number; body: string; rule: string; calls: CallRecord[] };

/** Refusals the agent's MCP client shows: JSON-RPC's server-error range. */
export const POLICY_ERROR = -32001;
const PARSE_ERROR = -32700;

const errorOf = (id: Id, code: number, message: string) => ({ jsonrpc: '2.0', id, error: { code, message: `stashbase: ${message}` } });

const shownTool = (m: Message) => (typeof m.tool === 'string' ? m.tool.slice(0, 128) : JSON.stringify(m.tool ?? null).slice(0, 128));

/** How a request to an MCP server's host must be framed, or why it is refused (the status and rule). */
export function framingProblem(method: string, headers: { contentType: string | undefined; contentEncoding: string | undefined; contentLength: string | undefined; transferEncoding: string | undefined }, server: string): { status: number; rule: string } | null {
  const where = `[mcp.servers.${server}]`;
  if (method !== 'POST') {
    // A GET or DELETE carries no body: one it carried would reach the server unread.
    const length = headers.contentLength?.trim();
    if (headers.transferEncoding !== undefined || (length !== undefined && length !== '0')) return { status: 400, rule: `a ${method} with a body to ${where}` };
    return null;
  }
  // Read as UTF-8 JSON here, so the server must read the same: a charset it would decode otherwise (UTF-7) or a coding it would undo (gzip) is refused.
  const type = (headers.contentType ?? '').toLowerCase();
  const m = /^\s*application\/json\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/.exec(type);
  if (m === null) return { status: 415, rule: `an MCP request to ${where} that is not Content-Type: application/json (UTF-8)` };
  const coding = headers.contentEncoding?.trim().toLowerCase();
  if (coding !== undefined && coding !== '' && coding !== 'identity') return { status: 415, rule: `an MCP request to ${where} in content-encoding ${JSON.stringify(coding.slice(0, 40))}` };
  return null;
}

export function filterRequest(body: Buffer, p: ToolPolicy): RequestVerdict {
  const parsed = parseMessages(body);
  if ('problem' in parsed) {
    const rule = `not an MCP message for [mcp.servers.${p.server}]: ${parsed.problem}`;
    return { forward: false, status: 400, body: JSON.stringify(errorOf(null, PARSE_ERROR, rule)), rule, calls: [] };
  }
  const decided = parsed.messages.map((m): { m: Message; d: ToolDecision | null } => ({ m, d: m.method === 'tools/call' ? toolDecision(p, m.tool) : null }));
  const refused = decided.find((x) => x.d !== null && !x.d.allow);
  const calls = decided.flatMap((x): CallRecord[] => (x.d === null ? [] : [{ tool: shownTool(x.m), decision: refused ? 'deny' : 'allow', rule: x.d.allow && refused ? `refused with its batch: ${refused.d!.rule}` : x.d.rule, argBytes: x.m.argBytes ?? 0 }]));
  if (!refused) return { forward: true, calls, listsTools: parsed.messages.some((m) => m.method === 'tools/list') };
  const rule = refused.d!.rule;
  // Every request of the body gets its error (a notification none): nothing of it reached the server.
  const errors = decided.filter((x) => x.m.method !== undefined && x.m.id !== undefined).map((x) => errorOf(x.m.id as Id, POLICY_ERROR, x.d !== null && !x.d.allow ? x.d.rule : `not sent: ${rule}`));
  const answer = parsed.batch ? errors : errors[0] ?? errorOf(null, POLICY_ERROR, rule);
  return { forward: false, status: 200, body: JSON.stringify(answer), rule, calls };
}
