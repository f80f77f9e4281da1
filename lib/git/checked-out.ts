// The branches your checkouts have, as git itself counts them before it moves
// a branch (worktree.c: a worktree's HEAD, through every symbolic ref it
// names; the branch a rebase or a bisect paused in that worktree works on):
// read by stashbase from your git directory, no link followed, each file
// bounded. The import never moves one of them (lib/git/import.ts), and a
// remote --resume of one is refused (lib/remote/execute.ts).
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readBack, readBackText } from '../readback/file.js';
import { parseRefFile, type RefValue, refFileText } from './ref-store.js';
import { validRefName } from './refname.js';

/** Symbolic refs followed at most this far (git's own limit, refs.c SYMREF_MAXDEPTH). */
const MAX_HOPS = 5;

const textOf = (file: string): string | null => {
  const r = readBack(file, 4096);
  return r.ok ? refFileText(r.data) : null;
};

/**
 * The branches checked out in the checkouts of `gitDir` (a common git
 * directory), each with where: your main checkout (unless `skip` is 'main')
 * and every linked worktree (but the one whose admin folder is `skip`).
 * `refs`: your refs, to follow symbolic ones (refs/heads/main -> refs/heads/master).
 */
export function checkedOutBranches(gitDir: string, refs: Map<string, RefValue>, skip: 'main' | string | null): Map<string, string> {
  const out = new Map<string, string>();
  const mark = (ref: string, where: string) => {
    for (let hops = 0, at: string | undefined = ref; at !== undefined && hops <= MAX_HOPS; hops++) {
      if (!out.has(at)) out.set(at, where);
      const v = refs.get(at);
      at = v?.kind === 'symref' ? v.target : undefined;
    }
  };
  const look = (admin: string, where: string) => {
    const head = textOf(join(admin, 'HEAD'));
    const v = head === null ? null : parseRefFile(head);
    if (v?.kind === 'symref') mark(v.target, where);
    // A rebase paused there: HEAD is detached, the branch it works on is in head-name.
    for (const f of ['rebase-merge/head-name', 'rebase-apply/head-name']) {
      const name = textOf(join(admin, f))?.replace(/\n$/, '');
      if (name !== undefined && name.startsWith('refs/heads/') && validRefName(name)) mark(name, where);
    }
    // A bisect started there: BISECT_START names the branch it started on (short), or a commit.
    const start = textOf(join(admin, 'BISECT_START'))?.replace(/\n$/, '');
    if (start !== undefined && start !== '' && validRefName(`refs/heads/${start}`)) mark(`refs/heads/${start}`, where);
  };
  if (skip !== 'main') look(gitDir, `your checkout ${dirname(gitDir)}`);
  let names: string[] = [];
  try {
    names = readdirSync(join(gitDir, 'worktrees'));
  } catch {
    // none
  }
  for (const n of names) {
    if (n === skip) continue;
    const gitdir = readBackText(join(gitDir, 'worktrees', n, 'gitdir'), 4096);
    look(join(gitDir, 'worktrees', n), `the worktree ${gitdir !== null ? dirname(gitdir.trim()) : n}`);
  }
  return out;
}
