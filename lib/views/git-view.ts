// The view of a git directory (lib/views/spec.ts): what a commit writes is
// written for real (objects, refs, reflogs; the index, HEAD and git's other
// state files carried back after the run), and nothing git would later obey
// or run (config, hooks, info, a commondir, submodules' and worktrees'
// metadata) can change, or appear where it was missing.
import { lstatSync, readdirSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { readSmallText } from '../util/read-text.js';
import type { ViewSpec } from './spec.js';

/** Folders a commit, a fetch or git-lfs writes into, bound writable. */
const LIVE = new Set(['objects', 'refs', 'logs', 'lfs']);

/** The state files git rewrites for an ordinary commit, merge, cherry-pick or fetch: carried back. */
export const GIT_STATE_FILES = [
  'HEAD', 'index', 'ORIG_HEAD', 'FETCH_HEAD', 'MERGE_HEAD', 'MERGE_MSG', 'MERGE_MODE', 'MERGE_RR', 'AUTO_MERGE',
  'CHERRY_PICK_HEAD', 'REVERT_HEAD', 'COMMIT_EDITMSG', 'TAG_EDITMSG', 'SQUASH_MSG', 'packed-refs', 'shallow',
];

/** Left behind silently: git's lock and housekeeping files. */
const QUIET = /\.lock$|^gc\.(pid|log)$|^gitk\.cache$|^tmp_|^\.COMMIT_EDITMSG\.swp$/;

function entries(dir: string): Array<{ name: string; kind: 'dir' | 'file' | 'link' }> {
  let list;
  try {
    list = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: Array<{ name: string; kind: 'dir' | 'file' | 'link' }> = [];
  for (const e of list) {
    if (e.isDirectory()) out.push({ name: e.name, kind: 'dir' });
    else if (e.isFile()) out.push({ name: e.name, kind: 'file' });
    else if (e.isSymbolicLink()) out.push({ name: e.name, kind: 'link' });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : 1));
}

export function gitViewSpec(gitDir: string, id: string, label: string): ViewSpec {
  const spec: ViewSpec = {
    id, label, at: gitDir, live: [], readOnly: [], copies: [], empty: [],
    merge: Object.fromEntries(GIT_STATE_FILES.map((f) => [f, f === 'index' ? ('git-index' as const) : ('replace' as const)])),
    hostPaths: {},
    adoptDirs: ['logs', 'lfs'],
    quiet: QUIET,
  };
  for (const e of entries(gitDir)) {
    if (e.kind === 'dir') (LIVE.has(e.name) ? spec.live : spec.readOnly).push(e.name);
    else spec.copies.push(e.name);
  }
  return spec;
}

export interface GitLayout {
  /** Views to mount. */
  views: ViewSpec[];
  /** A `.git` pointer file in the working tree (a linked worktree's or a submodule's): kept read-only. */
  pointer: string | null;
}

/**
 * The git directories around a repository's top: its `.git` directory, or
 * for a `.git` pointer file the directory it names (a submodule's, viewed like
 * any) and, for a linked worktree, its admin folder and the common directory.
 */
export function gitLayout(root: string): GitLayout {
  const dotGit = join(root, '.git');
  const st = lstatSync(dotGit, { throwIfNoEntry: false });
  if (!st) return { views: [], pointer: null };
  if (st.isDirectory()) return { views: [gitViewSpec(dotGit, 'git', '.git')], pointer: null };
  if (!st.isFile()) return { views: [], pointer: null };
  const m = /^gitdir: (.+?)\r?\n?$/.exec(readSmallText(dotGit, 4096) ?? '');
  if (!m) return { views: [], pointer: dotGit };
  const gitDir = resolve(root, m[1] as string);
  if (!lstatSync(gitDir, { throwIfNoEntry: false })?.isDirectory()) return { views: [], pointer: dotGit };
  const common = readSmallText(join(gitDir, 'commondir'), 4096)?.trim();
  if (!common) return { views: [gitViewSpec(gitDir, 'git', gitDir)], pointer: dotGit };
  const commonDir = isAbsolute(common) ? common : resolve(gitDir, common);
  const admin = gitViewSpec(gitDir, 'git-worktree', gitDir);
  // The admin folder's own pointers stay as git wrote them.
  admin.merge = Object.fromEntries(Object.entries(admin.merge).filter(([name]) => name !== 'packed-refs' && name !== 'shallow'));
  // Mounted by depth: the admin folder, inside the common directory, lands in its view.
  return { views: [gitViewSpec(commonDir, 'git', commonDir), admin], pointer: dotGit };
}
