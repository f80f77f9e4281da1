// The end of a run's git work, on every way out (and for a run killed hard,
// the next run's): the import (lib/git/import.ts) and what it says. While it
// runs, Ctrl+C (or SIGTERM, SIGHUP) stops the import instead of stashbase:
// what was not imported yet is kept aside, never half-written.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { homePaths, stashbaseHome } from '../home.js';
import { findTool } from '../util/find-tool.js';
import { BUDGET_MS, importRunGitDir, MAX_IMPORT_BYTES } from './import.js';
import { terminalHungUp } from '../util/terminal.js';

/**
 * An import message as lines: its first, then its own continuation lines (each
 * starting with two spaces: a list of commits). A newline anywhere else stays in
 * its line, shown escaped (review, round 30: a name in the run's git directory
 * holding a newline forged a whole warning line).
 */
export function asLines(m: string): string[] {
  return m.split(/\n(?= {2})/);
}

export interface Sayers {
  /** Said even with --silent: your repository changed, or could not be; `more`: its continuation lines. */
  alert: (m: string, more?: string[]) => void;
  note: (m: string, more?: string[]) => void;
}

/** An import still running after this long says so (and how to stop it). */
const SAY_AFTER_MS = 3000;
const STOPPING_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** The import's time limit: STASHBASE_GIT_IMPORT_TIMEOUT (seconds) or BUDGET_MS. */
export function importBudgetMs(env: NodeJS.ProcessEnv): number {
  const s = Number(env.STASHBASE_GIT_IMPORT_TIMEOUT);
  return env.STASHBASE_GIT_IMPORT_TIMEOUT !== undefined && Number.isFinite(s) && s > 0 ? s * 1000 : BUDGET_MS;
}

/** What one import brings into your object store at most, written out: STASHBASE_GIT_IMPORT_MAX_SIZE (bytes) or MAX_IMPORT_BYTES. */
export function importMaxBytes(env: NodeJS.ProcessEnv): number {
  const v = env.STASHBASE_GIT_IMPORT_MAX_SIZE;
  return v !== undefined && /^\d{1,15}$/.test(v) && Number(v) > 0 ? Number(v) : MAX_IMPORT_BYTES;
}

/** Imports the run's git directory whose record is `recordFile`; never throws. Resolves 'interrupted' when you stopped it. */
export async function settleGitDir(recordFile: string, env: NodeJS.ProcessEnv, session: string, say: Sayers): Promise<'done' | 'interrupted'> {
  if (!existsSync(recordFile)) return 'done';
  const git = findTool('git', env);
  if (!git) {
    say.alert(`git is not on PATH: the run's git work (${recordFile.replace(/\.json$/, '')}) cannot be imported and is left there; nothing of it is in your repository`);
    return 'done';
  }
  const stop = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    // Your terminal closed: let go of it before Node's exit aborts on it (lib/util/terminal.ts; third review).
    if (sig === 'SIGHUP') terminalHungUp();
    if (stop.signal.aborted) return;
    say.alert("stopping the import of the run's git work: what is not imported yet is kept aside");
    stop.abort();
  };
  for (const s of STOPPING_SIGNALS) process.on(s, onSignal);
  const slow = setTimeout(() => say.note("importing the run's git work into your repository… (Ctrl+C stops it; what is not imported yet is kept aside)"), SAY_AFTER_MS);
  try {
    const keptDir = join(homePaths(stashbaseHome(env)).kept, `${session}-git`);
    const r = await importRunGitDir(recordFile, { git, session, keptDir, budgetMs: importBudgetMs(env), maxBytes: importMaxBytes(env), signal: stop.signal });
    // Ref names and commit subjects are the agent's: notes and warnings alike are said line by line, each escaped (the
    // import's own lines: a list of commits, each a subject on one line).
    for (const [said, m] of [...r.own.map((m) => [say.note, m] as const), ...r.warnings.map((m) => [say.alert, m] as const)]) {
      const [first = '', ...more] = asLines(m);
      said(first, more);
    }
  } catch (e) {
    say.alert(`the run's git work could not be imported (${(e as Error).message}); nothing of it is in your repository beyond what is named above`);
  } finally {
    clearTimeout(slow);
    for (const s of STOPPING_SIGNALS) process.off(s, onSignal);
  }
  return stop.signal.aborted ? 'interrupted' : 'done';
}
