// Reading audit logs back: which one (the latest by default), its events, and a
// rendering where the denials and blocked dependencies stand out.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { auditFile } from './audit.js';
import { ConfigError, UsageError } from '../errors.js';
import { homePaths } from '../home.js';
import { SESSION_ID } from './session.js';
import { printable as shown, UNPRINTABLE } from '../util/printable.js';

export type AuditEvent = Record<string, unknown> & { type?: string; time?: string };

export function latestSession(home: string): string | null {
  let names: string[];
  try {
    names = readdirSync(homePaths(home).audit).filter((n) => /^ags_[a-z2-7]{16}\.jsonl$/.test(n));
  } catch {
    return null;
  }
  const dir = homePaths(home).audit;
  names.sort((a, b) => statSync(join(dir, b)).mtimeMs - statSync(join(dir, a)).mtimeMs || (a < b ? 1 : -1));
  return names[0]?.replace(/\.jsonl$/, '') ?? null;
}

export function readAudit(home: string, session: string): AuditEvent[] {
  if (!SESSION_ID.test(session)) throw new UsageError(`${JSON.stringify(session)} is not a session id (ags_ and 16 letters or digits 2-7)`);
  let text: string;
  try {
    text = readFileSync(auditFile(home, session), 'utf8');
  } catch {
    throw new ConfigError(`no audit log for ${session} in ${homePaths(home).audit}`);
  }
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l, i) => {
      try {
        return JSON.parse(l) as AuditEvent;
      } catch {
        return { type: 'unreadable', line: i + 1 };
      }
    });
}

const CONTROL = new RegExp(`[\\t\\n${UNPRINTABLE}]`, 'gu');
/** The event with control characters and bidi overrides in its strings shown as "?": packages, reasons and arguments come from the sandbox, registries and OSV. */
const printable = (e: AuditEvent): AuditEvent => JSON.parse(JSON.stringify(e), (_k, v: unknown) => (typeof v === 'string' ? v.replace(CONTROL, '?') : v)) as AuditEvent;

/** How much of a field from the agent or an upstream a line shows: never enough to fill a terminal's line. */
const SHOWN = 100;

/**
 * A field that came from the agent or an upstream (a path, an Upgrade value,
 * a package name, a reason): quoted (a quote inside shows as \", which no
 * line of stashbase's has), runs of white space shown by their length, and
 * cut short, so that no value, however padded, can read as an entry of its own.
 */
export function quoted(v: unknown): string {
  const s = String(v).replace(/\s{2,}/g, (m) => `<${m.length} spaces>`);
  // JSON escapes the C0 controls; printable the rest (C1, bidirectional overrides, zero-width characters).
  return shown(JSON.stringify(s.length > SHOWN ? `${s.slice(0, SHOWN)}…` : s), true);
}

/** Text of stashbase's own that may hold agent-chosen parts (a rule naming a host): runs of white space as one, cut short. */
function tidy(v: unknown): string {
  const s = String(v).replace(/\s+/g, ' ');
  return s.length > 6 * SHOWN ? `${s.slice(0, 6 * SHOWN)}…` : s;
}

