// bubblewrap's version and features, asked once per installed binary:
// `--perms` before `--tmpfs` (a denied directory as a tmpfs of mode 0555)
// needs 0.5.0, and Debian 11, Ubuntu 20.04 and RHEL 9 ship 0.4; `--bind-fd`
// came with 0.10.0 and in distributions' security updates of older ones
// (Debian's 0.8.0 has it), so its help is read, not its version. The answer is
// kept in $STASHBASE_HOME/cache keyed by the binary's path, size, mtime and inode.
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { probe } from '../exec.js';

interface Cached {
  path: string;
  size: number;
  mtimeMs: number;
  ino: number;
  version: string | null;
  bindFd: boolean;
}

/** "0.8.0" from "bubblewrap 0.8.0", or null. */
export function parseBwrapVersion(out: string): string | null {
  return /^bubblewrap (\d+\.\d+\.\d+)\b/m.exec(out)?.[1] ?? null;
}

export function versionAtLeast(version: string | null, min: [number, number, number]): boolean {
  if (version === null) return false;
  const v = version.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((v[i] ?? 0) !== min[i]) return (v[i] ?? 0) > min[i]!;
  return true;
}

/** What this bwrap is: its version (null: unknown) and whether it takes `--bind-fd`. */
function bwrapFacts(bwrap: string, stashbaseHome: string): { version: string | null; bindFd: boolean } {
  let st;
  try {
    st = statSync(bwrap);
  } catch {
    return { version: null, bindFd: false };
  }
  const file = join(stashbaseHome, 'cache', 'bwrap.json');
  try {
    const c = JSON.parse(readFileSync(file, 'utf8')) as Cached;
    if (c.path === bwrap && c.size === st.size && c.mtimeMs === st.mtimeMs && c.ino === st.ino && typeof c.bindFd === 'boolean') return { version: c.version, bindFd: c.bindFd };
  } catch {
    // no cache yet, or an unreadable one: ask bwrap
  }
  const r = probe({ file: bwrap, args: ['--version'] });
  const version = r.code === 0 ? parseBwrapVersion(r.stdout) : null;
  const help = probe({ file: bwrap, args: ['--help'] });
  const bindFd = help.code === 0 && /^\s*--bind-fd\s/m.test(help.stdout);
  try {
    mkdirSync(join(stashbaseHome, 'cache'), { recursive: true, mode: 0o700 });
    writeFileSync(file, JSON.stringify({ path: bwrap, size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, version, bindFd } satisfies Cached));
  } catch {
    // asked again next time
  }
  return { version, bindFd };
}

export function bwrapVersion(bwrap: string, stashbaseHome: string): string | null {
  return bwrapFacts(bwrap, stashbaseHome).version;
}

/** Whether this bwrap binds from a descriptor (`--bind-fd`, `--ro-bind-fd`). */
export function bindFdSupported(bwrap: string, stashbaseHome: string): boolean {
  return bwrapFacts(bwrap, stashbaseHome).bindFd;
}

/** Whether this bwrap takes `--perms 0555 --tmpfs DIR` (0.5.0 and later). */
export function tmpfsPermsSupported(bwrap: string, stashbaseHome: string): boolean {
  return versionAtLeast(bwrapVersion(bwrap, stashbaseHome), [0, 5, 0]);
}
