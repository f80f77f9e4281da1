// Where a native run may write when writes are an allow-list (the default):
// the working directory, the run's private temp folders, the views (git's
// directory, the agents' state) and the profile's allow_write; the rest of
// the host is read-only. Pure but for reading which paths exist.
import { lstatSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BindMount } from '../../templates/bwrap.js';
import { expandPattern, MAX_ENTRIES } from '../paths/expand.js';
import { inside, resolveRule } from '../paths/rules.js';


/** The host's temp folders the sandbox gets private ones of (the host's own TMPDIR too, when it is elsewhere). */
export function privateTempDests(): string[] {
  const out = ['/tmp'];
  if (lstatSync('/var/tmp', { throwIfNoEntry: false })?.isDirectory()) out.push('/var/tmp');
  const t = tmpdir();
  if (!out.some((d) => inside(t, d)) && lstatSync(t, { throwIfNoEntry: false })?.isDirectory()) out.push(t);
  return out;
}

/** Private temp folders in the run directory, one per destination. */
export function privateTemps(runDir: string, dests: string[]): Array<{ src: string; dest: string }> {
  return dests.map((dest, i) => ({ src: join(runDir, `tmp-${i}`), dest }));
}

/** allow_write entries as paths: plain ones as written (missing ones are made as folders), patterns as what matches now. */
export function allowWritePaths(entries: string[], home: string, cwd: string): { paths: string[]; missing: string[] } {
  const paths: string[] = [];
  const missing: string[] = [];
  for (const entry of entries) {
    const rule = resolveRule(entry, home, cwd);
    if (rule.kind === 'pattern') paths.push(...expandPattern(rule).paths);
    else if (lstatSync(rule.path, { throwIfNoEntry: false })) paths.push(rule.path);
    else {
      paths.push(rule.path);
      missing.push(rule.path);
    }
  }
  return { paths, missing };
}

/**
 * Where the end-of-run check counts what changed as the run's, outside its
 * tree (lib/git/nested-repo-guard.ts), asked when the run ends: allow_write's
 * paths, all below a pattern's fixed part when its walk stopped at its bound
 * (found in review: an agent that filled its tree past the bound had a folder
 * the pattern matched left out, and what it wrote there counted as yours), and
 * the agents' state folders their views write (`views`).
 */
export function checkedWriteAreas(entries: string[], home: string, cwd: string, views: string[], limit = MAX_ENTRIES): string[] {
  const out: string[] = [...views];
  for (const entry of entries) {
    const rule = resolveRule(entry, home, cwd);
    if (rule.kind !== 'pattern') out.push(rule.path);
    else {
      const found = expandPattern(rule, limit);
      out.push(...(found.truncated ? [rule.root] : found.paths));
    }
  }
  return out;
}

/**
 * A writable root inside a path the profile denies is not writable (deny wins
 * over the working directory and allow_write), unless a carve-out (a worktree
 * run's own parts) holds it.
 */
export function keptRoots(roots: string[], denied: string[], carveOuts: string[]): string[] {
  return roots.filter((w) => carveOuts.some((c) => inside(w, c)) || !denied.some((d) => inside(w, d)));
}

/**
 * Paths under a private temp folder that the sandbox must still see,
 * read-only, unless a bind shows them anyway: the home (tests keep theirs
 * there), and stashbase's own files (a clone or an install under /tmp: the
 * hooks that run it inside need them).
 */
export function reexposed(privateDests: string[], paths: string[], binds: BindMount[]): BindMount[] {
  const out: BindMount[] = [];
  for (const p of paths) {
    const underPrivate = privateDests.some((d) => inside(p, d) && p !== d);
    const shown = [...binds, ...out].some((b) => inside(p, b.dest));
    if (underPrivate && !shown) out.push({ src: p, dest: p, ro: true });
  }
  return out;
}
