import picocolors from 'picocolors';
import { asciiJson } from '../lib/util/printable.js';
import { flagBool, flagString, type FlagSpec, parseCommand } from '../lib/util/argv.js';
import { type AuditEvent, formatAudit, latestSession, readAudit } from '../lib/run/audit-read.js';
import { ConfigError, UsageError } from '../lib/errors.js';
import { stashbaseHome } from '../lib/home.js';
import { JSON_FLAG } from './shared-flags.js';

export const usage = 'stashbase agent audit [SESSION] [--json | --follow] | --list | --prune [--older-than DAYS]';
export const summary = "Show a run's audit log (the latest run by default), denials marked.";
export const flags: FlagSpec[] = [
  { ...JSON_FLAG, help: 'Print the events (or, with --list, the logs) as JSON' },
  { name: 'follow', kind: 'bool', help: "Keep showing the run's events as they are written, until it ends (Ctrl+C stops)" },
  { name: 'list', kind: 'bool', help: 'List the logs, newest first: session, start, how it ended, profile, size, directory' },
  { name: 'prune', kind: 'bool', help: 'Remove the logs not written to for --older-than days' },
  { name: 'older-than', kind: 'value', value: 'days', help: 'With --prune: the age in days (default 30)' },
  { name: 'max-total', kind: 'value', value: 'MB', help: 'With --prune: then remove the oldest logs until the rest take at most this many MB (a log written in the last hour stays)' },
];

const spec = { name: 'agent audit', usage, summary, flags, notes: 'SESSION is an ags_… id, as printed by agent run.' };

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.positionals.length > 1 || p.rest !== null) throw new UsageError('agent audit takes at most one session id');
  const home = stashbaseHome(process.env);
  if (flagBool(p, 'list') || flagBool(p, 'prune')) {
    if (p.positionals.length > 0) throw new UsageError('--list and --prune take no session id');
    const { formatList, listLogs, pruneLogs } = await import('../lib/run/audit-list.js');
    if (flagBool(p, 'prune')) {
      const raw = flagString(p, 'older-than') ?? '30';
      if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new UsageError(`--older-than takes a whole number of days, 1 or more, not ${JSON.stringify(raw)}`);
      const mb = flagString(p, 'max-total');
      if (mb !== undefined && (!/^\d+$/.test(mb) || Number(mb) < 1)) throw new UsageError(`--max-total takes a whole number of MB, 1 or more, not ${JSON.stringify(mb)}`);
      const removed = pruneLogs(home, Number(raw), Date.now(), mb === undefined ? Infinity : Number(mb) * 1024 * 1024);
      process.stdout.write(`${removed.length === 0 ? 'no' : removed.length} audit log${removed.length === 1 ? '' : 's'} removed (older than ${raw} days${mb === undefined ? '' : `, or past ${mb} MB in all`})${removed.length ? `: ${removed.join(' ')}` : ''}\n`);
      return 0;
    }
    const logs = listLogs(home);
    process.stdout.write(flagBool(p, 'json') ? asciiJson(logs.map((l) => ({ session: l.session, bytes: l.bytes, modified: l.modified.toISOString(), start: l.start, end: l.end }))) + '\n' : formatList(logs));
    return 0;
  }
  if (flagString(p, 'older-than') !== undefined || flagString(p, 'max-total') !== undefined) throw new UsageError('--older-than and --max-total go with --prune');
  const session = p.positionals[0] ?? latestSession(home);
  if (session === null) throw new ConfigError(`no audit logs yet in ${home}/audit`);
  const events = readAudit(home, session);
  if (flagBool(p, 'follow')) {
    if (flagBool(p, 'json')) throw new UsageError('--follow shows text; --json prints a log as it is');
    await follow(home, session);
    return 0;
  }
  if (flagBool(p, 'json')) {
    process.stdout.write(asciiJson(events) + '\n');
    return 0;
  }
  const colors = picocolors.createColors(process.stdout.isTTY === true && !process.env.NO_COLOR);
  process.stdout.write(`Audit session: ${session}\n${formatAudit(events, (s) => colors.bold(colors.red(s)))}`);
  return 0;
}

/**
 * The log's events so far, then each as it is written, all read from one
 * descriptor by offset (whole lines only): until the run's end event, or the
 * run is gone without one (killed), or the log is.
 */
async function follow(home: string, session: string): Promise<void> {
  const { closeSync, constants, fstatSync, openSync, readSync } = await import('node:fs');
  const { auditFile } = await import('../lib/run/audit.js');
  const { liveSessionIds } = await import('../lib/run/session.js');
  const all: AuditEvent[] = [];
  const out = (events: AuditEvent[]) => process.stdout.write(formatAudit(events, (s) => s, { counts: false }));
  process.stdout.write(`Audit session: ${session} (following; Ctrl+C stops)\n`);
  const fd = openSync(auditFile(home, session), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  let offset = 0;
  let rest = '';
  let why = '';
  try {
    for (let first = true; ; first = false) {
      const st = fstatSync(fd);
      if (!st.isFile() || st.nlink === 0 || st.size < offset) {
        why = 'the log was removed or cut short';
        break;
      }
      const fresh: AuditEvent[] = [];
      while (offset < st.size) {
        const buf = Buffer.alloc(Math.min(st.size - offset, 4 * 1024 * 1024));
        const n = readSync(fd, buf, 0, buf.length, offset);
        if (n <= 0) break;
        offset += n;
        const lines = (rest + buf.subarray(0, n).toString('utf8')).split('\n');
        rest = lines.pop() ?? '';
        for (const l of lines) {
          try {
            const e = JSON.parse(l) as unknown;
            if (e !== null && typeof e === 'object' && !Array.isArray(e)) fresh.push(e as AuditEvent);
          } catch {
            // a broken line is skipped
          }
        }
      }
      all.push(...fresh);
      out(fresh);
      if (all.some((e) => e.type === 'end')) break;
      // Nothing new, and the run is not there to write more: it was killed (the next run settles it).
      if (fresh.length === 0 && !first && !liveSessionIds(home).has(session)) {
        why = 'the run is no longer running and its log has no end (killed: the next run settles it)';
        break;
      }
      await new Promise((r) => setTimeout(r, 300));
    }
  } finally {
    closeSync(fd);
  }
  if (why) process.stdout.write(`(${why})\n`);
  process.stdout.write(formatAudit(all).split('\n').filter((l) => /^\d+ (proxy|dependency) decisions: /.test(l)).join('\n') + '\n');
}
