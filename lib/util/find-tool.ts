// Finds an executable on PATH, as `which` does, without loading a package on
// the start-up path of every run. Only PATH's folders the agent cannot write
// are searched: a relative one (".", "node_modules/.bin", an empty entry), an
// absolute one under the working directory (direnv's $PWD/node_modules/.bin,
// a link into the project) or under a profile's allow_write names a folder
// the agent writes, and a tool stashbase runs on your side would be the
// agent's (found in review: a bwrap left in node_modules/.bin ran unsandboxed
// at the next run). lib/exec.ts gives every process it starts the same PATH.
import { accessSync, constants, existsSync, realpathSync, statSync } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';

const resolved = new Map<string, string>();

/**
 * A folder's real path: links followed, and for one not there (yet: the agent
 * may make it), its nearest existing ancestor's real path with the rest as
 * written. Folders that exist are asked once a process.
 */
function realFolder(dir: string): string {
  const known = resolved.get(dir);
  if (known !== undefined) return known;
  // existsSync first: PATH often names folders that are not made, and an exception each costs.
  const real = existsSync(dir) ? realOrNull(dir) : null;
  if (real !== null) {
    resolved.set(dir, real);
    return real;
  }
  const up = dirname(dir);
  return up === dir ? dir : join(realFolder(up), basename(dir));
}

function realOrNull(dir: string): string | null {
  try {
    return realpathSync(dir);
  } catch {
    return null;
  }
}

/** Folders a profile lets the agent write besides the working directory (allow_write), told once the profile is read. */
const agentAreas: string[] = [];

/**
 * Adds folders the agent may write (a profile's allow_write): no tool is taken
 * from them either, nor searched there by a process on your side (found in
 * review: with ~/.npm-global/bin on PATH and allow_write = ["~/.npm-global"],
 * a git the agent left there ran at the next run's start).
 */
export function agentWritesAlso(folders: string[]): void {
  for (const f of folders) if (isAbsolute(f) && !agentAreas.includes(f)) agentAreas.push(f);
}

/** Whether a PATH folder is one stashbase may take its tools from: absolute, not under the working directory nor a folder of agentWritesAlso. */
function trustedFolder(dir: string, cwd: string): boolean {
  if (!isAbsolute(dir)) return false;
  const lexical = resolve(dir);
  const real = realFolder(lexical);
  const under = (root: string) => {
    const within = (p: string) => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);
    return within(lexical) || within(real);
  };
  if (agentAreas.some((a) => under(a) || under(realFolder(a)))) return false;
  const root = realFolder(resolve(cwd));
  // The filesystem's root is no project (cron, services and scripts start there; an agent run there fails closed).
  if (root === sep) return true;
  return !under(root);
}

/** A list of folders (PATH, LD_LIBRARY_PATH…) without those the agent may write (see trustedFolder). */
export function trustedPath(path: string, cwd: string = process.cwd()): string {
  return path.split(delimiter).filter((d) => trustedFolder(d, cwd)).join(delimiter);
}

/** Whether a file named by path (LD_PRELOAD's) lies where the agent may write: relative, or in a folder trustedFolder refuses. */
export function untrustedFile(path: string, cwd: string = process.cwd()): boolean {
  if (!path.includes('/')) return false;
  // A relative one is found from the process's own folder, whichever that is.
  return !isAbsolute(path) || !trustedFolder(dirname(path), cwd);
}

export function findTool(name: string, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!trustedFolder(dir, cwd)) continue;
    const full = join(dir, name);
    try {
      accessSync(full, constants.X_OK);
      if (statSync(full).isFile()) return full;
    } catch {
      // not here
    }
  }
  return null;
}
