// A session is one `agent run`: its id (ags_ + lower-case base32) names the
// audit log, the Docker resources and the record in $STASHBASE_HOME/sessions/
// that exists exactly while the run lives.
import { randomBytes } from '../util/random.js';
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { homePaths } from '../home.js';
import type { ProtectedLink } from '../paths/protected-links.js';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

export function newSessionId(): string {
  const bytes = randomBytes(10); // 80 bits -> 16 base32 characters
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return `ags_${out}`;
}

export const SESSION_ID = /^ags_[a-z2-7]{16}$/;

export interface SessionRecord {
  id: string;
  pid: number;
  backend: string;
  mechanism: string;
  profile: string;
  cwd: string;
  argv: string[];
  startedAt: string;
  docker?: { network: string; holder: string; agent: string };
  /** A remote run (lib/remote/): the engine's address, the context named (null: DOCKER_HOST or the current one), the workspace volume there. */
  remote?: { engine: string; context: string | null; workspace: string };
  worktree?: string;
  /** Stand-in directories created for this run (removed by a later run if it crashed). */
  placeholders?: string[];
  /** Views built for this run (settled by a later run if it crashed). */
  views?: string[];
  /** The run directory (lib/run/run-dir.ts). */
  runDir?: string;
  /** Records of the run's own git directories (imported by a later run if it crashed). */
  gitDirs?: string[];
  /** macOS: the snapshot of ~/.claude.json at the start (lib/views/claude-config-watch.ts), settled by a later run if it crashed. */
  claudeConfig?: string;
  /**
   * The run's own teardown is done; what is left is the end-of-run check of its
   * tree (lib/git/nested-repo-guard.ts), with these settings. A record that
   * says so outlives the check, so that a check stopped by Ctrl+C or a kill is
   * made by the next run (found in review: the record went first, and an
   * agent that made the check long had it stopped for good).
   */
  ended?: { keep: string[]; writableOutside: string[]; newRepo: boolean; tree?: string; root?: string };
}

export function sessionFile(home: string, id: string): string {
  return join(homePaths(home).sessions, `${id}.json`);
}

export function writeSession(home: string, record: SessionRecord): string {
  const dir = homePaths(home).sessions;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = sessionFile(home, record.id);
  const links = protectedLinks.get(record.id);
  writeFileSync(file, JSON.stringify({ ...record, ...(links !== undefined && links.length > 0 ? { links } : {}) }, null, 2) + '\n', { mode: 0o600 });
  return file;
}

/** The links this process's runs put back as they end (lib/paths/protected-links.ts), told as each starts: written into its record. */
const protectedLinks = new Map<string, ProtectedLink[]>();

/** Tells the links a run's check puts back, so that a run killed before it has a later one put them back (review, round 33). */
export function noteProtectedLinks(id: string, links: ProtectedLink[]): void {
  protectedLinks.set(id, links);
}

/** A record's links as stashbase wrote them: three absolute strings each, anything else dropped. */
export function recordedLinks(rec: SessionRecord): ProtectedLink[] {
  const v: unknown = (rec as { links?: unknown }).links;
  if (!Array.isArray(v)) return [];
  return v.flatMap((l: unknown) => {
    if (l === null || typeof l !== 'object' || Array.isArray(l)) return [];
    const { path, target, folder } = l as Record<string, unknown>;
    return typeof path === 'string' && typeof target === 'string' && typeof folder === 'string' && path.startsWith('/') && folder.startsWith('/') && target !== '' ? [{ path, target, folder }] : [];
  });
}

type CheckSettings = { keep: string[]; writableOutside: string[]; newRepo: boolean; tree?: string; root?: string };
/** The check's settings of this process's runs, told as each run starts (lib/run/run-agent.ts). */
const checkSettings = new Map<string, () => CheckSettings>();

/** Tells the settings a run's end-of-run check is made with, for a record marked `ended` before the check (found in review: marked with none, a kill in between had the next run check with weaker ones). */
export function noteCheckSettings(id: string, settings: () => CheckSettings): void {
  checkSettings.set(id, settings);
}

/** Marks the run's record `ended` (its teardown done, its tree's check to come): the record stays until the check is made. */
export function endSession(home: string, id: string): void {
  const file = sessionFile(home, id);
  let rec: SessionRecord;
  try {
    rec = JSON.parse(readFileSync(file, 'utf8')) as SessionRecord;
  } catch {
    return; // never written (the run did not start), or gone
  }
  const tmp = `${file}.${process.pid}.tmp`;
  const c = checkSettings.get(id)?.() ?? { keep: [], writableOutside: [], newRepo: false, tree: '/' };
  try {
    writeFileSync(tmp, JSON.stringify({ ...rec, ended: { keep: [...c.keep], writableOutside: [...c.writableOutside], newRepo: c.newRepo, tree: c.tree, root: c.root } }, null, 2) + '\n', { mode: 0o600 });
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

export function removeSession(home: string, id: string): void {
  rmSync(sessionFile(home, id), { force: true });
}

export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Records left by runs whose process is gone (killed hard). */
export function staleSessions(home: string): SessionRecord[] {
  return readSessions(home).filter((r) => !processAlive(r.pid));
}

export function readSessions(home: string): SessionRecord[] {
  let names: string[];
  try {
    names = readdirSync(homePaths(home).sessions);
  } catch {
    return [];
  }
  const out: SessionRecord[] = [];
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    try {
      const rec = JSON.parse(readFileSync(join(homePaths(home).sessions, name), 'utf8')) as SessionRecord;
      if (SESSION_ID.test(rec.id) && name === `${rec.id}.json`) out.push(rec);
    } catch {
      // A torn or foreign file is not a live session.
    }
  }
  return out;
}

/** Sessions whose stashbase process is still alive on this machine. */
export function liveSessions(home: string): SessionRecord[] {
  return readSessions(home).filter((r) => processAlive(r.pid));
}

/** Ids of sessions whose stashbase process is still alive on this machine. */
export function liveSessionIds(home: string): Set<string> {
  return new Set(liveSessions(home).map((r) => r.id));
}
