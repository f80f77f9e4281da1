// The end of a run's git work, on every way out (and for a run killed hard,
// the next run's): the import (lib/git/import.ts) and what it says.
import { existsSync } from 'node:fs';
import { findTool } from '../util/find-tool.js';
import { importRunGitDir } from './import.js';
import { printable } from '../util/printable.js';

export interface Sayers {
  /** Said even with --silent: your repository changed, or could not be. */
  alert: (m: string) => void;
  note: (m: string) => void;
}

/** Imports the run's git directory whose record is `recordFile`; never throws. */
export async function settleGitDir(recordFile: string, env: NodeJS.ProcessEnv, session: string, say: Sayers): Promise<void> {
  if (!existsSync(recordFile)) return;
  const git = findTool('git', env);
  if (!git) return say.alert(`git is not on PATH: the run's git work (${recordFile.replace(/\.json$/, '')}) cannot be imported and is left there; nothing of it is in your repository`);
  try {
    const r = await importRunGitDir(recordFile, { git, session });
    // Ref names and commit subjects are the agent's: a note is shown printable too (alert always is).
    for (const m of r.own) say.note(printable(m, true));
    for (const m of r.warnings) say.alert(m);
  } catch (e) {
    say.alert(`the run's git work could not be imported (${(e as Error).message}); nothing of it is in your repository beyond what is named above`);
  }
}
