// Which simple commands install packages, and what they name: npm, pnpm,
// yarn and bun (add/install, and the one-off runners npx, dlx, bunx), pip in
// its spellings, uv, cargo add/install and go get/install, behind sudo, env,
// variable assignments and the like, and inside `sh -c '…'`. A bare install
// (no names) installs the lockfile and is not reported.
import { basename } from 'node:path';
import { simpleCommands } from './shell-words.js';
import { cratesSpec, goSpec, npmSpec, pypiSpec } from './specs.js';
import type { Ecosystem, Requested } from './types.js';

/** Wrappers whose options are skipped to reach the command they run: option -> takes a value. */
const WRAPPERS: Record<string, Record<string, boolean>> = {
  sudo: { '-u': true, '-g': true, '-h': true, '-p': true, '-C': true, '-D': true, '-r': true, '-t': true, '-T': true, '-U': true, '--user': true, '--group': true, '--chdir': true },
  doas: { '-u': true, '-C': true },
  env: { '-u': true, '--unset': true, '-C': true, '--chdir': true, '-S': false },
  nice: { '-n': true, '--adjustment': true },
  timeout: { '-s': true, '--signal': true, '-k': true, '--kill-after': true },
  stdbuf: { '-i': true, '-o': true, '-e': true },
  xargs: { '-n': true, '-I': true, '-P': true, '-L': true, '-d': true, '-a': true, '-E': true, '-s': true },
  command: {}, exec: { '-a': true }, nohup: {}, time: {}, builtin: {}, ionice: { '-c': true, '-n': true, '-p': true }, chronic: {}, corepack: {},
};
const KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while', 'until', '{', '}', '!', '[[', ']]']);
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'ash']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

interface Context {
  /** Variables set on the command line (npm_config_registry=… npm i x). */
  vars: Record<string, string>;
  /** Names come from standard input (xargs), not the words. */
  fromInput: boolean;
}

/** Strips assignments and wrappers; returns the words of the command they run. */
function unwrap(words: string[], ctx: Context): string[] {
  let w = words;
  for (let guard = 0; guard < 16 && w.length > 0; guard++) {
    const head = w[0] as string;
    if (KEYWORDS.has(head)) w = w.slice(1);
    else if (ASSIGNMENT.test(head)) {
      const eq = head.indexOf('=');
      ctx.vars[head.slice(0, eq)] = head.slice(eq + 1);
      w = w.slice(1);
    } else if (Object.hasOwn(WRAPPERS, basename(head))) {
      const name = basename(head);
      const opts = WRAPPERS[name] as Record<string, boolean>;
      if (name === 'xargs') ctx.fromInput = true;
      let i = 1;
      while (i < w.length) {
        const a = w[i] as string;
        if (a === '--') { i++; break; }
        if (!a.startsWith('-') || a === '-') break;
        i += opts[a] === true ? 2 : 1;
      }
      // timeout's duration and nice's old -N form come before the command.
      if (name === 'timeout' && i < w.length) i++;
      w = w.slice(i);
    } else break;
  }
  return w;
}

/** Positional words after the subcommand, skipping flags (those in `valued` take the next word). */
function positionals(args: string[], valued: Set<string>, onValue?: (flag: string, value: string) => void): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') return [...out, ...args.slice(i + 1)];
    if (a.startsWith('-') && a !== '-') {
      const eq = a.indexOf('=');
      if (eq !== -1) onValue?.(a.slice(0, eq), a.slice(eq + 1));
      else if (valued.has(a)) {
        onValue?.(a, args[i + 1] ?? '');
        i++;
      }
      continue;
    }
    out.push(a);
  }
  return out;
}

const set = (s: string) => new Set(s.split(' '));
const NPM_VALUED = set('--registry --prefix -w --workspace --tag --omit --include --cache --userconfig --globalconfig --save-prefix --install-strategy --loglevel --before --cpu --os --libc --otp -C --dir --filter -F --store-dir --cwd --backend -c --config --cache-dir --network-concurrency --reporter');
const NPX_VALUED = set('-p --package -c --call --registry --prefix -w --workspace --cache --userconfig');
const NPM_INSTALL = set('install i in ins inst insta instal isnt isnta isntal isntall add');

