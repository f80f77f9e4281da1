// After a run (or, for a run killed hard, the next one, from the record
// alone): what the agent's git wrote in the run's own git directory
// (lib/git/run-git-dir.ts) comes into your repository only through git's own
// checks, never by copying a file:
// - the run's directory is walked first: links, special files and setuid bits
//   are removed and named (lib/git/sanitize.ts);
// - refs are read by stashbase's own parser and decided ref by ref, for every
//   namespace (lib/git/ref-decisions.ts);
// - the objects reachable from what is taken (and the blobs the index stages)
//   are packed from the run's store by a git with stashbase's own config and
//   written by index-pack --strict into a quarantine inside your object store,
//   moved in only once every check has passed and they come to at most the
//   import's size bound written out (a refusal, a timeout or Ctrl+C leaves
//   nothing in your store); a missing or corrupt object refuses what needs
//   it, named;
// - refs change by git update-ref, each with the value it had, so a change of
//   yours during the run is never overwritten; your git writes your reflogs;
// - HEAD only as a symbolic ref to a branch that exists, or an object that
//   does; the index only when it parses and hides nothing new, written back
//   without extensions and with the stat data of what changed cleared
//   (lib/git/index-import.ts).
// Reflogs, config, hooks and every other file of the run stay behind.
//
// The whole import has one deadline (BUDGET_MS) and stops on Ctrl+C: then
// nothing more is imported and the run's git directory is kept aside, named,
// never imported again by itself (a record marked as begun is not retried).
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Command } from '../../templates/command.js';
import {
  catFileCheckArgs, detachHeadArgs, indexPackArgs, indexPackStdinArgs, isAncestorArgs, logArgs, OBJECTS_ARGS, PACK_ARGS, quarantinedCommand, readerConfig, REMOTES_ARGS, runObjectsCommand, type RunObjects, SIZES_ARGS, symbolicRefArgs, updateRefsArgs, yoursCommand,
} from '../../templates/git-import.js';
import { collect, eachLine, pipeInto } from '../exec.js';
import { readBack, readBackText } from '../readback/file.js';
import { firstFew, printable } from '../util/printable.js';
import { shellQuote } from '../../templates/shell-quote.js';
import { indexCandidate, type IndexCandidate, writeIndexBack } from './index-import.js';
import { followHead, treeHolds } from './index-follow.js';
import { decideRefs, type RefDecision, remoteTwins } from './ref-decisions.js';
import { parseRefFile, readRefStore, refFileText, type RefValue, sameRefs, sameValue } from './ref-store.js';
import { checkoutDir, repoFormat, type RunGitDirRecord, sameStamp, SHARED_OBJECTS, stampOf } from './run-git-dir.js';
import { dropCaches, forgedObject } from './forged-objects.js';
import { sanitizeGitDir } from './sanitize.js';
import { checkedOutBranches } from './checked-out.js';
import { runsCodeByName, toolConfigOf } from '../worktree/review.js';
import { isConfigFolderName } from '../paths/tool-configs.js';

export interface ImportReport {
  /** Changes to the run's own branch and HEAD: said as notes. */
  own: string[];
  /** Everything else, taken or not: said as warnings, even with --silent. */
  warnings: string[];
}

/** One git of the import at most this long. */
const TIMEOUT_MS = 120_000;
/** The whole import at most this long (STASHBASE_GIT_IMPORT_TIMEOUT, seconds, sets another). */
export const BUDGET_MS = 600_000;
/** Packs the agent may leave: past it (a pack hard-linked a thousand times costs a thousand index-packs), nothing is imported. */
export const MAX_PACKS = 256;
/** Trees nest at most this deep (git 2.42's core.maxTreeDepth): deeper, your git log -p and git diff crash. */
export const MAX_TREE_DEPTH = 4096;
/** Taken refs whose new commits are looked at for tool configs (one git each). */
const CONFIG_LOOKS = 64;
/** Ref changes named one by one at the end of a run; the rest in one line. */
const MAX_NAMED = 100;
/** When git refuses the one transaction, at most this many refs are tried one by one. */
const ONE_BY_ONE = 50;
/** What git makes at the top of a git directory in ordinary work (state files, locks, housekeeping): left in the run without a word. */
const ORDINARY = /\.lock$|^tmp_|^gc\.(pid|log)$|^(HEAD|index|packed-refs|shallow|description|ORIG_HEAD|FETCH_HEAD|MERGE_HEAD|MERGE_MSG|MERGE_MODE|MERGE_RR|AUTO_MERGE|CHERRY_PICK_HEAD|REVERT_HEAD|COMMIT_EDITMSG|TAG_EDITMSG|SQUASH_MSG|NOTES_MERGE_.*|BISECT_.*|rebase-merge|rebase-apply|sequencer|rr-cache|logs|refs|objects|worktrees|lfs|branches|info|hooks)$/;
/** An operation left half-done (rebase, am, cherry-pick, revert, merge): its HEAD and index are not taken, nor the operation (its queued exec steps would run on your --continue). */
const PAUSED = ['rebase-merge', 'rebase-apply', 'sequencer', 'MERGE_HEAD', 'CHERRY_PICK_HEAD', 'REVERT_HEAD'];

const short = (oid: string) => oid.slice(0, 12);
const oidOf = (v: RefValue | null) => (v?.kind === 'oid' ? v.oid : null);
const show = (v: RefValue | null) => (v === null ? 'nothing' : v.kind === 'oid' ? short(v.oid) : `-> ${v.target}`);

/** One import's facts and tools. */
interface Work {
  git: string;
  session: string;
  rec: RunGitDirRecord;
  reader: RunObjects;
  message: string;
  /** The run's HEAD and index folder, and yours. */
  here: string;
  there: string;
  report: ImportReport;
  /** When the import stops (Date.now() ms), and what stops it sooner (Ctrl+C). */
  deadline: number;
  budgetMs: number;
  /** MAX_IMPORT_BYTES, or what STASHBASE_GIT_IMPORT_MAX_SIZE says. */
  maxBytes: number;
  /** What the import has moved into your store so far, written out (one bound for all its parts). */
  brought: number;
  signal: AbortSignal;
  /** What is done so far: said when it stops. */
  stage: 'before' | 'refs';
}

/** The import stopped: out of time, or interrupted. */
export class ImportStopped extends Error {}

/** How long the next git may take, or the stop. */
function allowance(w: Work): number {
  if (w.signal.aborted) throw new ImportStopped('interrupted');
  const left = w.deadline - Date.now();
  if (left <= 0) throw new ImportStopped(`it took longer than ${Math.round(w.budgetMs / 1000)} s`);
  return Math.min(TIMEOUT_MS, left);
}

/** After a git that was killed: the stop, when the import's deadline or Ctrl+C killed it. */
function stopIfOver(w: Work): void {
  if (w.signal.aborted || Date.now() >= w.deadline) allowance(w);
}

