// The submodules a checkout's index records (gitlinks), read from the index
// file itself where this reader knows its format, else listed by git with none
// of your hooks or fsmonitor.
import { join } from 'node:path';
import { probe } from '../exec.js';
import { git as gitSafe } from '../../templates/git.js';
import { gitlinksOfIndex } from './git-index.js';
import { readBack, readBackText } from '../readback/file.js';

/** An index read whole to find its gitlinks (a checkout of a million files is ~100 MB); past it, git lists them. */
const MAX_INDEX_BYTES = 256 << 20;

/**
 * The index's submodule paths, or why git could not list them (a broken index: every other check still runs).
 * `configDir` holds the config that says the object format (a linked worktree's is the repository's).
 */
export function gitlinks(git: string, gitDir: string, root: string, configDir: string = gitDir): string[] | string {
  // A regular file only, opened without following a link or waiting on a FIFO: the agent may write .git/index.
  const index = readBack(join(gitDir, 'index'), MAX_INDEX_BYTES);
  if (!index.ok && index.why !== 'too large') return [];
  const config = readBackText(join(configDir, 'config'), 64 * 1024) ?? '';
  const parsed = index.ok ? gitlinksOfIndex(index.data, /objectformat\s*=\s*sha256/i.test(config) ? 32 : 20) : null;
  if (parsed !== null) return parsed;
  // A split index, a version this reader does not know, or one past what is read here whole: git lists it.
  // With no hook and no fsmonitor (review, round 33: your core.fsmonitor hook ran in the agent's worktree here).
  const r = probe(gitSafe(git, root, ['ls-files', '--stage', '-z']), 60_000, 1 << 30);
  if (r.code !== 0) return `git ls-files: ${r.stderr.trim().split('\n').at(-1) || 'failed'}`;
  return r.stdout.split('\0').filter((l) => l.startsWith('160000 ')).map((l) => l.slice(l.indexOf('\t') + 1));
}
