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
//   written into yours by unpack-objects or index-pack --strict; a missing or
//   corrupt object refuses what needs it, named;
// - refs change by git update-ref, each with the value it had, so a change of
//   yours during the run is never overwritten; your git writes your reflogs;
// - HEAD only as a symbolic ref to a branch that exists, or an object that
//   does; the index only when it parses, hides nothing new, and its staged
//   objects are there, written back without extensions and with the stat data
//   of what changed cleared.
// Reflogs, config, hooks and every other file of the run stay behind.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Command } from '../../templates/command.js';
import {
  catFileCheckArgs, detachHeadArgs, isAncestorArgs, logArgs, PACK_ARGS, readerConfig, runObjectsCommand, type RunObjects, symbolicRefArgs, unpackArgs, updateRefsArgs, yoursCommand,
} from '../../templates/git-import.js';
import { collect, pipeInto } from '../exec.js';
import { readBack } from '../readback/file.js';
import { indexLayout, type IndexEntryAt, type IndexLayout, rebuildIndex } from './git-index.js';
import { decideRefs, type RefDecision } from './ref-decisions.js';
import { parseRefFile, readRefStore, type RefValue, sameRefs, sameValue } from './ref-store.js';
import { checkoutDir, type RunGitDirRecord, sameStamp, SHARED_OBJECTS, stampOf } from './run-git-dir.js';
import { sanitizeGitDir } from './sanitize.js';

export interface ImportReport {
  /** Changes to the run's own branch: said as notes. */
  own: string[];
  /** Everything else, taken or not: said as warnings, even with --silent. */
  warnings: string[];
}

const TIMEOUT_MS = 120_000;
const MAX_INDEX_BYTES = 1 << 30;
/** What git makes at the top of a git directory in ordinary work (state files, locks, housekeeping): left in the run without a word. */
const ORDINARY = /\.lock$|^tmp_|^gc\.(pid|log)$|^(HEAD|index|packed-refs|shallow|description|ORIG_HEAD|FETCH_HEAD|MERGE_HEAD|MERGE_MSG|MERGE_MODE|MERGE_RR|AUTO_MERGE|CHERRY_PICK_HEAD|REVERT_HEAD|COMMIT_EDITMSG|TAG_EDITMSG|SQUASH_MSG|NOTES_MERGE_.*|BISECT_.*|rebase-merge|rebase-apply|sequencer|rr-cache|logs|refs|objects|worktrees|lfs|branches|info|hooks)$/;

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

/** git's folders of an operation in progress (rebase, am; cherry-pick and revert): its HEAD and index are not taken, nor the operation (its queued exec steps would run on your --continue). */
const PAUSED = ['rebase-merge', 'rebase-apply', 'sequencer'];
/** State files of an operation left half-done: the same. */
const PAUSED_FILES = ['MERGE_HEAD', 'CHERRY_PICK_HEAD', 'REVERT_HEAD'];
const GITLINK = 0o160000;

const short = (oid: string) => oid.slice(0, 12);
const oidOf = (v: RefValue | null) => (v?.kind === 'oid' ? v.oid : null);
const show = (v: RefValue | null) => (v === null ? 'nothing' : v.kind === 'oid' ? short(v.oid) : `-> ${v.target}`);

interface Context {
  git: string;
  rec: RunGitDirRecord;
  session: string;
  reader: RunObjects;
  message: string;
}

async function run(cmd: Command, input?: string): Promise<{ ok: boolean; out: string; err: string }> {
  const r = await collect(cmd, { timeoutMs: TIMEOUT_MS, ...(input !== undefined ? { input } : {}) });
  const err = r.signal === 'SIGKILL' ? `timed out after ${TIMEOUT_MS / 1000} s` : (r.stderr.trim().split('\n').at(-1) ?? '');
  return { ok: r.code === 0, out: r.stdout, err };
}

const yours = (c: Context, args: string[], gitDir = c.rec.plan.gitDir) => yoursCommand(c.git, gitDir, args);