async function run(w: Work, cmd: Command, input?: string): Promise<{ ok: boolean; out: string; err: string }> {
  const r = await collect(cmd, { timeoutMs: allowance(w), signal: w.signal, ...(input !== undefined ? { input } : {}) });
  if (r.signal === 'SIGKILL' && !r.over) stopIfOver(w);
  const err = r.over ? r.stderr : r.signal === 'SIGKILL' ? `timed out after ${TIMEOUT_MS / 1000} s` : (r.stderr.trim().split('\n').at(-1) ?? '');
  return { ok: r.code === 0, out: r.stdout, err };
}

const yours = (w: Work, args: string[], gitDir = w.rec.plan.gitDir) => yoursCommand(w.git, gitDir, args);
const reading = (w: Work, args: string[]) => runObjectsCommand(w.reader, args);

/** Names the agent made in the run's git directory that git's ordinary work does not: they stay there, and are named. */
function madeThere(rec: RunGitDirRecord): string[] {
  const known = new Set([...rec.plan.copies, ...rec.plan.readOnly.map((r) => r.name), SHARED_OBJECTS]);
  const top = readdirSync(rec.plan.dir).filter((n) => !known.has(n) && !ORDINARY.test(n));
  const worktrees = new Set([...(rec.plan.admin !== null ? [rec.plan.admin] : []), ...rec.plan.otherWorktrees]);
  let made: string[] = [];
  try {
    made = readdirSync(join(rec.plan.dir, 'worktrees')).filter((n) => !worktrees.has(n)).map((n) => `worktrees/${n}`);
  } catch {
    // none
  }
  return [...top, ...made].sort();
}

