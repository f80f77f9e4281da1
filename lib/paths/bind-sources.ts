// Binds whose source lies in the tree the agent writes are checked before the
// sandbox starts: a folder of that path replaced by a link (by an earlier run's
// agent) would make bwrap or Docker, which resolve a bind's source on this
// machine, show what the link names instead: a folder of your home, read-write
// where the run pins a parent of an isolated path (found in review).
import { printable } from '../util/printable.js';
import { accessSync, closeSync, constants, lstatSync, openSync, readlinkSync } from 'node:fs';
import type { FdFile } from '../../templates/command.js';
import { SandboxUnavailableError } from '../errors.js';
import { realPathOf } from '../util/real-path.js';

function linkedSource(src: string, real: string): SandboxUnavailableError {
  return new SandboxUnavailableError(`${src} is reached through a link (it leads to ${real}), and the run binds it into the sandbox, which would show what the link names instead: remove the link, or name the real path in the profile; nothing was run`);
}

/** Refuses the run when a bind's source inside `within` (a real path), or `within` itself, is reached through a link. */
export function refuseLinkedSources(sources: string[], within: string): void {
  for (const src of sources) {
    if (!src.startsWith(`${within}/`) && src !== within) continue;
    const real = realPathOf(src);
    if (real !== null && real !== src) {
      throw linkedSource(src, real);
    }
  }
}

/** Linux's O_PATH (x86-64 and arm64, where the bwrap backend runs): a descriptor that names a file without reading it. */
export const O_PATH = 0o10000000;

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
        throw linkedSource(f.path, opened);
      }
    }
  } catch (e) {
    close();
    if (e instanceof SandboxUnavailableError) throw e;
    throw new SandboxUnavailableError(`the run binds ${(e as NodeJS.ErrnoException).path ?? 'a folder of the tree'} into the sandbox, and it cannot be opened (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); nothing was run`);
  }
  return { fds, close };
}

/**
 * Refuses the run when a writable root outside the tree (an allow_write path)
 * is reached through a link an agent of some run could have made: one owned by
 * you, in a folder you may write or own (its mode is yours to change, and an
 * agent's). Found in review: a run of a profile allowing
 * ~/.cache left ~/.cache/pip → ../.local/bin, and a run of another allowing
 * ~/.cache/pip then wrote ~/.local/bin. The system's links (root's, in folders
 * you cannot write: /home → /var/home) pass; a link of your own there is
 * refused too, with the fix: name the real path in the profile. Returns the
 * real path each was judged at (the system's links followed): the run binds
 * that, from a descriptor opened and checked against it where bwrap takes one
 * (found in review: an agent of a concurrent run swapped the folder for a link
 * between this check and bwrap's bind by name).
 */
export function refuseAgentLinks(sources: string[]): Map<string, string> {
  const uid = process.getuid?.();
  const judged = new Map<string, string>();
  for (const src of sources) {
    let at = '/';
    const parts = src.split('/').filter(Boolean);
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as string;
      const next = at === '/' ? `/${part}` : `${at}/${part}`;
      const st = lstatSync(next, { throwIfNoEntry: false });
      if (st === undefined) {
        // Missing from here on (made for the run): the rest as named.
        at = [next, ...parts.slice(i + 1)].join('/');
        break;
      }
      if (st.isSymbolicLink()) {
        // A folder you own is one a run may write, whatever its mode now (found in review: the agent made the link, then
        // closed its folder with chmod 555, and the link passed for the system's).
        let writable = lstatSync(at, { throwIfNoEntry: false })?.uid === uid;
        try {
          accessSync(at, constants.W_OK);
          writable = true;
        } catch {
          // a folder of the system's, unless it is yours
        }
        if (st.uid === uid && writable) {
          throw new SandboxUnavailableError(`${printable(src, true)} is reached through ${printable(next, true)}, a link in a folder a run may write (an agent could have made it, to aim this writable path elsewhere): name the real path in the profile (${printable(realPathOf(src) ?? 'where it leads', true)}); nothing was run`);
        }
        const real = realPathOf(next);
        if (real === null) {
          at = [next, ...parts.slice(i + 1)].join('/');
          break;
        }
        at = real;
      } else at = next;
    }
    judged.set(src, at);
  }
  return judged;
}
