// Turns a profile's deny lists into what a backend mounts: concrete paths with
// their kind, symlink targets added, missing paths given placeholders, and the
// ancestors to pin so that no protected path can be renamed away.
import { lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { gitFileStandIn, isGitFolderStandIn } from '../git/repo.js';
import type { DeniedPath } from '../../templates/bwrap.js';
import { expandPattern, MAX_ENTRIES } from './expand.js';
import { multiplyLinked } from './hard-links.js';
import { inside, realRootVariant, resolveRule, type Rule } from './rules.js';

export interface Protection {
  denyRead: DeniedPath[];
  denyWrite: DeniedPath[];
  /** Directories to create before the run (and remove after): stand-ins for missing paths. */
  placeholders: string[];
  /**
   * Empty read-only files to create before the run (and remove after): stand-ins
   * for missing write-denied paths under home on the native backend. A file, not
   * a directory, because your own programs see it too while the run lasts: git
   * reads an empty ~/.gitconfig as no settings, and stops at a directory there.
   */
  fileStandIns: string[];
  /** Missing ordinary parent directories under home, created for real (and kept). */
  parents: string[];
  pinned: string[];
  /**
   * Read-denied paths that do not exist where the sandbox cannot write: nothing
   * to mount over, yet your side may create them during the run (a login
   * writing ~/.config/gh/hosts.yml). The native backend's Landlock step never
   * grants them (templates/landlock.ts).
   */
  missingRead: string[];
  warnings: string[];
}

export interface ProtectInput {
  denyRead: string[];
  denyWrite: string[];
  /** Paths always denied to read when they exist (control sockets, stashbase's own state). */
  alwaysDenyRead: string[];
  /** stashbase's own state (the CA key among it): hidden as a directory, existing yet or not. */
  stateDir: string;
  /** Paths always denied to write when they exist. */
  alwaysDenyWrite: string[];
  home: string;
  cwd: string;
  /**
   * Docker: only this directory (the working directory) is visible at all, so
   * rules apply inside it only and patterns are walked from it, not from higher up.
   */
  within?: string;
  /**
   * Native with writes as an allow-list: where the sandbox can write (the
   * working directory, allow_write, views, carve-outs). Outside them
   * everything is read-only already: write denials there, and stand-ins for
   * missing paths the sandbox could not create anyway, are left out.
   */
  writableAreas?: string[];
  /** Folders the sandbox sees as private empty ones (/tmp, /var/tmp): rules for what lies in them are moot, unless in `shown`. */
  privateDirs?: string[];
  /** Paths under a private folder the sandbox still sees (the home, the working directory). */
  shown?: string[];
  /** Denied paths that stand in as a file where missing (a config file git includes: a folder there breaks your git). */
  fileStandInsAt?: string[];
}


/** A pattern rule restricted to `within`: its walk starts there, or it has nothing there. */
function clipPattern(rule: Extract<Rule, { kind: 'pattern' }>, within: string | undefined): Extract<Rule, { kind: 'pattern' }> | null {
  if (within === undefined || inside(rule.root, within)) return rule;
  if (!inside(within, rule.root)) return null;
  if (rule.maxDepth === null) return { ...rule, root: within };
  const skipped = within.split('/').length - (rule.root === '/' ? 1 : rule.root.split('/').length);
  return rule.maxDepth - skipped > 0 ? { ...rule, root: within, maxDepth: rule.maxDepth - skipped } : null;
}

const KERNEL_FS = /^\/(proc|sys|dev)(\/|$)/;

const isGitFile = (path: string) => gitFileStandIn(path) !== null;

type Kind = 'file' | 'dir' | 'unreachable' | null;

/**
 * What is on disk at a path, asked once per path for one plan (the same
 * parents come up again and again). Stats without exceptions: most default
 * rules name paths that do not exist, and a thrown error per path was most of
 * the cost of planning a run. An lstat first: one call for a missing path.
 */
function diskFacts(): { kind(path: string): Kind; isSymlink(path: string): boolean } {
  const kinds = new Map<string, Kind>();
  const links = new Map<string, boolean>();
  const lstat = (path: string) => {
    const st = lstatSync(path, { throwIfNoEntry: false });
    links.set(path, st?.isSymbolicLink() === true);
    return st;
  };
  const kind = (path: string): Kind => {
    const known = kinds.get(path);
    if (known !== undefined) return known;
    let k: Kind;
    try {
      const l = lstat(path);
      if (!l) k = null;
      else if (!l.isSymbolicLink()) k = l.isDirectory() ? 'dir' : 'file';
      else {
        const st = statSync(path, { throwIfNoEntry: false });
        k = st ? (st.isDirectory() ? 'dir' : 'file') : 'file'; // a dangling symlink: protect the link itself
      }
    } catch {
      // EACCES on a parent (a root-only socket directory): what this user cannot
      // reach, the sandbox, running as this user without capabilities, cannot either.
      k = 'unreachable';
    }
    kinds.set(path, k);
    return k;
  };
  const isSymlink = (path: string): boolean => {
    const known = links.get(path);
    if (known !== undefined) return known;
    try {
      lstat(path);
    } catch {
      links.set(path, false);
    }
    return links.get(path) as boolean;
  };
  return { kind, isSymlink };
}

/**
 * Where the stand-in for a missing path goes. Missing parent directories under
 * home are ordinary folders (~/.config, ~/.local/share) and are created for real,
 * so the stand-in blocks exactly the denied path; elsewhere, and for a missing
 * .git, the stand-in sits at the first missing component.
 */
function standIn(path: string, home: string, exists: (path: string) => Kind): { at: string; parents: string[] } {
  const missing: string[] = [];
  let cur = path;
  while (dirname(cur) !== cur && exists(dirname(cur)) === null) {
    cur = dirname(cur);
    missing.unshift(cur);
  }
  const createable = missing.every((m) => m.startsWith(home + '/') && !m.split('/').includes('.git'));
  return createable ? { at: path, parents: missing } : { at: cur, parents: [] };
}

/**
 * A missing path as it would be reached: its nearest existing parent resolved,
 * the rest appended. `exists` and `real` are the plan's caches: the default
 * denials share a few parents (~/.config, ~/.local/share), and a failed
 * realpath (an exception) costs more than the lstat that spares it.
 */
function realForm(path: string, exists: (p: string) => Kind, real: Map<string, string>): string {
  const rest: string[] = [];
  for (let d = path; dirname(d) !== d; d = dirname(d)) {
    const kind = exists(d);
    if (kind === 'dir' || kind === 'file') {
      let r = real.get(d);
      if (r === undefined) {
        try {
          r = realpathSync.native(d);
        } catch {
          return path;
        }
        real.set(d, r);
      }
      return [r === '/' ? '' : r, ...rest].join('/');
    }
    rest.unshift(basename(d));
  }
  return path;
}

export function planProtection(input: ProtectInput): Protection {
  const disk = diskFacts();
  const exists = disk.kind;
  const warnings: string[] = [];
  const placeholders = new Set<string>();
  const fileStandIns = new Set<string>();
  const parents = new Set<string>();
  const missingRead = new Set<string>();
  const realParents = new Map<string, string>();
  const areas = input.writableAreas;
  const writable = (p: string) => areas === undefined || areas.some((a) => inside(p, a));
  const fileAt = new Set(input.fileStandInsAt ?? []);
  const invisible = (p: string) => (input.privateDirs ?? []).some((d) => inside(p, d)) && !(input.shown ?? []).some((v) => inside(p, v));
  const collect = (entries: string[], optional: string[], forcedDirs: string[] = [], fileStandInsOk = false, reading = false): Map<string, DeniedPath> => {
    const out = new Map<string, DeniedPath>();
    const add = (path: string, createIfMissing: boolean, depth = 0) => {
      // A dangling symlink (~/.aws -> dotfiles/aws, not there yet): nothing to mount over (bwrap would
      // follow it and fail); what it protects is its target, which is a missing path like any other.
      if (depth < 8 && disk.isSymlink(path) && !statSync(path, { throwIfNoEntry: false })) {
        let target: string;
        try {
          target = resolve(dirname(path), readlinkSync(path));
        } catch {
          return;
        }
        if (reading) missingRead.add(path);
        if (target !== path) add(target, createIfMissing, depth + 1);
        return;
      }
      if (KERNEL_FS.test(path)) {
        if (input.within === undefined) warnings.push(`${path}: rules under /proc, /sys and /dev are not applied (the sandbox mounts its own)`);
        return;
      }
      if (invisible(path)) return;
      // What the sandbox cannot write needs no write denial, nor a stand-in against its creation.
      if (!writable(path) && (!reading || exists(path) === null)) {
        if (reading && exists(path) === null) {
          // Also where it would really be: a symlinked parent (~/.config -> dotfiles/config) puts it elsewhere.
          missingRead.add(path);
          missingRead.add(realForm(path, exists, realParents));
        }
        return;
      }
      const kind = exists(path);
      if (kind === 'unreachable') return;
      if (kind !== null) {
        // Mount at the real path: a mount on a symlink lands on its target anyway,
        // and bwrap cannot create mount points through symlinked parents.
        let real = path;
        try {
          real = realpathSync.native(path);
        } catch {
          // a dangling link: the link itself is covered
        }
        // A link inside the visible directory to a target outside it: the target is invisible anyway.
        if (input.within !== undefined && !inside(real, input.within)) return;
        out.set(real, { path: real, kind });
        const links = kind === 'file' ? statSync(real, { throwIfNoEntry: false })?.nlink ?? 1 : 1;
        if (links > 1) warnings.push(`${real} has ${links} hard links: its other names are not covered by this rule (deny them too, or remove the extra links)`);
        if (kind === 'dir' && reading) {
          const linked = multiplyLinked(real);
          for (const f of linked.files) warnings.push(`${f} (in the denied ${real}) has other hard links: the sandbox can read it through them (remove the extra links)`);
          if (linked.truncated) warnings.push(`${real}: only its first 2000 entries, three levels deep, were checked for hard links`);
        }
      } else if (createIfMissing && (input.within === undefined || inside(path, input.within))) {
        const stand = standIn(path, input.home, exists);
        for (const p of stand.parents) parents.add(p);
        // Exactly at the denied path under home: a file blocks a file or a folder
        // being made there alike. Elsewhere (a missing .git, a folder higher up) a
        // directory, which git and the rest pass over as empty.
        // A stand-in for .git/commondir or .git/config.worktree is a file wherever it is.
        const asFile = stand.at === path && ((fileStandInsOk && path.startsWith(input.home + '/')) || isGitFile(path) || fileAt.has(path));
        (asFile ? fileStandIns : placeholders).add(stand.at);
        out.set(stand.at, { path: stand.at, kind: asFile ? 'file' : 'dir' });
      }
    };
    for (const entry of entries) {
      const rule = resolveRule(entry, input.home, input.cwd);
      if (rule.kind === 'path') {
        add(rule.path, true);
        continue;
      }
      // As written, and with its fixed folder's real path where a link leads there (the visible tree is its real path).
      for (const r of [rule, realRootVariant(entry, rule, input.home, input.cwd)]) {
        if (r === null || r.kind !== 'pattern') continue;
        const clipped = clipPattern(r, input.within);
        if (clipped === null) continue;
        const found = expandPattern(clipped);
        if (found.truncated) {
          warnings.push(`${entry}: stopped after ${MAX_ENTRIES} entries under ${clipped.root}; paths beyond them are not protected (start the pattern deeper)`);
        }
        for (const p of found.paths) add(p, false);
      }
    }
    // Always-protected paths get no stand-in when missing, but for those git files and folders.
    for (const p of optional) add(p, isGitFile(p) || isGitFolderStandIn(p));
    for (const p of forcedDirs) if (input.within === undefined || inside(p, input.within)) out.set(p, { path: p, kind: 'dir' });
    return out;
  };
  const read = collect(input.denyRead, input.alwaysDenyRead, [input.stateDir], false, true);
  const write = collect(input.denyWrite, input.alwaysDenyWrite, [], input.within === undefined);
  for (const p of read.keys()) write.delete(p); // unreadable already implies unwritable
  // Whatever lies under a read-denied directory is hidden with it; mounting over
  // it would need a mount point inside the empty stand-in.
  const hiddenDirs = [...read.values()].filter((d) => d.kind === 'dir').map((d) => d.path + '/');
  const hidden = (p: string) => hiddenDirs.some((d) => p.startsWith(d));
  for (const m of [read, write]) for (const p of [...m.keys()]) if (hidden(p)) m.delete(p);
  // Only where the sandbox can write can it rename a parent away (the areas themselves are mount points).
  const pinned = new Set<string>();
  const pinnable = (a: string) => areas === undefined || (writable(a) && !areas.includes(a));
  for (const p of [...read.keys(), ...write.keys()]) {
    for (let a = dirname(p); a !== '/' && a !== dirname(a); a = dirname(a)) if (pinnable(a) && !disk.isSymlink(a)) pinned.add(a);
  }
  const byDepth = (a: string, b: string) => a.split('/').length - b.split('/').length || (a < b ? -1 : a > b ? 1 : 0);
  return {
    denyRead: [...read.values()].sort((a, b) => byDepth(a.path, b.path)),
    denyWrite: [...write.values()].sort((a, b) => byDepth(a.path, b.path)),
    placeholders: [...placeholders].filter((p) => read.has(p) || write.has(p)).sort(byDepth),
    fileStandIns: [...fileStandIns].filter((p) => write.has(p) && !placeholders.has(p)).sort(byDepth),
    parents: [...parents].filter((p) => !hidden(p + '/x')).sort(byDepth),
    pinned: [...pinned].sort(byDepth),
    missingRead: [...missingRead].filter((p) => !hidden(p)).sort(byDepth),
    warnings,
  };
}