/** stashbase's own git directory for reading the run's objects: its config, no refs, your shallow boundary. */
function makeReader(rec: RunGitDirRecord, git: string): RunObjects {
  const at = `${rec.plan.dir}.reader`;
  rmSync(at, { recursive: true, force: true });
  mkdirSync(join(at, 'refs'), { recursive: true, mode: 0o700 });
  mkdirSync(join(at, 'objects'));
  writeFileSync(join(at, 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(at, 'config'), readerConfig(rec.plan.objectFormat));
  const shallow = readBack(join(rec.plan.gitDir, 'shallow'), 64 << 20);
  if (shallow.ok) writeFileSync(join(at, 'shallow'), shallow.data);
  return { git, readerDir: at, objects: join(rec.plan.dir, 'objects'), yours: join(rec.plan.gitDir, 'objects') };
}

/**
 * What one import brings into your object store at most, written out (STASHBASE_GIT_IMPORT_MAX_SIZE, bytes, sets
 * another): a pack's bytes bound nothing, as a delta of a few bytes can stand for a gigabyte (review, round 39: a pack
 * of 40 KB wrote 3 GiB into the user's store, and stayed there after its refusal).
 */
export const MAX_IMPORT_BYTES = 2 * 1024 ** 3;
/** The quarantines of one run's import in your object store (git's own are `incoming-…`). */
const quarantinePrefix = (session: string) => `incoming-stashbase-${session}-`;

/** A tree the tips reach (and your refs do not) nested deeper than MAX_TREE_DEPTH, named by its path's start; null when none. */
async function tooDeep(w: Work, tips: string[], yourTips: string[]): Promise<string | null> {
  let found: string | null = null;
  const r = await eachLine(reading(w, OBJECTS_ARGS), `${tips.join('\n')}\n${yourTips.map((t) => `^${t}`).join('\n')}\n`, (line) => {
    const path = line.slice(line.indexOf(' ') + 1);
    let depth = 0;
    for (let i = path.indexOf('/'); i >= 0 && depth <= MAX_TREE_DEPTH; i = path.indexOf('/', i + 1)) depth++;
    if (depth < MAX_TREE_DEPTH) return true;
    found = `a tree nested more than ${MAX_TREE_DEPTH} deep (${printable(path.slice(0, 60), true)}…): your git log -p, git show and git diff would crash on it`;
    return false;
  }, allowance(w), w.signal);
  if (found !== null) return found;
  if (r.killed) {
    stopIfOver(w);
    return `timed out after ${TIMEOUT_MS / 1000} s`;
  }
  return r.code === 0 ? null : `git rev-list: ${r.stderr.trim().split('\n').at(-1) ?? `exit ${r.code}`}`;
}

/**
 * Packs what the tips reach (and your refs do not) from the run's store into a
 * quarantine of your object store, and moves it in when every check passed;
 * null when done, else why not. Objects past the import's size bound stop the
 * whole import (ImportStopped): the run's git directory is kept aside.
 */
async function importObjects(w: Work, tips: string[], yourTips: string[]): Promise<string | null> {
  if (tips.length === 0) return null;
  const objects = join(w.rec.plan.gitDir, 'objects');
  const q = mkdtempSync(join(objects, quarantinePrefix(w.session)));
  try {
    // The depth is read while the objects are packed (both walk the same history): a tree too deep refuses what needs
    // it, and nothing of it stays.
    const [deep, packed] = await Promise.all([tooDeep(w, tips, yourTips), packObjects(w, tips, yourTips, q)]);
    const why = deep ?? packed;
    if (why !== null) return why;
    const size = await sizeOf(w, q);
    if (typeof size === 'string') return size;
    // And what the pack itself takes: git copies an object's compressed bytes as they are, and a stream of empty deflate
    // blocks stands for nothing (review of round 39: a 12-byte blob took 512 MiB in the store, and git gc kept it).
    const stored = storedBytes(q);
    const cost = Math.max(size, stored);
    if (w.brought + cost > w.maxBytes) throw overBound(w, stored > size ? `its pack takes ${bytesSaid(w.brought + cost)} in your object store, more than the` : `its objects come to ${bytesSaid(w.brought + cost)} written out, more than the`);
    const moved = moveIn(q, objects);
    if (moved === null) w.brought += cost;
    return moved;
  } finally {
    rmSync(q, { recursive: true, force: true });
  }
}

/** What a loose object takes on disk at least: one file system block. */
const LOOSE_BLOCK = 4096;

/** The stop past the import's bound: `what` says what passed it, up to "… the". */
const overBound = (w: Work, what: string) => new ImportStopped(`${what} ${bytesSaid(w.maxBytes)} one import brings into your repository; STASHBASE_GIT_IMPORT_MAX_SIZE, in bytes, sets another bound`);

const bytesSaid = (n: number) => (n >= 1024 ** 3 ? `${(n / 1024 ** 3).toFixed(1)} GiB` : `${(n / 1024 ** 2).toFixed(1)} MiB`);

async function packObjects(w: Work, tips: string[], yourTips: string[], q: string): Promise<string | null> {
  const input = `${tips.join('\n')}\n--not\n${yourTips.join('\n')}\n`;
  const r = await pipeInto(reading(w, PACK_ARGS), input, 12, (head) => {
    // A pack: "PACK", its version, its object count; none to write when empty.
    const count = head.length >= 12 && head.toString('latin1', 0, 4) === 'PACK' ? head.readUInt32BE(8) : 0;
    // Never more written into the quarantine than the room the bound leaves (review of round 39: a 65 KB pack of the
    // agent's, whose blob was a delta of one unreachable, came out of pack-objects as 1 GiB, all written before the bound).
    return count === 0 ? null : quarantinedCommand(w.git, w.rec.plan.gitDir, q, indexPackStdinArgs(Math.max(1, w.maxBytes - w.brought)));
  }, allowance(w), w.signal);
  if (r.timedOut) {
    stopIfOver(w);
    return `timed out after ${TIMEOUT_MS / 1000} s`;
  }
  const last = (t: string) => t.trim().split('\n').at(-1) ?? '';
  // Past the room the bound leaves, index-pack stops, and pack-objects with it.
  if (r.consumed && r.consumed.code !== 0 && /pack exceeds maximum allowed size/.test(r.consumed.stderr)) {
    throw overBound(w, `its pack takes more than the ${bytesSaid(w.maxBytes - w.brought)} left of the`);
  }
  if (r.producer.code !== 0) return `git pack-objects: ${last(r.producer.stderr) || `exit ${r.producer.code}`}`;
  if (r.consumed && r.consumed.code !== 0) return `git index-pack: ${last(r.consumed.stderr) || `exit ${r.consumed.code}`}`;
  return null;
}

/** The bytes the quarantine's objects come to written out (each object's size as git gives it, no delta applied), or why unknown. */
async function sizeOf(w: Work, q: string): Promise<number | string> {
  const r = await run(w, quarantinedCommand(w.git, w.rec.plan.gitDir, q, SIZES_ARGS, false));
  if (!r.ok) return `git cat-file could not size them (${r.err})`;
  let total = 0;
  for (const line of r.out.split('\n')) {
    if (line === '') continue;
    if (!/^\d{1,15}$/.test(line)) return `git cat-file could not size them (${printable(line.slice(0, 40), true)})`;
    // Written out loose (as git gc writes the unreferenced ones the import keeps for you) each takes a block at least
    // (review of round 39: 200,000 tiny objects of a stash entry came in as 13 MB and took 802 MB after git gc).
    total += Math.max(Number(line), LOOSE_BLOCK);
  }
  return total;
}

/** The bytes of the quarantine's files (its pack, index and reverse index). */
function storedBytes(q: string): number {
  let total = 0;
  try {
    for (const n of readdirSync(join(q, 'pack'))) total += lstatSync(join(q, 'pack', n)).size;
  } catch {
    // no pack
  }
  return total;
}

/**
 * The quarantine's pack moved into your object store: the pack first, its
 * index last (git reads a pack only through its index), by rename (the same
 * file system: the quarantine is inside your store). Null when done.
 */
function moveIn(q: string, objects: string): string | null {
  const rank = (n: string) => (n.endsWith('.pack') ? 0 : n.endsWith('.idx') ? 2 : 1);
  try {
    const names = readdirSync(join(q, 'pack')).filter((n) => /^pack-[0-9a-f]{40,64}\.(pack|rev|idx)$/.test(n)).sort((a, b) => rank(a) - rank(b));
    if (names.length > 0) mkdirSync(join(objects, 'pack'), { recursive: true });
    for (const n of names) renameSync(join(q, 'pack', n), join(objects, 'pack', n));
    return null;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' && !existsSync(join(q, 'pack'))) return null;
    return `its objects could not be moved into your object store (${(e as Error).message})`;
  }
}

/** Quarantines an import of the run cut off by a crash left in your object store: removed (nothing in them was taken). */
function removeQuarantines(objects: string, session: string): void {
  let names: string[] = [];
  try {
    names = readdirSync(objects);
  } catch {
    return;
  }
  for (const n of names) if (n.startsWith(quarantinePrefix(session))) rmSync(join(objects, n), { recursive: true, force: true });
}

/** The first of the objects that is not a blob in the run's store or yours (named with what it is), or null. */
async function notBlobs(w: Work, oids: string[]): Promise<string | null> {
  if (oids.length === 0) return null;
  const r = await run(w, reading(w, catFileCheckArgs), `${oids.join('\n')}\n`);
  if (!r.ok) return `objects git cannot check (${r.err})`;
  for (const line of r.out.split('\n').filter(Boolean)) {
    const [oid = '', type = ''] = line.split(' ');
    if (type !== 'blob') return `${short(oid)} (${type === '' || type === 'missing' ? 'missing' : `a ${type}`})`;
  }
  return null;
}

/**
 * Every pack the agent left, indexed afresh by git: its own index files (and
 * everything else of pack/, and the commit-graph and multi-pack indexes of
 * objects/info) removed first, since they may lie about what a pack holds.
 * Null when all check out, else the first that does not.
 */
async function verifyPacks(w: Work): Promise<string | null> {
  const objects = join(w.rec.plan.dir, 'objects');
  for (const n of ['commit-graph', 'commit-graphs', 'multi-pack-index', 'packs']) rmSync(join(objects, 'info', n), { force: true, recursive: true });
  let names: string[] = [];
  try {
    names = readdirSync(join(objects, 'pack'));
  } catch {
    return null;
  }
  for (const n of names) if (!n.endsWith('.pack')) rmSync(join(objects, 'pack', n), { force: true, recursive: true });
  // One file under many names is one pack: the other names go (each would be indexed again).
  const seen = new Set<string>();
  const packs: string[] = [];
  for (const n of names.filter((x) => x.endsWith('.pack')).sort()) {
    const st = lstatSync(join(objects, 'pack', n), { throwIfNoEntry: false });
    const id = st ? `${st.dev}:${st.ino}` : n;
    if (seen.has(id)) rmSync(join(objects, 'pack', n), { force: true });
    else {
      seen.add(id);
      packs.push(n);
    }
  }
  if (packs.length > MAX_PACKS) return `${packs.length} packs, more than the ${MAX_PACKS} stashbase indexes from one run`;
  for (const n of packs) {
    const pack = join(objects, 'pack', n);
    const r = await run(w, reading(w, indexPackArgs(pack, `${pack.slice(0, -'.pack'.length)}.idx`)));
    if (!r.ok) return `${n} (git index-pack: ${r.err})`;
  }
  return null;
}

/** `f` of each item, at most `width` at once, the answers in the items' order. */
async function inTurns<T, R>(items: T[], width: number, f: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i] as T);
    }
  }));
  return out;
}

