// `agent worktrees merge`: the agent's committed work into the checkout's
// current branch, after a review of what in it would run on the user's machine.
// The commit reviewed is the commit merged, by object id: a running agent's
// later commits, or a tag named like the branch, cannot slip in between.
import { existsSync } from 'node:fs';
import { userHome } from '../home.js';
import { join, resolve, sep } from 'node:path';
import { git, mergeCommand, mergeTreeCommand, statusCommand, rawDiffCommand, squashCommitCommand } from '../../templates/git.js';
import { StashbaseError } from '../errors.js';
import { capture, probe, runShown } from '../exec.js';
import type { AgentWork } from './inventory.js';
import { driversIn, type Repo } from './layout.js';
import { type Finding, type GitFromTree, parseRaw, review } from './review.js';
import { namedByGit } from '../git/named-files.js';
import { includeTargets, parseConfigList, pythonShadows, statOrNone } from '../git/repo.js';
import { QUARANTINE, realOrSelf } from '../git/planted-repos.js';
import { firstFew } from '../util/printable.js';

export interface MergeTarget {
  /** The checkout's current branch, short name. */
  into: string;
  oid: string;
  /**
   * Every merge base (`git merge-base --all`): git's merge starts from one made of them all, so the review reads the
   * branch against each (found in review: against the first alone, a criss-cross history the agent made hid a hook the
   * merge then wrote).
   */
  bases: string[];
}

const fail = (m: string) => new StashbaseError(`${m}; nothing was merged`, 1);

/** Refuses what may not be merged now; returns what will be. */
export function mergeTarget(repo: Repo, work: AgentWork): MergeTarget {
  if (work.status === 'UNSAFE') throw fail(`${work.name} is UNSAFE: its git pointer files are not what git wrote; inspect ${work.path} by hand (git merge ${work.branch} once you trust it)`);
  const oid = probe(git(repo.git, repo.root, ['rev-parse', '--verify', '--quiet', `refs/heads/${work.branch}^{commit}`])).stdout.trim();
  if (oid === '') throw fail(`there is no branch ${work.branch}`);
  const into = probe(git(repo.git, repo.root, ['symbolic-ref', '--quiet', '--short', 'HEAD'])).stdout.trim();
  if (into === '') throw fail('your checkout has no current branch (detached HEAD); check out the branch to merge into');
  const mine = probe(statusCommand(repo.git, repo.root, driversIn(repo), { untracked: 'no' }));
  if (mine.code !== 0 || mine.stdout.trim() !== '') throw fail(`your checkout ${repo.root} has uncommitted changes; commit or stash them first`);
  if (work.status === 'dirty') {
    // Some of them may be stashbase's own: what it moved aside at the end of a run, as your tools would have run it.
    const st = probe(statusCommand(repo.git, work.path as string, driversIn(repo, work.path as string), { nul: true }));
    // Named as they are now: one in the way of the first name got a numbered one (lib/paths/free-name.ts).
    const aside = st.stdout.split('\0').map((l) => l.slice(3)).filter((f) => f.endsWith(QUARANTINE));
    if (aside.length > 0) {
      throw fail(`${work.name} has uncommitted changes in ${work.path}: stashbase moved aside ${aside.length === 1 ? 'a file' : 'files'} at the end of a run there (each would run on your machine; named then), as ${firstFew(aside.map((f) => JSON.stringify(f)), 10)}. Review ${aside.length === 1 ? 'it' : 'them'}, then in ${work.path} restore (mv each back to the name the warning at the end of that run gave) or delete ${aside.length === 1 ? 'it' : 'them'} and commit or discard what is left`);
    }
    throw fail(`${work.name} has uncommitted changes in ${work.path}; commit or discard them there first`);
  }
  const found = probe(git(repo.git, repo.root, ['merge-base', '--all', 'HEAD', oid]));
  const bases = found.code === 0 ? found.stdout.split('\n').filter((l) => /^[0-9a-f]{40,64}$/.test(l)) : [];
  if (bases.length === 0) throw fail(`${work.branch} has no history in common with ${into}`);
  return { into, oid, bases };
}

/**
 * What your git in the checkout takes from its own working tree, as folders
 * and files relative to its top ('/'-separated): the hooks folder
 * core.hooksPath names (git merge runs the merged tree's post-merge, and its
 * commit's hooks), and config files an include names there (found in review:
 * the merge review knew only four hook folders by name, and the branch's
 * post-merge ran on the merge), and files a value of your config or one of
 * your hooks names there (review, round 33: a filter `sh scripts/smudge.sh`,
 * a hook linked to a script of the tree). Asked of your git, which reads
 * every config and include as your merge will; both as written and through links.
 */
