// Real git repositories for unit tests, in a folder of the test's own: git
// run with a fixed identity, each repository with one commit (of `files`, or
// none).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function gitRepos(base: string, env: NodeJS.ProcessEnv) {
  const git = (dir: string, ...a: string[]) => {
    const r = spawnSync('git', ['-C', dir, '-c', 'user.name=a', '-c', 'user.email=a@b', ...a], { env, encoding: 'utf8' });
    assert.equal(r.status, 0, `git ${a.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  const repo = (name: string, files: Record<string, string> = {}) => {
    const d = join(base, name);
    mkdirSync(d, { recursive: true });
    git(d, 'init', '-q');
    for (const [f, text] of Object.entries(files)) writeFileSync(join(d, f), text);
    if (Object.keys(files).length > 0) git(d, 'add', ...Object.keys(files));
    git(d, 'commit', '-q', '--allow-empty', '-m', 'init');
    return d;
  };
  return { git, repo };
}
