// The audit log: one JSON object per line in $STASHBASE_HOME/audit/<session>.jsonl,
// from the run's start to its end, with every proxy decision in between.
// Bounded per run, whatever the agent does: a denial repeated (same method,
// host, port and rule) is written once and then counted, its count written
// as one `repeated` line a few seconds later and before the end; so is an
// allowed decision repeated (same method, host, port, path, rule and status),
// and the path of an allowed decision is cut to ALLOWED_PATH characters; long
// values are cut. Each kind of event stops at its own share of the size
// limit, with an `audit-full` line saying so: allowed decisions at seven
// eighths, denials, limits, errors and the rest at fifteen sixteenths, and
// the last sixteenth is for exfiltration attempts alone (an agent without the
// real value cannot make one), so that no flood of requests, allowed or
// denied, can keep an attempt out of the log. Past the whole limit only the
// end event (with the number of events dropped) follows. The proxy's decisions
// are written in batches, at most 100 ms late (at once after the end event):
// a stashbase that dies outright (SIGKILL, a crash) loses at most those last 100 ms.
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { homePaths } from '../home.js';

export function auditFile(home: string, session: string): string {
  return join(homePaths(home).audit, `${session}.jsonl`);
}

/** The audit log's size limit when the profile sets none (lib/proxy/limits.ts has the same). */
export const AUDIT_MAX_BYTES = 64 * 1024 * 1024;
/** A value longer than this is cut (a 30 KB path says no more than its start). */
const MAX_VALUE = 2048;
/** Distinct denials counted at once; past this they are written as they come. */
const MAX_KEYS = 4096;
/** A repeated denial's values, as its count line shows them (the first line has them up to MAX_VALUE). */
const REPEAT_VALUE = 256;
/** An allowed decision's path is cut to this many characters (its start says where the agent went). */
export const ALLOWED_PATH = 256;
/** The share of the size limit kept for what matters: routine lines stop short of it. */
const RESERVE_SHARE = 8;
/** The last share, kept for exfiltration attempts alone: denials, limits and errors stop short of it. */
const LAST_SHARE = 16;
const ROUTINE = 0;
const OTHER = 1;
const EXFILTRATION = 2;
const FLUSH_MS = 2000;
/** How long, and up to how many bytes, the proxy's decisions wait to be written together. */
const PROXY_FLUSH_MS = 100;
const PROXY_FLUSH_BYTES = 64 * 1024;

function cut(v: unknown, max = MAX_VALUE): unknown {
  if (typeof v === 'string' && v.length > max) return `${v.slice(0, max)}… (${v.length} characters)`;
  return v;
}

/** Inside an event's arrays and objects (what an agent sent: hook arguments, reported reasons), less of each is kept. */
const NESTED_VALUE = 256;
const NESTED_ITEMS = 16;
const NESTED_DEPTH = 4;

/**
 * A value cut at every depth (found in review: text inside arrays was never cut, and an agent's hook requests wrote
 * ~1 MB a line, filling the share kept for denials in under a second): strings, the items of arrays, the keys of
 * objects, and depth, each bounded.
 */
function cutDeep(v: unknown, depth = 0): unknown {
  if (typeof v === 'string') return cut(v, depth === 0 ? MAX_VALUE : depth === 1 ? 4 * NESTED_VALUE : NESTED_VALUE);
  if (v === null || typeof v !== 'object') return v;
  if (depth >= NESTED_DEPTH) return '…';
  if (Array.isArray(v)) {
    const items = v.slice(0, NESTED_ITEMS).map((x) => cutDeep(x, depth + 1));
    return v.length > NESTED_ITEMS ? [...items, `… (${v.length} items)`] : items;
  }
  // Without a prototype: a key named __proto__ is a key.
  const out: Record<string, unknown> = Object.create(null);
  const keys = Object.keys(v);
  for (const k of keys.slice(0, NESTED_ITEMS)) out[cut(k, NESTED_VALUE) as string] = cutDeep((v as Record<string, unknown>)[k], depth + 1);
  if (keys.length > NESTED_ITEMS) out['…'] = `${keys.length} keys`;
  return out;
}

