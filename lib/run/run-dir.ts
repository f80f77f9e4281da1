// What a run creates on the host and removes afterwards: its run directory and
// the stand-ins (directories, or empty read-only files) at missing protected paths.
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { gitFileStandIn } from '../git/repo.js';
import { homePaths } from '../home.js';
import { SandboxUnavailableError } from '../errors.js';

/**
 * The run directory: its private temp folders, seccomp filter, the sources of
 * denied-path mounts, its CA certificates, the Docker stand-in. Under
 * $STASHBASE_HOME/runs (mode 0700), which every sandbox is denied, so no other
 * run reaches it, whatever folder that run's working directory binds (a run in
 * /tmp saw every other run's folder in the temp folder, writable). `hidden`
 * false: the system's temp folder, for the mechanisms that cannot bind one
 * into the sandbox (Seatbelt, the systemd-run fallback).
 */
export function runDirOf(stashbaseHome: string, session: string, hidden = true): string {
  return hidden ? runStateDirOf(stashbaseHome, session) : join(tmpdir(), `stashbase-${session}`);
}

/**
 * What a run keeps where no sandbox, its own or another run's, can reach (it
 * is under $STASHBASE_HOME, which every sandbox is denied): the run's own git
 * directory, the agents' views, and their records, which stashbase reads
 * back after the run.
 */
export function runStateDirOf(stashbaseHome: string, session: string): string {
  return join(homePaths(stashbaseHome).runs, session);
}

/** Where the CA certificates the agent trusts are written (bound read-only into a sandbox whose temp is private). */
export const caDirOf = (runDir: string) => join(runDir, 'ca');

/**
 * The run's own files: the sources of denied-path mounts (an empty file of mode
 * 000, an empty directory), the CA certificate when intercepting, and for bwrap
 * the seccomp filter.
 */
export function createRunDir(runDir: string, ca: { pem: string; bundle: string } | null, seccomp: Buffer | null, privateTmp: string[] = []): void {
  mkdirSync(dirname(runDir), { recursive: true, mode: 0o700 });
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  if (ca !== null) {
    // Public certificates only: the CA key stays in $STASHBASE_HOME, hidden from the sandbox.
    mkdirSync(caDirOf(runDir), { mode: 0o755 });
    writeFileSync(join(caDirOf(runDir), 'ca.pem'), ca.pem, { mode: 0o644 });
    writeFileSync(join(caDirOf(runDir), 'ca-bundle.pem'), ca.bundle, { mode: 0o644 });
  }
  // The sandbox's own /tmp and /var/tmp: gone with the run.
  for (const t of privateTmp) mkdirSync(t, { mode: 0o700 });
  if (seccomp !== null) writeFileSync(join(runDir, 'seccomp.bpf'), seccomp);
  writeFileSync(join(runDir, 'denied'), '');
  chmodSync(join(runDir, 'denied'), 0o000);
  mkdirSync(join(runDir, 'empty'), { recursive: true });
  chmodSync(join(runDir, 'empty'), 0o555);
  // Only this user: the native proxy's socket is in here (the sandbox runs as the same uid).
  chmodSync(runDir, 0o700);
}

/**
 * Removes a folder the agent may have written in: a folder it closed to its
 * owner (no write or search permission) is opened again first, never through
 * a link. Never throws: returns what could not be removed, or null.
 */
export function removeTree(path: string): string | null {
  try {
    rmSync(path, { recursive: true, force: true });
    return null;
  } catch {
    const open = (dir: string) => {
      try {
        chmodSync(dir, 0o700);
        for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) open(join(dir, e.name));
      } catch {
        // what stays is said below
      }
    };
    if (lstatSync(path, { throwIfNoEntry: false })?.isDirectory()) open(path);
    try {
      rmSync(path, { recursive: true, force: true });
      return null;
    } catch (e) {
      return `${path} could not be removed (${(e as Error).message}); remove it yourself`;
    }
  }
}

/** Removes the run's folders; returns what could not be removed (never throws). */
export function removeRunDir(runDir: string, stateDir?: string): string[] {
  return [removeTree(runDir), ...(stateDir !== undefined && stateDir !== runDir ? [removeTree(stateDir)] : [])].filter((x): x is string => x !== null);
}

