// Files your own git runs or reads because a value of your config or one of
// your hooks names them (review, round 33: a clean or smudge filter
// `sh scripts/smudge.sh`, a post-merge hook that is a link to a script in the
// working tree or a wrapper that execs one). Such a file in the working tree
// is the agent's to write unless a run keeps it (lib/git/repo.ts
// gitConfigTargets), and the merge review names it when a branch changes it
// (lib/worktree/merge.ts).
import { lstatSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
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

/** Programs that run the file their first argument names (a script), and prefixes that run the command after them. */
const INTERPRETERS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', '.', 'source', 'node', 'nodejs', 'deno', 'bun', 'tsx', 'ts-node', 'python', 'python2', 'python3', 'pypy', 'pypy3', 'ruby', 'perl', 'php', 'lua', 'Rscript', 'awk', 'osascript', 'pwsh']);
const PREFIXES = new Set(['exec', 'command', 'builtin', 'env', 'nohup', 'time', 'nice', 'if', 'then', 'else', 'elif', 'while', 'until', 'do', '!', 'xargs', 'run']);
const JS = new Set(['node', 'nodejs', 'deno', 'bun', 'tsx', 'ts-node']);
/** Marks a name taken from the top whatever folder a `cd` went to (stripped before it is given). */
const TOP = '\0top\0';

/**
 * What a command line (a hook's script, a driver's or an alias's command)
 * runs from files, as names relative to where it runs or absolute: a command
 * word holding a `/` (`./scripts/check`, `tools/fmt.sh`), the script an
 * interpreter is given (`sh clean.sh`, `node scripts/verify`: also as `.js`
 * and `index.js`, `python3 -m tools.lint` as the module's files), each after
 * `cd` or `pushd` in that folder, and what the shell computes before a `/`
 * (`"$(git rev-parse --show-toplevel)"/scripts/check`, `${ROOT}/x`,
 * `$GIT_DIR/../x`) left out, the rest taken from the top. The arguments a
 * command only reads (`git diff go.mod`, `grep package.json`) are not names:
 * review, round 33 (second pass) found data files turned read-only, and the
 * first pass had missed the computed and quoted forms. A folder `cd`, `-C`
 * or `--directory` names is given too, ending in `/`.
 */
export function commandNames(text: string): string[] {
  const out = new Set<string>();
  // Comments out; what the shell computes as one `$`; quotes off (a quoted computed part before a `/` is common).
  const plain = text
    .replace(/(^|[\s;&|()])#[^\n]*/g, '$1')
    .replace(/\$\([^()]*\)|\$\{[^{}]*\}|`[^`]*`|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9@*#?$!-]/g, '$')
    .replace(/["']/g, '');
  let dir = '';
  // A name relative to the folder a `cd` went to; one after a computed part (the top, as a hook computes it) is not.
  const at = (name: string) => (name.startsWith('/') || name.startsWith('~') || name.startsWith(TOP) || dir === '' ? name.replace(TOP, '') : `${dir}/${name}`);
  const named = (word: string): string[] => {
    if (!word.includes('$')) return [word];
    // The part after the computed one: from the top, and less the climbs out of the git directory ($GIT_DIR/../x).
    const k = word.lastIndexOf('$');
    const rest = word.slice(k + 1).replace(/^\/+/, '');
    return rest === '' || rest.includes('$') ? [] : [rest, rest.replace(/^(\.\.\/)+/, '')].filter((r) => r !== '' && r !== '..').map((r) => `${TOP}${r}`);
  };
  for (const line of plain.split(/\n|;|&&|\|\||\||&|\(|\)|\{|\}|\bthen\b|\bdo\b|\belse\b/)) {
    const words = line.trim().split(/\s+/).filter((w) => w !== '');
    let i = 0;
    while (i < words.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i] as string) || PREFIXES.has(words[i] as string) || (words[i - 1] === 'env' && (words[i] as string).startsWith('-')))) i++;
    const cmd = words[i]?.replace(/^!/, '');
    if (cmd === undefined || cmd === '') continue;
    const args = words.slice(i + 1);
    const folderAfter = (flag: string[]) => {
      const k = args.findIndex((a) => flag.includes(a));
      return k >= 0 ? args[k + 1] : undefined;
    };
    if (cmd === 'cd' || cmd === 'pushd') {
      const d = args[0];
      if (d !== undefined && !d.includes('$') && d !== '-') {
        dir = d.startsWith('/') ? d : at(d).replace(/\/+$/, '');
        out.add(`${dir}/`);
      }
      continue;
    }
    if (cmd.includes(':')) continue; // a URL, a host: no file
    const base = cmd.slice(cmd.lastIndexOf('/') + 1);
    // A command found by its path (a plain name is looked up on PATH); after a computed part, from the top.
    for (const n of named(cmd)) if (n.includes('/') || cmd.includes('$')) out.add(at(n));
    const folder = folderAfter(['-C', '--directory']);
    if (folder !== undefined && !folder.includes('$')) out.add(`${at(folder).replace(/\/+$/, '')}/`);
    if (!INTERPRETERS.has(base.replace(/[0-9.]+$/, '')) && !INTERPRETERS.has(base)) continue;
    // The interpreter's script: its first argument that is no option; python's -m module.
    const m = args.findIndex((a) => a === '-m' || /^-m[A-Za-z_]/.test(a));
    if (m >= 0 && /^python|^pypy/.test(base)) {
      const mod = args[m] === '-m' ? args[m + 1] : (args[m] as string).slice(2);
      if (mod !== undefined && /^[A-Za-z_][\w.]*$/.test(mod)) for (const f of ['.py', '/__main__.py', '/__init__.py']) out.add(at(`${mod.replaceAll('.', '/')}${f}`));
      continue;
    }
    // A shell's command string (`bash -c "./x.sh"`): read as commands of its own.
    const c = args.indexOf('-c');
    if (c >= 0 && /^(sh|bash|zsh|dash|ksh|fish)$/.test(base)) {
      for (const n of commandNames(args.slice(c + 1).join(' '))) out.add(n.startsWith('/') || n.startsWith('~') ? n : at(n));
      continue;
    }
    const script = args.find((a, k) => !a.startsWith('-') && !(k > 0 && ['-c', '-e', '-r', '--eval', '--require'].includes(args[k - 1] as string)) && !(base === 'deno' && ['run', 'test', 'task'].includes(a)) && !(base === 'bun' && a === 'run'));
    if (script === undefined || args.some((a, k) => ['-c', '-e', '--eval'].includes(a) && k < args.indexOf(script))) continue;
    for (const n of named(script)) {
      out.add(at(n));
      if (JS.has(base) && !/\.[cm]?[jt]sx?$/.test(n)) for (const f of ['.js', '.mjs', '.cjs', '/index.js']) out.add(at(`${n}${f}`));
    }
  }
  return [...out];
}

/**
 * The names a config value gives: a value of one word that is a path is one
 * (`core.attributesFile = tools/attrs`, `commit.template = .gitmessage`: not
 * `main`, `status`, `gcloud.sh` or a URL), and any value is read as a
 * command too (a filter's, a driver's, an alias's after its `!`).
 */
export function valueNames(value: string): string[] {
  const v = value.trim();
  // (A plain name, `gcloud.sh`, is a program git finds on PATH, a credential helper's `git credential-NAME`.)
  const one = !/\s/.test(v) && !v.includes(':') && !v.includes('$') && (v.includes('/') || /^\.[^./]/.test(v)) ? [v.replace(/^!/, '')] : [];
  return [...new Set([...one, ...commandNames(v.replace(/^!/, ''))])];
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
  /** Named as a folder (`cd tools`, `make -C tools`): the review names what changed below it; a run keeps files alone. */
  folder: boolean;
}

/**
 * What your config's values (`git config --list`'s entries, lower-case keys)
 * and the hooks in `hooks` name, each path once with the first reason. The
 * hooks folder and included files are left out: the run keeps and the review
 * names those in words of their own.
 */
export function namedByGit(o: { top: string; home: string; entries: ReadonlyArray<{ key: string; value: string }>; hooks: string | null }): NamedFile[] {
  const out = new Map<string, NamedFile>();
  const add = (name: string, why: string) => {
    const abs = pathOf(name, o.top, o.home);
    const had = out.get(abs);
    if (abs === o.top) return;
    if (had === undefined) out.set(abs, { abs, why, folder: name.endsWith('/') });
    else if (!name.endsWith('/')) had.folder = false;
  };
  for (const { key, value } of o.entries) {
    if (/^(core\.hookspath|include\.path|includeif\..*\.path)$/is.test(key)) continue;
    for (const w of valueNames(value.slice(0, VALUE_MAX))) add(w, `named by your git config's ${key}`);
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
        // As the link names it (resolved step by step by the caller: a linked folder on the way is one to keep too).
        add(resolve(o.hooks, readlinkSync(file)), `your git hook ${n} is a link to it`);
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
    for (const w of commandNames(text)) add(w, `named by your git hook ${n}`);
  }
  return [...out.values()];
}
