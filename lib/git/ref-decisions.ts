// Which of the agent's ref changes come into your repository, ref by ref and
// for every namespace, from three values: the ref when the run started (the
// run's own copy began as yours), what the agent left in its copy, and what
// your repository holds now. Pure and table-tested: lib/git/import.ts
// carries the decisions out with git's own update-ref.
//
// - The run's own branch (a worktree run's stashbase/<name>, or the branch
//   your checkout was on for a run in it): every change but its deletion.
// - Branches: new ones and fast-forwards are taken; deletions and rewrites
//   are not, nor a new branch named as a release is (v1.1: a tag fetched
//   later would lose git checkout to it). Any other namespace (refs/origin/x,
//   refs/bisect, refs/prefetch…): never (git resolves refs/<name> first).
// - Remote-tracking refs (refs/remotes): never (your next git fetch brings
//   what the remote holds; the agent's would pass for it). Tags: never (a
//   new one would keep a release's name from the real tag: git fetch does
//   not clobber one). Their objects come in; the run says how to keep them.
// - refs/stash: a new stash entry is taken (your earlier ones stay in its
//   reflog, as after a `git stash` of yours); a stash dropped, popped or
//   cleared is not (your stashed work stays).
// - refs/replace: never (git would show the replacement for your commits);
//   refs/notes: never (git log shows notes under your own commits).
// - Symbolic refs other than HEAD: kept as they were.
// - Another agent's branch (refs/heads/stashbase/*, the run's own aside) and
//   a branch checked out in another worktree: never (git itself will not move
//   a branch another worktree has checked out).
// - A new ref that would shadow another by its short name (git resolves
//   `refs/<x>`, then tags, then branches, then remote-tracking refs: a new
//   `refs/main` or tag `release` would be what your `git reset --hard main`
//   or `git checkout release` finds), or that clashes with one as a file with
//   a folder (`x` and `x/y`): not taken. Nor one whose short name is what
//   you type for something else: hex digits (git reads a ref before an
//   abbreviated object id: `git show a3598ff` would show the agent's ref),
//   the name of a remote (a tag `origin` is what `git merge origin` finds
//   before origin/HEAD), a branch whose remote-tracking twin exists and that
//   does not build on it (`git checkout feature` would take it instead of
//   making one from origin/feature), a remote's HEAD (git makes those only
//   as symbolic refs), or a name that differs from another only in case (on
//   a case-insensitive file system it is that ref's file).
// - More ref changes than MAX_TAKEN in one run: none of them (a flood is no work).
// - A ref you changed during the run: yours is kept, the agent's is not taken.
import { foldedOnDisk } from '../paths/mac-names.js';
import type { RefValue } from './ref-store.js';
import { sameValue } from './ref-store.js';
import { validRefName } from './refname.js';

export type RefChangeKind = 'created' | 'deleted' | 'fast-forward' | 'rewritten' | 'moved' | 'symbolic';

export interface RefDecision {
  ref: string;
  kind: RefChangeKind;
  take: boolean;
  /** Why it is not taken (null when taken). */
  reason: string | null;
  start: RefValue | null;
  agent: RefValue | null;
}

export interface RefFacts {
  start: Map<string, RefValue>;
  agent: Map<string, RefValue>;
  /** Your repository's refs now. */
  current: Map<string, RefValue>;
  /** The run's own branch (full name), or null. */
  own: string | null;
  /** Branches checked out in another worktree than the run's, and where. */
  checkedOutElsewhere: Map<string, string>;
  /** Whether commit `now` contains commit `old` (a fast-forward); false when either is not a commit. */
  isAncestor: (old: string, now: string) => boolean;
  /** Your remotes' names (configured, or with remote-tracking refs). */
  remotes: Set<string>;
}

