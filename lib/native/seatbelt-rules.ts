// The profile's path rules as Seatbelt filters, in the form Seatbelt matches:
// the canonical path of the file itself. macOS reaches /tmp, /var and /etc
// through links into /private, $TMPDIR lies under /var/folders, and a home
// may hold links of its own; a rule written through a link never fires. So
// each plain path becomes its longest existing ancestor's real path plus the
// rest (and the path as written, in case), each pattern gets its fixed prefix
// canonical too, and the links found inside denied folders have their
// targets denied as well. Nothing is expanded: Seatbelt matches subpaths and
// regexes on every access, so paths created during the run are covered too.
import { lstatSync, readdirSync } from 'node:fs';
import { realPathOf } from '../util/real-path.js';
import { dirname, join } from 'node:path';
import type { SeatbeltInput, SeatbeltRule } from '../../templates/seatbelt.js';
import { escapeRegex, expandHome, globToRegex, inside, resolveRule, type Rule } from '../paths/rules.js';

/** A path's real path, or null when it does not exist (tests render a Mac's from Linux). */
export type RealPath = (path: string) => string | null;

export const realPathOnDisk: RealPath = realPathOf;

/** The real path of the longest existing ancestor, with the rest of the path after it. */
export function canonicalPath(path: string, real: RealPath): string {
  const rest: string[] = [];
  for (let p = path; ; p = dirname(p)) {
    const r = real(p);
    if (r !== null) return rest.length === 0 ? r : join(r, ...rest.reverse());
    if (p === dirname(p)) return path;
    rest.push(p.slice(dirname(p).length).replace(/^\//, ''));
  }
}

/** How many characters of a regex source spell `literal` (an escaped character counts two). */
function spelled(src: string, literal: string): number | null {
  let i = 0;
  for (const ch of literal) {
    if (src[i] === '\\' && src[i + 1] === ch) i += 2;
    else if (src[i] === ch && !/[.*+?^${}()|[\]\\]/.test(ch)) i += 1;
    else return null;
  }
  return i;
}

/** A pattern's regex source, and the same with its fixed prefix canonical when that differs. */
function patternSources(rule: Extract<Rule, { kind: 'pattern' }>, real: RealPath): string[] {
  const src = rule.regex.source;
  const out = [src];
  if (rule.root === '/' || !src.startsWith('^')) return out;
  const canon = canonicalPath(rule.root, real);
  const n = spelled(src.slice(1), rule.root);
  if (canon !== rule.root && n !== null) out.push(`^${escapeRegex(canon)}${src.slice(1 + n)}`);
  return out;
}

/** The link targets (outside every denied path) found in a denied folder, and its files with other hard links. */
const WALK_LIMIT = 5000;
function linkedFrom(dir: string, denied: string[], real: RealPath): { targets: SeatbeltRule[]; warnings: string[] } {
  const targets: SeatbeltRule[] = [];
  const warnings: string[] = [];
  let seen = 0;
  const walk = (d: string, depth: number): void => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      if (++seen > WALK_LIMIT) return;
      const p = join(d, name);
      const st = lstatSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isSymbolicLink()) {
        const target = real(p);
        if (target !== null && !denied.some((x) => inside(target, x))) {
          targets.push({ kind: 'path', path: target, dir: lstatSync(target, { throwIfNoEntry: false })?.isDirectory() === true });
        }
      } else if (st.isDirectory() && depth < 6) walk(p, depth + 1);
      else if (st.isFile() && st.nlink > 1) warnings.push(`${p} has ${st.nlink - 1} other hard link(s): Seatbelt denies by path, so a link outside the denied folders reads it (remove the link, or use the Docker backend)`);
    }
  };
  walk(dir, 0);
  if (seen > WALK_LIMIT) warnings.push(`${dir}: stopped looking for links out of it after ${WALK_LIMIT} entries; a link further in leads to a file the sandbox can read`);
  return { targets, warnings };
}

/**
 * A deny pattern's folders may not be renamed: its fixed root (canonical) and
 * the folders above, and, for a glob, each prefix that ends in a literal part
 * after a wildcard one (`a/*\/b` pins every `a/<x>/b`). A `**` or wildcard part
 * needs nothing: a rename there still matches.
 */
