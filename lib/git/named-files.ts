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
 * The names a config value or a script gives that could be files, as written
 * (relative ones are taken from the checkout's top by the caller): its words
 * split at blanks, quotes, shell operators and the separators of options and
 * lists (`--file=x`, `PATH=a:b`), a word kept when it looks like a path (it
 * holds a `/`, or a name with an extension: `clean.sh`; not `main`, `status`
 * or `vim`, which are commands and branches: review, round 33); the part after
 * each `/` of a word that starts from something computed (`$(git rev-parse
 * --show-toplevel)/scripts/check`, `${ROOT}/x`); a word after `cd`, `pushd`,
 * `-C` or `--directory` as a folder, and the words after it inside it too (`cd
 * tools && ./fmt.sh`); and a Python module after `-m` as its files.
 */
export function pathNames(text: string): string[] {
  const out = new Set<string>();
  // A PATH the command sets: its folders are where the programs it names come from.
  for (const m of text.matchAll(/\bPATH=([^\s;&|]+)/g)) for (const d of (m[1] as string).split(':')) if (d !== '' && !d.includes('$')) out.add(d.replace(/^["']|["']$/g, ''));
  // What the shell computes ($(…), ${…}, $NAME) stands as one `$`: the rest of such a word is tried from the top.
  const computed = text.replace(/\$\([^()]*\)/g, '$').replace(/\$\{[^{}]*\}/g, '$').replace(/\$[A-Za-z_][A-Za-z0-9_]*/g, '$');
  const words = computed.split(/[\s'"`;|&()<>=:,{}]+/).filter((w) => w !== '').map((w) => w.replace(/^!/, ''));
  const dirs: Array<{ at: number; dir: string }> = [];
  const pathLike = (w: string) => w.includes('/') || /^[^.]*[^/.]\.[A-Za-z0-9_-]+$/.test(w) || /^\.[^./]/.test(w);
  const plain = (w: string) => !/[$%*?[\]\\]/.test(w) && w !== '.' && w !== '..' && !(w.startsWith('~') && w !== '~' && !w.startsWith('~/'));
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string;
    const next = words[i + 1];
    if (['cd', 'pushd', '-C', '--directory'].includes(w) && next !== undefined && !next.startsWith('-') && plain(next)) {
      dirs.push({ at: i + 1, dir: next.replace(/\/+$/, '') });
      out.add(next);
    }
    if (w === '-m' && next !== undefined && /^[A-Za-z_][\w.]*$/.test(next)) {
      const mod = next.replaceAll('.', '/');
      for (const f of [`${mod}.py`, `${mod}/__main__.py`, `${mod}/__init__.py`]) out.add(f);
    }
    if (w.startsWith('-') || w.startsWith('#') || w === '') continue;
    const forms: string[] = [];
    if (plain(w)) forms.push(w);
    else for (let k = w.indexOf('/'); k >= 0; k = w.indexOf('/', k + 1)) if (plain(w.slice(k + 1)) && pathLike(w.slice(k + 1))) forms.push(w.slice(k + 1));
    for (const f of forms) {
      if (f === '' || !pathLike(f)) continue;
      out.add(f);
      for (const d of dirs) if (d.at < i && !f.startsWith('/') && !f.startsWith('~')) out.add(`${d.dir}/${f}`);
    }
  }
  return [...out];
}

/** A name as the path it names, relative ones taken from the checkout's top (where git runs hooks and drivers). */
function pathOf(name: string, top: string, home: string): string {
  if (name === '~' || name.startsWith('~/')) return join(home, name.slice(1));
  return resolve(top, name);
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
    for (const w of pathNames(value.slice(0, VALUE_MAX))) add(pathOf(w, o.top, o.home), `named by your git config's ${key}`, w);
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
    for (const w of pathNames(text)) add(pathOf(w, o.top, o.home), `named by your git hook ${n}`, w);
  }
  return [...out.values()];
}
