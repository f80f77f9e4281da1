// Claude Code's ~/.claude.json where no view can hold a copy (macOS: Seatbelt
// cannot bind one in), so the agent writes the file in place. Its state as
// the run starts is kept in the run's state folder, named in the session
// record: after the run, or after a killed run by the next one, its
// executable entries go back to what they were (lib/views/claude-config.ts)
// and the rest of the agent's changes stay. What comes back is parsed, never
// trusted: a file that could not be read at the start is never overwritten,
// and whatever is at the path afterwards that is not a regular file (a link
// the agent made, to your ~/.bashrc say) is moved aside, never written through.
import { lstatSync, mkdirSync, readlinkSync, realpathSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { claudeView, codexView } from './agent-views.js';
import { LOGIN_SHAPES, mergeLogin } from './login-merge.js';
import { hostPathOf } from './materialize.js';
import { revertClaudeConfig } from './claude-config.js';
import { readBackText } from '../readback/file.js';
import { freeName } from '../paths/free-name.js';

const MAX = 16 << 20;

export type ConfigStart =
  | { kind: 'missing' }
  | { kind: 'text'; text: string }
  | { kind: 'link'; link: string; target: string | null; text: string | null }
  | { kind: 'unreadable'; why: string };

export interface ConfigSnapshot {
  file: string;
  start: ConfigStart;
  /** The login files written in place too (macOS): Claude Code's .credentials.json, Codex's auth.json (review, round 27c). */
  logins?: Array<{ kind: 'claude' | 'codex'; file: string; start: ConfigStart }>;
}

/** The file as the run starts: never through a link, only a regular file of at most 16 MiB is read. */
export function readConfigStart(file: string): ConfigStart {
  const st = lstatSync(file, { throwIfNoEntry: false });
  if (!st) return { kind: 'missing' };
  if (st.isSymbolicLink()) {
    // The file it leads to is checked like the file itself (the agent may write it where the link leads inside a writable area).
    let target: string | null = null;
    try {
      target = realpathSync(file);
    } catch {
      // a dangling link
    }
    return { kind: 'link', link: readlinkSync(file), target, text: target === null ? null : readBackText(target, MAX) };
  }
  if (!st.isFile()) return { kind: 'unreadable', why: 'it is not a regular file' };
  if (st.size > MAX) return { kind: 'unreadable', why: `it is larger than ${MAX} bytes` };
  const text = readBackText(file, MAX);
  return text === null ? { kind: 'unreadable', why: 'it could not be read' } : { kind: 'text', text };
}

/** Where the snapshot is kept (the run's state folder, which no sandbox reaches). */
export const snapshotFile = (stateDir: string) => join(stateDir, 'claude-config-start.json');

/** Takes and keeps the snapshot of Claude Code's config for this run; returns the snapshot file. */
export function keepClaudeConfigStart(home: string, env: NodeJS.ProcessEnv, stateDir: string): string {
  const file = hostPathOf(claudeView(home, env).spec, '.claude.json');
  const logins = [
    { kind: 'claude' as const, file: hostPathOf(claudeView(home, env).spec, '.credentials.json') },
    { kind: 'codex' as const, file: hostPathOf(codexView(home, env).spec, 'auth.json') },
  ].map((l) => ({ ...l, start: readConfigStart(l.file) }));
  const snap: ConfigSnapshot = { file, start: readConfigStart(file), logins };
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const out = snapshotFile(stateDir);
  writeFileSync(out, JSON.stringify(snap), { mode: 0o600 });
  return out;
}

/** One file's start, in a known shape; null when it is not one. */
function startOf(start: Record<string, unknown>): ConfigStart | null {
  const kind = start.kind;
  if (kind === 'missing') return { kind };
  if (kind === 'text' && typeof start.text === 'string') return { kind, text: start.text };
  if (kind === 'link' && typeof start.link === 'string' && (typeof start.target === 'string' || start.target === null) && (typeof start.text === 'string' || start.text === null)) {
    return { kind, link: start.link, target: start.target, text: start.text };
  }
  if (kind === 'unreadable' && typeof start.why === 'string') return { kind, why: start.why };
  return null;
}

/** Reads a snapshot stashbase wrote, in a known shape; null when it is missing or not one. */
export function readSnapshot(path: string): ConfigSnapshot | null {
  const text = readBackText(path, MAX * 2 + 4096);
  if (text === null) return null;
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v !== 'object' || v === null) return null;
    const file = (v as { file?: unknown }).file;
    const start = (v as { start?: unknown }).start as Record<string, unknown> | null;
    if (typeof file !== 'string' || typeof start !== 'object' || start === null) return null;
    const first = startOf(start);
    if (first === null) return null;
    const rawLogins = (v as { logins?: unknown }).logins;
    const logins: NonNullable<ConfigSnapshot['logins']> = [];
    if (Array.isArray(rawLogins)) {
      for (const l of rawLogins.slice(0, 4) as unknown[]) {
        const o = l as { kind?: unknown; file?: unknown; start?: unknown } | null;
        const s = o !== null && typeof o === 'object' && typeof o.start === 'object' && o.start !== null ? startOf(o.start as Record<string, unknown>) : null;
        if (s !== null && (o!.kind === 'claude' || o!.kind === 'codex') && typeof o!.file === 'string') logins.push({ kind: o!.kind, file: o!.file, start: s });
      }
    }
    return { file, start: first, logins };
  } catch {
    return null;
  }
}

