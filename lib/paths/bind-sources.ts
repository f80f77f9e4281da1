// Binds whose source lies in the tree the agent writes are checked before the
// sandbox starts: a folder of that path replaced by a link (by an earlier run's
// agent) would make bwrap or Docker, which resolve a bind's source on this
// machine, show what the link names instead: a folder of your home, read-write
// where the run pins a parent of an isolated path (found in review).
import { closeSync, openSync, readlinkSync } from 'node:fs';
import type { FdFile } from '../../templates/command.js';
import { SandboxUnavailableError } from '../errors.js';
import { realPathOf } from '../util/real-path.js';

/** Refuses the run when a bind's source inside `within` (a real path), or `within` itself, is reached through a link. */
export function refuseLinkedSources(sources: string[], within: string): void {
  for (const src of sources) {
    if (!src.startsWith(`${within}/`) && src !== within) continue;
    const real = realPathOf(src);
    if (real !== null && real !== src) {
      throw new SandboxUnavailableError(`${src} is reached through a link (it leads to ${real}), and the run binds it into the sandbox, which would show what the link names instead: remove the link, or name the real path in the profile; nothing was run`);
    }
  }
}

/** Linux's O_PATH (x86-64 and arm64, where the bwrap backend runs): a descriptor that names a file without reading it. */
const O_PATH = 0o10000000;

export interface HeldSources {
  /** Each held source's descriptor here, by the number the child gets it as. */
  fds: Array<{ child: number; fd: number }>;
  close(): void;
}

/**
 * Opens each bind source the child binds from a descriptor (FdFile.held) and
 * checks that what was opened is that real path still, refusing the run
 * otherwise: the child then binds what was checked, whatever the path names
 * after (bwrap's `--bind-fd` fails when the mount is not the descriptor's).
 */
export function holdSources(files: FdFile[]): HeldSources {
  const fds: HeldSources['fds'] = [];
  const close = () => {
    for (const h of fds.splice(0)) closeSync(h.fd);
  };
  try {
    for (const f of files) {
      if (f.held !== true) continue;
      const fd = openSync(f.path, O_PATH);
      fds.push({ child: f.fd, fd });
      const opened = readlinkSync(`/proc/self/fd/${fd}`);
      if (opened !== f.path) {
        throw new SandboxUnavailableError(`${f.path} is reached through a link (it leads to ${opened}), and the run binds it into the sandbox, which would show what the link names instead: remove the link, or name the real path in the profile; nothing was run`);
      }
    }
  } catch (e) {
    close();
    if (e instanceof SandboxUnavailableError) throw e;
    throw new SandboxUnavailableError(`the run binds ${(e as NodeJS.ErrnoException).path ?? 'a folder of the tree'} into the sandbox, and it cannot be opened (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); nothing was run`);
  }
  return { fds, close };
}
