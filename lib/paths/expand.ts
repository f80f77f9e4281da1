// Expands glob and regex rules to the concrete paths that exist now, by walking
// from the pattern's fixed prefix: hidden and gitignored files included, symlinks
// matched but not followed, at most MAX_ENTRIES entries per pattern.
import { readdirSync } from 'node:fs';
import { resolveRule, type Rule } from './rules.js';

export const MAX_ENTRIES = 200_000;
/** Kernel filesystems hold nothing a rule protects, and /proc would walk every process. */
export const KERNEL_FOLDERS: readonly string[] = ['/proc', '/sys', '/dev'];
const SKIP = new Set(KERNEL_FOLDERS);

export interface Expansion {
  paths: string[];
  /** Set when the walk stopped at the limit. */
  truncated: boolean;
  visited: number;
}

export function expandPattern(rule: Extract<Rule, { kind: 'pattern' }>, limit = MAX_ENTRIES): Expansion {
  const paths: string[] = [];
  let visited = 0;
  const stack: Array<[dir: string, depth: number]> = [[rule.root, 0]];
  if (rule.regex.test(rule.root)) return { paths: [rule.root], truncated: false, visited: 0 };
  while (stack.length > 0) {
    const [dir, depth] = stack.pop() as [string, number];
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue; // unreadable or vanished: nothing there to protect from us either
    }
    for (const e of entries) {
      if (++visited > limit) return { paths, truncated: true, visited: limit };
      const full = dir === '/' ? `/${e.name}` : `${dir}/${e.name}`;
      if (rule.regex.test(full)) {
        paths.push(full); // a matched directory is protected whole: no need to descend
      } else if (e.isDirectory() && !SKIP.has(full) && (rule.maxDepth === null || depth + 1 < rule.maxDepth)) {
        stack.push([full, depth + 1]);
      }
    }
  }
  return { paths: paths.sort(), truncated: false, visited };
}

/** Rule entries as the paths they name now: a plain one as written, a pattern as what it matches. */
export function expandedPaths(entries: readonly string[], home: string, cwd: string): string[] {
  return entries.flatMap((entry) => {
    const rule = resolveRule(entry, home, cwd);
    return rule.kind === 'path' ? [rule.path] : expandPattern(rule).paths;
  });
}