function npmFamily(tool: string, w: string[], ctx: Context): Requested[] | null {
  let registry = ctx.vars.npm_config_registry ?? ctx.vars.NPM_CONFIG_REGISTRY;
  const note = (flag: string, value: string) => {
    if (flag === '--registry') registry = value;
  };
  const runner = tool === 'npx' || tool === 'bunx' || tool === 'pnpx';
  let args = w.slice(1);
  if (!runner) {
    // Flags may come before the subcommand (npm --registry x install y).
    let i = 0;
    while (i < args.length && (args[i] as string).startsWith('-')) i += NPM_VALUED.has(args[i] as string) ? 2 : 1;
    positionals(args.slice(0, i), NPM_VALUED, note);
    args = args.slice(i);
  }
  let sub = runner ? 'exec' : (args[0] ?? '');
  if (!runner) args = args.slice(1);
  if (tool === 'yarn' && sub === 'global') {
    sub = args[0] ?? '';
    args = args.slice(1);
  }
  // The one-off runners: npm exec, pnpm dlx, yarn dlx, bun x (pnpm exec and yarn exec run local binaries only).
  const runs = runner || (tool === 'npm' && sub === 'exec') || ((tool === 'pnpm' || tool === 'yarn') && sub === 'dlx') || (tool === 'bun' && sub === 'x');
  const installs = tool === 'yarn' ? sub === 'add' : tool === 'bun' ? NPM_INSTALL.has(sub) || sub === 'a' : NPM_INSTALL.has(sub);
  if (!runs && !installs) return null;
  let names: string[];
  if (runs) {
    const packages: string[] = [];
    const firstAt = args.findIndex((a) => !a.startsWith('-'));
    positionals(firstAt === -1 ? args : args.slice(0, firstAt), NPX_VALUED, (f, v) => {
      if (f === '-p' || f === '--package') packages.push(v);
      note(f, v);
    });
    names = packages.length > 0 ? packages : firstAt === -1 ? [] : [args[firstAt] as string];
  } else names = positionals(args, NPM_VALUED, note);
  // npx, npm exec and bunx run a binary the project already has without fetching anything.
  const local = runs && tool !== 'pnpm' && tool !== 'yarn';
  const extra = registry === undefined ? {} : { registry };
  return specs('npm', names, (n) => {
    const r = npmSpec(n, extra);
    return r?.kind === 'registry' && local ? { ...r, unlessLocalBin: r.name.split('/').at(-1) as string } : r;
  }, ctx);
}

const PIP_VALUED = set('-r --requirement -c --constraint -e --editable -i --index-url --extra-index-url -f --find-links -t --target --prefix --root --platform --python-version --implementation --abi --no-binary --only-binary --upgrade-strategy --src --cache-dir --trusted-host --progress-bar --log --timeout --retries --cert --client-cert --proxy -C --config-settings --global-option --report --python -p --index --default-index --optional --group --package --extra --rev --tag --branch --directory --project --index-strategy --keyring-provider --resolution --prerelease --exclude-newer --link-mode --compile-bytecode --config-file --color --python-platform --with --from --spec');

function pipLike(args: string[], ctx: Context): Requested[] {
  let index = ctx.vars.PIP_INDEX_URL ?? ctx.vars.UV_INDEX_URL ?? ctx.vars.UV_DEFAULT_INDEX;
  let extraIndex: string | undefined = ctx.vars.PIP_EXTRA_INDEX_URL ?? ctx.vars.UV_EXTRA_INDEX_URL ?? ctx.vars.UV_INDEX;
  const out: Requested[] = [];
  const names = positionals(args, PIP_VALUED, (f, v) => {
    if (f === '-i' || f === '--index-url' || f === '--default-index') index = v;
    else if (f === '--extra-index-url' || f === '--index' || f === '-f' || f === '--find-links') extraIndex = v;
    else if (f === '-r' || f === '--requirement') out.push({ kind: 'unchecked', ecosystem: 'pypi', spec: `-r ${v}`, why: 'the packages a requirements file lists', remote: true });
    else if (f === '-e' || f === '--editable') {
      const r = pypiSpec(v);
      if (r) out.push(r.kind === 'registry' ? { kind: 'unchecked', ecosystem: 'pypi', spec: v, why: 'an editable install', remote: false } : r);
    }
  });
  const extra = { ...(index === undefined ? {} : { registry: index }), ...(extraIndex === undefined ? {} : { softMissing: 'the command also looks in another index' }) };
  return [...out, ...specs('pypi', names, (n) => pypiSpec(n, extra), ctx)];
}

const PYTHON_VALUED = set('-X -W -c');
function python(w: string[], ctx: Context): Requested[] | null {
  let i = 1;
  while (i < w.length && (w[i] as string).startsWith('-') && w[i] !== '-m') i += PYTHON_VALUED.has(w[i] as string) ? 2 : 1;
  if (w[i] !== '-m' || w[i + 1] !== 'pip') return null;
  return pipCommand(w.slice(i + 2), ctx);
}

function pipCommand(args: string[], ctx: Context): Requested[] | null {
  const at = args.findIndex((a) => !a.startsWith('-'));
  if (at === -1 || args[at] !== 'install') return null;
  return pipLike(args.slice(at + 1), ctx);
}

const UV_GLOBAL_VALUED = set('--directory --project --python -p --cache-dir --color --config-file --allow-insecure-host');
function uv(w: string[], ctx: Context): Requested[] | null {
  let i = 1;
  while (i < w.length && (w[i] as string).startsWith('-')) i += UV_GLOBAL_VALUED.has(w[i] as string) ? 2 : 1;
  const sub = w[i];
  if (sub === 'pip') return w[i + 1] === 'install' ? pipLike(w.slice(i + 2), ctx) : null;
  if (sub === 'add') return pipLike(w.slice(i + 1), ctx);
  if (sub === 'tool' && w[i + 1] === 'install') return pipLike(w.slice(i + 2), ctx);
  if (sub === 'tool' && w[i + 1] === 'run') return runner(w.slice(i + 2), ctx);
  return null;
}

