// Your index after an import that moved your HEAD while the sandbox's own index
// did not come back (lib/git/import.ts): left as it was, it holds the old
// HEAD's files, so git status shows the agent's commits staged in reverse and
// a plain git commit undoes them. The entries of the paths those commits
// changed are brought to the new HEAD's, each only where yours was the old
// HEAD's (what you staged there yourself stays, named), and not where your
// working tree still holds the old HEAD's file and not the new one's: a file
// the run kept from the agent (a read-only config, a hook), whose commits'
// version a git restore of the index would otherwise write there. Parsed from
// git's own listings (ls-files, diff-tree) and written by git update-index.
import { realPathOf } from '../util/real-path.js';
import { blobOid, type TreeContent, treeContentAt } from './tree-content.js';

export interface FollowPlan {
  /** git update-index -z --index-info input: removals first, then the new HEAD's entries. */
  input: string;
  /** Paths brought to the new HEAD's entries. */
  moved: number;
  /** Paths the commits changed where your index held something else: kept as they are. */
  kept: string[];
  /** Paths the commits changed where your working tree holds the old HEAD's file: your index keeps it too. */
  asTree: string[];
}

/** One side of a change: a file's mode and blob, or nothing there. */
export type Side = { mode: string; oid: string } | null;

const GITLINK = '160000';

/** At most this many changed paths are brought along; past it, nothing is (said). */
export const MAX_FOLLOWED = 200_000;

interface Entry {
  mode: string;
  oid: string;
  stage: string;
}

/** `git ls-files -s -t -z`: "<tag> <mode> <oid> <stage>\t<path>" records (the tag S: skip-worktree). Null when one is not. */
function parseStaged(out: string): { staged: Map<string, Entry[]>; sparse: boolean } | null {
  const staged = new Map<string, Entry[]>();
  let sparse = false;
  for (const rec of out.split('\0')) {
    if (rec === '') continue;
    const m = /^([A-Z?]) ([0-7]{6}) ([0-9a-f]{40}|[0-9a-f]{64}) ([0-3])\t([\s\S]+)$/.exec(rec);
    if (!m) return null;
    if (m[1] === 'S') sparse = true;
    const path = m[5] as string;
    const list = staged.get(path) ?? [];
    list.push({ mode: m[2] as string, oid: m[3] as string, stage: m[4] as string });
    staged.set(path, list);
  }
  return { staged, sparse };
}

interface Change {
  path: string;
  /** Null where the side has no file. */
  before: Side;
  after: Side;
}

/** `git diff-tree -r -z --no-renames <a> <b>`: ":<mode> <mode> <oid> <oid> <status>\0<path>\0" records. Null when one is not. */
function parseChanges(out: string): Change[] | null {
  const fields = out.split('\0');
  const changes: Change[] = [];
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i] as string;
    if (f === '' && i === fields.length - 1) break;
    const m = /^:([0-7]{6}) ([0-7]{6}) ([0-9a-f]{40}|[0-9a-f]{64}) ([0-9a-f]{40}|[0-9a-f]{64}) [ADMT]$/.exec(f);
    const path = fields[i + 1];
    if (!m || path === undefined || path === '') return null;
    i++;
    const side = (mode: string, oid: string) => (/^0+$/.test(mode) ? null : { mode, oid });
    changes.push({ path, before: side(m[1] as string, m[3] as string), after: side(m[2] as string, m[4] as string) });
  }
  return changes;
}

/** Every folder above each path ("a/b/c": "a", "a/b"). */
function foldersOf(paths: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const p of paths) for (let i = p.indexOf('/'); i !== -1; i = p.indexOf('/', i + 1)) out.add(p.slice(0, i));
  return out;
}

/**
 * What to write into your index (`lsFiles`: its listing) so that the paths the
 * commits changed (`diffTree`: old HEAD to new) hold the new HEAD's entries,
 * or why nothing is: a listing stashbase cannot read, a name that is not
 * UTF-8 (it would not be written back byte for byte), too many paths, or a
 * file where a folder of yours would be (git would drop your entries under
 * it).
 */