export class AuditLog {
  readonly file: string;
  private bytes = 0;
  /** Routine lines past their share: only what matters is written. */
  /** Per tier: its share is reached (a tier closes the ones below it too). */
  private readonly closed = [false, false, false];
  private dropped = 0;
  private readonly repeats = new Map<string, { fields: Record<string, unknown>; count: number }>();
  private timer: NodeJS.Timeout | null = null;
  private fd: number | null = null;
  private pending: string[] = [];
  private pendingBytes = 0;
  private batch: NodeJS.Timeout | null = null;
  private ended = false;
  private lastMs = 0;
  private lastIso = '';
  private lastSecond = -1;
  private secondIso = '';
  private readonly sessionJson: string;

  constructor(home: string, readonly session: string, private readonly maxBytes = AUDIT_MAX_BYTES) {
    mkdirSync(homePaths(home).audit, { recursive: true, mode: 0o700 });
    this.file = auditFile(home, session);
    this.sessionJson = JSON.stringify(session);
    try {
      this.bytes = statSync(this.file).size;
    } catch {
      // a new log
    }
  }

  write(event: Record<string, unknown>): void {
    if (event.type === 'end') {
      this.flush();
      this.append(this.dropped > 0 ? { ...event, dropped: this.dropped } : event, true);
      return;
    }
    const allow = event.type === 'proxy' && event.decision === 'allow';
    if (allow && typeof event.path === 'string' && event.path.length > ALLOWED_PATH) event = { ...event, path: cut(event.path, ALLOWED_PATH) };
    if (event.type === 'proxy' && (event.decision === 'deny' || allow)) {
      // Kept for the run: a digest for the key and the fields a repeat line shows, short (a denied
      // host or rule can be 30 KB, and thousands of distinct ones are cheap to send).
      const key = createHash('sha1').update(JSON.stringify(allow ? ['allow', event.method, event.host, event.port, event.path, event.rule, event.status, event.upgrade] : [event.method, event.host, event.port, event.rule])).digest('base64');
      const seen = this.repeats.get(key);
      if (seen) {
        seen.count++;
        this.timer ??= setTimeout(() => this.flush(), FLUSH_MS).unref();
        return;
      }
      if (this.repeats.size < MAX_KEYS) {
        const fields: Record<string, unknown> = { method: cut(event.method, REPEAT_VALUE), host: cut(event.host, REPEAT_VALUE), port: event.port };
        if (allow) Object.assign(fields, { path: cut(event.path, REPEAT_VALUE), rule: cut(event.rule, REPEAT_VALUE), decision: 'allow', status: event.status });
        else Object.assign(fields, { rule: cut(event.rule, REPEAT_VALUE), decision: 'deny' });
        this.repeats.set(key, { fields, count: 0 });
      }
    }
    this.append(event, false);
  }

  /** Routine (an allowed decision), an exfiltration attempt, or any other event (a denial, a limit, an error, a hook). */
  private static tier(event: Record<string, unknown>): number {
    if (event.exfiltration === true) return EXFILTRATION;
    // What the agent reports of itself, and hook requests answered as asked, are routine: they cannot crowd out denials.
    if (event.reportedBy === 'sandbox' || (event.type === 'hook' && ['clean', 'found', 'ran', 'reported'].includes(event.decision as string))) return ROUTINE;
    return (event.type === 'proxy' || event.type === 'repeated') && event.decision === 'allow' ? ROUTINE : OTHER;
  }

  private capOf(tier: number): number {
    return tier === ROUTINE ? this.maxBytes - Math.floor(this.maxBytes / RESERVE_SHARE) : tier === OTHER ? this.maxBytes - Math.floor(this.maxBytes / LAST_SHARE) : this.maxBytes;
  }

  /** The line that says a kind of event reached its share; later ones are counted in the end event's `dropped`. */
  private fullLine(tier: number, time: string): Record<string, unknown> {
    const head = { time, session: this.session, type: 'audit-full', maxBytes: this.maxBytes };
    if (tier === ROUTINE) return { ...head, reserved: Math.floor(this.maxBytes / RESERVE_SHARE), kept: 'denials, exfiltration, limits and errors' };
    if (tier === OTHER) return { ...head, reserved: Math.floor(this.maxBytes / LAST_SHARE), kept: 'exfiltration attempts' };
    return head;
  }