/** uvx, uv tool run, pipx run: the package is --from's, else the first word (the rest are its arguments). */
function runner(args: string[], ctx: Context): Requested[] {
  let from: string | undefined;
  const first = args.findIndex((a, i) => !a.startsWith('-') && !PIP_VALUED.has(args[i - 1] ?? ''));
  positionals(first === -1 ? args : args.slice(0, first), PIP_VALUED, (f, v) => {
    if (f === '--from' || f === '--spec') from = v;
  });
  const name = from ?? (first === -1 ? undefined : args[first]);
  return name === undefined ? [] : specs('pypi', [name], (n) => pypiSpec(n), ctx);
}

const CARGO_GLOBAL_VALUED = set('--config -Z --color -C');
const CARGO_VALUED = set('--features -F --rename -p --package --target --manifest-path --branch --tag --rev --version --vers --root --bin --example --profile -j --jobs --target-dir --lockfile-path --config --color');
function cargo(w: string[], ctx: Context): Requested[] | null {
  let i = 1;
  while (i < w.length && ((w[i] as string).startsWith('-') || (w[i] as string).startsWith('+'))) i += CARGO_GLOBAL_VALUED.has(w[i] as string) ? 2 : 1;
  const sub = w[i];
  if (sub !== 'add' && sub !== 'install') return null;
  let version: string | undefined;
  let elsewhere: string | undefined;
  const names = positionals(w.slice(i + 1), new Set([...CARGO_VALUED, '--git', '--path', '--registry', '--index']), (f, v) => {
    if (f === '--version' || f === '--vers') version = v;
    else if (f === '--git' || f === '--path' || f === '--registry' || f === '--index') elsewhere = `${f} ${v}`;
  });
  if (elsewhere !== undefined) {
    const why = elsewhere.startsWith('--path') ? 'a local path' : elsewhere.startsWith('--git') ? 'a git repository' : 'another registry';
    return (names.length > 0 ? names : [elsewhere]).map((n) => ({ kind: 'unchecked', ecosystem: 'crates', spec: n, why, remote: !why.startsWith('a local') }));
  }
  return specs('crates', names, (n) => cratesSpec(n, version), ctx);
}

const GO_VALUED = set('-modfile -C -o -tags -ldflags -gcflags -p -mod');
function go(w: string[], ctx: Context): Requested[] | null {
  const sub = w[1];
  if (sub !== 'get' && sub !== 'install') return null;
  const names = positionals(w.slice(2), GO_VALUED).filter((n) => sub === 'get' || n.includes('@'));
  return specs('go', names, goSpec, ctx);
}

function specs(ecosystem: Ecosystem, names: string[], read: (n: string) => Requested | null, ctx: Context): Requested[] {
  if (names.length === 0 && ctx.fromInput) return [{ kind: 'unchecked', ecosystem, spec: '(from standard input)', why: 'its names come from standard input', remote: true }];
  return names.map(read).filter((r): r is Requested => r !== null);
}

function installsOf(words: string[], depth: number): Requested[] {
  const ctx: Context = { vars: {}, fromInput: false };
  const w = unwrap(words, ctx);
  const head = w[0];
  if (head === undefined) return [];
  const tool = basename(head);
  if (SHELLS.has(tool)) {
    const c = w.indexOf('-c');
    return c !== -1 && w[c + 1] !== undefined && depth < 3 ? findInstalls(w[c + 1] as string, depth + 1) : [];
  }
  if (['npm', 'npx', 'pnpm', 'pnpx', 'yarn', 'bun', 'bunx'].includes(tool)) return npmFamily(tool, w, ctx) ?? [];
  if (/^pip(3(\.\d+)?)?$/.test(tool)) return pipCommand(w.slice(1), ctx) ?? [];
  if (/^(python(3(\.\d+)?)?|py)$/.test(tool)) return python(w, ctx) ?? [];
  if (tool === 'uv') return uv(w, ctx) ?? [];
  if (tool === 'uvx') return runner(w.slice(1), ctx);
  if (tool === 'pipx') return w[1] === 'install' ? pipLike(w.slice(2), ctx) : w[1] === 'run' ? runner(w.slice(2), ctx) : [];
  if (tool === 'cargo') return cargo(w, ctx) ?? [];
  if (tool === 'go') return go(w, ctx) ?? [];
  return [];
}

/** The packages a shell line would install, in order, each once. */
export function findInstalls(line: string, depth = 0): Requested[] {
  const seen = new Set<string>();
  const out: Requested[] = [];
  for (const words of simpleCommands(line)) {
    for (const r of installsOf(words, depth)) {
      const key = `${r.ecosystem}\0${r.spec}\0${r.kind === 'registry' ? (r.registry ?? '') : ''}`;
      if (!seen.has(key)) {
        seen.add(key);
        out.push(r);
      }
    }
  }
  return out;
}
