// After a worktree run: every branch and tag outside the agent's own branch,
// compared with the snapshot taken before it started. Deleted refs come back;
// new commits on top of a branch and new branches or tags stay; a rewritten
// branch or tag goes back to its old value unless it is checked out somewhere.
// The decisions are pure (table-tested); lifecycle.ts carries them out.

export type RefMap = Map<string, string>;

export type RefDecision =
  | { kind: 'restored'; ref: string; old: string }
  | { kind: 'kept-new-commits'; ref: string; old: string; now: string }
  | { kind: 'kept-new-ref'; ref: string; now: string }
  | { kind: 'reset'; ref: string; old: string; now: string }
  | { kind: 'left-checked-out'; ref: string; old: string; now: string };

export interface RefFacts {
  before: RefMap;
  after: RefMap;
  /** The agent's own branch: never judged. */
  own: string;
  /** Branches checked out in the main checkout or another worktree. */
  checkedOut: Set<string>;
  /** Whether `now` contains `old` (a fast-forward). */
  isAncestor: (old: string, now: string) => boolean;
}

export function decideRefs(f: RefFacts): RefDecision[] {
  const out: RefDecision[] = [];
  for (const [ref, old] of f.before) {
    if (ref === f.own) continue;
    const now = f.after.get(ref);
    if (now === undefined) out.push({ kind: 'restored', ref, old });
    else if (now === old) continue;
    else if (ref.startsWith('refs/heads/') && f.isAncestor(old, now)) out.push({ kind: 'kept-new-commits', ref, old, now });
    else if (f.checkedOut.has(ref)) out.push({ kind: 'left-checked-out', ref, old, now });
    else out.push({ kind: 'reset', ref, old, now });
  }
  for (const [ref, now] of f.after) {
    if (ref !== f.own && !f.before.has(ref)) out.push({ kind: 'kept-new-ref', ref, now });
  }
  return out;
}

export function parseRefs(out: string): RefMap {
  const refs: RefMap = new Map();
  for (const line of out.split('\n')) {
    const [ref, oid] = line.split('\0');
    if (ref && oid) refs.set(ref, oid);
  }
  return refs;
}
