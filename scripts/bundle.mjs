// Bundles the compiled CLI into one CommonJS file, dist/bundle/cli.cjs, that
// bin/stashbase.cjs loads. The sources and dist/ are ES modules; the shipped
// entry is bundled because start-up is part of the product (bench/startup):
// Node 20's ESM loader costs ~25 ms before any code runs and ~2 ms per module,
// where one CommonJS file costs neither. Lazy imports become lazy initialisers
// inside the file, and import() of a package a lazy require. The packages the
// CLI uses are bundled too (found in review: loaded from node_modules at run
// time, a package planted where Node looks first, in a folder an agent may
// write, ran on the host): the bundle requires nothing but Node's builtins and
// its own files beside it, and the build fails otherwise.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, readFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';
import { builtinModules } from 'node:module';
import { join, resolve } from 'node:path';

// Files of their own beside the CLI's bundle, required only when used: the
// secret scan (its commands, the host side of its hook, its rule set), the
// dependency check (its commands, the host side, the lists of popular names,
// 160 KB of text). Start-up
// of agent run and of every other command never reads or compiles them. They
// share the bundle's error classes (lib/errors.js), so `instanceof` in cli.ts
// still knows their errors: those imports become require("./cli.cjs"), the
// running bundle (bin/bundle-loader.cjs registers it in require's cache).
const APART = {
  'dist/commands/scan.js': 'scan',
  'dist/lib/hooks/host-scan.js': 'host-scan',
  'dist/lib/scan/secretlint-entry.js': 'secretlint',
  'dist/commands/agent-hooks-check.js': 'deps-check',
  'dist/commands/agent-hooks-install.js': 'deps-install',
  'dist/lib/hooks/host-agent-hooks.js': 'host-agent-hooks',
  'dist/lib/deps/popular-npm.js': 'popular-npm',
  'dist/lib/deps/popular-pypi.js': 'popular-pypi',
};
const ERRORS = resolve('dist/lib/errors.js');
function apart(self) {
  return {
    name: 'apart',
    setup(b) {
      b.onResolve({ filter: /^\.\.?\// }, (args) => {
        const target = resolve(args.resolveDir, args.path);
        for (const [file, name] of Object.entries(APART)) {
          if (target === resolve(file) && name !== self) return { path: `./${name}.cjs`, external: true };
        }
        if (self !== null && target === ERRORS) return { path: './cli.cjs', external: true };
        return undefined;
      });
    },
  };
}

rmSync('dist/bundle', { recursive: true, force: true });

const common = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  metafile: true,
  // import() of a builtin or a package becomes a lazy require: the bundle runs
  // as a vm.Script (bin/bundle-loader.cjs), which has no ES module loader. So
  // no dependency may be ESM-only.
  supported: { 'dynamic-import': false },
  outExtension: { '.js': '.cjs' },
  // import.meta.url is read to find files shipped beside the code.
  define: { 'import.meta.url': '__stashbase_url' },
  banner: { js: 'const __stashbase_url = require("node:url").pathToFileURL(__filename).href;' },
  logLevel: 'warning',
  plugins: [
    apart(null),
    {
      // The default image's Dockerfile travels inside the CLI itself.
      name: 'embed-dockerfile',
      setup(b) {
        b.onLoad({ filter: /[\\/]lib[\\/]docker[\\/]dockerfile-text\.js$/ }, () => ({
          contents: `export const SANDBOX_DOCKERFILE = ${JSON.stringify(readFileSync('Dockerfile.sandbox', 'utf8'))};`,
          loader: 'js',
        }));
      },
    },
  ],
};

/** Fails the build where a bundle would load anything at run time but a builtin or a file of its own beside it. */
function selfContained(result) {
  for (const [file, out] of Object.entries(result.metafile.outputs)) {
    const foreign = out.imports.filter((i) => i.external && !i.path.startsWith('node:') && !/^\.\/[\w-]+\.cjs$/.test(i.path) && !builtinModules.includes(i.path));
    if (foreign.length > 0) throw new Error(`${file} would load ${foreign.map((i) => i.path).join(', ')} at run time: bundle it`);
  }
}

selfContained(await build({ ...common, entryPoints: { cli: 'dist/cli.js' }, outdir: 'dist/bundle' }));
for (const name of Object.values(APART).filter((n) => n !== 'secretlint')) {
  const entry = Object.keys(APART).find((f) => APART[f] === name);
  selfContained(await build({ ...common, entryPoints: { [name]: entry }, outdir: 'dist/bundle', plugins: [apart(name), ...common.plugins.slice(1)] }));
}

// The rule set (secretlint's core and recommended preset, ES modules only) as
// one CommonJS file beside the CLI, so it loads on every Node 20 without an ES
// module loader. Three parts are replaced: secretlint's profiler (it records
// every file and rule in a PerformanceObserver that is never emptied: half the
// scan's time, and memory growing with the tree), the `debug` package (DEBUG=
// in the environment would print what is scanned), and node-forge, which the
// GCP rule loads only to open .p12 files, which the scan never hands it.
const ruleSetVersion = (name) => JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8')).version;
selfContained(await build({
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  supported: { 'dynamic-import': false },
  metafile: true,
  entryPoints: { secretlint: 'dist/lib/scan/secretlint-entry.js' },
  outdir: 'dist/bundle',
  outExtension: { '.js': '.cjs' },
  logLevel: 'warning',
  banner: {
    js: `// @secretlint/core ${ruleSetVersion('@secretlint/core')} and @secretlint/secretlint-rule-preset-recommend ${ruleSetVersion('@secretlint/secretlint-rule-preset-recommend')} (MIT, azu), bundled by scripts/bundle.mjs`,
  },
  plugins: [
    apart('secretlint'),
    {
      name: 'rule-set-stubs',
      setup(b) {
        b.onResolve({ filter: /^@secretlint\/profiler$/ }, () => ({ path: 'profiler', namespace: 'stub' }));
        b.onResolve({ filter: /^debug$/ }, () => ({ path: 'debug', namespace: 'stub' }));
        b.onResolve({ filter: /^\.\/index-[\w-]+\.js$/ }, (args) => (args.kind === 'dynamic-import' ? { path: 'forge', namespace: 'stub' } : undefined));
        b.onLoad({ filter: /.*/, namespace: 'stub' }, (args) => ({
          loader: 'js',
          contents: {
            profiler: 'export const secretLintProfiler = { mark() {} };',
            debug: 'export default function debug() { return () => {}; }',
            forge: 'throw new Error("node-forge is not part of stashbase\'s bundle");',
          }[args.path],
        }));
      },
    },
  ],
}));

// A fresh id per build, as the last line: bin/bundle-loader.cjs uses the code
// cache only when it was made from this very build.
appendFileSync('dist/bundle/cli.cjs', `// stashbase-build ${randomBytes(16).toString('hex')}\n`);
// Its output (a dry run's plan, written to descriptor 1 directly) goes nowhere.
execFileSync(process.execPath, ['scripts/code-cache.cjs'], { stdio: 'ignore' });
