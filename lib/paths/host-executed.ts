// Files in the working tree that your own tools execute without it showing in
// `git status` or `git diff` (they are ignored, or generated): a run that made
// or changed one has them removed (caches, which their tool makes again) or
// moved aside, and named (lib/git/nested-repo-guard.ts). Each entry comes from
// what the tool itself loads:
// - Python's byte-code caches (`__pycache__/*.pyc`, a `.pyc` beside its
//   source): the import system runs the cache instead of the source when the
//   source's recorded time and size match (PEP 3147, PEP 552), which the agent
//   sets as it likes. Removed: Python writes them again.
// - A virtual environment's start-up files: `.pth` files and `sitecustomize`
//   / `usercustomize` in `site-packages`, which the `site` module runs at every
//   start of its Python; and its `bin/` (a folder beside `pyvenv.cfg`), put on
//   PATH by `activate`.
// - `node_modules/.bin`: what `npm run`, `npx` and `yarn run` find by name.
// - The files your `.envrc` sources (`source_env`, `source_env_if_exists`,
//   `dotenv`, `dotenv_if_exists`, `source`, `.`): direnv runs them on your next
//   `cd`, and asks for no new `direnv allow` when only they changed.
// A profile keeps the run's changes under the folders it names in
// `[filesystem] keep_executables` (weaker: an install the agent made stays as
// it made it).
import { statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { readBackText } from '../readback/file.js';

export type ExecutedKind = 'bytecode' | 'startup' | 'bin' | 'sourced' | 'discovered';

export interface Executed {
  kind: ExecutedKind;
  /** Which tool runs it, and when. */
  why: string;
}

const WHY: Record<ExecutedKind, string> = {
  bytecode: 'a Python byte-code cache, which Python runs instead of its source when the recorded time and size match',
  startup: "a start-up file of a Python environment, which its Python runs at every start",
  bin: 'a command your tools find by name (an environment\'s bin, node_modules/.bin)',
  discovered: 'a file a tool finds and runs by its name (a test runner\'s conftest.py, test modules and test files, a Python extension module taken before its source), where git does not show it',
  sourced: 'a file your .envrc sources, which direnv runs on your next cd there without asking',
};

/** The files `.envrc` in `root` sources, relative to `root` (direnv's own functions, and sh's source and dot). */
export function sourcedByEnvrc(root: string): Set<string> {
  const text = readBackText(join(root, '.envrc'), 1 << 20);
  const out = new Set<string>();
  if (text === null) return out;
  // Each command of each line (found in review: `[ -f x ] && source_env x` and `source_env_if_exists "$PWD/x"` were passed
  // by), after a shell keyword that starts one.
  for (const raw of text.split('\n')) {
    for (const part of raw.replace(/(^|\s)#.*$/, '').split(/;|&&|\|\||\|/)) {
      const cmd = part.trim().replace(/^(?:(?:then|else|do|if|while|until|\{|\(|!)\s+)+/, '');
      const m = /^(?:(?:builtin|command)\s+)?(source_env_if_exists|source_env|dotenv_if_exists|dotenv|source|\.|PATH_add|path_add)(?:\s+(.*))?$/.exec(cmd);
      if (!m) continue;
      const words = (m[2] ?? '').trim().split(/\s+/).filter(Boolean);
      // PATH_add takes any number of folders, path_add a variable's name and then folders (found in review: the second
      // folder of PATH_add bin tools, and PYTHONPATH's, were passed by); the others one file, the rest its arguments.
      const folders = m[1] === 'PATH_add' ? words : m[1] === 'path_add' ? words.slice(1) : null;
      // dotenv with no argument loads .env.
      for (let arg of folders ?? [words[0] ?? (m[1]?.startsWith('dotenv') ? '.env' : '')]) {
        // The working folder however it is written ("$PWD"/x, ${PWD}/x, $(pwd)/x), quotes removed.
        arg = arg.replace(/^(["'])(.*)\1$/, '$2').replace(/^(["']?)(?:\$PWD|\$\{PWD\}|\$\(pwd\))\1\//, '').replace(/["']/g, '');
        if (arg.startsWith(`${root}/`)) arg = arg.slice(root.length + 1);
        if (arg === '' || arg.includes('$') || arg.startsWith('/')) continue;
        const rel = posix.normalize(arg).replace(/\/$/, '');
        if (rel === '.') continue;
        // A folder put on a search path: what is in it is found by name (marked by a trailing slash).
        out.add(folders !== null ? `${rel}/` : rel);
      }
    }
  }
  return out;
}

/**
 * A file a tool finds and runs by its name alone (found in review, rounds 16
 * and 17): pytest's conftest.py and test modules, unittest's `test*.py`; Node's
 * `--test` defaults (`*.test.js`, `*-test.js`, `*_test.js`, `test-*.js`,
 * `test.js`, anything under a `test/` folder), Jest's `__tests__/` and
 * Vitest's `*.spec.ts` and kin; and a Python extension module (`x.so`,
 * `x.cpython-311-….so`), which the import system takes before `x.py` beside it.
 */
function discoveredByName(relative: string): boolean {
  const name = relative.slice(relative.lastIndexOf('/') + 1);
  if (/^(?:conftest|test[^/]*|[^/]*_test)\.py$/.test(name)) return true;
  if (/^[^/]+\.so$/.test(name)) return true;
  if (/^(?:test|test-[^/]+|[^/]+[._-]test|[^/]+\.spec)\.[cm]?[jt]sx?$/.test(name)) return true;
  // Jest's ?(*.)+(spec|test).[jt]s?(x) (found in review: spec.js, a.spectest.js); Go's x_test.go, which go test ./...
  // builds and runs in any folder it walks; a package's __init__.py, which unittest's discovery imports on its way.
  if (/^(?:[^/]*\.)?(?:spec|test)+\.[cm]?[jt]sx?$/.test(name) || /^[^/]+_test\.go$/.test(name) || name === '__init__.py') return true;
  // (Round 21) Go builds every .go file of a package it tests or builds; cargo runs build.rs and builds tests/, examples/
  // and benches/; bun's *_spec.*, RSpec's *_spec.rb, minitest's *_test.rb.
  if (/^[^/]+\.go$/.test(name) || name === 'build.rs' || /(?:^|\/)(?:tests|examples|benches)\/[^/]+\.rs$/.test(relative)) return true;
  if (/^[^/]+_spec\.(?:[cm]?[jt]sx?|rb)$/.test(name) || /^[^/]+_test\.rb$/.test(name)) return true;
  return /(?:^|\/)(?:test|tests|__tests__)\/(?:[^/]+\/)*[^/]+\.[cm]?[jt]sx?$/.test(relative);
}

/** What every kind of executedKind needs but 'sourced': a superset, so that passing on a miss changes no answer. */
const MAY_RUN = /\.(?:py[co]?|pth|cfg|so|go|rs|rb|[cm]?[jt]sx?)$|(?:^|\/)\.?bin\/[^/]+$/;

/**
 * What `relative` (a path in the tree, from its top) is of that class, or
 * null. `sourced`: what the top's .envrc sources; `isVenv(dir)`: whether the
 * folder is a virtual environment (holds pyvenv.cfg).
 */
export function executedKind(relative: string, sourced: Set<string>, isVenv: (dir: string) => boolean): Executed | null {
  // Called for every entry of the tree: a path none of the kinds below can match (each needs one of these endings or a
  // bin folder, or the .envrc to source something) is passed at once.
  if (sourced.size === 0 && !MAY_RUN.test(relative)) return null;
  const kind = ((): ExecutedKind | null => {
    if (/\.py[co]$/.test(relative)) return 'bytecode';
    if (/(?:^|\/)site-packages\/(?:[^/]+\.pth|sitecustomize\.py|usercustomize\.py)$/.test(relative)) return 'startup';
    // Its home names the Python whose standard library every start of the environment loads (found in review).
    if (/(?:^|\/)pyvenv\.cfg$/.test(relative)) return 'startup';
    if (/(?:^|\/)node_modules\/\.bin\/[^/]+$/.test(relative)) return 'bin';
    const bin = /^(?:(.+)\/)?bin\/[^/]+$/.exec(relative);
    if (bin && isVenv(bin[1] ?? '')) return 'bin';
    if (sourced.has(relative)) return 'sourced';
    if (sourced.has(`${relative.slice(0, relative.lastIndexOf('/') + 1)}`) && relative.includes('/')) return 'bin';
    // Found by a test runner's own search (found in review: a conftest.py in an ignored docs/_build ran at pytest); such a
    // file only counts where git ignores it (the check asks git), since git shows the others.
    if (!/(?:^|\/)(?:node_modules|site-packages)\//.test(relative) && discoveredByName(relative)) return 'discovered';
    return null;
  })();
  return kind === null ? null : { kind, why: WHY[kind] };
}

/** A cached check for pyvenv.cfg in folders under `root`. */
export function venvCheck(root: string): (dir: string) => boolean {
  const seen = new Map<string, boolean>();
  return (dir) => {
    let v = seen.get(dir);
    if (v === undefined) {
      // As Python finds it: beside the executable (bin/) or one folder up, links followed (found in review: a pyvenv.cfg
      // made a link, or moved into bin/, and the environment's files were no longer judged as its).
      v = ['pyvenv.cfg', join('bin', 'pyvenv.cfg')].some((f) => {
        try {
          return statSync(join(root, dir, f), { throwIfNoEntry: false })?.isFile() === true;
        } catch {
          return false;
        }
      });
      seen.set(dir, v);
    }
    return v;
  };
}