/** Which commits contain which: asked of git, four at a time, for the refs that moved (and new branches against their remote-tracking twins). */
async function fastForwards(w: Work, start: Map<string, RefValue>, agent: Map<string, RefValue>, current: Map<string, RefValue>, remotes: Set<string>): Promise<Set<string>> {
  const pairs = new Set<string>();
  for (const ref of new Set([...start.keys(), ...agent.keys()])) {
    const s = oidOf(start.get(ref) ?? null);
    const a = oidOf(agent.get(ref) ?? null);
    if (s && a && s !== a && !ref.startsWith('refs/tags/')) pairs.add(`${s} ${a}`);
    if (s === null && a !== null) for (const t of remoteTwins(ref, current, remotes)) pairs.add(`${oidOf(current.get(t) ?? null)} ${a}`);
  }
  const list = [...pairs];
  const ok = await inTurns(list, 4, async (p) => (await run(w, reading(w, isAncestorArgs(...(p.split(' ') as [string, string]))))).ok);
  return new Set(list.filter((_, i) => ok[i]));
}

/** The commits a fast-forward brings, as `git log` shows them (at most ten), read from the run's objects. */
async function commitList(w: Work, d: RefDecision): Promise<string> {
  if (d.kind !== 'fast-forward' || !d.take) return '';
  const r = await run(w, reading(w, logArgs(oidOf(d.start) as string, oidOf(d.agent) as string)));
  // Each subject cut to 100 columns by git (padded: the padding trimmed), so what the agent wrote bounds nothing here.
  const lines = r.out.split('\n').map((l) => l.trimEnd()).filter(Boolean);
  return [...lines.slice(0, 10).map((l) => `  ${l}`), ...(lines.length > 10 ? ['  …'] : [])].join('\n');
}

/**
 * The tool configs (lib/paths/tool-configs.ts) a taken ref's new commits change, against where it was (a new branch:
 * against where the run's own branch started). The run kept them read-only or moved them aside in your tree, but a
 * commit carries them past that (review, round 28e: a .gitmodules committed, then removed from the tree and the index,
 * was what git submodule update --init read from HEAD and cloned; an .npmrc committed came back as HEAD's, for your
 * next git restore, reset or stash to put in place).
 */
async function configsCommitted(w: Work, d: RefDecision, ownStart: string | null): Promise<string[] | { failed: string }> {
  if (!d.take || d.kind === 'deleted' || d.kind === 'symbolic') return [];
  return configsBetween(w, d.kind === 'created' ? ownStart : oidOf(d.start), oidOf(d.agent));
}

/**
 * The tool configs any commit from `from` (exclusive) to `to` adds, changes or
 * removes, each commit's own changes against each of its parents (review,
 * round 28f: one added in a commit and removed in the next came back by your
 * git reset --hard HEAD~1), and links committed at a config folder's name (a
 * `.cargo` or `.claude` link to a folder of innocent name holding the config).
 * With no `from`, every file of `to`.
 */
async function configsBetween(w: Work, from: string | null, to: string | null): Promise<string[] | { failed: string }> {
  if (to === null) return [];
  const r = await run(w, reading(w, from === null ? ['ls-tree', '-r', '-z', '--full-tree', to] : ['log', '--raw', '-z', '-m', '--no-renames', '--format=', `${from}..${to}`]));
  // One git cannot answer for is said, never passed as none (the agent's objects are what it reads).
  if (!r.ok) return { failed: r.err || 'git failed' };
  const found = new Set<string>();
  const fields = r.out.split('\0');
  for (let i = 0; i < fields.length; i++) {
    const f = (fields[i] as string).replace(/^\n+/, '');
    if (f === '') continue;
    let mode: string;
    let path: string;
    if (from === null) {
      // ls-tree: "<mode> <type> <oid>\t<path>"
      const m = /^(\d{6}) \S+ [0-9a-f]+\t([\s\S]*)$/.exec(f);
      if (!m) return { failed: 'its files could not all be read' };
      [mode, path] = [m[1] as string, m[2] as string];
    } else {
      const m = /^:(\d{6}) (\d{6}) [0-9a-f]+ [0-9a-f]+ [A-Z]\d*$/.exec(f);
      if (!m || i + 1 >= fields.length) return { failed: 'its changes could not all be read' };
      [mode, path] = [m[2] as string, fields[++i] as string];
      // A submodule's commit added or moved (review, round 30): git submodule update checks out the agent's choice.
      if (m[1] === '160000') found.add(path);
    }
    if (mode === '160000' || toolConfigOf(path) !== null || (mode === '120000' && isConfigFolderName(path.slice(path.lastIndexOf('/') + 1)))) found.add(path);
  }
  return [...found].sort();
}

/**
 * What is said of the configs commits bring (`where`: "the agent's commits on <ref>", "the commits at the detached
 * HEAD"): nothing where there are none; ten paths at most, the rest counted.
 */
function configsSaid(where: string, paths: string[] | { failed: string }, from: string, to: string): string | null {
  if (!Array.isArray(paths)) return `${where} could not be looked at for files your tools run or obey (${printable(paths.failed, true)}): review them before you check them out`;
  if (paths.length === 0) return null;
  const shown = paths.slice(0, 10).map((p) => printable(p, true)).join(', ') + (paths.length > 10 ? `, and ${paths.length - 10} more` : '');
  return `${where} change files your tools run or obey (${shown}): the run kept them as they were in your tree, but git puts the commits' version there on a checkout, reset, restore or stash of them, and git submodule reads .gitmodules from HEAD; review them (git diff ${from} ${to} -- <file>) before you do`;
}

/** A command to paste, unless a name in it holds characters shown escaped. */
function keepCommand(cmd: string): string {
  return printable(cmd, true) === cmd ? `${cmd} takes it` : 'its name holds characters shown escaped here: no command is printed to paste';
}

/** A command to paste, its ref name shell-quoted (git allows $, ( and ; in names); none when the name holds characters shown escaped. */
function undoHint(d: RefDecision): string {
  const cmd = d.kind === 'created' ? `git update-ref -d ${shellQuote(d.ref)}` : `git update-ref ${shellQuote(d.ref)} ${oidOf(d.start)}`;
  return printable(cmd, true) === cmd ? `undo: ${cmd}` : 'its name holds characters shown escaped here: no command is printed to paste';
}

function describe(d: RefDecision, commits: string): string {
  const what =
    d.kind === 'created' ? `created ${d.ref} at ${show(d.agent)}`
      : d.kind === 'deleted' ? `deleted ${d.ref} (at ${show(d.start)})`
      : d.kind === 'fast-forward' ? `added commits to ${d.ref}`
      : d.kind === 'moved' ? `moved ${d.ref} (${show(d.start)} -> ${show(d.agent)})`
      : d.kind === 'symbolic' ? `changed the symbolic ref ${d.ref} (${show(d.start)} -> ${show(d.agent)})`
      : `rewrote ${d.ref} (${show(d.start)} -> ${show(d.agent)})`;
  if (!d.take) return `the agent ${what}: not taken (${d.reason})`;
  return `the agent ${what}: taken (${undoHint(d)})${commits ? `:\n${commits}` : ''}`;
}

