// Finds an executable on PATH, as `which` does, without loading a package on
// the start-up path of every run.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export function findTool(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
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