/** The mode of a stand-in file: what marks it as still ours when the run ends. */
const STAND_IN_FILE_MODE = 0o444;

/** A stand-in file's content: empty (git and shells read an empty config or start-up file as nothing), but what a git file needs (lib/git/repo.ts). */
export function standInContent(path: string): string {
  return gitFileStandIn(path) ?? '';
}

function stillStandIn(path: string, size: number): boolean {
  const want = standInContent(path);
  if (size !== Buffer.byteLength(want)) return false;
  return want === '' || readFileSync(path, 'utf8') === want;
}

/**
 * The first link on the way from `tree` (excluded) to `path` (included), where `path` lies in `tree` and the way
 * leads out of it; null when none (or `path` is not in it). A link the tree holds may be the agent's: a stand-in made
 * through it lands where it leads (review, round 35: an earlier run's `config -> /elsewhere` put the next run's
 * stand-in for `config/master.key` outside the tree). One that leads within the tree (your dotfiles' links in a home
 * that is a repository) is passed by.
 */
function linkOnTheWay(trees: string[], path: string): string | null {
  for (const tree of trees) {
    const rel = relative(tree, path);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) continue;
    let at = tree;
    let deepest = tree;
    let link: string | null = null;
    for (const part of rel.split(sep)) {
      at = join(at, part);
      try {
        if (lstatSync(at).isSymbolicLink()) link ??= at;
        deepest = at;
      } catch {
        break; // missing from here on: made below what exists
      }
    }
    if (link === null) continue;
    try {
      const inside = relative(realpathSync(tree), realpathSync(deepest));
      if (inside === '' || (!inside.startsWith('..') && !isAbsolute(inside))) continue;
    } catch {
      // a link that leads nowhere: made where it names, so refused
    }
    return link;
  }
  return null;
}

/** Creates stand-ins; returns those created (to remove afterwards) and warnings. None is made through a link of `trees` leading out of it. */
export function createPlaceholders(paths: string[], parents: string[], files: string[] = [], trees: string[] = []): { created: string[]; warnings: string[] } {
  // Before anything is made: a missing protected path reached through a link of the tree is refused, said.
  for (const p of [...paths, ...files]) {
    const link = linkOnTheWay(trees, p);
    if (link !== null) {
      throw new SandboxUnavailableError(`${p} (a protected path that does not exist) is reached through ${link}, a symbolic link in the working tree: its stand-in would be made where the link leads, outside the tree. Remove the link, or make the path where it leads yourself, and run again; nothing was run`);
    }
  }
  const created: string[] = [];
  const warnings: string[] = [];
  for (const p of parents) {
    try {
      mkdirSync(p, { recursive: true, mode: 0o755 });
    } catch {
      // the stand-in below then fails and says so
    }
  }
  for (const p of paths) {
    try {
      mkdirSync(p, { mode: 0o555 });
      created.push(p);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue; // appeared meanwhile: bwrap protects what is there
      // What stashbase may not create, the agent (same user, no capabilities) may not either.
      warnings.push(`${p}: no stand-in (${code}); the sandbox cannot create it either`);
    }
  }
  for (const p of files) {
    try {
      writeFileSync(p, standInContent(p), { flag: 'wx', mode: STAND_IN_FILE_MODE });
      chmodSync(p, STAND_IN_FILE_MODE); // whatever the umask
      created.push(p);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      warnings.push(`${p}: no stand-in (${code}); the sandbox cannot create it either`);
    }
  }
  return { created, warnings };
}

export function removePlaceholders(paths: string[]): void {
  for (const p of [...paths].reverse()) {
    try {
      const st = lstatSync(p);
      // Only what is still the stand-in: an empty folder, or a file of the
      // stand-in's mode and content (your own program may have replaced it meanwhile: kept).
      if (st.isDirectory()) rmdirSync(p);
      else if (st.isFile() && (st.mode & 0o777) === STAND_IN_FILE_MODE && stillStandIn(p, st.size)) unlinkSync(p);
    } catch {
      // gone already or not empty: leave it
    }
  }
}
