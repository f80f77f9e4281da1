// The profile's path rules as Seatbelt filters. Nothing is expanded: Seatbelt
// matches subpaths and regexes on every access, so paths created during the run
// are covered too. A plain path becomes a subpath filter (which also matches the
// path itself), and its real path is added when it is a symlink.
import { realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SeatbeltInput, SeatbeltRule } from '../../templates/seatbelt.js';
import { resolveRule } from '../paths/rules.js';

function rulesFor(entries: string[], home: string, cwd: string, pinned: Set<string> | null): SeatbeltRule[] {
  const out: SeatbeltRule[] = [];
  for (const entry of entries) {
    const rule = resolveRule(entry, home, cwd);
    if (rule.kind === 'pattern') {
      out.push({ kind: 'regex', source: rule.regex.source });
      continue;
    }
    const paths = [rule.path];
    try {
      const real = realpathSync(rule.path);
      if (real !== rule.path) paths.push(real);
    } catch {
      // does not exist (yet): the subpath filter covers it once it does
    }
    for (const p of paths) {
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
  otherRuns: SeatbeltInput['otherRuns'];
  unixSockets: boolean;
  denyRead: string[];
  denyWrite: string[];
  writable?: string[];
  home: string;
  cwd: string;
  proxyPort: number | '<port>' | null;
}

export function seatbeltInput(o: SeatbeltRulesInput): SeatbeltInput {
  const pinned = new Set<string>();
  const denyRead = rulesFor(o.denyRead, o.home, o.cwd, pinned);
  const denyWrite = rulesFor(o.denyWrite, o.home, o.cwd, pinned);
  const allowWrite = [...rulesFor(o.allowWrite, o.home, o.cwd, null), ...o.allowRules];
  return {
    writes: o.writes, allowWrite, otherRuns: o.otherRuns, unixSockets: o.unixSockets,
    denyRead, denyWrite, writable: o.writable ?? [], pinned: [...pinned].sort(), proxyPort: o.proxyPort,
  };
}
