// The run's index, when it comes back after a run (lib/git/import.ts): read
// without following a link, parsed, refused when an entry is one git would
// never write (a path out of the working tree or into a .git, out of order,
// repeated: your next `git restore .` would write it), or when it newly hides
// paths from your git status (assume-unchanged, skip-worktree) or stages a
// .gitmodules (read in place of a missing file) or a file that can run code on
// your machine (lib/worktree/review.ts), and written back by
// stashbase under git's own lock: its entries only (a cache-tree would let
// your next commit record trees other than the entries'; an untracked cache
// or fsmonitor token would hide files), with the stat data of every entry
// yours does not have byte for byte cleared, so that git compares those files
// by content and never trusts a size and time the agent chose.
import { realPathOf } from '../util/real-path.js';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { blobOid, treeContentAt } from './tree-content.js';
import { readBack } from '../readback/file.js';
import { firstFew, printable } from '../util/printable.js';
import { entryOid, indexLayout, indexProblem, type IndexEntryAt, type IndexLayout, INTENT_TO_ADD, rebuildIndex } from './git-index.js';
import { type RunGitDirRecord, sameStamp, stampOf } from './run-git-dir.js';
import { runsCodeByName } from '../worktree/review.js';

const MAX_INDEX_BYTES = 1 << 30;
const GITLINK = 0o160000;

export interface IndexCandidate {
  data: Buffer;
  layout: IndexLayout;
  /** Entries yours does not have, byte for byte. */
  fresh: IndexEntryAt[];
  /** The objects they stage (a submodule's commit is not this repository's). */
  oids: string[];
}

const oidLengthOf = (rec: RunGitDirRecord) => (rec.plan.objectFormat === 'sha256' ? 32 : 20);

const end = (l: IndexLayout, i: number) => l.entries[i + 1]?.at ?? l.entriesEnd;

/**
 * The entries of `now` that `old` does not have byte for byte: both sorted by
 * path bytes then stage, as git writes them, walked side by side.
 */
function freshEntries(nowBuf: Buffer, now: IndexLayout, oldBuf: Buffer, old: IndexLayout): IndexEntryAt[] {
  const out: IndexEntryAt[] = [];
  let j = 0;
  for (const [i, e] of now.entries.entries()) {
    // Latin-1 keys compare as their bytes do.
    for (let o = old.entries[j]; o !== undefined && (o.key < e.key || (o.key === e.key && o.stage < e.stage)); o = old.entries[++j]);
    const o = old.entries[j];
    const same = o !== undefined && o.key === e.key && o.stage === e.stage && nowBuf.compare(oldBuf, o.at, end(old, j), e.at, end(now, i)) === 0;
    if (!same) out.push(e);
  }
  return out;
}

