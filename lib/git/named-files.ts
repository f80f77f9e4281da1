// Files your own git runs or reads because a value of your config or one of
// your hooks names them (review, round 33: a clean or smudge filter
// `sh scripts/smudge.sh`, a post-merge hook that is a link to a script in the
// working tree or a wrapper that execs one). Such a file in the working tree
// is the agent's to write unless a run keeps it (lib/git/repo.ts
// gitConfigTargets), and the merge review names it when a branch changes it
// (lib/worktree/merge.ts).
import { lstatSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The hooks git runs (githooks(5)), by name. */
export const HOOK_NAMES: ReadonlySet<string> = new Set([
  'applypatch-msg', 'pre-applypatch', 'post-applypatch', 'pre-commit', 'pre-merge-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit', 'pre-rebase', 'post-checkout', 'post-merge', 'pre-push', 'pre-receive', 'update',
  'proc-receive', 'post-receive', 'post-update', 'reference-transaction', 'push-to-checkout', 'pre-auto-gc', 'post-rewrite', 'sendemail-validate', 'fsmonitor-watchman', 'p4-changelist', 'p4-prepare-changelist', 'p4-post-changelist',
  'p4-pre-submit', 'post-index-change',
]);

/** The most of a hook's text, and of a config value, read for the names in it. */
const HOOK_TEXT_MAX = 256 * 1024;
const VALUE_MAX = 4096;

/**
 * The words of a config value or a script that could name a file: split at
 * blanks, quotes, shell operators and the separators of options and lists
 * (`--file=x`, `PATH=a:b`), none that is an option or names a variable.
 */
export function pathWords(text: string): string[] {
  return text.split(/[\s'"`;|&()<>=:,{}]+/).filter((w) => w !== '' && !w.startsWith('-') && !/[$%*?[\]]/.test(w) && w !== '.' && w !== '..');
}

/** A word as the path it names, relative words taken from the tree's top (where git runs hooks and drivers). */
function pathOf(word: string, top: string, home: string): string {
  if (word === '~' || word.startsWith('~/')) return join(home, word.slice(1));
  return resolve(top, word.replace(/^!/, ''));
}

export interface NamedFile {
  /** As named (absolute, not resolved through links). */
  abs: string;
  why: string;
  /** Named by a word holding a '/' (`scripts/clean.sh`, `./x`): a path, not perhaps a program's name. */
  explicit: boolean;
}

/**
 * What your config's values (`git config --list`'s entries, lower-case keys)
 * and the hooks in `hooks` name, each path once with the first reason. The
 * hooks folder and included files are left out: the run keeps and the review
 * names those in words of their own.
 */
export function namedByGit(o: { top: string; home: string; entries: ReadonlyArray<{ key: string; value: string }>; hooks: string | null }): NamedFile[] {
  const out = new Map<string, NamedFile>();
  const add = (abs: string, why: string, word: string) => {
    const had = out.get(abs);
    if (abs === o.top) return;
    if (had === undefined) out.set(abs, { abs, why, explicit: word.includes('/') });
    else if (word.includes('/')) had.explicit = true;
  };
  for (const { key, value } of o.entries) {
    if (/^(core\.hookspath|include\.path|includeif\..*\.path)$/is.test(key)) continue;
    for (const w of pathWords(value.slice(0, VALUE_MAX))) add(pathOf(w, o.top, o.home), `named by your git config's ${key}`, w);
  }
  if (o.hooks === null) return [...out.values()];
  let names: string[] = [];
  try {
    names = readdirSync(o.hooks).filter((n) => HOOK_NAMES.has(n));
  } catch {
    // no hooks folder
  }
  for (const n of names.sort()) {
    const file = join(o.hooks, n);
    if (lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink()) {
      try {
        add(realpathSync(file), `your git hook ${n} is a link to it`, '/');
      } catch {
        // a broken link runs nothing
      }
    }
    let text = '';
    try {
      if (statSync(file).isFile()) text = readFileSync(file).subarray(0, HOOK_TEXT_MAX).toString('latin1');
    } catch {
      // unreadable: git cannot run it either
    }
    for (const w of pathWords(text)) add(pathOf(w, o.top, o.home), `named by your git hook ${n}`, w);
  }
  return [...out.values()];
}