export function gitReadsFromTree(repo: Repo): GitFromTree {
  const root = realOrSelf(repo.root);
  const inTree = (abs: string): string[] => {
    const out = new Set<string>();
    for (const p of [resolve(repo.root, abs), realOrSelf(resolve(repo.root, abs))]) {
      for (const top of [repo.root, root]) {
        if (p === top) out.add('');
        else if (p.startsWith(top + sep)) out.add(p.slice(top.length + 1).split(sep).join('/'));
      }
    }
    return [...out];
  };
  const hooks = probe(git(repo.git, repo.root, ['rev-parse', '--git-path', 'hooks'], false));
  const listed = probe(git(repo.git, repo.root, ['config', '--list', '--show-origin', '-z'], false));
  const hooksDir = hooks.code === 0 && hooks.stdout.trim() !== '' ? resolve(repo.root, hooks.stdout.replace(/\n$/, '')) : null;
  const config = listed.code === 0 ? parseConfigList(listed.stdout) : { files: [], entries: [] };
  const byGit = namedByGit({ top: repo.root, home: userHome(), entries: config.entries, hooks: hooksDir });
  return {
    hooks: hooksDir !== null ? inTree(hooksDir).map((h) => (h === '' ? '' : `${h.replace(/\/+$/, '')}/`)) : [],
    // And every file an include names, missing, empty or under a condition not met yet (review, round 33).
    configs: [...config.files, ...includeTargets(config.entries, repo.root, userHome())].flatMap(inTree),
    // Files alone: a folder a hook enters (`cd src && npx lint-staged`) is no program of its (review, round 33: every change under it was listed).
    named: [
      ...byGit.files
        .filter((n) => !n.folder && statOrNone(n.abs)?.isDirectory() !== true)
        .flatMap((n) => inTree(n.abs).filter((rel) => rel !== '').map((rel) => ({ path: rel, why: n.why }))),
      // A module at the top that a hook's python -m would import first (review, round 34: the pre-commit launcher's cfgv.py).
      ...pythonShadows(byGit.pythons).map((path) => ({ path, why: "a module your hook's python -m imports, found first at the top" })),
    ],
  };
}

/**
 * What in the branch can run code on your machine, read against every merge base: a path the merge can change is
 * one the branch changed against at least one of them (where it is the same as in all, the merge keeps yours).
 */
export async function reviewTarget(repo: Repo, t: MergeTarget): Promise<Finding[]> {
  const read = (oid: string) => {
    const r = probe(git(repo.git, repo.root, ['cat-file', 'blob', oid]));
    return r.code === 0 ? r.stdout : null;
  };
  const tree = gitReadsFromTree(repo);
  const seen = new Set<string>();
  const out: Finding[] = [];
  // And what the merge itself would write over your HEAD, where git can say it (merge-tree --write-tree, git 2.38 on):
  // a file of the branch's that your side renamed since lands under the new name (found in review: your
  // hooks-examples/ made .githooks/, the agent's edit of the example became a hook).
  const merged = probe(mergeTreeCommand(repo.git, repo.root, t.oid, driversIn(repo)));
  const result = /^[0-9a-f]{40,64}$/.exec(merged.stdout.split('\n')[0] ?? '')?.[0];
  const diffs: Array<[string, string]> = t.bases.map((b) => [b, t.oid]);
  if ((merged.code === 0 || merged.code === 1) && result) diffs.push(['HEAD', result]);
  for (const [from, to] of diffs) {
    const raw = await capture(rawDiffCommand(repo.git, repo.root, from, to));
    for (const f of review(parseRaw(raw), read, tree)) {
      const key = `${f.path}\0${f.why}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(f);
    }
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export function alreadyMerged(repo: Repo, t: MergeTarget): boolean {
  return probe(git(repo.git, repo.root, ['merge-base', '--is-ancestor', t.oid, 'HEAD'])).code === 0;
}

const conflicted = (repo: Repo) => probe(git(repo.git, repo.root, ['ls-files', '--unmerged'])).stdout.trim() !== '' || existsSync(join(repo.gitDir, 'MERGE_HEAD'));

/** Runs the merge as the user's own git, its output on the terminal, shown printable (its paths are the agent's). */
export async function runMerge(repo: Repo, work: AgentWork, t: MergeTarget, o: { squash: boolean; message?: string }): Promise<void> {
  const code = await runShown(mergeCommand(repo.git, repo.root, work.branch, t.oid, o));
  if (code !== 0) {
    if (conflicted(repo)) {
      const abort = o.squash ? 'git reset --merge' : 'git merge --abort';
      throw new StashbaseError(`merging ${work.branch} into ${t.into} stopped on conflicts: resolve them in ${repo.root} and commit (or undo with ${abort}); the agent's worktree and branch are kept`, 1);
    }
    throw new StashbaseError(`git merge of ${work.branch} failed (exit ${code}); the agent's worktree and branch are kept`, 1);
  }
  if (!o.squash) return;
  const staged = probe(git(repo.git, repo.root, ['diff', '--cached', '--quiet']));
  if (staged.code === 0) return; // the squash changed nothing: its changes are already here
  const commit = await runShown(squashCommitCommand(repo.git, repo.root, o.message));
  if (commit !== 0) throw new StashbaseError(`the squashed changes of ${work.branch} are staged in ${repo.root} but git commit failed (exit ${commit}); commit them yourself; the agent's worktree and branch are kept`, 1);
}

