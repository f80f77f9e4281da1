// The npm packages a repository already has: its nearest package.json's
// dependency lists and its package-lock.json's packages. An install script
// of one of these is nothing new; of anything else, it is.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { jsonOf } from '../readback/json.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function readJson(file: string): unknown {
  try {
    return jsonOf(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The names in the nearest package.json (and its lockfile) from `cwd` up; null when there is none. */
export function npmRepoPackages(cwd: string): Set<string> | null {
  let dir = cwd;
  for (;;) {
    const pkg = readJson(join(dir, 'package.json'));
    if (isObj(pkg)) {
      const names = new Set<string>();
      for (const k of ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies']) {
        if (isObj(pkg[k])) for (const n of Object.keys(pkg[k] as Obj)) names.add(n);
      }
      const lock = readJson(join(dir, 'package-lock.json'));
      if (isObj(lock) && isObj(lock.packages)) {
        for (const path of Object.keys(lock.packages)) {
          const at = path.lastIndexOf('node_modules/');
          if (at !== -1) names.add(path.slice(at + 'node_modules/'.length));
        }
      }
      return names;
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** Whether node_modules/.bin/NAME exists from `cwd` up (what npx runs without fetching). */
export function hasLocalBin(cwd: string, name: string): boolean {
  for (let dir = cwd; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules', '.bin', name))) return true;
    if (dirname(dir) === dir) return false;
  }
}