export function followHead(lsFiles: string, diffTree: string, treeHolds: (path: string, side: Side) => boolean | 'too much', guarded: (path: string) => boolean = () => false): FollowPlan | { why: string } {
  const listed = parseStaged(lsFiles);
  const changes = parseChanges(diffTree);
  if (listed === null || changes === null) return { why: "git's listing of it could not be read" };
  // Entries git keeps out of the tree (review, round 30: rewritten, they lost the bit, and a file the commits add there
  // looked held back by your tree): a sparse checkout is left to you.
  if (listed.sparse) return { why: 'your checkout is sparse (entries marked skip-worktree), which stashbase does not rewrite' };
  const { staged } = listed;
  if (changes.length > MAX_FOLLOWED) return { why: `the agent's commits change ${changes.length} paths, more than the ${MAX_FOLLOWED} stashbase brings along` };
  if (changes.some((c) => c.path.includes('\uFFFD'))) return { why: 'a path the commits change is not UTF-8' };
  const zero = (changes[0]?.after ?? changes[0]?.before)?.oid.replace(/./g, '0') ?? '';
  const removals: string[] = [];
  const additions: string[] = [];
  const kept: string[] = [];
  const asTree: string[] = [];
  const removed = new Set<string>();
  const added = new Set<string>();
  for (const c of changes) {
    const yours = staged.get(c.path);
    const asBefore = c.before === null
      ? yours === undefined
      : yours?.length === 1 && yours[0]!.stage === '0' && yours[0]!.mode === c.before.mode && yours[0]!.oid === c.before.oid;
    if (!asBefore) {
      kept.push(c.path);
      continue;
    }
    const [old, now] = [treeHolds(c.path, c.before), treeHolds(c.path, c.after)];
    if (old === 'too much' || now === 'too much') return { why: 'the files the commits change hold more than stashbase compares with your working tree' };
    // A file that runs code, or a submodule's commit, follows only where your tree holds the new one (review, round 30:
    // your own untracked or edited .npmrc, neither side, had the agent's entry staged, and git restore wrote it over yours).
    const submodule = c.before?.mode === GITLINK || c.after?.mode === GITLINK;
    if ((old && !now) || (!now && (submodule || guarded(c.path)))) {
      asTree.push(c.path);
      continue;
    }
    if (c.after === null) {
      if (yours !== undefined) (removals.push(`0 ${zero}\t${c.path}`), removed.add(c.path));
    } else {
      additions.push(`${c.after.mode} ${c.after.oid}\t${c.path}`);
      added.add(c.path);
    }
  }
  // Your index afterwards: no file may sit where another entry's folder is.
  const after = new Set([...staged.keys()].filter((p) => !removed.has(p)));
  for (const p of added) after.add(p);
  const folders = foldersOf(after);
  if ([...added].some((p) => folders.has(p)) || [...foldersOf(added)].some((d) => after.has(d))) {
    return { why: 'a file the commits add sits where your index has a folder of files' };
  }
  return { input: [...removals, ...additions].map((l) => `${l}\0`).join(''), moved: removals.length + additions.length, kept, asTree };
}

/** At most this much of your working tree is read to compare it with the commits' files. */
const MAX_COMPARED_BYTES = 1 << 30;

/**
 * Whether your working tree at `top` holds a side of a change: nothing there
 * for none; a file of that blob and executable bit, or a link of that target,
 * for a blob; never a submodule's commit. Each path read once.
 */
export function treeHolds(top: string, algorithm: 'sha1' | 'sha256'): (path: string, side: Side) => boolean | 'too much' {
  const realTop = realPathOf(top);
  let room = MAX_COMPARED_BYTES;
  let last: { path: string; held: TreeContent | 'too much'; oid: string | null } | null = null;
  return (path, side) => {
    if (realTop === null) return 'too much';
    if (last?.path !== path) {
      const held = treeContentAt(top, realTop, path, room);
      if (held !== 'too much' && held.kind === 'file') room -= held.data.length;
      last = { path, held, oid: held !== 'too much' && (held.kind === 'file' || held.kind === 'link') ? blobOid(held.data, algorithm) : null };
    }
    const { held, oid } = last;
    if (held === 'too much') return held;
    if (side === null) return held.kind === 'none';
    if (side.mode === '120000') return held.kind === 'link' && oid === side.oid;
    if (side.mode === '100644' || side.mode === '100755') return held.kind === 'file' && held.executable === (side.mode === '100755') && oid === side.oid;
    return false;
  };
}
