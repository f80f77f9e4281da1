// After the run (or, for a run killed hard, the next one, from the record
// alone): carries a view's merged names back by their rule, moves over the
// folders it adopts, and names what the agent changed that stays behind.
import { chownSync, closeSync, cpSync, existsSync, lstatSync, openSync, readdirSync, readFileSync, renameSync, rmdirSync, statSync, unlinkSync, writeSync, appendFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { mergeClaudeConfig } from './claude-config.js';
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

export function settleView(recordFile: string): string[] {
  const rec = JSON.parse(readFileSync(recordFile, 'utf8')) as ViewRecord;
  const { spec, dir } = rec;
  const notes: string[] = [];
  const left: string[] = [];
  const where = (name: string) => (spec.hostPaths[name] ? spec.hostPaths[name] : `${spec.label}/${name}`);
  for (const [name, rule] of Object.entries(spec.merge)) {
    const inView = join(dir, name);
    const onHost = hostPathOf(spec, name);
    const v = stamp(inView);
    if (sameStamp(v, rec.view[name] ?? null)) continue;
    const saved = rec.saved[name] ? read(rec.saved[name] as string) : null;
    if (v !== null && v.size >= 0 && saved !== null && read(inView).equals(saved)) continue;
    const hostChanged = !sameStamp(stamp(onHost), rec.host[name] ?? null);
    if (rule === 'replace') {
      if (hostChanged) notes.push(`${where(name)} changed during the run both on your side and in the sandbox: yours is kept, the sandbox's is not carried back`);
      else if (v === null) {
        if (existsSync(onHost)) unlinkSync(onHost);
      } else if (v.size < 0) left.push(name);
      else if (replaceFile(onHost, read(inView)) === 'busy') notes.push(`${where(name)} was being written when the run ended: the sandbox's version is not carried back`);
    } else if (rule === 'append') {
      if (v === null || v.size < 0) continue;
      const now = read(inView);
      const base = saved ?? Buffer.alloc(0);
      if (now.length >= base.length && now.subarray(0, base.length).equals(base)) {
        if (now.length > base.length) appendFileSync(onHost, now.subarray(base.length), { mode: 0o600 });
      } else notes.push(`${where(name)} was rewritten in the sandbox, not appended to: not carried back`);
    } else {
      const current = existsSync(onHost) ? read(onHost).toString('utf8') : null;
      const r = mergeClaudeConfig(saved?.toString('utf8') ?? null, v !== null && v.size >= 0 ? read(inView).toString('utf8') : null, current);
      if (r.text !== null) replaceFile(onHost, Buffer.from(r.text + '\n'));
      if (r.left.length > 0) notes.push(`${where(name)}: changes the sandbox made to ${r.left.join(', ')} are not carried back (they would make a later claude run or trust something)`);
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
      cpSync(inView, join(spec.at, name), { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
      continue;
    }
    if (spec.copies.includes(name)) {
      const before = rec.view[name] ?? null;
      if (!sameStamp(stamp(inView), before)) left.push(`${name} (changed)`);
    } else if (quiet === null || !quiet.test(name)) left.push(`${name} (new)`);
  }
  for (const name of spec.copies) if (!(name in spec.merge) && !names.includes(name)) left.push(`${name} (removed)`);
  if (left.length > 0) notes.push(`${spec.label}: what the sandbox did to ${left.join(', ')} stays in the sandbox (not carried back to ${spec.at})`);
  if (rec.madeAt) {
    try {
      rmdirSync(spec.at); // only while empty
    } catch {
      // something was carried back into it: kept
    }
  }
  return notes;
}
