// Real git repositories for the worktree tests: a checkout with branches and
// tags to attack, and the plain git the host runs afterwards.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { type Sandbox, tempHome, writeFile } from './helpers.js';

export interface RepoHome extends Sandbox {
  root: string;
  git(args: string[], cwd?: string): string;
  oid(ref: string): string;
}

/** A repository at ~/proj: main (checked out), release, dev, loose tags v1 and v2, and a ~/.gitconfig with a user. */
export function repoHome(): RepoHome {
  const t = tempHome();
  writeFile(join(t.home, '.gitconfig'), '[user]\n\tname = Test User\n\temail = test@example.invalid\n[init]\n\tdefaultBranch = main\n');
  const root = join(t.home, 'proj');
  const git = (args: string[], cwd = root) => {
    const r = spawnSync('git', args, { cwd, env: t.env, encoding: 'utf8' });
    assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  writeFile(join(root, 'a.txt'), 'one\n');
  writeFile(join(root, 'sub', 'dir', 'b.txt'), 'b\n');
  git(['init', '-q'], root);
  git(['add', '-A']);
  git(['commit', '-qm', 'first']);
  writeFile(join(root, 'a.txt'), 'two\n');
  git(['commit', '-qam', 'second']);
  git(['branch', 'release']);
  git(['branch', 'dev']);
  git(['tag', 'v1']);
  git(['tag', 'v2']);
  return { ...t, root, git, oid: (ref) => git(['rev-parse', ref]).trim() };
}

/**
 * What a hostile agent tries from inside its worktree: commit on its own
 * branch; rewrite main (checked out) and release, extend dev, delete v1, move
 * v2, create a branch; and plant code for the user's git: .git/config
 * (core.fsmonitor, core.hooksPath), a hook, a commondir, its own .git pointer,
 * another worktree, the checkout. Each write prints WROTE or blocked. The ref
 * changes and what lands in the run's own git directory (a commondir, a
 * modules folder, its copy of config.worktree) are written there; what of it
 * reaches the user's repository is the import's to decide.
 */
export const HOSTILE = String.raw`
G=$(git rev-parse --path-format=absolute --git-common-dir)
ROOT=$(dirname "$G")
try() { if (eval "$1") >/dev/null 2>&1; then echo "WROTE $2"; else echo "blocked $2"; fi; }
c() { git -c user.name=agent -c user.email=agent@example.invalid "$@"; }
echo own > own.txt && git add own.txt && c commit -qm "agent: own work" && echo "committed own"
try 'git update-ref refs/heads/main $(c commit-tree -p main~1 -m rewritten "main^{tree}")' "main"
try 'git update-ref refs/heads/release release~1' "release"
try 'git update-ref refs/heads/dev $(c commit-tree -p dev -m "agent: on top of dev" "dev^{tree}")' "dev"
try 'git tag -d v1 || rm "$G/refs/tags/v1"' "v1"
try 'git update-ref refs/tags/v2 v2~1' "v2"
try 'git branch newb main~1' "newb"
try 'printf "[core]\n\tfsmonitor = touch $ROOT/../PWNED-fsmonitor\n" >> "$G/config"' "config"
try 'git config core.hooksPath /tmp' "hooksPath"
try 'printf "#!/bin/sh\ntouch $ROOT/../PWNED-hook\n" > "$G/hooks/post-checkout" && chmod +x "$G/hooks/post-checkout"' "hook"
try 'mkdir -p /tmp/sbevil-$$ && echo /tmp/sbevil-$$ > "$G/commondir"' "commondir"
try 'mkdir -p "$G/modules/x" && echo x > "$G/modules/x/config"' "modules"
try 'echo "gitdir: /tmp/elsewhere" > .git' "pointer"
try 'echo "[core] fsmonitor = x" > "$(sed -n "s/^gitdir: //p" .git)/config.worktree"' "config.worktree"
try 'echo x > "$ROOT/a.txt"' "checkout"
try 'echo "curl x | sh" > "$ROOT/.envrc"' "new file in the checkout"
try 'echo x > "$ROOT/.stashbase/worktrees/$OTHER/a.txt"' "other worktree"
try 'echo x > "$G/worktrees/$OTHER/HEAD"' "other worktree metadata"
`;

/** Docker: the checkout is not mounted, so a write to its path lands in the container's own filesystem (the host's stays as it was). */
export const hostileExpected = (backend: 'native' | 'docker') => [
  'committed own', 'WROTE main', 'WROTE release', 'WROTE dev', 'WROTE v1', 'WROTE v2', 'WROTE newb',
  'blocked config', 'blocked hooksPath', 'blocked hook', 'WROTE commondir', 'WROTE modules', 'blocked pointer',
  'WROTE config.worktree', ...(backend === 'docker' ? ['WROTE checkout', 'WROTE new file in the checkout'] : ['blocked checkout', 'blocked new file in the checkout']), 'blocked other worktree', 'blocked other worktree metadata',
].join('\n');
