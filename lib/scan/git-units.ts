// Scan units from git: the lines the index adds (--staged, a pre-commit hook's
// view) and the lines each commit of a range adds (--range, a pre-push hook's).
// Only git's objects are read, never the working tree's files.
import { CommandFailedError, UsageError } from '../errors.js';
import { probe, runCapped } from '../exec.js';
import { type Command, formatCommand } from '../../templates/command.js';
import { findTool } from '../util/find-tool.js';
import { isCommitCommand, rangeLogCommand, stagedDiffCommand } from '../../templates/git-scan.js';
import { parseAddedLines } from './diff.js';
import type { ScanUnit } from './unit.js';

/** A commit id as hooks pass them: hex, SHA-1 or SHA-256 length (or abbreviated). */
export const HEX_ID = /^[0-9a-f]{4,64}$/;
const ZERO = /^0+$/;

export interface Range {
  /** null: the remote side is all zeros (a new branch), so every commit not on a remote yet. */
  base: string | null;
  head: string;
}

/** `A..B` as a pre-push hook gives it; an all-zero A is a new branch. An all-zero B (a deletion) adds nothing. */
export function parseRange(value: string): Range | null {
  const m = /^([0-9a-f]+)\.\.([0-9a-f]+)$/.exec(value);
  if (!m || !HEX_ID.test(m[1] as string) || !HEX_ID.test(m[2] as string)) {
    throw new UsageError(`--range takes <hex>..<hex> (two commit ids, as a pre-push hook gets them), not ${JSON.stringify(value)}`);
  }
  if (ZERO.test(m[2] as string)) return null;
  return { base: ZERO.test(m[1] as string) ? null : (m[1] as string), head: m[2] as string };
}

function gitTool(): string {
  const git = findTool('git');
  if (!git) throw new UsageError('git is not installed (needed for --staged and --range)');
  return git;
}

/** More diff than this is not read: the scan fails (closed) and says so. */
export const MAX_DIFF_BYTES = 256 * 1024 * 1024;

/** git's output; outside a repository (which `git diff` reads as a usage error) a usage error of ours. */
async function gitOutput(cmd: Command, cwd: string): Promise<string> {
  const r = await runCapped(cmd, { timeoutMs: 10 * 60_000, maxBytes: MAX_DIFF_BYTES });
  if (r.code === 0 && !r.cut && !r.timedOut) return r.stdout;
  if (r.cut) throw new CommandFailedError(formatCommand(cmd), 1, `its output is larger than ${MAX_DIFF_BYTES} bytes: not scanned`);
  if (r.code === 129 || /not a git repository/i.test(r.stderr)) {
    const why = /fatal: (not a git repository.*)/i.exec(r.stderr)?.[1] ?? 'not a git repository';
    throw new UsageError(`${cwd}: ${why} (--staged and --range read git's index and commits)`);
  }
  throw new CommandFailedError(formatCommand(cmd), r.code ?? 1, r.timedOut ? 'timed out' : r.stderr);
}

export async function stagedUnits(cwd: string, maxBytes: number, onSkip: (file: string, why: string) => void): Promise<ScanUnit[]> {
  const diff = await gitOutput(stagedDiffCommand(gitTool(), cwd), cwd);
  return parseAddedLines(diff, maxBytes, onSkip);
}

export async function rangeUnits(cwd: string, range: Range | null, maxBytes: number, onSkip: (file: string, why: string) => void): Promise<ScanUnit[]> {
  if (range === null) return [];
  const git = gitTool();
  // A remote side this clone does not have (someone pushed since our last
  // fetch): every commit of ours not on a remote yet, as for a new branch.
  let base = range.base;
  if (base !== null && probe(isCommitCommand(git, cwd, base)).code !== 0) base = null;
  const log = await gitOutput(rangeLogCommand(git, cwd, base, range.head), cwd);
  return parseAddedLines(log, maxBytes, onSkip);
}