/** The run's changed index (`here`) when it may come back over yours (`there`), or why not. */
export function indexCandidate(here: string, there: string, rec: RunGitDirRecord): IndexCandidate | string {
  const label = `${there}/index`;
  if (!sameStamp(stampOf(join(there, 'index')), rec.start.yourIndex)) return `${label} changed during the run both on your side and in the sandbox: yours is kept, the sandbox's is not taken`;
  const r = readBack(join(here, 'index'), MAX_INDEX_BYTES);
  if (!r.ok) return r.why === 'missing' ? `the sandbox removed its index: ${label} is kept` : `the sandbox's index is ${r.why}: not taken (${label} is kept)`;
  const oidLength = oidLengthOf(rec);
  const layout = indexLayout(r.data, oidLength);
  if (layout === null) return `the sandbox's index is not one stashbase can read (a split index, or not an index): not taken (${label} is kept)`;
  // An entry git would never add (a path out of the working tree or into a .git) is written there by your next git restore or checkout.
  const problem = indexProblem(r.data, layout, oidLength);
  if (problem !== null) return `the sandbox's index holds an entry git would never write (${printable(problem, true)}): not taken (${label} is kept)`;
  const before = readBack(join(there, 'index'), MAX_INDEX_BYTES);
  const old = before.ok ? indexLayout(before.data, oidLength) : null;
  const list = (paths: string[]) => printable(firstFew(paths, 5), true);
  const oldHidden = new Set(old?.entries.filter((e) => e.hidden).map((e) => e.key) ?? []);
  const newly = layout.entries.filter((e) => e.hidden && !oldHidden.has(e.key)).map((e) => e.path);
  if (newly.length > 0) {
    return `${label}: the sandbox's index marks ${list(newly)} assume-unchanged or skip-worktree, which hides their changes from your git status and git diff: it is not carried back (stage those files again yourself)`;
  }
  // git add -N: on a path your HEAD has, your next commit would record the file as deleted.
  const oldIta = new Set(old?.entries.filter((e) => (e.extended & INTENT_TO_ADD) !== 0).map((e) => e.key) ?? []);
  const ita = layout.entries.filter((e) => (e.extended & INTENT_TO_ADD) !== 0 && !oldIta.has(e.key)).map((e) => e.path);
  if (ita.length > 0) {
    return `${label}: the sandbox's index marks ${list(ita)} intent-to-add (git add -N), which your next commit records as deleted where your HEAD has the file: it is not carried back (stage those files again yourself)`;
  }
  const fresh = old !== null && before.ok ? freshEntries(r.data, layout, before.data, old) : layout.entries;
  // A .gitmodules staged: git reads it from the index where the file is missing (the end of the run moves a new one
  // aside), and your git submodule init then registers the repositories it names (found in review).
  const modules = fresh.filter((e) => e.path === '.gitmodules' || e.path.endsWith('/.gitmodules')).map((e) => e.path);
  if (modules.length > 0) {
    return `${label}: the sandbox's index stages ${list(modules)}, which your git submodule commands read from the index where the file is missing, to choose the repositories they fetch: it is not carried back (review the file, then stage it yourself)`;
  }
  // A file that can run code on your machine, staged: the working tree may hold other content (a tool config the run
  // kept from the agent: it could not write the file, but it could stage it), and your next git commit, git stash and
  // pop, or git restore takes what is staged (found in review).
  const code = fresh.filter((e) => runsCodeByName(e.path) !== null).map((e) => e.path);
  if (code.length > 0) {
    return `${label}: the sandbox's index stages ${list(code)}, which can run code on your machine (${runsCodeByName(code[0] as string)}) and which your next git commit, git stash or git restore takes from the index, whatever the file in your working tree holds: it is not carried back (review the files, then stage them yourself)`;
  }
  // A submodule's commit other than yours (review, round 30): git submodule update checks out what the index names.
  const oldOids = new Map(old === null || !before.ok ? [] : old.entries.filter((e) => (e.mode & 0o170000) === GITLINK).map((e) => [e.key, entryOid(before.data, e, oidLength)] as const));
  const submodules = fresh.filter((e) => (e.mode & 0o170000) === GITLINK && oldOids.has(e.key) && oldOids.get(e.key) !== entryOid(r.data, e, oidLength)).map((e) => e.path);
  if (submodules.length > 0) {
    return `${label}: the sandbox's index stages a submodule commit other than yours at ${list(submodules)}, which your git submodule update checks out: it is not carried back (review it, then stage it yourself)`;
  }
  // Only what the working tree holds (found in review: a hook staged into the folder core.hooksPath names, which the
  // run kept read-only, came back; so would anything the run protects, by any name): what the agent could not write,
  // it cannot stage either.
  const unheld = notInTree(r.data, fresh, oidLength, rec);
  if (unheld !== null) return `${label}: ${unheld}: it is not carried back (stage what you want of it yourself)`;
  return { data: r.data, layout, fresh, oids: [...new Set(fresh.filter((e) => (e.mode & 0o170000) !== GITLINK).map((e) => entryOid(r.data, e, oidLength)))] };
}