/** Your remotes: those your config names, and those you have remote-tracking refs of. */
async function remoteNames(w: Work, current: Map<string, RefValue>): Promise<Set<string>> {
  const out = new Set<string>();
  for (const ref of current.keys()) {
    const m = /^refs\/remotes\/([^/]+)\//.exec(ref);
    if (m) out.add(m[1] as string);
  }
  const r = await run(w, yours(w, REMOTES_ARGS));
  for (const key of r.ok ? r.out.split('\0') : []) {
    const k = key.trim();
    if (k.startsWith('remote.') && k.lastIndexOf('.') > 'remote.'.length) out.add(k.slice('remote.'.length, k.lastIndexOf('.')));
  }
  return out;
}

/**
 * The branches checkouts other than the run's have (lib/git/checked-out.ts): your main checkout's when the run is in a
 * linked worktree, or its checkout is on an engine (a remote run: review, round 39, a resumed run moved the branch
 * your checkout had, under its working tree); every other worktree's.
 */
function checkedOutElsewhere(rec: RunGitDirRecord, current: Map<string, RefValue>): Map<string, string> {
  const skip = rec.plan.remote === true ? null : rec.plan.admin === null ? 'main' : rec.plan.admin;
  return checkedOutBranches(rec.plan.gitDir, current, skip);
}

type HeadChoice = { value: RefValue } | { refused: string } | null;

/**
 * The run's HEAD when it may come back: a branch not checked out elsewhere (a
 * worktree run's own branch only), or an object id; and yours unchanged meanwhile.
 */
function headCandidate(w: Work, paused: string[], elsewhere: Map<string, string>): HeadChoice {
  const { rec, here, there } = w;
  const read = readBack(join(here, 'HEAD'), 4096);
  const agent = read.ok ? parseRefFile(refFileText(read.data)) : null;
  if (sameStamp(stampOf(join(here, 'HEAD')), rec.start.runHead) || sameValue(agent, rec.start.head)) return null;
  if (paused.length > 0) return null; // said with the paused operation
  const now = readBack(join(there, 'HEAD'), 4096);
  if (!sameValue(now.ok ? parseRefFile(refFileText(now.data)) : null, rec.start.head)) return { refused: `${there}/HEAD changed during the run both on your side and in the sandbox: yours is kept` };
  if (agent === null) return { refused: `the sandbox's HEAD is ${read.ok ? 'neither a branch nor an object id' : read.why}: not taken (${there}/HEAD is kept)` };
  if (agent.kind === 'symref') {
    if (!agent.target.startsWith('refs/heads/')) return { refused: `the sandbox's HEAD points at ${agent.target}, not a branch: not taken` };
    if (rec.plan.fixedOwn !== null && agent.target !== rec.plan.fixedOwn) return { refused: `the sandbox's HEAD points at ${agent.target}, not at the run's own branch ${rec.plan.fixedOwn}: not taken` };
    const where = elsewhere.get(agent.target);
    if (where !== undefined) return { refused: `the sandbox's HEAD points at ${agent.target}, which is checked out in ${where}: not taken` };
  }
  return { value: agent };
}

/** Refs: one transaction, each with the value it must still have; if it fails, one by one. */
async function writeRefs(w: Work, decisions: RefDecision[]): Promise<void> {
  const lineOf = (d: RefDecision) => (d.start === null ? `create ${d.ref}\0${oidOf(d.agent)}\0` : `update ${d.ref}\0${oidOf(d.agent)}\0${oidOf(d.start)}\0`);
  const refuse = (d: RefDecision, err: string) => Object.assign(d, { take: false, reason: `git update-ref refused it: ${err}` });
  const plain = decisions.filter((d) => d.take);
  const all = plain.length > 0 ? await run(w, yours(w, updateRefsArgs(w.message)), plain.map(lineOf).join('')) : null;
  if (all !== null && !all.ok) {
    // Ref by ref only for a few (a git process each); a refused transaction of many refuses them all.
    if (plain.length > ONE_BY_ONE) for (const d of plain) refuse(d, all.err);
    else {
      for (const d of plain) {
        const one = await run(w, yours(w, updateRefsArgs(w.message)), lineOf(d));
        if (!one.ok) refuse(d, one.err);
      }
    }
  }
}

async function applyHead(w: Work, v: RefValue): Promise<void> {
  const adminDir = w.rec.plan.admin === null ? w.rec.plan.gitDir : join(w.rec.plan.gitDir, 'worktrees', w.rec.plan.admin);
  if (v.kind === 'symref') {
    const exists = readRefStore(w.rec.plan.gitDir).refs.has(v.target);
    const r = exists ? await run(w, yours(w, symbolicRefArgs(w.message, v.target), adminDir)) : null;
    // Only the run's own branch is a note: HEAD on any other branch is said even with --silent.
    if (r?.ok) (v.target === w.rec.own ? w.report.own : w.report.warnings).push(`HEAD of ${w.there} now points at ${v.target}, as the sandbox left it`);
    else w.report.warnings.push(`the sandbox's HEAD points at ${v.target}, ${exists ? `which git refused (${r?.err})` : 'which does not exist in your repository'}: not taken (${w.there}/HEAD is kept)`);
    return;
  }
  const r = await run(w, yours(w, detachHeadArgs(w.message, v.oid), adminDir));
  w.report.warnings.push(r.ok ? `HEAD of ${w.there} is now detached at ${short(v.oid)}, as the sandbox left it` : `the sandbox's detached HEAD ${short(v.oid)} is not taken (git update-ref: ${r.err}; ${w.there}/HEAD is kept)`);
}

/** Checks what the run left and reads its refs; null when nothing of it may be imported (said why). */
function checkRunDir(w: Work): { refs: Map<string, RefValue> } | null {
  const { rec, report } = w;
  const where = `the run's git directory (for ${rec.plan.gitDir})`;
  const clean = sanitizeGitDir(rec.plan.dir);
  if (clean.fixed.length > 0) report.warnings.push(`${where} held what no git directory should; removed before anything was read: ${firstFew(clean.fixed.map((n) => printable(n, true)), 10)}`);
  if (clean.incomplete) {
    report.warnings.push(`${where} could not be checked whole: nothing of it is imported (your refs, HEAD and index are as they were)`);
    return null;
  }
  // The run's alternate named your store as the sandbox saw it; stashbase names yours itself.
  rmSync(join(rec.plan.dir, 'objects', 'info', 'alternates'), { force: true, recursive: true });
  const agent = readRefStore(rec.plan.dir);
  if (agent.incomplete) {
    report.warnings.push(`${where} holds more refs than stashbase reads: nothing of it is imported`);
    return null;
  }
  const made = madeThere(rec);
  if (made.length > 0) report.warnings.push(`${rec.plan.gitDir}: what the sandbox made there beyond refs, HEAD, the index and objects stays in the run's own git directory, not in yours: ${firstFew(made.map((n) => printable(n, true)), 10)}`);
  if (agent.problems.length > 0) report.warnings.push(`${where}: not refs, not imported: ${firstFew(agent.problems.map((n) => printable(n, true)), 10)}`);
  return { refs: agent.refs };
}

