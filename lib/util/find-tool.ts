// Finds an executable on PATH, as `which` does, without loading a package on
// the start-up path of every run. Only PATH's absolute folders are searched:
// a relative one (".", "node_modules/.bin", an empty entry) names a folder
// under the working directory, which is the agent's to write, and a tool
// stashbase runs on your side would be the agent's (found in review).
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/** PATH without its relative folders (the working directory's, the agent's to write). */
export function absolutePath(path: string): string {
  return path.split(delimiter).filter((d) => isAbsolute(d)).join(delimiter);
}

export function findTool(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!isAbsolute(dir)) continue;
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
