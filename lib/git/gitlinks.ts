// The submodules a checkout's index records (gitlinks), read from the index
// file itself where this reader knows its format, else listed by git with none
// of your hooks or fsmonitor.
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { probe } from '../exec.js';
import { git as gitSafe } from '../../templates/git.js';
import { gitlinksOfIndex } from './git-index.js';
import { readBackText } from '../readback/file.js';

/**
 * The index's submodule paths, or why git could not list them (a broken index: every other check still runs).
 * `configDir` holds the config that says the object format (a linked worktree's is the repository's).
 */
export function gitlinks(git: string, gitDir: string, root: string, configDir: string = gitDir): string[] | string {
  let index: Buffer;
  try {
    // A regular file only: the agent may write .git/index, a FIFO too.
    if (!lstatSync(join(gitDir, 'index')).isFile()) return [];
    index = readFileSync(join(gitDir, 'index'));
  } catch {
    return [];
  }
  const config = readBackText(join(configDir, 'config'), 64 * 1024) ?? '';
  const parsed = gitlinksOfIndex(index, /objectformat\s*=\s*sha256/i.test(config) ? 32 : 20);
  if (parsed !== null) return parsed;
  // A split index, or a version this reader does not know: git lists it.
  // With no hook and no fsmonitor (review, round 33: your core.fsmonitor hook ran in the agent's worktree here).
  const r = probe(gitSafe(git, root, ['ls-files', '--stage', '-z']), 60_000, 1 << 30);
  if (r.code !== 0) return `git ls-files: ${r.stderr.trim().split('\n').at(-1) || 'failed'}`;
  return r.stdout.split('\0').filter((l) => l.startsWith('160000 ')).map((l) => l.slice(l.indexOf('\t') + 1));
}