async function importWork(w: Work): Promise<void> {
  const { rec, report, here, there } = w;
  const checked = checkRunDir(w);
  if (checked === null) return;
  const start = new Map(rec.start.refs);
  const paused = PAUSED.filter((n) => existsSync(join(here, n)) && !existsSync(join(there, n)));
  const elsewhere = checkedOutElsewhere(rec, readRefStore(rec.plan.gitDir).refs);
  const head = headCandidate(w, paused, elsewhere);
  const indexChanged = !sameStamp(stampOf(join(here, 'index')), rec.start.runIndex);
  if (sameRefs(checked.refs, start) && head === null && !indexChanged && paused.length === 0) return;
  if (paused.length > 0) report.warnings.push(`the sandbox left a paused ${paused.join(', ')} in ${there}: its HEAD, index and the operation itself are not carried back (your checkout is where it was; what the agent committed on branches is imported as below)`);

  w.reader = makeReader(rec, w.git);
  const badPack = await verifyPacks(w);
  if (badPack !== null) {
    report.warnings.push(`a pack the agent left in its git directory does not check out: ${badPack}; nothing of the run is imported (your refs, HEAD and index are as they were)`);
    return;
  }
  const current = readRefStore(rec.plan.gitDir).refs;
  const remotes = await remoteNames(w, current);
  const ff = await fastForwards(w, start, checked.refs, current, remotes);
  const decisions = decideRefs({ start, agent: checked.refs, current, own: rec.own, checkedOutElsewhere: elsewhere, isAncestor: (s, a) => ff.has(`${s} ${a}`), remotes });
  // Refused, their objects still come in, unreferenced, so that nothing of the agent's work is lost, and the line says how
  // to keep them: the run's own branch (yours moved meanwhile, or it is checked out elsewhere), and a stash entry of the
  // agent's (never put on your stash).
  // And a new tag, a new or fast-forwarded remote-tracking ref of the agent's (review: never taken).
  const keptNew = (d: RefDecision) => (d.ref.startsWith('refs/tags/') && d.kind === 'created') || (d.ref.startsWith('refs/remotes/') && (d.kind === 'created' || d.kind === 'fast-forward'));
  const aside = decisions.filter((d) => !d.take && d.agent?.kind === 'oid' && (d.ref === rec.own || (d.ref === 'refs/stash' && d.kind !== 'symbolic') || keptNew(d))).map((d) => ({
    d,
    how: (at: string) => (d.ref === 'refs/stash'
      ? `the entry is in your object store: git stash show -p --include-untracked ${at} shows it, git stash store -m "from run ${w.session}" ${at} puts it on your stash`
      : d.ref.startsWith('refs/tags/') ? `its objects are in your object store: ${keepCommand(`git tag ${shellQuote(d.ref.slice('refs/tags/'.length))} ${at}`)}`
      : d.ref.startsWith('refs/remotes/') ? `its commits are in your object store: git branch stashbase-kept-${w.session} ${at} keeps them under a name of yours`
      : `the agent's commits are in your object store: git branch stashbase-kept-${w.session} ${at} keeps them`),
    kept: true,
  }));
  const index: IndexCandidate | string | null = paused.length > 0 || !indexChanged ? null : indexCandidate(here, there, rec);
  if (typeof index === 'string') report.warnings.push(index);

  // The objects: all that is taken at once; on a failure, each part alone, so one bad ref refuses only itself.
  let headValue = head !== null && 'value' in head ? head.value : null;
  let indexOk = index !== null && typeof index !== 'string';
  if (indexOk) {
    // What a file entry stages must be a file's content: a commit there would bring its whole history in, and your next commit would record it as a file.
    const notBlob = await notBlobs(w, (index as IndexCandidate).oids);
    if (notBlob !== null) {
      indexOk = false;
      report.warnings.push(`the sandbox's index stages ${notBlob} where a file's content goes: not taken (${there}/index is kept)`);
    }
  }
  const groups: Array<{ tips: string[]; refuse: (why: string) => void }> = [
    ...decisions.filter((d) => d.take && d.agent?.kind === 'oid').map((d) => ({ tips: [oidOf(d.agent) as string], refuse: (why: string) => void Object.assign(d, { take: false, reason: `its objects cannot be imported: ${why}` }) })),
    ...(headValue?.kind === 'oid' ? [{ tips: [headValue.oid], refuse: (why: string) => void ((headValue = null), report.warnings.push(`the sandbox's detached HEAD cannot be imported (${why}): not taken`)) }] : []),
    ...aside.map((a) => ({ tips: [oidOf(a.d.agent) as string], refuse: () => void ((a.kept = false), (a.d.reason = `${a.d.reason}; its objects could not be kept either`)) })),
    ...(indexOk && (index as IndexCandidate).oids.length > 0 ? [{ tips: (index as IndexCandidate).oids, refuse: (why: string) => void ((indexOk = false), report.warnings.push(`the files the sandbox staged cannot be imported (${why}): its index is not taken (${there}/index is kept)`)) }] : []),
  ];
  const yourTips = [...new Set([...current.values()].map(oidOf).filter((x): x is string => x !== null))];
  const together = await importObjects(w, groups.flatMap((g) => g.tips), yourTips);
  if (together !== null) {
    // Part by part, for a few parts, unless time ran out (it would again, part after part).
    if (groups.length > ONE_BY_ONE || together.startsWith('timed out')) for (const g of groups) g.refuse(together);
    else {
      for (const g of groups) {
        const why = await importObjects(w, g.tips, yourTips);
        if (why !== null) g.refuse(why);
      }
    }
  }
  // What each fast-forward brings, listed once the objects are in (past the bound nothing is parsed), four gits at a time
  // (review of round 39: one git log per ref at once, each up to 4 GiB on a commit message of 400 MiB).
  const lists = inTurns(decisions, 4, (d) => commitList(w, d));
  // Where your checkout's HEAD is before the refs move: an index that does not come back follows it (below).
  const headBefore = await headAt(w);
  w.stage = 'refs';
  await writeRefs(w, decisions);
  for (const a of aside) if (a.kept) a.d.reason += `; ${a.how(oidOf(a.d.agent) as string)}`;
  const commits = await lists;
  // Each change named, up to a point: a flood of refs is said in one line past it.
  // The run's own branch is the agent's to move, and said as a note; a rewrite of it is said as a warning, --silent or
  // not: commits that were on it at the run's start (yours added to it before a --resume, found in review) are no longer.
  for (const [i, d] of decisions.slice(0, MAX_NAMED).entries()) {
    const said = describe(d, d.take ? (commits[i] ?? '') : '');
    if (!d.take || d.ref !== rec.own) report.warnings.push(said);
    else if (d.kind === 'rewritten') report.warnings.push(`${said}; commits that were on it when the run started are no longer on it`);
    else report.own.push(said);
  }
  const ownStart = oidOf(decisions.find((d) => d.ref === rec.own)?.start ?? null);
  // Taken refs, the run's own first (a flood of refs before it hides nothing of it), up to a bound of git calls; past it,
  // said.
  const byOwn = [...decisions].filter((d) => d.take).sort((a, b) => Number(b.ref === rec.own) - Number(a.ref === rec.own));
  let configRefs = 0;
  if (byOwn.length > CONFIG_LOOKS) report.warnings.push(`the agent's commits on ${byOwn.length - CONFIG_LOOKS} of the refs taken were not looked at for files your tools run or obey (${CONFIG_LOOKS} were): review each taken ref's new commits before you check them out`);
  for (const d of byOwn.slice(0, CONFIG_LOOKS)) {
    const paths = await configsCommitted(w, d, ownStart);
    if (Array.isArray(paths) && (paths.length === 0 || ++configRefs > MAX_NAMED)) continue;
    const said = configsSaid(`the agent's commits on ${printable(d.ref, true)}`, paths, oidOf(d.kind === 'created' ? null : d.start) ?? ownStart ?? 'HEAD', oidOf(d.agent) ?? '');
    if (said !== null) report.warnings.push(said);
  }
  if (configRefs > MAX_NAMED) report.warnings.push(`and ${configRefs - MAX_NAMED} more refs of the agent's whose commits change files your tools run or obey: review each taken ref's new commits before you check them out`);
  if (decisions.length > MAX_NAMED) {
    const rest = decisions.slice(MAX_NAMED);
    report.warnings.push(`and ${rest.length} more ref changes of the agent's, ${rest.filter((d) => d.take).length} of them taken (git for-each-ref lists your refs; git reflog shows what stashbase wrote, under "${w.message}")`);
  }
  if (head !== null && 'refused' in head) report.warnings.push(head.refused);
  if (headValue !== null) await applyHead(w, headValue);
  // A detached HEAD taken brings its commits as a branch does (review, round 28f: a .gitmodules committed on it).
  if (headValue !== null && headValue.kind === 'oid') {
    const said = configsSaid('the commits at the detached HEAD', await configsBetween(w, ownStart, headValue.oid), ownStart ?? 'HEAD', headValue.oid);
    if (said !== null) report.warnings.push(said);
  }
  let indexBack = false;
  if (indexOk) {
    const said = writeIndexBack(there, rec, index as IndexCandidate);
    if (said !== null) report.warnings.push(said);
    else indexBack = true;
  }
  // The sandbox's index did not come back while the import moved your HEAD (review, round 28g: a commit staging a
  // read-only config): your index follows HEAD for the paths its commits changed.
  if (!indexBack && paused.length === 0) await indexFollows(w, headBefore);
}