/** Packs what the tips reach (and yours does not) from the run's store into yours; null when done, else why not. */
async function importObjects(c: Context, tips: string[], yoursNow: string[]): Promise<string | null> {
  if (tips.length === 0) return null;
  const input = `${tips.join('\n')}\n--not\n${yoursNow.join('\n')}\n`;
  const r = await pipeInto(runObjectsCommand(c.reader, PACK_ARGS), input, 12, (head) => {
    // A pack: "PACK", its version, its object count; none to write when empty.
    const count = head.length >= 12 && head.toString('latin1', 0, 4) === 'PACK' ? head.readUInt32BE(8) : 0;
    return count === 0 ? null : yours(c, unpackArgs(count));
  }, TIMEOUT_MS);
  if (r.timedOut) return `timed out after ${TIMEOUT_MS / 1000} s`;
  const last = (t: string) => t.trim().split('\n').at(-1) ?? '';
  if (r.producer.code !== 0) return `git pack-objects: ${last(r.producer.stderr) || `exit ${r.producer.code}`}`;
  if (r.consumed && r.consumed.code !== 0) return `git ${r.consumer?.args.find((a) => a === 'unpack-objects' || a === 'index-pack')}: ${last(r.consumed.stderr) || `exit ${r.consumed.code}`}`;
  return null;
}

/** Which of the objects exist in your repository now. */
async function present(c: Context, oids: string[]): Promise<Set<string>> {
  if (oids.length === 0) return new Set();
  const r = await run(yours(c, catFileCheckArgs), `${oids.join('\n')}\n`);
  return new Set(r.out.split('\n').filter((l) => / (commit|tree|blob|tag)$/.test(l)).map((l) => l.split(' ')[0] as string));
}

function describe(d: RefDecision, commits: string): string {
  const undo = d.kind === 'created' ? `git update-ref -d ${d.ref}` : `git update-ref ${d.ref} ${oidOf(d.start)}`;
  const what =
    d.kind === 'created' ? `created ${d.ref} at ${show(d.agent)}`
      : d.kind === 'deleted' ? `deleted ${d.ref} (at ${show(d.start)})`
      : d.kind === 'fast-forward' ? `added commits to ${d.ref}`
      : d.kind === 'moved' ? `moved ${d.ref} (${show(d.start)} -> ${show(d.agent)})`
      : d.kind === 'symbolic' ? `changed the symbolic ref ${d.ref} (${show(d.start)} -> ${show(d.agent)})`
      : `rewrote ${d.ref} (${show(d.start)} -> ${show(d.agent)})`;
  if (!d.take) return `the agent ${what}: not taken (${d.reason})`;
  return `the agent ${what}: taken (undo: ${undo})${commits ? `:\n${commits}` : ''}`;
}

/** The commits a fast-forward brought, as `git log` shows them (at most ten). */
async function commitList(c: Context, d: RefDecision): Promise<string> {
  if (d.kind !== 'fast-forward') return '';
  const r = await run(yours(c, logArgs(oidOf(d.start) as string, oidOf(d.agent) as string)));
  const lines = r.out.trimEnd().split('\n').filter(Boolean);
  const shown = lines.slice(0, 10).map((l) => `  ${l}`);
  if (lines.length > 10) shown.push('  …');
  return shown.join('\n');
}

interface IndexCandidate {
  data: Buffer;
  layout: IndexLayout;
  fresh: IndexEntryAt[];
}

/** The run's index when it may come back (else a line saying why not, or null when it did not change). */
function indexCandidate(c: Context, paused: string[]): IndexCandidate | string | null {
  const { rec } = c;
  const here = checkoutDir(rec.plan.dir, rec.plan.admin);
  const there = checkoutDir(rec.plan.gitDir, rec.plan.admin);
  if (sameStamp(stampOf(join(here, 'index')), rec.start.runIndex)) return null;
  const label = `${there}/index`;
  if (paused.length > 0) return null; // said with HEAD
  if (!sameStamp(stampOf(join(there, 'index')), rec.start.yourIndex)) return `${label} changed during the run both on your side and in the sandbox: yours is kept, the sandbox's is not taken`;
  const r = readBack(join(here, 'index'), MAX_INDEX_BYTES);
  if (!r.ok) return r.why === 'missing' ? `the sandbox removed its index: ${label} is kept` : `the sandbox's index is ${r.why}: not taken (${label} is kept)`;
  const oidLength = rec.plan.objectFormat === 'sha256' ? 32 : 20;
  const layout = indexLayout(r.data, oidLength);
  if (layout === null) return `the sandbox's index is not one stashbase can read (a split index, or not an index): not taken (${label} is kept)`;
  const hidden = layout.entries.filter((e) => e.hidden).map((e) => e.path);
  const before = readBack(join(there, 'index'), MAX_INDEX_BYTES);
  const old = before.ok ? indexLayout(before.data, oidLength) : null;
  const oldHidden = new Set(old?.entries.filter((e) => e.hidden).map((e) => e.path) ?? []);
  const newly = hidden.filter((p) => !oldHidden.has(p));
  if (newly.length > 0) {
    return `${label}: the sandbox's index marks ${newly.slice(0, 5).join(', ')}${newly.length > 5 ? ` and ${newly.length - 5} more` : ''} assume-unchanged or skip-worktree, which hides their changes from your git status and git diff: it is not carried back (stage those files again yourself)`;
  }
  // An entry is fresh unless yours has the same one, byte for byte (its stat data included).
  const mine = new Map<string, Buffer>();
  if (old !== null && before.ok) {
    for (const [i, e] of old.entries.entries()) mine.set(`${e.stage}\0${e.path}`, before.data.subarray(e.at, old.entries[i + 1]?.at ?? old.entriesEnd));
  }
  const fresh = layout.entries.filter((e, i) => {
    const bytes = r.data.subarray(e.at, layout.entries[i + 1]?.at ?? layout.entriesEnd);
    const m = mine.get(`${e.stage}\0${e.path}`);
    return m === undefined || !m.equals(bytes);
  });
  return { data: r.data, layout, fresh };
}

