// Files your own git runs or reads because a value of your config or one of
// your hooks names them (review, round 33: a clean or smudge filter
// `sh scripts/smudge.sh`, a post-merge hook that is a link to a script in the
// working tree or a wrapper that execs one). Such a file in the working tree
// is the agent's to write unless a run keeps it (lib/git/repo.ts
// gitConfigTargets), and the merge review names it when a branch changes it
// (lib/worktree/merge.ts).
import { lstatSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { readHead } from '../readback/file.js';
import { basename, dirname, join, resolve } from 'node:path';

/** The hooks git runs (githooks(5)), by name. */
export const HOOK_NAMES: ReadonlySet<string> = new Set([
  'applypatch-msg', 'pre-applypatch', 'post-applypatch', 'pre-commit', 'pre-merge-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit', 'pre-rebase', 'post-checkout', 'post-merge', 'pre-push', 'pre-receive', 'update',
  'proc-receive', 'post-receive', 'post-update', 'reference-transaction', 'push-to-checkout', 'pre-auto-gc', 'post-rewrite', 'sendemail-validate', 'fsmonitor-watchman', 'p4-changelist', 'p4-prepare-changelist', 'p4-post-changelist',
  'p4-pre-submit', 'post-index-change',
]);

/** The most of a hook's text, and of a config value, read for the names in it. */
const HOOK_TEXT_MAX = 256 * 1024;
const VALUE_MAX = 4096;

/** Programs that run the file their first argument names (a script). */
const INTERPRETERS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', '.', 'source', 'node', 'nodejs', 'deno', 'bun', 'tsx', 'ts-node', 'python', 'python2', 'python3', 'pypy', 'pypy3', 'ruby', 'perl', 'php', 'lua', 'Rscript', 'awk', 'osascript', 'pwsh']);
const SHELLS = /^(sh|bash|zsh|dash|ksh|fish)$/;
const JS = new Set(['node', 'nodejs', 'deno', 'bun', 'tsx', 'ts-node']);
/** Words that run the command after them, with the options of theirs that take a value. */
const PREFIXES = new Map<string, string[]>([
  ['exec', ['-a']], ['command', []], ['builtin', []], ['env', ['-u', '-C', '-S', '--unset', '--chdir']], ['nohup', []], ['time', ['-f', '-o']], ['nice', ['-n']], ['ionice', ['-c', '-n']],
  ['timeout', ['-s', '-k', '--signal', '--kill-after']], ['sudo', ['-u', '-g']], ['xargs', ['-I', '-n', '-L', '-d', '-E', '-P', '-s', '-a']], ['stdbuf', []], ['eval', []],
  ['npx', ['-p', '--package']], ['bunx', []], ['pnpx', []], ['flock', ['-w', '-E']], ['xvfb-run', ['-a', '-s', '-n']], ['dotenv', ['-e', '-v', '-c']], ['unbuffer', []], ['chronic', []], ['caffeinate', []],
  ['if', []], ['then', []], ['else', []], ['elif', []], ['while', []], ['until', []], ['do', []], ['!', []],
]);
/** Runners whose subcommand runs the command after it. */
const RUNNERS = new Map<string, string[]>([
  ['uv', ['run']], ['poetry', ['run']], ['pipenv', ['run']], ['pdm', ['run']], ['hatch', ['run']], ['rye', ['run']], ['pixi', ['run']], ['conda', ['run']],
  ['npm', ['exec']], ['pnpm', ['exec', 'dlx']], ['yarn', ['exec', 'dlx']], ['bundle', ['exec']], ['direnv', ['exec']], ['mise', ['exec', 'x']], ['asdf', ['exec']],
]);
/** An interpreter's options whose value is the next word, and those that make it run a string instead of a script. */
const VALUE_OPTIONS = new Set(['-o', '+o', '-O', '+O', '-W', '-X', '-Q', '-I', '-M', '-r', '--require', '--import', '--loader', '--experimental-loader', '-x', '--env-file']);
const EVAL_OPTIONS = new Set(['-c', '-e', '-E', '-p', '--eval', '--print', '-command']);
/** Node's options that load a module before the script: a name too. */
const PRELOADS = new Set(['-r', '--require', '--import', '--loader', '--experimental-loader']);
/** Marks a name taken from the top whatever folder a `cd` went to, and one taken from the hook's own folder ($0's). */
const TOP = '\0top\0';
const HOOK = '\0hook\0';

/**
 * What a command line (a hook's script, a driver's or an alias's command)
 * runs from files, as names relative to where it runs or absolute: a command
 * word holding a `/` (`./scripts/check`, `tools/fmt.sh`), the script an
 * interpreter is given (`sh clean.sh`, `bash -e x`, `node scripts/verify`:
 * also as `.js` and `index.js`, node's preloads, `python3 -m tools.lint` as
 * the module's files), a shell's `-c` string and what `$(…)` or backquotes
 * run, read as commands of their own; after a prefix (`env`, `exec`,
 * `timeout 60`, `xargs -r`, `/usr/bin/env bash`). A relative name after a
 * `cd` is given both from that folder and from where the script started (a
 * subshell's or a function's `cd` ends with it). What the shell computes
 * before a `/` is left out and the rest taken from the top
 * (`"$(git rev-parse --show-toplevel)"/scripts/check`, `$GIT_DIR/../x`), or
 * from the hook's own folder where it is `$0`'s (`"$(dirname "$0")"/../x`,
 * `${0%/*}/h`: marked, resolved by the caller). The arguments a command only
 * reads (`git diff go.mod`), text in quotes (`echo "…; run ./setup.sh"`) and
 * `case` patterns are not names: reviews, round 33 (four passes). A folder
 * `cd`, `-C` or `--directory` names is given too, ending in `/`.
 */
export function commandNames(text: string, depth = 0, hookName?: string): string[] {
  const out = new Set<string>();
  if (depth > 4) return [];
  const inner: string[] = [];
  // Comments out; $0's folder marked; what $(…) and backquotes run read on its own, each then one `$`.
  const stripped = text.replace(/(^|[\s;&|()])#[^\n]*/g, '$1');
  const given = assignments(stripped);
  const first = new Map([...given].map(([k, v]) => [k, v[0] as string]));
  // A variable given more than one value (`LINT=scripts/lint.sh; … LINT=scripts/lint.local.sh`: found in review, the
  // second was the agent's to make): the text read again with each other value, a few times at most, a short text only.
  if (depth === 0 && text.length <= VARIANT_TEXT_MAX) {
    let extra = 0;
    for (const [k, vs] of given) {
      for (const v of vs.slice(1)) {
        if (extra++ >= MAX_VARIANTS) break;
        for (const n of commandNames(substitute(stripped, new Map([...first, [k, v]])), 1, hookName)) out.add(n);
      }
    }
  }
  let plain = substitute(stripped, first)
    // bash's own name for the script (review, round 34: `. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"`).
    .replace(/\$\{BASH_SOURCE(?:\[0\])?\}|\$BASH_SOURCE\b/g, '$0')
    // The hook's own name (a dispatcher's `exec "$top/.githooks/$(basename "$0")"`), where the caller knows it.
    .replace(/\$\(\s*basename\s+(?:--\s+)?"?\$0"?\s*\)|\$\{0##\*\/\}/g, hookName ?? '$(basename)')
    // The hooks folder as git says it.
    .replace(/\$\(\s*git\s+rev-parse\s+--git-path\s+hooks\s*\)/g, '$(dirname "$0")')
    // A linked hook's own real path is $0 too (`$(readlink -f "$0")`, `$(realpath "$0")`): its folder, the caller's to
    // resolve both as the link and as what it leads to (review, round 34: `. "$(dirname "$(readlink -f "$0")")/common.sh"`).
    .replace(/\$\(\s*(?:readlink\s+-[fem]+|realpath)\s+(?:--\s+)?"?\$0"?\s*\)/g, '$0')
    // (The quotes around it stay: one taken alone paired with the next quote of the file and hid what lay between.)
    .replace(/\$\(\s*dirname\s+(--\s+)?"?\$0"?\s*\)|\$\{0%\/\*\}/g, HOOK)
    // A folder made absolute (`HERE="$(cd "$(dirname "$0")" && pwd)"`) is the same folder.
    .replace(new RegExp(`\\$\\(\\s*cd\\s+(?:--\\s+)?"?${HOOK}"?\\s*(?:&&|;)\\s*pwd(?:\\s+-P)?\\s*\\)`, 'g'), HOOK);
  for (let i = 0; i < 8 && /\$\([^()]*\)|`[^`]*`/.test(plain); i++) {
    plain = plain.replace(/\$\(([^()]*)\)|`([^`]*)`/g, (_m, a?: string, b?: string) => (inner.push((a ?? b) as string), '$'));
  }
  plain = plain.replace(/\$\{[^{}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9@*#?$!-]/g, '$');
  // Quoted text: a shell's -c string or eval's is commands; other text with blanks or separators is text; the rest unquoted.
  // (Whether -c or eval comes before is looked up behind the quote, in a few characters: a pattern of blanks before
  // every quote took minutes over a hook of blanks.)
  plain = plain.replace(/"([^"]*)"|'([^']*)'/g, (_m, q1: string | undefined, q2: string | undefined, at: number, all: string) => {
    const q = (q1 ?? q2) as string;
    if (/(?:^|\s)(?:-[A-Za-z]*c[A-Za-z]*|eval)\s+$/.test(all.slice(Math.max(0, at - 16), at))) return (inner.push(q), '_');
    return /[\s;&|<>()]/.test(q) ? '_' : q;
  }).replace(/["']/g, '');
  // case patterns (`src/api/types.ts)`): no commands.
  plain = withoutCasePatterns(plain);
  for (const t of inner) for (const n of commandNames(t, depth + 1)) out.add(n);
  const dirs: string[] = [];
  const add = (name: string) => {
    // Installed code (node_modules, a vendor's bin, a virtual environment) is judged by the end-of-run check as a
    // whole; kept read-only here, an install in the run failed (review, round 33: lefthook's hook named its package).
    if (/(^|\/)(node_modules|\.?venv|vendor\/bin)(\/|$)/.test(name)) return;
    if (name.startsWith(TOP) || name.startsWith(HOOK) || name.startsWith('/') || name.startsWith('~')) return void out.add(name.startsWith(TOP) ? name.slice(TOP.length) : name);
    out.add(name);
    for (const d of dirs) out.add(`${d}/${name}`);
  };
  const named = (word: string): string[] => {
    if (word.startsWith(HOOK)) return [word];
    if (!word.includes('$')) return [word];
    // The part after the computed one: from the top, and less the climbs out of the git directory ($GIT_DIR/../x).
    const k = word.lastIndexOf('$');
    const rest = word.slice(k + 1).replace(/^\/+/, '');
    return rest === '' || rest.includes('$') ? [] : [rest, rest.replace(/^(\.\.\/)+/, '')].filter((r) => r !== '' && r !== '..').map((r) => `${TOP}${r}`);
  };
  for (const line of plain.split(/\n|;|&&|\|\||\||&|\(|\)|\{|\}|\bthen\b|\bdo\b|\belse\b/)) {
    const words = line.trim().split(/\s+/).filter((w) => w !== '' && !/^\d*[<>]/.test(w));
    let i = 0;
    for (;;) {
      const w = words[i];
      if (w === undefined) break;
      const base = w.slice(w.lastIndexOf('/') + 1);
      if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) { i++; continue; }
      // A runner's subcommand that runs the command after it (`uv run`, `npm exec --`, `bundle exec`, `direnv exec DIR`).
      const sub = RUNNERS.get(base);
      if (sub !== undefined && sub.includes(words[i + 1] ?? '')) {
        i += base === 'direnv' ? 3 : 2;
        while (i < words.length && ((words[i] as string).startsWith('-'))) i++;
        continue;
      }
      const opts = PREFIXES.get(base);
      if (opts === undefined) break;
      i++;
      if (base === 'flock' && words[i] !== undefined && !(words[i] as string).startsWith('-')) i++;
      if (base === 'timeout' && /^[\d.]+[smhd]?$/.test(words[i] ?? '')) i++;
      while (i < words.length && ((words[i] as string).startsWith('-') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i] as string))) i += opts.includes(words[i] as string) ? 2 : 1;
      if ((base === 'nice' || base === 'timeout') && /^[\d.]+[smhd]?$/.test(words[i] ?? '')) i++;
    }
    const cmd = words[i]?.replace(/^!/, '');
    if (cmd === undefined || cmd === '' || cmd === '_') continue;
    const args = words.slice(i + 1);
    if (cmd === 'cd' || cmd === 'pushd') {
      const d = args[0];
      if (d !== undefined && !d.startsWith('-') && d !== '_') {
        // A computed one (`cd "$(git rev-parse --show-toplevel)/tools"`) by what follows the computed part, from the top
        // (review, round 34); the hook's own folder as it is.
        for (const n of d.includes('$') ? named(d) : [d]) {
          const dir = (n.startsWith(TOP) ? n.slice(TOP.length) : n).replace(/\/+$/, '');
          if (dir === '') continue;
          // A few folders at most: each name is given from every one (a script of ten thousand cds would multiply them).
          if (!dirs.includes(dir) && dirs.length < 8) dirs.push(dir);
          out.add(`${dir}/`);
        }
      }
      continue;
    }
    if (cmd.includes(':')) continue; // a URL, a host: no file
    const base = cmd.slice(cmd.lastIndexOf('/') + 1);
    // A command found by its path (a plain name is looked up on PATH); after a computed part, from the top.
    for (const n of named(cmd)) if (n.includes('/') || cmd.includes('$')) add(n);
    const k = args.findIndex((a) => a === '-C' || a === '--directory');
    const folder = k >= 0 ? args[k + 1] : undefined;
    if (folder !== undefined && !folder.includes('$') && folder !== '_') out.add(`${folder.replace(/\/+$/, '')}/`);
    // A program given a script to run by an option (`sed -f scripts/strip.sed`, `make -f`, `awk -f`: review, round 34).
    const fileOpts = SCRIPT_OPTIONS.get(base);
    if (fileOpts !== undefined) {
      for (let j = 0; j < args.length; j++) {
        const a = args[j] as string;
        const glued = fileOpts.find((o) => o.startsWith('--') && a.startsWith(`${o}=`));
        const v = fileOpts.includes(a) ? args[j + 1] : glued !== undefined ? a.slice(glued.length + 1) : undefined;
        if (v !== undefined && v !== '_') for (const n of named(v)) add(n);
      }
    }
    // An interpreter (or a computed program, `$SHELL`): its script, its preloads; python's -m module.
    const interpreter = INTERPRETERS.has(base) || INTERPRETERS.has(base.replace(/[0-9.]+$/, '')) || cmd === '$';
    if (!interpreter) continue;
    let script: string | undefined;
    for (let j = 0; j < args.length; j++) {
      const a = args[j] as string;
      // A script on standard input (`python3 - "$T"`, `sh -s`): what follows is its arguments (found in review).
      if (a === '_' || a === '-' || (SHELLS.test(base) && /^-[A-Za-z]*s[A-Za-z]*$/.test(a))) break;
      if (EVAL_OPTIONS.has(a) && !(SHELLS.test(base) && a === '-e') && !(SHELLS.test(base) && a === '-E')) break;
      // python's -m (a computed program too: the pre-commit framework's `"$INSTALL_PYTHON" -mpre_commit`): the module's
      // files and its packages', from where the hook runs, first on python's path.
      if ((/^python|^pypy/.test(base) || cmd === '$') && (a === '-m' || /^-m[A-Za-z_]/.test(a))) {
        const mod = a === '-m' ? args[j + 1] : a.slice(2);
        if (mod !== undefined && /^[A-Za-z_][\w.]*$/.test(mod)) {
          const parts = mod.split('.');
          for (let p = 1; p < parts.length; p++) add(`${parts.slice(0, p).join('/')}/__init__.py`);
          for (const f of ['.py', '/__main__.py', '/__init__.py']) add(`${parts.join('/')}${f}`);
        }
        break;
      }
      // A shell's option cluster: with c, a command string (read from its quotes); with o, a value; -n reads only.
      if (SHELLS.test(base) && /^[-+][A-Za-z]+$/.test(a)) {
        if (a.slice(1).includes('c') || a === '-n') break;
        if (a.slice(1).includes('o')) j++;
        continue;
      }
      if (base === 'php' && a === '-l') break;
      if (VALUE_OPTIONS.has(a)) {
        const v = args[j + 1];
        if (PRELOADS.has(a) && JS.has(base) && v !== undefined && /^[.~/]/.test(v)) for (const n of named(v)) add(n);
        j++;
        continue;
      }
      if (a.startsWith('-') || a.startsWith('+')) continue;
      if (base === 'deno' && ['run', 'test', 'task'].includes(a)) continue;
      if (base === 'bun' && a === 'run') continue;
      // bun's and deno's own words (`bun test`, `bun run build`, `deno task check`, `deno fmt`): a script there is a path.
      if ((base === 'bun' || base === 'deno') && !a.includes('/') && !/\.[A-Za-z0-9]+$/.test(a)) break;
      script = a;
      break;
    }
    if (script === undefined) continue;
    for (const n of named(script)) {
      add(n);
      if (JS.has(base) && !/\.[cm]?[jt]sx?$/.test(n)) for (const f of ['.js', '.mjs', '.cjs', '/index.js']) add(`${n}${f}`);
    }
  }
  return [...out];
}

/**
 * Whether a command text runs a Python's `-m` (a line naming a Python, or a
 * computed program, and `-m`): a line at a time, each tested twice, linear.
 */
function runsPythonModule(text: string): boolean {
  return text.split('\n').some((l) => /python|pypy|\$/.test(l) && /(?:^|\s)-m\s*[A-Za-z_]/.test(l));
}

/** The commands a hook framework's config at the top names (`entry:`, `run:`), a value on its line. */
export function frameworkCommands(top: string): Array<{ file: string; command: string }> {
  const out: Array<{ file: string; command: string }> = [];
  for (const file of HOOK_FRAMEWORK_CONFIGS) {
    // Not through a link (a tool's config is read where it is), a regular file, bounded.
    const lines = (readHead(join(top, file), HOOK_TEXT_MAX) ?? '').split('\n');
    for (let i = 0; i < lines.length && out.length < 256; i++) {
      // `entry: x`, `run: x`, TOML's `run = "x"`, JSON's `"run": "x",`; a YAML block (`run: |`) by its lines.
      const m = /^(\s*)(?:-\s+)?"?(?:entry|run)"?\s*[:=]\s*(.*?)\s*,?\s*$/.exec(lines[i] as string);
      if (!m) continue;
      const v = (m[2] as string).replace(/^(["'])(.*)\1$/, '$2');
      if (/^[|>][-+]?$/.test(v)) {
        const indent = (m[1] as string).length;
        for (let j = i + 1; j < lines.length && out.length < 256; j++) {
          const l = lines[j] as string;
          if (l.trim() === '') continue;
          if (l.length - l.trimStart().length <= indent) break;
          out.push({ file, command: l.trim() });
        }
      } else if (v !== '') out.push({ file, command: v });
    }
  }
  return out;
}

/** Hook frameworks' configs at the top whose entries name the commands your commit runs. */
const HOOK_FRAMEWORK_CONFIGS = ['.pre-commit-config.yaml', '.pre-commit-config.yml', ...['lefthook', 'lefthook-local'].flatMap((n) => ['yml', 'yaml', 'toml', 'json', 'jsonc'].flatMap((e) => [`${n}.${e}`, `.${n}.${e}`, `.config/${n}.${e}`]))];

/** Programs that run a script given by an option, and those options. */
const SCRIPT_OPTIONS: ReadonlyMap<string, readonly string[]> = new Map([
  ['sed', ['-f', '--file']], ['awk', ['-f', '--file']], ['gawk', ['-f', '--file']], ['mawk', ['-f']],
  ['make', ['-f', '--file', '--makefile']], ['gmake', ['-f', '--file', '--makefile']],
  ['gdb', ['-x', '--command']], ['vim', ['-S', '-u']], ['nvim', ['-S', '-u']], ['emacs', ['-l', '--load']], ['m4', []],
]);

/** Variables a script gives a value of one word once (at most this many): that value where they are used. */
const MAX_ASSIGNED = 32;
/** The longest value put where a variable is used. */
const MAX_VALUE = 512;
/** The values kept of each variable, the texts read again with another, and the longest text read again. */
const VALUES_EACH = 4;
const MAX_VARIANTS = 8;
const VARIANT_TEXT_MAX = 16 * 1024;

/**
 * Each simple variable a script gives (`HERE="…"`, `h=…`, `export TOOLS=tools`)
 * and its values, up to a few each (`LINT=a; [ -f b ] && LINT=b`): a script's
 * own names, which the reader otherwise takes as computed (review, round 34:
 * `h="$(git rev-parse --show-toplevel)/.githooks/pre-commit"; exec "$h"`).
 */
function assignments(text: string): Map<string, string[]> {
  const values = new Map<string, string[]>();
  // A value: "…" holding a $(…) two deep, or "…", '…', a bare $(…) and what follows it, or a bare word.
  const sub = String.raw`\$\((?:[^()\n]|\((?:[^()\n]|\([^()\n]*\))*\))*\)`;
  const value = String.raw`"(?:${sub}|[^"\n$]|\$(?!\())*"|'[^'\n]*'|${sub}[^\s;&|()]*|[^\s;&|()]*`;
  for (const m of text.matchAll(new RegExp(String.raw`(?:^|[\s;&|(])(?:export\s+|local\s+|readonly\s+)?([A-Za-z_][A-Za-z0-9_]*)=(${value})`, 'g'))) {
    const [name, raw] = [m[1] as string, m[2] as string];
    if (raw.includes(`$${name}`) || raw.includes(`\${${name}`)) continue;
    const had = values.get(name);
    if (had === undefined && values.size >= MAX_ASSIGNED) continue;
    const v = raw.replace(/^["']|["']$/g, '');
    if (had === undefined) values.set(name, [v]);
    else if (had.length < VALUES_EACH && !had.includes(v)) had.push(v);
  }
  return values;
}

/**
 * The text with each variable put where it is used (`$HERE`, `${HERE}`), one
 * value each, bounded: a value of a few hundred characters, put in while the
 * text stays within twice its room (found in review: `a=<150 KB>; $a $a …`
 * grew past the longest string V8 makes, and every run's start failed).
 */
function substitute(text: string, values: ReadonlyMap<string, string>): string {
  if (values.size === 0) return text;
  let room = 2 * HOOK_TEXT_MAX;
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (all, a?: string, b?: string) => {
    const v = values.get((a ?? b) as string);
    if (v === undefined || v.length > MAX_VALUE || v.length > room) return all;
    room -= v.length;
    return v;
  });
}

/**
 * The text less its `case` patterns (`  src/api/types.ts)`, `a|b)`): at a
 * line's start, after `;;` or after `in`, words and `|` up to a `)`. In one
 * pass: a candidate inside a span already read is not read again (review,
 * round 33: a pattern retried at every `in` of `inX|inX|…` took a minute).
 */
function withoutCasePatterns(t: string): string {
  const cuts: Array<[number, number]> = [];
  const starts = /(?:^|\n|;;|\bin[ \t])[ \t]*\(?/g;
  let reach = 0;
  for (let m = starts.exec(t); m !== null; m = starts.exec(t)) {
    if (m[0] === '') starts.lastIndex++;
    const from = m.index + m[0].length;
    if (from < reach) continue;
    let j = from;
    let word = false;
    for (; j < t.length; j++) {
      const c = t[j] as string;
      if (c === '\n' || c === '\r' || c === '(' || c === ')' || c === ';' || c === '&') break;
      if (c !== ' ' && c !== '\t' && c !== '|') word = true;
    }
    reach = j + 1;
    if (word && t[j] === ')' && !/[ \t]/.test(t.slice(from, j).replace(/[ \t]*\|[ \t]*/g, '|').trim())) cuts.push([from, j + 1]);
  }
  let out = '';
  let at = 0;
  for (const [a, b] of cuts) {
    out += t.slice(at, a);
    at = b;
  }
  return out + t.slice(at);
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
  // ($0 means nothing in a config value's command.)
  return [...new Set([...one, ...commandNames(v.replace(/^!/, '')).filter((n) => !n.startsWith(HOOK))])];
}

/** A path as git takes one from a value: `~` is your home, an absolute one itself, a relative one from `base`. */
export function gitPath(value: string, base: string, home: string): string {
  return value === '~' || value.startsWith('~/') ? join(home, value.slice(1)) : resolve(base, value);
}

/** The folder of what a link leads to, or null (broken). */
function realFolderOf(file: string): string | null {
  try {
    return dirname(realpathSync(file));
  } catch {
    return null;
  }
}

/** A name as the path it names, relative ones taken from the checkout's top (where git runs hooks and drivers), $0's from the hook's folder. */
function pathOf(name: string, top: string, home: string, hookDir: string | null): string {
  return name.startsWith(HOOK) ? resolve(hookDir ?? top, `.${name.slice(HOOK.length)}`) : gitPath(name, top, home);
}

export interface NamedFile {
  /** As named (absolute, not resolved through links). */
  abs: string;
  why: string;
  /** Named as a folder (`cd tools`, `make -C tools`): the review names what changed below it; a run keeps files alone. */
  folder: boolean;
  /** What a hook is a link to (kept whatever it is: a folder there would have your git run a script put in it). */
  linkedHook?: boolean;
}

/** What your git runs or reads because your config or hooks name it, and the Pythons that run `python -m` from the top. */
export interface NamedByGit {
  files: NamedFile[];
  /**
   * The Pythons a hook or a hook framework's entry runs with `-m` (from the
   * checkout's top, which `-m` puts first on the module path: review, round
   * 34, the pre-commit framework's launcher imported the agent's `cfgv.py`
   * there): `python3`, and the launcher's own `INSTALL_PYTHON` where it names
   * one; none where nothing runs `python -m`.
   */
  pythons: string[];
}

/**
 * What your config's values (`git config --list`'s entries, lower-case keys)
 * and the hooks in `hooks` name, each path once with the first reason. The
 * hooks folder and included files are left out: the run keeps and the review
 * names those in words of their own.
 */
export function namedByGit(o: { top: string; home: string; entries: ReadonlyArray<{ key: string; value: string }>; hooks: string | null }): NamedByGit {
  const out = new Map<string, NamedFile>();
  const pythons = new Set<string>();
  const add = (name: string, why: string, hookDir: string | null = null, linkedHook = false) => {
    const abs = pathOf(name, o.top, o.home, hookDir);
    const had = out.get(abs);
    if (abs === o.top) return;
    if (had === undefined) out.set(abs, { abs, why, folder: name.endsWith('/'), ...(linkedHook ? { linkedHook } : {}) });
    else {
      if (!name.endsWith('/')) had.folder = false;
      if (linkedHook) had.linkedHook = true;
    }
  };
  const done = (): NamedByGit => ({ files: [...out.values()], pythons: [...pythons] });
  for (const { key, value } of o.entries) {
    if (/^(core\.hookspath|include\.path|includeif\..*\.path)$/is.test(key)) continue;
    for (const w of valueNames(value.slice(0, VALUE_MAX))) add(w, `named by your git config's ${key}`);
  }
  // What a hook framework's config at the top names for your commit to run (the pre-commit framework's `entry:`,
  // lefthook's `run:`; review, round 34: `entry: scripts/lint.sh` was the agent's to rewrite). The configs are kept
  // read-only as tools' configs; a line at a time, a value on its line.
  for (const { file, command } of frameworkCommands(o.top)) {
    for (const w of commandNames(command)) add(w, `named by your ${file}`);
    if (runsPythonModule(command)) pythons.add('python3');
  }
  if (o.hooks === null) return done();
  // husky 9's hooks folder (`.husky/_`) holds stubs that run the hook of the same name in the folder above it: read both.
  const folders = basename(o.hooks) === '_' ? [o.hooks, dirname(o.hooks)] : [o.hooks];
  const hooks = folders.flatMap((dir) => {
    try {
      return readdirSync(dir).filter((n) => HOOK_NAMES.has(n)).sort().map((n) => ({ dir, n }));
    } catch {
      return []; // no hooks folder
    }
  });
  for (const { dir, n } of hooks) {
    const file = join(dir, n);
    let link = false;
    try {
      link = lstatSync(file).isSymbolicLink();
    } catch {
      continue; // gone, or not reachable: git runs nothing there
    }
    if (link) {
      try {
        // As the link names it (resolved step by step by the caller: a linked folder on the way is one to keep too).
        add(resolve(dir, readlinkSync(file)), `your git hook ${n} is a link to it`, null, true);
      } catch {
        // a broken link runs nothing
      }
    }
    // Unreadable, not a regular file (a FIFO would hold the run's start: found in review): git runs nothing there either.
    const text = readHead(file, HOOK_TEXT_MAX, true) ?? '';
    if (runsPythonModule(text)) {
      pythons.add('python3');
      const own = /(?:^|\n)\s*INSTALL_PYTHON=['"]?(\/[^\s'"]+)/.exec(text)?.[1];
      if (own !== undefined) pythons.add(own);
    }
    // $0's folder: the hooks folder, and for a linked hook the folder of what it leads to as well.
    const real = link ? realFolderOf(file) : null;
    for (const w of commandNames(text, 0, n)) {
      add(w, `named by your git hook ${n}`, dir);
      if (real !== null && real !== dir && w.startsWith(HOOK)) add(w, `named by your git hook ${n}`, real);
    }
  }
  return done();
}