/** The commit your checkout's HEAD is at; null when there is none (an unborn branch). */
async function headAt(w: Work): Promise<string | null> {
  const r = await run(w, yours(w, ['rev-parse', '-q', '--verify', 'HEAD^{commit}'], w.there));
  return r.ok && /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(r.out.trim()) ? r.out.trim() : null;
}

const EMPTY_TREE = { sha1: '4b825dc642cb6eb9a060e54bf8d69288fbee4904', sha256: '6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321' };

/**
 * After an import that moved your HEAD without the sandbox's index: left as
 * it was, your index would hold the old HEAD's files, git status would show
 * the agent's commits staged in reverse and a plain git commit would undo
 * them. The entries of the paths the commits changed are brought to the new
 * HEAD's where yours were the old HEAD's (lib/git/index-follow.ts), written by
 * git update-index; what you staged there yourself is kept and named. Not
 * when your index changed during the run, or was locked: said.
 */
async function indexFollows(w: Work, before: string | null): Promise<void> {
  const { there, rec, report } = w;
  const after = await headAt(w);
  if (after === null || after === before) return;
  if ((await run(w, yours(w, ['diff-index', '--cached', '--quiet', 'HEAD'], there))).ok) return;
  const label = `your index (${there}/index)`;
  const behind = (why: string): void => void report.warnings.push(`${label} differs from HEAD, which now has the agent's commits, and was left as it is (${why}): git status shows their changes staged in reverse, and a plain git commit would undo them; git reset (which leaves your files as they are) makes your index HEAD's, then stage what you want`);
  if (!sameStamp(stampOf(join(there, 'index')), rec.start.yourIndex)) return behind('it changed during the run');
  const format = rec.plan.objectFormat === 'sha256' ? 'sha256' : 'sha1';
  const [listed, changed] = await Promise.all([
    run(w, yours(w, ['ls-files', '-s', '-t', '-z'], there)),
    run(w, yours(w, ['diff-tree', '-r', '-z', '--no-renames', before ?? EMPTY_TREE[format], after], there)),
  ]);
  if (!listed.ok || !changed.ok) return behind(`git could not list it: ${printable(listed.ok ? changed.err : listed.err, true)}`);
  const top = rec.plan.workTree;
  if (top === undefined) return behind("the run's record does not name its working tree");
  const plan = followHead(listed.out, changed.out, treeHolds(top, format), (p) => runsCodeByName(p) !== null);
  if ('why' in plan) return behind(plan.why);
  if (!sameStamp(stampOf(join(there, 'index')), rec.start.yourIndex)) return behind('it changed while the import ended');
  const wrote = plan.moved === 0 ? { ok: true, err: '' } : await run(w, yours(w, ['update-index', '-z', '--index-info'], there), plan.input);
  if (!wrote.ok) return behind(`git update-index: ${printable(wrote.err, true)}`);
  if (plan.moved > 0) report.own.push(`${label} now has HEAD's version of the ${plan.moved === 1 ? 'file' : `${plan.moved} files`} the agent's commits changed (the sandbox's own index was not taken): git status shows where your working tree holds other content`);
  if (plan.asTree.length > 0) {
    const them = plan.asTree.length === 1 ? 'it' : 'them';
    report.warnings.push(`${label} keeps the old version of ${printable(firstFew(plan.asTree, 5), true)}, where your working tree does not hold the commits' version (a file the run kept from the agent, one of yours, a submodule's commit), while HEAD has the agent's: git status shows ${them} staged in reverse, and your next git commit takes ${them} back to the old version unless you stage the commits' version after reviewing it (git diff HEAD -- <file>)`);
  }
  if (plan.kept.length > 0) {
    report.warnings.push(`${label} keeps what you had staged at ${printable(firstFew(plan.kept, 5), true)}, which the agent's commits change too: git status shows their changes there staged in reverse, and a plain git commit would undo them; git restore --staged <file> makes an entry HEAD's`);
  }
}

/**
 * Imports the run's git work into your repository; `recordFile` is `<run git
 * dir>.json`, removed after (so a later run never imports it again); the run's
 * git directory goes with the run's state folder (lib/run/run-dir.ts).
 */