/** One line per event; `mark` wraps the DENY and BLOCK labels (colour on a terminal). */
export function formatAudit(events: AuditEvent[], mark: (s: string) => string = (s) => s, o: { counts?: boolean } = {}): string {
  const lines: string[] = [];
  let allowed = 0;
  let denied = 0;
  let errors = 0;
  const deps: Record<string, number> = Object.create(null);
  /** Per MCP tool (server/tool): how often allowed and refused. */
  const tools = new Map<string, { allow: number; deny: number }>();
  for (const raw of events) {
    const e = printable(raw);
    const t = String(e.time ?? '').replace('T', ' ').replace(/\.\d+Z$/, 'Z');
    if (e.type === 'start') {
      const how = e.mechanism !== undefined ? e.mechanism : e.image !== undefined ? `image ${e.image}` : 'unknown';
      lines.push(`${t}  start  profile ${e.profile}, ${e.backend} (${how}), in ${e.cwd}: ${JSON.stringify(e.argv)}`);
    } else if (e.type === 'end') {
      const dropped = typeof e.dropped === 'number' ? `; ${e.dropped} events past the log's size limit were not written` : '';
      lines.push(`${t}  end    ${e.reaped ? 'run was killed; cleaned up later' : `exit code ${e.exitCode}, ${e.durationMs} ms`}${dropped}`);
    } else if (e.type === 'proxy' || e.type === 'repeated') {
      const deny = e.decision === 'deny';
      const n = e.type === 'repeated' ? Number(e.count) : 1;
      if (deny) denied += n;
      else if (e.decision === 'allow') allowed += n;
      else if (e.decision === 'error') errors += n;
      const label = deny ? mark('DENY ') : e.decision === 'allow' ? 'allow' : String(e.decision).padEnd(5);
      const where = `${tidy(e.method)} ${tidy(e.host)}:${e.port}${e.path ? ` ${quoted(e.path)}` : ''}`;
      const again = e.type === 'repeated' ? `  (the same ${n} more time${n === 1 ? '' : 's'})` : '';
      const status = e.status !== undefined ? `  (${e.status})` : '';
      lines.push(`${t}  ${label}  ${where}  ${tidy(e.rule)}${e.upgrade ? `  upgrade ${quoted(e.upgrade)}` : ''}${status}${again}`);
    } else if (e.type === 'audit-full') {
      if (e.kept === 'exfiltration attempts') lines.push(`${t}  audit  denials, limits and errors reached their share of the log (${e.maxBytes} bytes, less ${e.reserved} kept for exfiltration attempts): later ones were not written`);
      else if (e.kept !== undefined) lines.push(`${t}  audit  allowed decisions reached their share of the log (${e.maxBytes} bytes, less ${e.reserved} kept for denials, exfiltration, limits and errors): later allowed decisions were not written`);
      else lines.push(`${t}  audit  the log reached its size limit (${e.maxBytes} bytes; network.limits.audit_max_mb): later events were not written`);
    } else if (e.type === 'dependency') {
      deps[String(e.decision)] = (deps[String(e.decision)] ?? 0) + 1;
      const label = e.decision === 'block' ? mark('BLOCK') : String(e.decision).padEnd(5);
      const by = e.reportedBy === 'sandbox' ? ' (reported from inside the sandbox)' : '';
      const reasons = Array.isArray(e.reasons) && e.reasons.length > 0 ? `  ${e.reasons.map(quoted).join('; ')}` : '';
      lines.push(`${t}  ${label}  ${tidy(e.ecosystem)} ${quoted(e.package)}${e.version ? ` ${quoted(e.version)}` : ''}  agent told: ${tidy(e.answer)}${by}${reasons}`);
    } else if (e.type === 'mcp') {
      // A tools/call to a server the profile restricts (lib/mcp/): the tool, the decision, the argument size (never the arguments).
      const deny = e.decision === 'deny';
      // The name quoted as the agent sent it: a name cannot write text of its own into the summary.
      const key = `${tidy(e.server)}/${quoted(e.tool)}`;
      const c = tools.get(key) ?? { allow: 0, deny: 0 };
      if (deny) c.deny++;
      else c.allow++;
      tools.set(key, c);
      lines.push(`${t}  ${deny ? mark('DENY ') : 'allow'}  mcp ${tidy(e.server)} ${quoted(e.tool)} (${Number(e.argBytes)} bytes of arguments)  ${tidy(e.rule)}`);
    } else if (e.type === 'hook') {
      // A request to the run's hook endpoints (lib/hooks/endpoints.ts): refused, or what the hook did.
      const deny = e.decision === 'deny';
      const what = deny ? `${e.rule} (${e.status})` : `${e.decision}${e.exit !== undefined ? ` (exit ${e.exit})` : ''}${e.events !== undefined ? ` (${e.events} decisions)` : ''}`;
      const args = Array.isArray(e.args) ? `  [${e.args.map(quoted).join(',')}]` : '';
      lines.push(`${t}  ${deny ? mark('DENY ') : 'hook '}  ${tidy(e.path)}  ${tidy(what)}${args}`);
    } else lines.push(`${t}  ${e.type}  ${JSON.stringify(e)}`);
  }
  if (o.counts === false) return lines.length ? lines.join('\n') + '\n' : '';
  lines.push(`${allowed + denied + errors} proxy decisions: ${allowed} allowed, ${denied} denied, ${errors} errors`);
  const checked = Object.values(deps).reduce((a, b) => a + b, 0);
  if (tools.size > 0) lines.push(`MCP tools: ${[...tools].map(([k, c]) => `${k} ${[c.allow > 0 ? `allowed ${c.allow}` : '', c.deny > 0 ? `refused ${c.deny}` : ''].filter(Boolean).join(', ')}`).join('; ')}`);
  if (checked > 0) lines.push(`${checked} dependency decisions: ${['block', 'warn', 'unchecked', 'ok'].map((d) => `${deps[d] ?? 0} ${d === 'block' ? 'blocked' : d === 'warn' ? 'warned' : d}`).join(', ')}`);
  return lines.join('\n') + '\n';
}
