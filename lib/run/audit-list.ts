// The run logs in $STASHBASE_HOME/audit, listed (newest first) from each
// log's first and last lines only (a log may be 64 MB), and pruned by age.
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { homePaths } from '../home.js';
import { quoted } from './audit-read.js';
import { alignedRows } from '../util/table.js';

const LOG = /^(ags_[a-z2-7]{16})\.jsonl$/;
const EDGE = 16 * 1024;

export interface LogSummary {
  session: string;
  bytes: number;
  modified: Date;
  start: Record<string, unknown> | null;
  end: Record<string, unknown> | null;
}

function parse(line: string | undefined): Record<string, unknown> | null {
  if (!line) return null;
  try {
    const v = JSON.parse(line) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function edges(file: string): { first: string | undefined; last: string | undefined; bytes: number; modified: Date } {
  // Never through a link, never blocking on a FIFO: a regular file stashbase wrote, or nothing.
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error('not a regular file');
    const head = Buffer.alloc(Math.min(EDGE, st.size));
    readSync(fd, head, 0, head.length, 0);
    const tail = Buffer.alloc(Math.min(EDGE, st.size));
    readSync(fd, tail, 0, tail.length, st.size - tail.length);
    const lines = tail.toString('utf8').trimEnd().split('\n');
    return { first: head.toString('utf8').split('\n')[0], last: lines[lines.length - 1], bytes: st.size, modified: st.mtime };
  } finally {
    closeSync(fd);
  }
}

export function listLogs(home: string): LogSummary[] {
  const dir = homePaths(home).audit;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: LogSummary[] = [];
  for (const n of names) {
    const m = LOG.exec(n);
    if (!m) continue;
    try {
      const e = edges(join(dir, n));
      const start = parse(e.first);
      const end = parse(e.last);
      out.push({ session: m[1] as string, bytes: e.bytes, modified: e.modified, start: start?.type === 'start' ? start : null, end: end?.type === 'end' ? end : null });
    } catch {
      // gone meanwhile
    }
  }
  return out.sort((a, b) => b.modified.getTime() - a.modified.getTime() || (a.session < b.session ? 1 : -1));
}

/** One aligned line per log: session, when, how it ended, profile and backend, the command's directory, size. */
export function formatList(logs: LogSummary[]): string {
  if (logs.length === 0) return 'no audit logs\n';
  const rows = logs.map((l) => {
    const when = String(l.start?.time ?? l.modified.toISOString()).replace('T', ' ').replace(/\.\d+Z$/, 'Z');
    const ended = l.end === null ? 'running or killed' : l.end.exitCode === null ? 'reaped' : `exit ${String(l.end.exitCode)}`;
    const who = l.start ? `${quoted(l.start.profile ?? 'default')} ${String(l.start.backend ?? '')}` : '-';
    const size = l.bytes >= 1024 * 1024 ? `${(l.bytes / 1024 / 1024).toFixed(1)} MB` : `${Math.ceil(l.bytes / 1024)} KB`;
    return [l.session, when, ended, who, size, l.start ? quoted(l.start.cwd ?? '') : '-'];
  });
  const head = ['SESSION', 'STARTED', 'ENDED', 'PROFILE', 'SIZE', 'DIRECTORY'];
  return alignedRows([head, ...rows]).join('\n') + '\n';
}

/**
 * Removes the logs not written to for `days` days and then, oldest first, as
 * many more as keep the rest within `maxBytes` (a log written to in the last
 * hour stays: a live run's); returns their sessions.
 */
export function pruneLogs(home: string, days: number, now = Date.now(), maxBytes = Infinity): string[] {
  const dir = homePaths(home).audit;
  const removed: string[] = [];
  const logs = listLogs(home);
  let total = logs.reduce((n, l) => n + l.bytes, 0);
  // Oldest first (listLogs gives newest first).
  for (const l of [...logs].reverse()) {
    const age = now - l.modified.getTime();
    if (age < days * 86_400_000 && (total <= maxBytes || age < 3_600_000)) continue;
    total -= l.bytes;
    const file = join(dir, `${l.session}.jsonl`);
    if (!lstatSync(file).isFile()) continue;
    rmSync(file);
    removed.push(l.session);
  }
  return removed;
}