export interface ImportOptions {
  git: string;
  session: string;
  /** Where a stopped import keeps the run's git directory. */
  keptDir: string;
  budgetMs?: number;
  /** What the import brings into your object store at most, written out (MAX_IMPORT_BYTES). */
  maxBytes?: number;
  signal?: AbortSignal;
}

export async function importRunGitDir(recordFile: string, o: ImportOptions): Promise<ImportReport> {
  const rec = JSON.parse(readFileSync(recordFile, 'utf8')) as RunGitDirRecord & { begun?: boolean };
  const report: ImportReport = { own: [], warnings: [] };
  const budgetMs = o.budgetMs ?? BUDGET_MS;
  const w: Work = {
    git: o.git, session: o.session, rec, report, message: `stashbase: from run ${o.session}`,
    reader: { git: o.git, readerDir: '', objects: '', yours: '' },
    here: checkoutDir(rec.plan.dir, rec.plan.admin),
    there: checkoutDir(rec.plan.gitDir, rec.plan.admin),
    deadline: Date.now() + budgetMs, budgetMs, maxBytes: o.maxBytes ?? MAX_IMPORT_BYTES, brought: 0, signal: o.signal ?? new AbortController().signal, stage: 'before',
  };
  // An import that began and never ended (stashbase was killed during it) is not begun again: it could kill the next one too.
  const stopped = (why: string) => {
    const kept = keepAside(rec, o.keptDir);
    const done = w.stage !== 'before' ? 'what is named above is in your repository, the rest not'
      : w.brought > 0 ? 'no ref of it is in your repository (the objects of the parts checked before are, unreferenced: git gc prunes them in time)'
      : 'nothing of it is in your repository';
    report.warnings.push(`the import of the run's git work for ${rec.plan.gitDir} stopped (${why}): ${done}. ${kept}`);
  };
  try {
    if (rec.begun === true) {
      removeQuarantines(join(rec.plan.gitDir, 'objects'), o.session);
      stopped('an earlier import of it was cut off');
    }
    else {
      writeFileSync(recordFile, JSON.stringify({ ...rec, begun: true }));
      rewrittenThroughLinks(rec, o.git, report);
      await importWork(w);
    }
  } catch (e) {
    if (!(e instanceof ImportStopped)) throw e;
    stopped(e.message);
  } finally {
    rmSync(recordFile, { force: true });
    rmSync(`${rec.plan.dir}.reader`, { recursive: true, force: true });
  }
  return report;
}

/**
 * Your object store's files with other names that changed during the run, checked against their names: one the agent
 * rewrote through another name (a local clone's hard link, in the tree) is said, loudly (found in review: your checkout
 * then wrote the agent's script, and nothing said so). Nothing can undo it here: the object's own bytes are gone.
 */
function rewrittenThroughLinks(rec: RunGitDirRecord, git: string, report: ImportReport): void {
  const changed = new Set((rec.start.linked ?? []).filter(([p, s]) => !sameStamp(s, stampOf(p))).map(([p]) => p));
  if (changed.size === 0) return;
  const found = forgedObject(git, rec.plan.gitDir, (p) => changed.has(p));
  // The caches git reads objects through without checking them (a multi-pack index, a bitmap, a reverse index) among
  // them: removed (fourth review).
  const caches = dropCaches(rec.plan.gitDir, (p) => changed.has(p));
  if (caches.removed.length + caches.left.length > 0) report.warnings.push(`files of your repository's object store ${rec.plan.gitDir} with other names (a local clone's hard links) changed in the run: ${[...caches.removed.map((c) => `${c} removed (git works without it)`), ...caches.left.map((c) => `${c} could not be removed: remove it yourself`)].join(', ')}`);
  if (found !== null) report.warnings.push(`your repository's git directory ${rec.plan.gitDir} holds ${found.forged}, rewritten in the run through another name of the file (a hard link, as a local clone makes: one in the tree was the agent's to write): your git would check out what the agent put there under a name you trust; run git fsck there, and restore it from a remote or a clone you trust (git cat-file -t on a copy tells which)`);
}

/** What is kept of a run's git directory set aside: its objects and refs, nothing git obeys. */
const KEPT_DATA = new Set(['objects', 'refs', 'packed-refs', 'reftable', 'logs', 'HEAD']);

/** Moves the run's git directory out of the run's folder (which goes) to `keptDir`; says where, or why not. */
function keepAside(rec: RunGitDirRecord, keptDir: string): string {
  try {
    mkdirSync(dirname(keptDir), { recursive: true, mode: 0o700 });
    renameSync(rec.plan.dir, keptDir);
    // Its data alone: the agent's config, commondir (which names another config), hooks, info and the rest would be
    // obeyed by the git you look with (found in review: a gpg.program of the agent's ran at git log); stashbase writes
    // the config and, unless the agent's names a ref or a commit, the HEAD.
    for (const name of readdirSync(keptDir)) if (!KEPT_DATA.has(name)) rmSync(join(keptDir, name), { recursive: true, force: true });
    // Links, FIFOs and setuid bits out of what stays, before anything is written in it (found in review: kept after a
    // killed import, which had not walked it, an objects link led stashbase's alternates file elsewhere).
    sanitizeGitDir(keptDir);
    const head = readBackText(join(keptDir, 'HEAD'), 4096) ?? '';
    if (!/^(ref: refs\/[!-~]+|[0-9a-f]{40}|[0-9a-f]{64})\n?$/.test(head)) {
      rmSync(join(keptDir, 'HEAD'), { recursive: true, force: true });
      writeFileSync(join(keptDir, 'HEAD'), 'ref: refs/heads/main\n');
    }
    const format = repoFormat(rec.plan.gitDir);
    const extensions = [...(format.objectFormat === 'sha256' ? ['\tobjectformat = sha256'] : []), ...(format.reftable ? ['\trefstorage = reftable'] : [])];
    writeFileSync(join(keptDir, 'config'), `[core]\n\trepositoryformatversion = ${extensions.length > 0 ? 1 : 0}\n\tbare = true\n${extensions.length > 0 ? `[extensions]\n${extensions.join('\n')}\n` : ''}`, { flag: 'wx' });
    // Your objects as its alternate again (stashbase's own line, the agent's was removed): its history reads whole.
    // Written afresh, never through what is there (a link of the agent's, should a killed import have left one).
    mkdirSync(join(keptDir, 'objects', 'info'), { recursive: true });
    rmSync(join(keptDir, 'objects', 'info', 'alternates'), { recursive: true, force: true });
    writeFileSync(join(keptDir, 'objects', 'info', 'alternates'), `${join(rec.plan.gitDir, 'objects')}\n`, { flag: 'wx' });
    return `The run's git directory is kept in ${keptDir}: the agent's objects and refs, not imported (its config, hooks and other files removed; look with git --git-dir ${shellQuote(keptDir)} log --all, remove it when done)`;
  } catch (e) {
    return `The run's git directory could not be kept (${(e as Error).message})`;
  }
}
