// Scan units from files on disk (`stashbase scan [PATH]`). In a git work tree,
// the files git would consider (tracked, and untracked ones no .gitignore
// excludes); elsewhere every file under PATH. Never .git, never a symlink met
// while walking (it may lead out of the tree), never a FIFO or device, nothing
// over the size cap, nothing binary (a NUL byte in its first 8 KiB).
import { closeSync, fstatSync, lstatSync, openSync, readdirSync, readSync, constants } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { capture } from '../exec.js';
import { findTool } from '../util/find-tool.js';
import { listFilesCommand, topLevelCommand } from '../../templates/git-scan.js';

const BINARY_PROBE = 8000;

/** A regular file's text, or why it is skipped. O_NOFOLLOW|O_NONBLOCK: a symlink or FIFO swapped in is not followed or waited on. */
export function readUnitText(path: string, maxBytes: number, follow: boolean): { text: string } | { skip: string } {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (follow ? 0 : constants.O_NOFOLLOW));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { skip: code === 'ELOOP' ? 'symlink' : code === 'ENOENT' ? 'missing' : `unreadable (${code})` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { skip: 'not a regular file' };
    if (st.size > maxBytes) return { skip: `larger than ${maxBytes} bytes` };
    const buf = Buffer.allocUnsafe(st.size);
    let n = 0;
    while (n < st.size) {
      const r = readSync(fd, buf, n, st.size - n, null);
      if (r === 0) break;
      n += r;
    }
    const data = buf.subarray(0, n);
    if (data.subarray(0, BINARY_PROBE).includes(0)) return { skip: 'binary' };
    const text = data.toString('utf8');
    return { text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text };
  } finally {
    closeSync(fd);
  }
}

function walk(dir: string, out: string[]): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const full = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== '.git') walk(full, out);
    } else if (e.isFile()) out.push(full);
  }
}

async function gitTop(cwd: string): Promise<string | null> {
  const git = findTool('git');
  if (!git) return null;
  try {
    return (await capture(topLevelCommand(git, cwd))).replace(/\n$/, '');
  } catch {
    return null;
  }
}

/** The files to scan under `target` (absolute paths) and how to name them in findings. */
export async function listFiles(cwd: string, target: string): Promise<{ files: string[]; label: (abs: string) => string; explicit: boolean }> {
  const abs = resolve(cwd, target);
  const label = (p: string) => relative(cwd, p) || p;
  const st = lstatSync(abs, { throwIfNoEntry: false });
  if (!st) return { files: [], label, explicit: true };
  // A file named explicitly is read even through a symlink (you named it).
  if (!st.isDirectory()) return { files: [abs], label, explicit: true };
  const top = await gitTop(abs);
  const git = top ? findTool('git') : null;
  if (top && git) {
    const out = await capture(listFilesCommand(git, abs, '.'));
    const files = [...new Set(out.split('\0').filter(Boolean))].map((f) => join(top, f));
    return { files, label, explicit: false };
  }
  const files: string[] = [];
  walk(abs, files);
  return { files, label, explicit: false };
}
