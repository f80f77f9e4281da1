// Hard links cross every mount: a second name made before the run for a file
// inside a denied directory reads the file past the denial. No rule can cover
// names it does not know, so the run says which files have other names.
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Files under `dir` with more than one link, walking at most `limit` entries
 * and `maxDepth` levels (symlinks not followed): credential files sit near the
 * top of their folder, and a browser profile holds thousands of others.
 */
export function multiplyLinked(dir: string, limit = 2000, maxDepth = 3): { files: string[]; truncated: boolean } {
  const files: string[] = [];
  const stack: Array<[string, number]> = [[dir, 1]];
  let seen = 0;
  while (stack.length > 0) {
    const [d, depth] = stack.pop() as [string, number];
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (++seen > limit) return { files, truncated: true };
      const full = join(d, e.name);
      if (e.isDirectory()) {
        if (depth < maxDepth) stack.push([full, depth + 1]);
      }
      else if (e.isFile() && (lstatSync(full, { throwIfNoEntry: false })?.nlink ?? 1) > 1) files.push(full);
    }
  }
  return { files: files.sort(), truncated: false };
}