/** Writes the index over yours by git's own lock and a rename. */
function writeIndex(path: string, content: Buffer): boolean {
  const lock = `${path}.lock`;
  try {
    writeFileSync(lock, content, { flag: 'wx', mode: 0o644 });
  } catch {
    return false;
  }
  try {
    renameSync(lock, path);
    return true;
  } catch {
    rmSync(lock, { force: true });
    return false;
  }
}

function makeReader(rec: RunGitDirRecord, at: string, git: string): RunObjects {
  rmSync(at, { recursive: true, force: true });
  mkdirSync(join(at, 'refs'), { recursive: true, mode: 0o700 });
  mkdirSync(join(at, 'objects'));
  writeFileSync(join(at, 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(at, 'config'), readerConfig(rec.plan.objectFormat));
  // A shallow repository's boundary, as yours records it.
  const shallow = readBack(join(rec.plan.gitDir, 'shallow'), 64 << 20);
  if (shallow.ok) writeFileSync(join(at, 'shallow'), shallow.data);
  return { git, readerDir: at, objects: join(rec.plan.dir, 'objects'), yours: join(rec.plan.gitDir, 'objects') };
}

/** Imports the run's git work into your repository; `recordFile` is `<run git dir>.json`. */
export async function importRunGitDir(recordFile: string, o: { git: string; session: string }): Promise<ImportReport> {
  const rec = JSON.parse(readFileSync(recordFile, 'utf8')) as RunGitDirRecord;
  const report: ImportReport = { own: [], warnings: [] };
  const { dir, gitDir } = rec.plan;
  const reader = join(dir + '.reader');
  try {
    await importInto(rec, o, report, reader);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(reader, { recursive: true, force: true });
    rmSync(recordFile, { force: true });
  }
  return report;

  async function importInto(rec: RunGitDirRecord, o: { git: string; session: string }, report: ImportReport, readerAt: string): Promise<void> {
    const where = `the run's git directory (for ${gitDir})`;
    const clean = sanitizeGitDir(dir);
    if (clean.fixed.length > 0) report.warnings.push(`${where} held what no git directory should; removed before anything was read: ${clean.fixed.slice(0, 10).join(', ')}${clean.fixed.length > 10 ? ` and ${clean.fixed.length - 10} more` : ''}`);
    if (clean.incomplete) return void report.warnings.push(`${where} could not be checked whole: nothing of it is imported (your refs, HEAD and index are as they were)`);
    // The run's alternate pointed at your store as the sandbox saw it; stashbase names yours itself.
    rmSync(join(dir, 'objects', 'info', 'alternates'), { force: true, recursive: true });
    const agent = readRefStore(dir);
    if (agent.incomplete) return void report.warnings.push(`${where} holds more refs than stashbase reads: nothing of it is imported`);
    const made = madeThere(rec);
    if (made.length > 0) report.warnings.push(`${gitDir}: what the sandbox made there beyond refs, HEAD, the index and objects stays in the run's own git directory, not in yours: ${made.join(', ')}`);
    if (agent.problems.length > 0) report.warnings.push(`${where}: not refs, not imported: ${agent.problems.slice(0, 10).join(', ')}${agent.problems.length > 10 ? ` and ${agent.problems.length - 10} more` : ''}`);
    const start = new Map(rec.start.refs);
    const here = checkoutDir(dir, rec.plan.admin);
    const there = checkoutDir(gitDir, rec.plan.admin);
    const headRead = readBack(join(here, 'HEAD'), 4096);
    const agentHead = headRead.ok ? parseRefFile(headRead.data.toString('latin1')) : null;
    const headChanged = !sameStamp(stampOf(join(here, 'HEAD')), rec.start.runHead) && !sameValue(agentHead, rec.start.head);
    const indexChanged = !sameStamp(stampOf(join(here, 'index')), rec.start.runIndex);
    if (sameRefs(agent.refs, start) && !headChanged && !indexChanged) return;

    const c: Context = { git: o.git, rec, session: o.session, reader: makeReader(rec, readerAt, o.git), message: `stashbase: from run ${o.session}` };
    const paused = [...PAUSED.filter((d) => existsSync(join(here, d)) && !existsSync(join(there, d))), ...PAUSED_FILES.filter((f) => existsSync(join(here, f)) && !existsSync(join(there, f)))];
    const current = readRefStore(gitDir).refs;
    const ancestor = new Map<string, boolean>();
    const isAncestorAsync = async (old: string, now: string) => (await run(runObjectsCommand(c.reader, isAncestorArgs(old, now)))).ok;
    // Fast-forward answers first (git, asynchronously), then the pure decision.
    for (const ref of new Set([...start.keys(), ...agent.refs.keys()])) {
      const s = oidOf(start.get(ref) ?? null);
      const a = oidOf(agent.refs.get(ref) ?? null);
      if (s && a && s !== a && !ref.startsWith('refs/tags/')) ancestor.set(`${s} ${a}`, await isAncestorAsync(s, a));
    }
    const decisions = decideRefs({ start, agent: agent.refs, current, own: rec.own, isAncestor: (s, a) => ancestor.get(`${s} ${a}`) === true });

    // HEAD and the index: decided before the objects they need are imported.
    let head: { value: RefValue; why: null } | { value: null; why: string } | null = null;
    if (headChanged && paused.length > 0) {
      report.warnings.push(`the sandbox left a paused ${paused.join(', ')} in ${there}: its HEAD, index and the operation itself are not carried back (your checkout is where it was; commits the agent made on branches are imported as above)`);
    } else if (headChanged) {
      const yoursNow = readBack(join(there, 'HEAD'), 4096);
      const yourHead = yoursNow.ok ? parseRefFile(yoursNow.data.toString('latin1')) : null;
      if (!sameValue(yourHead, rec.start.head)) head = { value: null, why: `${there}/HEAD changed during the run both on your side and in the sandbox: yours is kept` };
      else if (agentHead === null) head = { value: null, why: `the sandbox's HEAD is ${headRead.ok ? 'neither a branch nor an object id' : headRead.why}: not taken (${there}/HEAD is kept)` };
      else if (agentHead.kind === 'symref' && !agentHead.target.startsWith('refs/heads/')) head = { value: null, why: `the sandbox's HEAD points at ${agentHead.target}, not a branch: not taken` };
      else head = { value: agentHead, why: null };
    }
    const index = indexCandidate(c, paused);
    if (typeof index === 'string') report.warnings.push(index);
    const stagedBlobs = index !== null && typeof index !== 'string' ? [...new Set(index.fresh.filter((e) => (e.mode & 0o170000) !== GITLINK).map((e) => e.oid))] : [];

    // The objects: all that is taken at once; on a failure, each tip alone, so one bad ref refuses only itself.
    const taken = decisions.filter((d) => d.take && d.agent?.kind === 'oid');
    const headOid = head?.value?.kind === 'oid' ? [head.value.oid] : [];
    const yourTips = [...new Set([...current.values()].map(oidOf).filter((x): x is string => x !== null))];
    const groups: Array<{ tips: string[]; refuse: (why: string) => void }> = [
      ...taken.map((d) => ({ tips: [oidOf(d.agent) as string], refuse: (why: string) => Object.assign(d, { take: false, reason: `its objects cannot be imported: ${why}` }) })),
      ...(headOid.length > 0 ? [{ tips: headOid, refuse: (why: string) => (head = { value: null, why: `the sandbox's detached HEAD cannot be imported (${why}): not taken` }) }] : []),
      ...(stagedBlobs.length > 0 ? [{ tips: stagedBlobs, refuse: (why: string) => report.warnings.push(`the files the sandbox staged cannot be imported (${why}): its index is not taken (${there}/index is kept)`) }] : []),
    ];
    const refusedGroups = new Set<number>();
    if ((await importObjects(c, groups.flatMap((g) => g.tips), yourTips)) !== null) {
      for (const [i, g] of groups.entries()) {
        const why = await importObjects(c, g.tips, yourTips);
        if (why !== null) {
          g.refuse(why);
          refusedGroups.add(i);
        }
      }
    }
    const indexOk = stagedBlobs.length === 0 || !refusedGroups.has(groups.length - 1);

    // Refs: one transaction, each with the value it must still have; if it fails, one by one.
    const lineOf = (d: RefDecision) => (d.start === null ? `create ${d.ref}\0${oidOf(d.agent)}\0` : `update ${d.ref}\0${oidOf(d.agent)}\0${oidOf(d.start)}\0`);
    const toWrite = decisions.filter((d) => d.take && d.ref !== 'refs/stash');
    if (toWrite.length > 0) {
      const all = await run(yours(c, updateRefsArgs(c.message)), toWrite.map(lineOf).join(''));
      if (!all.ok) {
        for (const d of toWrite) {
          const one = await run(yours(c, updateRefsArgs(c.message)), lineOf(d));
          if (!one.ok) Object.assign(d, { take: false, reason: `git update-ref refused it: ${one.err}` });
        }
      }
    }
    // A stash entry as git stash makes one: in the stash's reflog (your earlier entries stay below it), under its own subject.
    const stash = decisions.find((d) => d.take && d.ref === 'refs/stash');
    if (stash) {
      const subject = (await run(yours(c, ['log', '-1', '--no-show-signature', '--format=%s', oidOf(stash.agent) as string]))).out.trim();
      const r = await run(yours(c, ['update-ref', '--create-reflog', ...updateRefsArgs(subject || c.message).slice(1)]), lineOf(stash));
      if (!r.ok) Object.assign(stash, { take: false, reason: `git update-ref refused it: ${r.err}` });
    }
    for (const d of decisions) {
      const line = describe(d, d.take ? await commitList(c, d) : '');
      if (d.take && d.ref === rec.own) report.own.push(line);
      else report.warnings.push(line);
    }

    // HEAD: a branch that exists now, or an object that does.
    const admin = rec.plan.admin === null ? gitDir : join(gitDir, 'worktrees', rec.plan.admin);
    if (head !== null && head.value !== null) {
      const v = head.value;
      if (v.kind === 'symref') {
        const exists = readRefStore(gitDir).refs.has(v.target);
        const r = exists ? await run(yours(c, symbolicRefArgs(c.message, v.target), admin)) : null;
        if (r?.ok) report.own.push(`HEAD of ${there} now points at ${v.target}, as the sandbox left it`);
        else report.warnings.push(`the sandbox's HEAD points at ${v.target}, ${exists ? `which git refused (${r?.err})` : 'which does not exist in your repository'}: not taken (${there}/HEAD is kept)`);
      } else {
        const ok = (await present(c, [v.oid])).has(v.oid) && (await run(yours(c, detachHeadArgs(c.message, v.oid), admin))).ok;
        if (ok) report.warnings.push(`HEAD of ${there} is now detached at ${short(v.oid)}, as the sandbox left it`);
        else report.warnings.push(`the sandbox's detached HEAD ${short(v.oid)} is not in your repository: not taken (${there}/HEAD is kept)`);
      }
    } else if (head !== null && head.why !== null) report.warnings.push(head.why);

    // The index, once what it stages is here.
    if (index !== null && typeof index !== 'string' && indexOk) {
      const have = await present(c, stagedBlobs);
      const missing = stagedBlobs.filter((b) => !have.has(b));
      if (missing.length > 0) report.warnings.push(`the sandbox's index stages objects your repository does not have (${missing.slice(0, 3).map(short).join(', ')}): not taken (${there}/index is kept)`);
      else if (!sameStamp(stampOf(join(there, 'index')), rec.start.yourIndex)) report.warnings.push(`${there}/index changed during the run both on your side and in the sandbox: yours is kept, the sandbox's is not taken`);
      else if (!writeIndex(join(there, 'index'), rebuildIndex(index.data, index.layout, index.fresh, rec.plan.objectFormat === 'sha256' ? 32 : 20))) {
        report.warnings.push(`${there}/index was locked by a git of yours when the run ended: the sandbox's index is not carried back`);
      }
    }
  }
}

