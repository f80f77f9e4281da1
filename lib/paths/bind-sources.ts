// Binds whose source lies in the tree the agent writes are checked before the
// sandbox starts: a folder of that path replaced by a link (by an earlier run's
// agent) would make bwrap or Docker, which resolve a bind's source on this
// machine, show what the link names instead: a folder of your home, read-write
// where the run pins a parent of an isolated path (found in review).
import { SandboxUnavailableError } from '../errors.js';
import { realPathOf } from '../util/real-path.js';

/** Refuses the run when a bind's source inside `within` (a real path) is reached through a link. */
export function refuseLinkedSources(sources: string[], within: string): void {
  for (const src of sources) {
    if (!src.startsWith(`${within}/`)) continue;
    const real = realPathOf(src);
    if (real !== null && real !== src) {
      throw new SandboxUnavailableError(`${src} is reached through a link (it leads to ${real}), and the run binds it into the sandbox, which would show what the link names instead: remove the link, or name the real path in the profile; nothing was run`);
    }
  }
}