/** At most this much of the working tree is read to check what the index stages. */
const MAX_CHECKED_BYTES = 1 << 30;
const MAX_CHECKED_ENTRIES = 200_000;

/**
 * Why the index's new entries are not what the working tree holds (a file's
 * bytes, its executable bit, a link's target, read without following a link,
 * hashed as git hashes a blob), or null when each is.
 */
function notInTree(data: Buffer, fresh: IndexEntryAt[], oidLength: 20 | 32, rec: RunGitDirRecord): string | null {
  const top = rec.plan.workTree;
  if (top === undefined) return "the run's record does not name its working tree (made by an older stashbase)";
  if (fresh.length > MAX_CHECKED_ENTRIES) return `the sandbox's index stages ${fresh.length} entries, more than the ${MAX_CHECKED_ENTRIES} stashbase compares with the working tree`;
  const realTop = realPathOf(top);
  if (realTop === null) return `the working tree ${printable(top, true)} is gone`;
  const algorithm = oidLengthOf(rec) === 32 ? 'sha256' : 'sha1';
  let total = 0;
  const differ: string[] = [];
  for (const e of fresh) {
    const type = e.mode & 0o170000;
    if (type === GITLINK) continue;
    const content = heldAt(top, realTop, e, type, MAX_CHECKED_BYTES - total);
    if (content === 'too much') return `the files the sandbox's index stages hold more than ${MAX_CHECKED_BYTES >> 20} MiB, more than stashbase compares with the working tree`;
    if (content !== null) total += content.length;
    const oid = content === null ? null : blobOid(content, algorithm);
    if (oid !== entryOid(data, e, oidLength)) differ.push(e.path);
  }
  if (differ.length === 0) return null;
  const named = printable(firstFew(differ, 5), true);
  return `the sandbox's index stages ${named} other than the working tree holds ${differ.length === 1 ? 'it' : 'them'} (your next git commit, git stash and pop or git restore would take what is staged)`;
}

/** What the working tree holds at an entry's path, as git would hash it; null when it holds something else or nothing there; 'too much' past `room` bytes. */
function heldAt(top: string, realTop: string, e: IndexEntryAt, type: number, room: number): Buffer | null | 'too much' {
  // A name that is not UTF-8 is not looked for (it would not be found by its decoded text).
  if (Buffer.from(e.path).toString('latin1') !== e.key) return null;
  const held = treeContentAt(top, realTop, e.path, room);
  if (held === 'too much') return type === 0o120000 ? null : held;
  if (type === 0o120000) return held.kind === 'link' ? held.data : null;
  return held.kind === 'file' && ((e.mode & 0o111) !== 0) === held.executable ? held.data : null;
}

/** Writes the index over yours by git's own lock and a rename; null when done, else what to say. */
export function writeIndexBack(there: string, rec: RunGitDirRecord, c: IndexCandidate): string | null {
  const path = join(there, 'index');
  if (!sameStamp(stampOf(path), rec.start.yourIndex)) return `${path} changed during the run both on your side and in the sandbox: yours is kept, the sandbox's is not taken`;
  const written = writeIndexByLock(path, rebuildIndex(c.data, c.layout, c.fresh, oidLengthOf(rec)));
  if (written === 'locked') return `${path} was locked by a git of yours when the run ended: the sandbox's index is not carried back`;
  return written === null ? null : `${path} could not be replaced (${written.failed}): the sandbox's index is not carried back`;
}

/** An index written over `path` as git writes one: by its lock (never over a git of yours at work) and a rename. */
export function writeIndexByLock(path: string, data: Buffer): null | 'locked' | { failed: string } {
  const lock = `${path}.lock`;
  try {
    writeFileSync(lock, data, { flag: 'wx', mode: 0o644 });
  } catch {
    return 'locked';
  }
  try {
    renameSync(lock, path);
    return null;
  } catch (e) {
    rmSync(lock, { force: true });
    return { failed: (e as Error).message };
  }
}
