// After the run (or, for a run killed hard, the next one, from the record
// alone): carries a view's merged names back by their rule, moves over the
// folders it adopts, and names what the agent changed that stays behind.
import { appendFileSync, chmodSync, chownSync, closeSync, constants, copyFileSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, realpathSync, renameSync, rmdirSync, statSync, utimesSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { mergeClaudeConfig } from './claude-config.js';
import { promptEntryOk, recallsSafely } from './recall.js';
import { LOGIN_SHAPES, mergeLogin } from './login-merge.js';
import { readBack } from '../readback/file.js';
import { isJsonObject, type JsonObject, parseJson } from '../readback/json.js';
import { firstFew, printable } from '../util/printable.js';
import { hostPathOf, sameStamp, stamp, type ViewRecord } from './materialize.js';

/**
 * Writes `content` over `path` by a rename, as editors do: a reader sees the
 * old file or the new one. Ownership follows the file replaced (a run as root
 * must not leave your login root's).
 */
function replaceFile(path: string, content: Buffer): 'done' | 'busy' {
  const old = statSync(path, { throwIfNoEntry: false });
  const tmp = `${path}.stashbase-${process.pid}.tmp`;
  let fd: number;
  try {
    // A login: private.
    fd = openSync(tmp, 'wx', old ? old.mode & 0o777 : 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return 'busy';
    throw e;
  }
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  const owner = old ?? statSync(dirname(path));
  if (process.getuid?.() === 0 && (owner.uid !== 0 || owner.gid !== 0)) chownSync(tmp, owner.uid, owner.gid);
  renameSync(tmp, path);
  return 'done';
}

const read = (p: string) => readFileSync(p);

/** Whether your link still reads as it did and leads to the same file. */
function linkStill(path: string, link: { link: string; real: string }): boolean {
  try {
    return lstatSync(path).isSymbolicLink() && readlinkSync(path) === link.link && realpathSync(path) === link.real;
  } catch {
    return false;
  }
}

/** What a view holds is the agent's: read without following a link, bounded (a login or a config far below this). */
const MAX_CARRIED_BYTES = 64 << 20;
function readView(p: string): Buffer | null {
  const r = readBack(p, MAX_CARRIED_BYTES);
  return r.ok ? r.data : null;
}

/** At most this many entries of a folder the sandbox made are carried back. */
const MAX_ADOPTED = 100_000;

/**
 * A folder the sandbox made, carried back as folders and plain files only
 * (found in review: a FIFO in it stopped the copy half way, the rest of the
 * settle with it, and links were copied as they were, into your own state
 * folders, where your next claude or codex would write through them). Returns
 * what was passed by, relative to the folder.
 */
function adoptTree(src: string, dest: string): string[] {
  const passed: string[] = [];
  let count = 0;
  // As root, what is made belongs to whoever owns the folder it goes into (as replaceFile's writes do).
  const owner = statSync(dirname(dest), { throwIfNoEntry: false });
  const own = (p: string) => {
    if (owner && process.getuid?.() === 0 && (owner.uid !== 0 || owner.gid !== 0)) chownSync(p, owner.uid, owner.gid);
  };
  const walk = (from: string, to: string, rel: string): void => {
    mkdirSync(to, { mode: 0o700 });
    own(to);
    for (const e of readdirSync(from, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const name = rel === '' ? e.name : `${rel}/${e.name}`;
      if (++count > MAX_ADOPTED) {
        passed.push(`${name} and what follows (past ${MAX_ADOPTED} entries)`);
        return;
      }
      const a = join(from, e.name);
      const b = join(to, e.name);
      const st = lstatSync(a);
      if (st.isDirectory()) walk(a, b, name);
      else if (st.isFile()) {
        copyFileSync(a, b, constants.COPYFILE_EXCL);
        chmodSync(b, st.mode & 0o700);
        own(b);
        utimesSync(b, st.atime, st.mtime);
      } else passed.push(st.isSymbolicLink() ? `${name} (a link)` : `${name} (not a file)`);
    }
  };
  try {
    walk(src, dest, '');
  } catch (e) {
    passed.push(`the rest (${(e as Error).message})`);
  }
  return passed;
}


/** Claude Code's entry: this run's folder's, its pasted texts named by hashes (an inline one is text your Enter would send unseen). */
const claudeEntry = (trees: readonly string[] | undefined) => (v: JsonObject) =>
  promptEntryOk(v) && (v.project === undefined || (typeof v.project === 'string' && (trees === undefined || trees.includes(v.project))));

/** Codex's entry: a session, a time and the text, without control characters (a terminal's escape sequences). */
const codexEntry = (v: JsonObject) =>
  typeof v.session_id === 'string' && typeof v.ts === 'number' && recallsSafely(v.text) && Object.keys(v).every((k) => ['session_id', 'ts', 'text'].includes(k));

/**
 * A prompt history as the sandbox appended to it: whole lines, each a JSON object of the shape its agent writes
 * (`entry`). Found in review (round 27c): Claude Code's pasted entry's contentHash is joined to paste-cache/
 * unchecked, so `../../x` made up-arrow in your claude read that .txt file into your prompt.
 */
function historyLines(added: Buffer, entry: (v: JsonObject) => boolean): { keep: Buffer; dropped: number } {
  const keep: string[] = [];
  let dropped = 0;
  const text = added.toString('utf8');
  const lines = text.split('\n');
  const last = lines.pop() as string;
  if (last !== '') dropped++;
  for (const line of lines) {
    const p = line.length <= 1 << 20 ? parseJson(line) : null;
    const v = p?.value;
    if (p !== null && p.refused.length === 0 && isJsonObject(v) && entry(v)) keep.push(line + '\n');
    else dropped++;
  }
  return { keep: Buffer.from(keep.join('')), dropped };
}

export function settleView(recordFile: string): string[] {
  const rec = JSON.parse(readFileSync(recordFile, 'utf8')) as ViewRecord;
  const { spec, dir } = rec;
  const notes: string[] = [];
  const left: string[] = [];
  const where = (name: string) => (spec.hostPaths[name] ? spec.hostPaths[name] : `${spec.label}/${name}`);
  for (const [name, rule] of Object.entries(spec.merge)) {
    const inView = join(dir, name);
    let onHost = hostPathOf(spec, name);
    const v = stamp(inView);
    if (sameStamp(v, rec.view[name] ?? null)) continue;
    const saved = rec.saved[name] ? read(rec.saved[name] as string) : null;
    const agent = v !== null && v.size >= 0 ? readView(inView) : null;
    if (agent !== null && saved !== null && agent.equals(saved)) continue;
    // A link of yours: written through to the file it led to, and only while it still does.
    const link = rec.links?.[name];
    if (link) {
      if (!linkStill(onHost, link)) {
        notes.push(`${where(name)} is a link that changed during the run: the sandbox's changes to it are not carried back`);
        continue;
      }
      onHost = link.real;
    }
    const hostChanged = !sameStamp(stamp(onHost), rec.host[name] ?? null);
    if (rule === 'claude-login' || rule === 'codex-login') {
      // The login alone, field by field (lib/views/login-merge.ts); yours kept where it changed meanwhile.
      if (hostChanged) {
        notes.push(`${where(name)} changed during the run both on your side and in the sandbox: yours is kept, the sandbox's is not carried back`);
        continue;
      }
      const current = existsSync(onHost) ? read(onHost).toString('utf8') : null;
      const r = mergeLogin(LOGIN_SHAPES[rule === 'claude-login' ? 'claude' : 'codex'], saved?.toString('utf8') ?? null, agent?.toString('utf8') ?? null, current);
      if (r.text !== null && replaceFile(onHost, Buffer.from(r.text)) === 'busy') notes.push(`${where(name)} was being written when the run ended: the sandbox's version is not carried back`);
      if (r.left.length > 0) notes.push(`${where(name)}: changes the sandbox made to ${firstFew(r.left, 10)} are not carried back (only the login itself is)`);
    } else if (rule === 'append') {
      if (agent === null) {
        if (v !== null) left.push(name);
        continue;
      }
      const now = agent;
      const base = saved ?? Buffer.alloc(0);
      if (now.length >= base.length && now.subarray(0, base.length).equals(base)) {
        const added = historyLines(now.subarray(base.length), spec.id === 'claude' ? claudeEntry(spec.trees) : codexEntry);
        if (added.keep.length > 0) appendFileSync(onHost, added.keep, { mode: 0o600 });
        if (added.dropped > 0) notes.push(`${where(name)}: ${added.dropped} line(s) the sandbox added are not carried back (not an entry of this folder's prompt history as your agent writes one)`);
      } else notes.push(`${where(name)} was rewritten in the sandbox, not appended to: not carried back`);
    } else {
      const current = existsSync(onHost) ? read(onHost).toString('utf8') : null;
      const r = mergeClaudeConfig(saved?.toString('utf8') ?? null, agent?.toString('utf8') ?? null, current, spec.trees);
      if (r.text !== null) replaceFile(onHost, Buffer.from(r.text + '\n'));
      if (r.left.length > 0) notes.push(`${where(name)}: changes the sandbox made to ${firstFew(r.left, 10)} are not carried back (they would make a later claude run or trust something)`);
    }
  }
  const mounted = new Set([...spec.live, ...spec.readOnly, ...spec.empty]);
  const quiet = spec.quiet === null ? null : new RegExp(spec.quiet);
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    // the view is gone (a run killed while setting up)
  }
  for (const name of names.sort()) {
    if (mounted.has(name) || name in spec.merge) continue;
    const inView = join(dir, name);
    if (spec.adoptDirs.includes(name) && lstatSync(inView).isDirectory() && !existsSync(join(spec.at, name))) {
      const passed = adoptTree(inView, join(spec.at, name));
      if (passed.length > 0) notes.push(`${spec.label}: ${printable(firstFew(passed, 5), true)} in ${name} stay in the sandbox (only folders and plain files are carried back to ${spec.at})`);
      continue;
    }
    if (spec.copies.includes(name)) {
      const before = rec.view[name] ?? null;
      if (!sameStamp(stamp(inView), before)) left.push(`${name} (changed)`);
    } else if (quiet === null || !quiet.test(name)) left.push(`${name} (new)`);
  }
  for (const name of spec.copies) if (!(name in spec.merge) && !names.includes(name)) left.push(`${name} (removed)`);
  if (left.length > 0) notes.push(`${spec.label}: what the sandbox did to ${firstFew(left, 10)} stays in the sandbox (not carried back to ${spec.at})`);
  if (rec.madeAt) {
    try {
      rmdirSync(spec.at); // only while empty
    } catch {
      // something was carried back into it: kept
    }
  }
  return notes;
}
