// A worktree run's cost: `agent run --worktree -- true` (native backend,
// default profile) against plain `git worktree add` + `git worktree remove` of
// the same repository, 10,000 files, same run. Target: at most 3x.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { measure, report, setup, time } from './lib.mjs';

const { bin, home, env, rounds } = setup(10);
writeFileSync(join(home, '.gitconfig'), '[user]\n\tname = Bench\n\temail = bench@example.invalid\n');
const repo = join(home, 'repo');
for (let d = 0; d < 100; d++) {
  mkdirSync(join(repo, `d${d}`), { recursive: true });
  for (let f = 0; f < 100; f++) writeFileSync(join(repo, `d${d}`, `f${f}.txt`), `${d}/${f}\n`);
}
const git = (args) => {
  const r = spawnSync('git', args, { cwd: repo, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
};
git(['init', '-q', '-b', 'main']);
git(['add', '-A']);
git(['commit', '-qm', 'ten thousand files']);

let n = 0;
const results = measure(
  {
    'git worktree add + remove': () => {
      const path = join(home, `plain-${n++}`);
      return time('git', ['worktree', 'add', '-q', '-b', `plain-${n}`, path], { env, cwd: repo }) + time('git', ['worktree', 'remove', path], { env, cwd: repo });
    },
    'stashbase agent run --worktree -- true': () => time(process.execPath, [bin, 'agent', 'run', '--silent', '--worktree', '--', 'true'], { env, cwd: repo }),
  },
  rounds,
);
report('worktree', results, 'git worktree add + remove', { 'stashbase agent run --worktree -- true': '<= 3' });
rmSync(home, { recursive: true, force: true });