/** A ref's namespace: refs/stash alone is the stash (refs/stash/<x> is any other ref). */
const namespace = (ref: string) => (ref === 'refs/stash' ? 'stash' : ref.startsWith('refs/stash/') ? 'other' : /^refs\/([^/]+)\//.exec(ref)?.[1] ?? 'other');

function kindOf(ref: string, start: RefValue | null, agent: RefValue | null, isAncestor: RefFacts['isAncestor']): RefChangeKind {
  if (start?.kind === 'symref' || agent?.kind === 'symref') return 'symbolic';
  if (start === null) return 'created';
  if (agent === null) return 'deleted';
  if (namespace(ref) === 'tags') return 'moved';
  return isAncestor(start.oid, (agent as { oid: string }).oid) ? 'fast-forward' : 'rewritten';
}

/** The agents' branches: stashbase makes each for one run. */
export const AGENT_BRANCHES = 'refs/heads/stashbase/';

/** Why the change is refused, or null to take it. */
function refusal(ref: string, kind: RefChangeKind, own: boolean, elsewhere: string | undefined): string | null {
  if (!validRefName(ref)) return 'not a valid ref name';
  if (kind === 'symbolic') return 'symbolic refs are kept as they were';
  if (kind === 'deleted') return 'deletions are not taken';
  if (elsewhere !== undefined) return `it is checked out in ${elsewhere}`;
  if (own) return null;
  if (ref.startsWith(AGENT_BRANCHES)) return "another agent's branch: stashbase makes and imports those, one run each";
  switch (namespace(ref)) {
    case 'replace':
      return 'replace refs are never taken (git would show their objects in place of yours)';
    case 'notes':
      return 'notes are never taken (git log would show them under your own commits)';
    case 'stash':
      // Found in review: git stash pop applies an entry without a look, past the end-of-run check (an ignored file
      // of code in its untracked part, a tool config or hook in its tree, all made with git's plumbing).
      return 'a stash entry of the agent\'s is not put on your stash (your git stash pop would apply it unreviewed)';
    // Found in review: the agent's tag v1.1 kept the name from the real release (git fetch does not clobber a tag, and
    // git checkout v1.1 took the agent's), and its remote-tracking refs passed for what the remote holds.
    case 'tags':
      return kind === 'created' ? "a tag names a release: the agent's would keep the name from the real one (git fetch does not clobber a tag)" : 'tags are not moved';
    case 'remotes':
      return "remote-tracking refs say what a remote holds: your next git fetch brings them, and the agent's would pass for the remote's";
    case 'heads':
      if (kind !== 'created' && kind !== 'fast-forward') return 'rewrites are not taken';
      // Found in review: a branch v1.1 took the name of a release tag fetched later (git checkout v1.1 takes the branch).
      return kind === 'created' && RELEASE_NAME.test(ref.slice('refs/heads/'.length)) ? "its name is a release's, which a tag fetched later would have: git checkout would take the agent's branch" : null;
    default:
      // Found in review: refs/origin/main is what git finds first for origin/main, before your remote-tracking ref fetched later.
      return `only branches are taken (git resolves refs/<name> before tags, branches and remote-tracking refs: ${shortName(ref)} would be the agent's)`;
  }
}

/** A branch name that reads as a release's tag (v1.1, 2.0.3, v3.0.0-rc1). */
const RELEASE_NAME = /^v?\d+(\.\d+)+([-+.][0-9A-Za-z.-]+)?$/;

/** A new ref's name has at most this many parts (refs/heads/a/b: four). */
export const MAX_REF_PARTS = 16;

/** At most this many ref changes are taken from one run; past it, none. */
export const MAX_TAKEN = 10_000;

/** The name git's abbreviations resolve to a ref by: without refs/heads/, refs/tags/, refs/remotes/ or refs/. */
export const shortName = (ref: string) => ref.replace(/^refs\/(?:heads|tags|remotes)\//, '').replace(/^refs\//, '');

/** Your remote-tracking refs a new branch `refs/heads/<y>` would stand in for (`refs/remotes/<r>/<y>`). */
export function remoteTwins(ref: string, current: Map<string, RefValue>, remotes: Set<string>): string[] {
  if (!ref.startsWith('refs/heads/')) return [];
  const y = ref.slice('refs/heads/'.length);
  return [...remotes].map((r) => `refs/remotes/${r}/${y}`).filter((t) => current.get(t)?.kind === 'oid');
}

interface Names {
  all: Set<string>;
  folders: Set<string>;
  shorts: Map<string, string[]>;
  /** Your refs and their folders, by name; and in lower case, then the spellings. */
  yours: Set<string>;
  folded: Map<string, Set<string>>;
  /** The same of the refs the run makes. */
  foldedNew: Map<string, Set<string>>;
}

/** Why a new ref would shadow or clash with another, or stand for what you type for something else; null when it does not. */
function shadowing(ref: string, n: Names, f: RefFacts, agentOid: string | null): string | null {
  const { all, folders, shorts } = n;
  if (/^refs\/[^/]+$/.test(ref) && ref !== 'refs/stash') return 'a ref outside any namespace is what git finds first for its name';
  // Each part a folder of your .git, under refs/ and logs/ (review of round 39: 1,000 names 500 parts deep made a
  // million folders, which git gc keeps and every for-each-ref walks).
  const parts = ref.split('/');
  if (parts.length > MAX_REF_PARTS) return `its name has ${parts.length} parts, more than the ${MAX_REF_PARTS} a ref the run makes may have (each is a folder in your .git)`;
  // git branch and git tag refuse such names: in your scripts and commands they read as options.
  if (parts.some((c) => c.startsWith('-'))) return 'a part of its name begins with "-" (git branch and git tag refuse such names: your commands would read it as an option)';
  const name = shortName(ref);
  if (/^[0-9a-f]{4,64}$/i.test(name)) return `its short name is hex digits: git would take it for ${JSON.stringify(name)} before an object id abbreviated so`;
  if (f.remotes.has(name)) return `its short name is your remote ${JSON.stringify(name)}: git would take it for ${JSON.stringify(name)} before ${name}/HEAD`;
  if (/^refs\/remotes\/[^/]+\/HEAD$/.test(ref)) return "a remote's HEAD is made by git as a symbolic ref only (clone, git remote set-head)";
  const same = (shorts.get(name) ?? []).filter((r) => r !== ref);
  if (same.length > 0) return `its short name would be ambiguous with ${same[0]} (git would pick one of them for ${JSON.stringify(name)})`;
  // The name and each folder on its way: another spelling of any of them is the same file on macOS.
  const parts0 = ref.split('/');
  for (let i = 2; i <= parts0.length; i++) {
    const mine = parts0.slice(0, i).join('/');
    if (n.yours.has(mine)) continue;
    // As macOS takes the name (found in review: `cafe\u0301` beside your packed `caf\u00e9` was written as a loose file git then read for yours).
    const other = [...(n.folded.get(foldedOnDisk(mine)) ?? []), ...(n.foldedNew.get(foldedOnDisk(mine)) ?? [])].find((x) => x !== mine);
    if (other !== undefined) return `its name differs from ${other} only in case or in how its letters are written (on macOS's file systems it is that ref's file)`;
  }
  for (const twin of remoteTwins(ref, f.current, f.remotes)) {
    const at = (f.current.get(twin) as { oid: string }).oid;
    if (agentOid === null || (agentOid !== at && !f.isAncestor(at, agentOid))) return `${twin} exists and this branch does not build on it: git checkout ${name} would take the agent's branch instead of making one from ${twin.slice('refs/remotes/'.length)}`;
  }
  if (folders.has(ref)) return 'it clashes with refs below its name (it would have to be a folder)';
  for (let i = 2; i < parts.length; i++) {
    const above = parts.slice(0, i).join('/');
    if (all.has(above)) return `it clashes with ${above} (that would have to be a folder)`;
  }
  return null;
}

export function decideRefs(f: RefFacts): RefDecision[] {
  const out: RefDecision[] = [];
  const names = [...new Set([...f.start.keys(), ...f.agent.keys()])].sort();
  for (const ref of names) {
    const start = f.start.get(ref) ?? null;
    const agent = f.agent.get(ref) ?? null;
    if (sameValue(start, agent)) continue;
    const kind = kindOf(ref, start, agent, f.isAncestor);
    const yoursMoved = !sameValue(f.current.get(ref) ?? null, start);
    const reason = yoursMoved ? 'it changed on your side during the run: yours is kept' : refusal(ref, kind, ref === f.own, f.checkedOutElsewhere.get(ref));
    out.push({ ref, kind, take: reason === null, reason, start, agent });
  }
  // New refs against every other ref there will be: yours, and what the run leaves.
  const all = new Set([...f.current.keys(), ...f.agent.keys()]);
  const n: Names = { all, folders: new Set(), shorts: new Map(), yours: new Set(), folded: new Map(), foldedNew: new Map() };
  const created = new Set(out.filter((d) => d.kind === 'created').map((d) => d.ref));
  for (const r of all) {
    n.shorts.set(shortName(r), [...(n.shorts.get(shortName(r)) ?? []), r]);
    const mine = f.current.has(r);
    const into = mine ? n.folded : created.has(r) ? n.foldedNew : null;
    const parts = r.split('/');
    for (let i = 2; i <= parts.length; i++) {
      const name = parts.slice(0, i).join('/');
      if (i < parts.length) n.folders.add(name);
      if (mine) n.yours.add(name);
      into?.set(foldedOnDisk(name), (into.get(foldedOnDisk(name)) ?? new Set()).add(name));
    }
  }
  for (const d of out) {
    if (!d.take || d.kind !== 'created') continue;
    const why = shadowing(d.ref, n, f, d.agent?.kind === 'oid' ? d.agent.oid : null);
    if (why !== null) Object.assign(d, { take: false, reason: why });
  }
  const taken = out.filter((d) => d.take);
  if (taken.length > MAX_TAKEN) for (const d of taken) Object.assign(d, { take: false, reason: `the run changed ${taken.length} refs, more than the ${MAX_TAKEN} stashbase takes from one run` });
  return out;
}
