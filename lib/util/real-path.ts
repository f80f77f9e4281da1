// A path's real path (links resolved), or null when it does not exist or
// cannot be resolved: the one helper for the checks that compare real paths.
import { realpathSync } from 'node:fs';

export function realPathOf(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}
