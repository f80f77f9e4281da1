// Which of the agent's ref changes come into your repository, ref by ref and
// for every namespace, from three values: the ref when the run started (the
// run's own copy began as yours), what the agent left in its copy, and what
// your repository holds now. Pure and table-tested: lib/git/import.ts
// carries the decisions out with git's own update-ref.
//
// - The run's own branch (a worktree run's stashbase/<name>, or the branch
//   your checkout was on for a run in it): every change but its deletion.
// - Branches, remote-tracking branches, notes and any other namespace:
//   new refs and fast-forwards are taken; deletions and rewrites are not.
// - Tags: new ones are taken; moved or deleted ones are not.
// - refs/stash: a new stash entry is taken (your earlier ones stay in its
//   reflog, as after a `git stash` of yours); a stash dropped, popped or
//   cleared is not (your stashed work stays).
// - refs/replace: never (git would show the replacement for your commits).
// - Symbolic refs other than HEAD: kept as they were.
// - Another agent's branch (refs/heads/stashbase/*, the run's own aside) and
//   a branch checked out in another worktree: never (git itself will not move
//   a branch another worktree has checked out).
// - A new ref that would shadow another by its short name (git resolves
//   `refs/<x>`, then tags, then branches, then remote-tracking refs: a new
//   `refs/main` or tag `release` would be what your `git reset --hard main`
//   or `git checkout release` finds), or that clashes with one as a file with
//   a folder (`x` and `x/y`): not taken.
// - More ref changes than MAX_TAKEN in one run: none of them (a flood is no work).
// - A ref you changed during the run: yours is kept, the agent's is not taken.
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
    case 'stash':
      return null;
    case 'tags':
      return kind === 'created' ? null : 'tags are not moved';
    default:
      return kind === 'created' || kind === 'fast-forward' ? null : 'rewrites are not taken';
  }
}

/** At most this many ref changes are taken from one run; past it, none. */
export const MAX_TAKEN = 10_000;

/** The name git's abbreviations resolve to a ref by: without refs/heads/, refs/tags/, refs/remotes/ or refs/. */
export const shortName = (ref: string) => ref.replace(/^refs\/(?:heads|tags|remotes)\//, '').replace(/^refs\//, '');

/** Why a new ref would shadow or clash with another (`all`: every ref, yours and the run's; `folders`: every folder their names make), or null. */
function shadowing(ref: string, all: Set<string>, folders: Set<string>, shorts: Map<string, string[]>): string | null {
  if (/^refs\/[^/]+$/.test(ref) && ref !== 'refs/stash') return 'a ref outside any namespace is what git finds first for its name';
  const same = (shorts.get(shortName(ref)) ?? []).filter((r) => r !== ref);
  if (same.length > 0) return `its short name would be ambiguous with ${same[0]} (git would pick one of them for ${JSON.stringify(shortName(ref))})`;
  if (folders.has(ref)) return 'it clashes with refs below its name (it would have to be a folder)';
  const parts = ref.split('/');
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
  const shorts = new Map<string, string[]>();
  const folders = new Set<string>();
  for (const r of all) {
    shorts.set(shortName(r), [...(shorts.get(shortName(r)) ?? []), r]);
    const parts = r.split('/');
    for (let i = 2; i < parts.length; i++) folders.add(parts.slice(0, i).join('/'));
  }
  for (const d of out) {
    if (!d.take || d.kind !== 'created') continue;
    const why = shadowing(d.ref, all, folders, shorts);
    if (why !== null) Object.assign(d, { take: false, reason: why });
  }
  const taken = out.filter((d) => d.take);
  if (taken.length > MAX_TAKEN) for (const d of taken) Object.assign(d, { take: false, reason: `the run changed ${taken.length} refs, more than the ${MAX_TAKEN} stashbase takes from one run` });
  return out;
}
