// What in a git directory would lead git's writes, or its reads, elsewhere: a
// link, a FIFO, a socket or a device anywhere in it (a reflog linked to your
// ~/.bashrc takes the import's appended line; refs/heads or objects/pack linked
// into another repository takes its refs and packs). Found in review: a later
// run's import wrote through them in a git directory the agent had made in the
// tree. Read only, never following a link; bounded like the run's own walk
// (lib/git/sanitize.ts). The entries of objects/xx/ and objects/pack/ are
// judged by their kind alone (files, and multi-pack-index.d): git replaces them
// by rename, never writes through them, and a local clone hard-links them.
import { type Dirent, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { kind, MAX_GIT_ENTRIES } from './sanitize.js';

/**
 * Top-level names that may be links (where they stay in the git directory, as the caller judges): what git reads and
 * never writes through. Any other (logs, COMMIT_EDITMSG, a reflog's folder) is a way for git's writes to go where this
 * walk does not look (found in review: logs linked to a folder made in objects/pack, its HEAD linked to ~/.bashrc).
 */
const TOP_LINKS = new Set(['hooks', 'info', 'description', 'branches', 'remotes', 'config']);

/**
 * The first such entry of `gitDir` ("logs/refs/stash (a symbolic link)"), or null. A file with another name elsewhere
 * (a hard link) counts too: git appends to a reflog through it (found in review: one to a script in the tree took the
 * import's line). `allowTop`: top-level names whose link is judged elsewhere; `counts`: which entries are judged (by
 * path; those written during a run, say), the walk going on below the rest; `linkOk`: symbolic links (by their path
 * in the git directory) the caller keeps safe otherwise, not judged (a run's: a hook linked to a script of the tree,
 * which the run keeps read-only as what your git runs). A hard link still counts: the file's other name, in the tree
 * say, would be the agent's to write.
 */
export function gitDirLink(gitDir: string, allowTop: (name: string) => boolean = () => false, counts: (path: string) => boolean = () => true, linkOk: (path: string) => boolean = () => false): string | null {
  let seen = 0;
  // A folder that counts makes all below it count (found in review: an old folder moved into the git directory keeps
  // its entries' old times, and with them a hard link or a link out).
  const walk = (dir: string, rel: string, all = false): string | null => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      // One it cannot list (the agent's chmod 111 keeps git's lookups by name working): what it holds is unknown, a
      // finding where it counts (found in review: a reflog link behind it took the import's line). Gone meanwhile: nothing.
      const code = (e as NodeJS.ErrnoException).code;
      return code === 'ENOENT' || !(all || counts(dir)) ? null : `${rel || '.'} (a folder stashbase cannot list: ${code ?? 'unreadable'})`;
    }
    for (const e of entries) {
      if (++seen > MAX_GIT_ENTRIES) return `${rel || '.'} (more than ${MAX_GIT_ENTRIES} entries)`;
      const path = rel ? `${rel}/${e.name}` : e.name;
      const full = join(dir, e.name);
      // In the folders of loose objects and packs, files alone (their hard links are git's own, from a local clone): a
      // link or a folder there would be a way around this walk (found in review: a top-level link into objects/pack).
      const inObjects = /^objects\/([0-9a-f]{2}|pack)$/.test(rel);
      if (!e.isFile() && !e.isDirectory()) {
        if (rel === '' && e.isSymbolicLink() && TOP_LINKS.has(e.name) && allowTop(e.name)) continue;
        if (e.isSymbolicLink() && linkOk(path)) continue;
        if (all || counts(full)) return `${path} (${kind(e)})`;
        continue;
      }
      if (!e.isDirectory()) {
        if (!inObjects && (lstatSync(full, { throwIfNoEntry: false })?.nlink ?? 1) > 1 && (all || counts(full))) return `${path} (a hard link: the same file has another name)`;
        continue;
      }
      if (inObjects && e.name !== 'multi-pack-index.d') {
        if (all || counts(full)) return `${path} (a folder where git keeps files alone)`;
        continue;
      }
      const below = walk(full, path, all || counts(full));
      if (below !== null) return below;
    }
    return null;
  };
  if (!lstatSync(gitDir, { throwIfNoEntry: false })?.isDirectory()) return null;
  return walk(gitDir, '');
}