  /** Writes the counts of the denials repeated since the last flush. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const r of this.repeats.values()) {
      if (r.count === 0) continue;
      this.append({ type: 'repeated', ...r.fields, count: r.count }, false);
      r.count = 0;
    }
  }

  /**
   * The time field's text (a proxy decision per request asks for it): the
   * date and time to the second made once per second, the milliseconds added.
   */
  private now(): string {
    const ms = Date.now();
    if (ms !== this.lastMs) {
      const second = ms - (ms % 1000);
      if (second !== this.lastSecond) {
        this.lastSecond = second;
        this.secondIso = new Date(second).toISOString().slice(0, 20);
      }
      this.lastMs = ms;
      const m = ms % 1000;
      this.lastIso = `${this.secondIso}${m < 10 ? '00' : m < 100 ? '0' : ''}${m}Z`;
    }
    return this.lastIso;
  }

  /** One line: time and session first, then the event's fields, long values cut. */
  private line(event: Record<string, unknown>, time: string): string {
    if ('time' in event || 'session' in event) {
      const fields: Record<string, unknown> = { time, session: this.session };
      for (const [k, v] of Object.entries(event)) fields[k] = cutDeep(v);
      return JSON.stringify(fields) + '\n';
    }
    // A line with no value over MAX_VALUE is shorter than it: the pass that cuts long values runs only past that.
    let body = JSON.stringify(event);
    if (body.length > MAX_VALUE) {
      let e = event;
      for (const k in event) {
        const v = event[k];
        if ((typeof v === 'string' && v.length > MAX_VALUE) || (v !== null && typeof v === 'object')) {
          if (e === event) e = { ...event };
          e[k] = cutDeep(v);
        }
      }
      if (e !== event) body = JSON.stringify(e);
    }
    return `{"time":"${time}","session":${this.sessionJson}${body.length > 2 ? `,${body.slice(1)}` : '}'}\n`;
  }

  private append(event: Record<string, unknown>, always: boolean): void {
    const time = this.now();
    let line = this.line(event, time);
    // Bytes on disk (UTF-8), not characters: a header's Latin-1 text takes two bytes per character past 0x7f.
    let size = Buffer.byteLength(line);
    // Each kind stops at its own share: a flood of allowed decisions, then of denials (each costs
    // the agent a request), still leaves room for an exfiltration attempt; only those reach the limit.
    const tier = always ? EXFILTRATION : AuditLog.tier(event);
    let atOnce = event.type !== 'proxy';
    if (!always && (this.closed[tier] || this.bytes + size > this.capOf(tier))) {
      this.dropped++;
      if (this.closed[tier]) return;
      for (let k = 0; k <= tier; k++) this.closed[k] = true;
      line = JSON.stringify(this.fullLine(tier, time)) + '\n';
      size = line.length;
      atOnce = true;
    }
    this.bytes += size;
    this.pending.push(line);
    this.pendingBytes += size;
    // The proxy's decisions (one per request) go out together, at most PROXY_FLUSH_MS
    // after they were made (a write per request was a tenth of the proxy's time);
    // any other event at once, after those, in order.
    // After the end (a response cut at teardown is decided then) every line goes at once. The timer is
    // not unref'd: the process stays up until the batch is written.
    if (this.ended) this.close();
    else if (atOnce || this.pendingBytes >= PROXY_FLUSH_BYTES) this.writeOut();
    else this.batch ??= setTimeout(() => this.writeOut(), PROXY_FLUSH_MS);
    if (event.type === 'end') {
      this.ended = true;
      this.close();
    }
  }

  private writeOut(): void {
    if (this.batch) clearTimeout(this.batch);
    this.batch = null;
    if (this.pending.length === 0) return;
    const text = this.pending.join('');
    this.pending = [];
    this.pendingBytes = 0;
    // One descriptor for the run (a proxy decision per request: opening the file for each cost more than writing).
    this.fd ??= openSync(this.file, 'a', 0o600);
    writeSync(this.fd, text);
  }

  close(): void {
    // The counts of what repeated go out with the rest (their timer would write after the close).
    this.flush();
    this.writeOut();
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
  }
}