/** Writes `text` to `file` by a new file renamed over it: a link at the path is replaced, never followed. */
function replaceWith(file: string, text: string): void {
  const tmp = join(dirname(file), `.claude.json.stashbase-${randomBytes(6).toString('hex')}`);
  writeFileSync(tmp, text, { mode: 0o600, flag: 'wx' });
  renameSync(tmp, file);
}

/** Moves what is at `file` aside (never following it), under a name nothing holds (round 34: a folder of the agent's under the one name kept its file in place); returns where it went. */
function moveAside(file: string, session: string): string {
  const aside = freeName(`${file}.sandbox-${session}`, '');
  if ('failed' in aside) throw new Error(aside.failed);
  renameSync(file, aside.to);
  return aside.to;
}

/** How a file's changes are judged: Claude Code's config (executable entries put back), or a login file (the login alone kept). */
type Revert = (before: string | null, now: string) => { text: string | null; left: string[] };
const CONFIG: Revert = revertClaudeConfig;
const loginRevert = (kind: 'claude' | 'codex'): Revert => (before, now) =>
  // A login file the run made where there was none: the login of the run's choosing, not kept.
  before === null ? { text: null, left: ['the whole file (a login made in the run: log in outside the sandbox)'] } : mergeLogin(LOGIN_SHAPES[kind], before, now, before);

/** A regular file's executable entries put back against `before` (null: it did not exist); what cannot be read is moved aside and `before` restored. */
function settleText(file: string, before: string | null, session: string, revert: Revert = CONFIG): string[] {
  const st = lstatSync(file, { throwIfNoEntry: false });
  if (!st) {
    if (before === null) return [];
    replaceWith(file, before);
    return [`${file}: the sandbox removed it; it is back as it was`];
  }
  const restored = (aside: string, why: string) => {
    if (before !== null) replaceWith(file, before);
    return [`${file}: ${why}; it was moved to ${aside}${before !== null ? ' and the file is as it was' : ''}`];
  };
  if (!st.isFile()) return restored(moveAside(file, session), 'the sandbox left something that is not a regular file there');
  const now = readBackText(file, MAX);
  if (now === null) return restored(moveAside(file, session), 'the sandbox left a file too large to check');
  const r = revert(before, now);
  // A file stashbase cannot read as JSON (broken, or nested too deep) is not checked entry by entry: it is not kept.
  if (r.text === null && r.left.length > 0) return restored(moveAside(file, session), revert === CONFIG ? `the sandbox left a file stashbase cannot read as JSON (${r.left.join(', ')})` : `the sandbox left a file that is not kept (${r.left.join(', ')})`);
  if (r.text !== null) replaceWith(file, r.text + '\n');
  return r.left.length > 0 ? [`${file}: changes the sandbox made to ${r.left.join(', ')} were put back as they were (${revert === CONFIG ? 'they would make a later claude run or trust something' : 'only the login itself is kept'})`] : [];
}

/** Puts the file's executable entries back as they were at the start; returns what to tell you. */
export function settleClaudeConfig(snap: ConfigSnapshot, session: string): string[] {
  const { file, start } = snap;
  if (start.kind === 'unreadable') return [`${file}: ${start.why} when the run started, so it was not checked or rewritten after it; look at it before your next claude run`];
  const st = lstatSync(file, { throwIfNoEntry: false });
  if (start.kind === 'link') {
    if (st?.isSymbolicLink() && readlinkSync(file) === start.link) {
      // Still your link: the file it leads to is settled in its place.
      return start.target === null ? [] : settleText(start.target, start.text, session);
    }
    if (!st) {
      symlinkSync(start.link, file);
      return [`${file}: the link the sandbox removed was made again (to ${start.link})`];
    }
    const aside = moveAside(file, session);
    symlinkSync(start.link, file);
    return [`${file}: the sandbox replaced your link (to ${start.link}) with a file of its own; the link is back and the sandbox's file is at ${aside}`];
  }
  return settleText(file, start.kind === 'text' ? start.text : null, session);
}

/** After a killed run: settles from the snapshot its record names (nothing when there is none). */
export function settleFromSnapshot(path: string, session: string): string[] {
  const snap = readSnapshot(path);
  if (snap === null) return [];
  const out: string[] = [];
  try {
    out.push(...settleClaudeConfig(snap, session));
  } catch (e) {
    out.push(`${snap.file}: could not be checked after the run (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); look at it before your next claude run`);
  }
  // The login files: only a regular file (or none) at the start is settled; what else was there is yours as it was.
  for (const l of snap.logins ?? []) {
    if (l.start.kind !== 'text' && l.start.kind !== 'missing') continue;
    try {
      out.push(...settleText(l.file, l.start.kind === 'text' ? l.start.text : null, session, loginRevert(l.kind)));
    } catch (e) {
      out.push(`${l.file}: could not be checked after the run (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); look at it before your next run`);
    }
  }
  return out;
}