function pinPattern(entry: string, rule: Extract<Rule, { kind: 'pattern' }>, home: string, cwd: string, real: RealPath, pins: Pins): void {
  const pinned = pins.paths;
  const pinnedPatterns = pins.patterns;
  const root = canonicalPath(rule.root, real);
  for (let a = root; a !== '/' && a !== dirname(a); a = dirname(a)) pinned.add(a);
  if (entry.startsWith('re:')) return;
  const segments = expandHome(entry, home, cwd).split('/');
  for (let k = 2; k < segments.length; k++) {
    const prefix = segments.slice(0, k);
    const last = prefix[prefix.length - 1] as string;
    if (/[*?[]/.test(last) || !prefix.some((x) => /[*?[]/.test(x))) continue;
    const src = globToRegex(prefix.join('/')).source;
    pinnedPatterns.add(src);
    const canonRoot = canonicalPath(rule.root, real);
    if (canonRoot !== rule.root && src.startsWith(`^${escapeRegex(rule.root)}`)) pinnedPatterns.add(`^${escapeRegex(canonRoot)}${src.slice(1 + escapeRegex(rule.root).length)}`);
  }
}

interface Pins {
  paths: Set<string>;
  patterns: Set<string>;
}

function rulesFor(entries: string[], home: string, cwd: string, real: RealPath, pins: Pins | null): SeatbeltRule[] {
  const pinned = pins?.paths ?? null;
  const out: SeatbeltRule[] = [];
  for (const entry of entries) {
    const rule = resolveRule(entry, home, cwd);
    if (rule.kind === 'pattern') {
      out.push(...patternSources(rule, real).map((source): SeatbeltRule => ({ kind: 'regex', source })));
      if (pins) pinPattern(entry, rule, home, cwd, real, pins);
      continue;
    }
    for (const p of new Set([rule.path, canonicalPath(rule.path, real)])) {
      out.push({ kind: 'path', path: p, dir: true });
      if (pinned) for (let a = dirname(p); a !== '/' && a !== dirname(a); a = dirname(a)) pinned.add(a);
    }
  }
  return out;
}

export interface SeatbeltRulesInput {
  writes: 'allow-list' | 'deny-list';
  /** Where an allow-list lets writes through: paths (subpaths) and ready-made rules (the agents' state). */
  allowWrite: string[];
  allowRules: SeatbeltRule[];
  /** Where no link, FIFO or socket may be made (the agents' state an allow-list lets the agent write, templates/seatbelt.ts). */
  plainRules?: SeatbeltRule[];
  runFolders: SeatbeltInput['runFolders'];
  unixSockets: boolean;
  deniedSockets: string[];
  denyRead: string[];
  denyWrite: string[];
  writable?: string[];
  home: string;
  cwd: string;
  proxyPort: number | '<port>' | null;
  services: SeatbeltInput['services'];
  real?: RealPath;
}

export function seatbeltInput(o: SeatbeltRulesInput): { input: SeatbeltInput; warnings: string[] } {
  const real = o.real ?? realPathOnDisk;
  const pins: Pins = { paths: new Set(), patterns: new Set() };
  const denyRead = rulesFor(o.denyRead, o.home, o.cwd, real, pins);
  const denyWrite = rulesFor(o.denyWrite, o.home, o.cwd, real, pins);
  // Links in a denied folder lead elsewhere: their targets are denied too (read denials for read, write for write).
  const warnings: string[] = [];
  const follow = (rules: SeatbeltRule[]): SeatbeltRule[] => {
    const dirs = rules.flatMap((r) => (r.kind === 'path' && real(r.path) === r.path && lstatSync(r.path, { throwIfNoEntry: false })?.isDirectory() ? [r.path] : []));
    return dirs.flatMap((d) => {
      const found = linkedFrom(d, dirs, real);
      warnings.push(...found.warnings);
      return found.targets;
    });
  };
  denyRead.push(...follow(denyRead));
  denyWrite.push(...follow(denyWrite));
  const allowWrite = [...rulesFor(o.allowWrite, o.home, o.cwd, real, null), ...o.allowRules];
  const canonWritable = (o.writable ?? []).map((w) => canonicalPath(w, real));
  return {
    input: {
      writes: o.writes, allowWrite, plain: o.plainRules ?? [], runFolders: o.runFolders, unixSockets: o.unixSockets,
      deniedSockets: rulesFor(o.deniedSockets, o.home, o.cwd, real, null),
      denyRead, denyWrite, writable: canonWritable, pinned: [...pins.paths].sort(), pinnedPatterns: [...pins.patterns].sort(), proxyPort: o.proxyPort, services: o.services,
    },
    warnings: [...new Set(warnings)],
  };
}
