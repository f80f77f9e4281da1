// The git commands of `stashbase scan`: the added lines of the index or of a
// range of commits, as `-U0` diffs for lib/scan/diff.ts. Whatever the
// repository's config or attributes say: no external diff, no textconv filter
// (a command named by config), no fsmonitor or hooks, plain a/ b/ prefixes,
// unquoted names, and --text, so a `binary` attribute cannot hide a file's
// lines (the scan finds binary content itself).
import type { Command } from './command.js';
import { git } from './git.js';

/** The line before each commit's diff: \x01 then the commit id (lib/scan/diff.ts reads it). */
export const COMMIT_MARK_FORMAT = '%x01%H';

const DIFF = ['--no-color', '--no-ext-diff', '--no-textconv', '--text', '-U0', '--src-prefix=a/', '--dst-prefix=b/', '--no-relative'];
const CONFIG = ['-c', 'core.quotePath=false', '-c', 'diff.noprefix=false', '-c', 'diff.mnemonicPrefix=false', '-c', 'log.showSignature=false', '-c', 'diff.submodule=short'];

/** What a pre-commit hook checks: the index against HEAD (or the empty tree before the first commit). */
export function stagedDiffCommand(gitPath: string, cwd: string): Command {
  return git(gitPath, cwd, [...CONFIG, 'diff', '--cached', ...DIFF]);
}

/**
 * What a pre-push hook checks: each commit of the range against its first
 * parent (a merge's own changes included), oldest first. `base` null: a new
 * branch, every commit not yet on any remote-tracking branch.
 */
export function rangeLogCommand(gitPath: string, cwd: string, base: string | null, head: string): Command {
  const revs = base === null ? [head, '--not', '--remotes'] : [`${base}..${head}`];
  return git(gitPath, cwd, [...CONFIG, 'log', '-p', '--reverse', `--format=${COMMIT_MARK_FORMAT}`, '--diff-merges=first-parent', ...DIFF, ...revs, '--']);
}

/** Exit 0 when `rev` names a commit this repository has. */
export function isCommitCommand(gitPath: string, cwd: string, rev: string): Command {
  return git(gitPath, cwd, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`]);
}

/** The files a path scan reads in a work tree: tracked ones and untracked ones .gitignore does not exclude. */
export function listFilesCommand(gitPath: string, cwd: string, path: string): Command {
  return git(gitPath, cwd, ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--full-name', '--', path]);
}

export function topLevelCommand(gitPath: string, cwd: string): Command {
  return git(gitPath, cwd, ['rev-parse', '--show-toplevel']);
}
