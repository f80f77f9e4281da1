// After a run, in the repository it ran in: nested repositories the agent
// registered as gitlinks (submodules, in the index it may write) whose git
// files were written during the run. Your own git status visits every
// populated submodule with that submodule's own configuration, so a
// `core.fsmonitor` there runs on your machine (`.git/config` and `.git/hooks`
// of the repository itself are read-only to the agent; these are not). Such
// files are moved aside (renamed `*.stashbase-quarantine`) and named in a
// warning. Configurations that hold only the keys git init and git clone write
// are left alone; anything else, or one git cannot read, is moved aside.
import { existsSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { probe } from './exec.js';
import { findTool } from './find-tool.js';
import { gitlinksOfIndex } from './git-index.js';
import { findRepoRoot } from './repo.js';

const SUFFIX = '.stashbase-quarantine';

/** Keys git init, clone and submodule write, which run nothing. */
const HARMLESS = [
  /^core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|precomposeunicode|symlinks|worktree|autocrlf|eol|safecrlf)$/,
  /^remote\.[^\n]+\.(url|fetch|pushurl|tagopt|mirror)$/,
  /^branch\.[^\n]+\.(remote|merge|rebase)$/,
  /^extensions\.(objectformat|worktreeconfig)$/,
  /^(user\.(name|email)|init\.defaultbranch|submodule\.active|lfs\.repositoryformatversion|pull\.rebase|pull\.ff)$/,
];

/** A `.git` directory, or the directory a `.git` file ("gitdir: …") points at. */
export function gitDirOf(dotGit: string): string | null {
  let m: RegExpExecArray | null;
  try {
    const st = statSync(dotGit, { throwIfNoEntry: false });
    if (!st) return null;
    if (st.isDirectory()) return dotGit;
    m = /^gitdir: (.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'));
  } catch {
    return null; // unreadable: git cannot use it either
  }
  if (!m) return null;
  return isAbsolute(m[1] as string) ? (m[1] as string) : resolve(dirname(dotGit), m[1] as string);
}

/** The config keys of a file, as git reads it, or null when git cannot. */
function configKeys(git: string, file: string): string[] | null {
  const r = probe({ file: git, args: ['config', '--file', file, '--null', '--list'] });
  if (r.code !== 0) return null;
  return r.stdout.split('\0').filter(Boolean).map((kv) => kv.split('\n')[0] as string);
}

function gitlinks(git: string, gitDir: string, root: string): string[] {
  let index: Buffer;
  try {
    index = readFileSync(join(gitDir, 'index'));
  } catch {
    return [];
  }
  const config = existsSync(join(gitDir, 'config')) ? readFileSync(join(gitDir, 'config'), 'utf8') : '';
  const parsed = gitlinksOfIndex(index, /objectformat\s*=\s*sha256/i.test(config) ? 32 : 20);
  if (parsed !== null) return parsed;
  // A split index, or a version this reader does not know: git lists it.
  const r = probe({ file: git, args: ['-C', root, 'ls-files', '--stage', '-z'] }, 60_000, 1 << 30);
  if (r.code !== 0) throw new Error(`git ls-files: ${r.stderr.trim() || 'failed'}`);
  return r.stdout.split('\0').filter((l) => l.startsWith('160000 ')).map((l) => l.slice(l.indexOf('\t') + 1));
}

export interface NestedRepoGuard {
  /** Moves aside what the run left, and says what. */
  check(): string[];
}

/** Set up before the agent starts (it takes the run's start time from the kernel's clock); null outside a repository or without git. */
export function nestedRepoGuard(cwd: string, env: NodeJS.ProcessEnv, session: string): NestedRepoGuard | null {
  if (!findRepoRoot(cwd) || !findTool('git', env)) return null;
  // File times come from the kernel's clock, at its granularity: so does this mark.
  const mark = join(tmpdir(), `stashbase-${session}.start`);
  writeFileSync(mark, '');
  const since = statSync(mark).ctimeMs;
  unlinkSync(mark);
  return { check: () => checkNestedRepos(cwd, env, since) };
}

/**
 * Moves aside the git files of the repository's submodules changed since
 * `since` (a file time, ms) that would run programs; returns the warnings.
 * Also run for a run that was killed, from its recorded start.
 */
export function checkNestedRepos(cwd: string, env: NodeJS.ProcessEnv, since: number): string[] {
  const repo = findRepoRoot(cwd);
  const git = findTool('git', env);
  if (!repo || !git) return [];
  const gitDir = repo.gitDir ?? gitDirOf(join(repo.root, '.git'));
  if (!gitDir) return [];
  const written = (p: string) => (statSync(p, { throwIfNoEntry: false })?.ctimeMs ?? -1) >= since;
  const warnings: string[] = [];
  const own = resolve(gitDir);
  for (const link of gitlinks(git, gitDir, repo.root)) {
    const where = join(repo.root, link);
    const dir = gitDirOf(join(where, '.git'));
    if (!dir || resolve(dir) === own) continue;
    const dirs = [dir];
    const common = join(dir, 'commondir');
    if (existsSync(common)) dirs.push(resolve(dir, readFileSync(common, 'utf8').trim()));
    const moved: string[] = [];
    const moveAside = (f: string, why: string) => {
      try {
        renameSync(f, f + SUFFIX);
        moved.push(`${f} (${why})`);
      } catch (e) {
        moved.push(`${f} (${why}) COULD NOT BE MOVED (${(e as NodeJS.ErrnoException).code}): remove it before you run git there`);
      }
    };
    for (const d of dirs) {
      if (resolve(d) === own) continue;
      for (const name of ['config', 'config.worktree']) {
        const f = join(d, name);
        if (!written(f)) continue;
        const keys = configKeys(git, f);
        const bad = keys === null ? ['(unreadable)'] : keys.filter((k) => !HARMLESS.some((h) => h.test(k)));
        if (bad.length === 0) continue;
        moveAside(f, `${[...new Set(bad)].join(', ')}`);
      }
      const hooks = join(d, 'hooks');
      let entries: string[] = [];
      try {
        entries = readdirSync(hooks);
      } catch {
        // no hooks folder
      }
      for (const h of entries) {
        const f = join(hooks, h);
        if (h.endsWith('.sample') || h.endsWith(SUFFIX) || !written(f)) continue;
        moveAside(f, 'a hook');
      }
    }
    if (moved.length > 0) {
      warnings.push(
        `the agent left a nested repository at ${where}, registered as a submodule, whose git files would run programs when your git visits it (git status does); moved aside with the suffix ${SUFFIX}: ${moved.join('; ')}. Review them before restoring anything.`,
      );
    }
  }
  return warnings;
}
