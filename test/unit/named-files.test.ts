// What a hook's script or a git config value runs from files (lib/git/named-files.ts): the reader's cases, each
// from a review of round 33 (the names a run keeps read-only and the merge review names).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { commandNames, valueNames } from '../../lib/git/named-files.js';

const hook = (s: string) => commandNames(s).map((n) => n.replace(/\0hook\0/g, '$HOOKDIR'));

test('commands by their path, interpreters\' scripts, prefixes, computed tops, $0\'s folder, -c strings and $(…) are names', () => {
  const cases: Array<[string, string[]]> = [
    ['sh scripts/clean.sh', ['scripts/clean.sh']],
    ['exec ./scripts/check "$@"', ['./scripts/check']],
    ['exec "$(git rev-parse --show-toplevel)"/scripts/check.sh', ['scripts/check.sh']],
    ['`git rev-parse --show-toplevel`/y.sh', ['y.sh']],
    ['"$GIT_DIR"/../scripts/x.sh', ['../scripts/x.sh', 'scripts/x.sh']],
    ['exec "$(dirname "$0")/../check.sh"', ['$HOOKDIR/../check.sh']],
    ['(cd web && true)\n./scripts/check.sh', ['web/', './scripts/check.sh', 'web/./scripts/check.sh']],
    ['sh -c "cd scripts && ./check.sh"', ['scripts/', './check.sh', 'scripts/./check.sh']],
    ['bash -e scripts/e.sh', ['scripts/e.sh']],
    ['/usr/bin/env bash scripts/env.sh', ['scripts/env.sh']],
    ['timeout 60 ./x', ['./x']],
    ['echo README | xargs -r ./x', ['./x']],
    ['out=$(./scripts/inner.sh)', ['./scripts/inner.sh']],
    ['python3 -m tools.lint', ['tools/__init__.py', 'tools/lint.py', 'tools/lint/__main__.py', 'tools/lint/__init__.py']],
    // Round 33, fifth pass: the wrapper's quotes kept ($0's), the pre-commit framework's launcher, runners, shells' option clusters.
    ['exec "$(dirname "$0")/../scripts/pre-commit.sh" "$@"', ['$HOOKDIR/../scripts/pre-commit.sh']],
    ['. "$(dirname -- "$0")/_/husky.sh"\n./scripts/check.sh\necho "checks passed"', ['$HOOKDIR/_/husky.sh', './scripts/check.sh']],
    ['exec "$INSTALL_PYTHON" -mpre_commit "${ARGS[@]}"', ['pre_commit.py', 'pre_commit/__main__.py', 'pre_commit/__init__.py']],
    ['npx tsx scripts/x.ts', ['scripts/x.ts']],
    ['poetry run python ./x.py', ['./x.py']],
    ['npm exec -- ./x.js', ['./x.js']],
    ['bash -euo pipefail -c "./y.sh"', ['./y.sh']],
    ['sh -ec "./w.sh"', ['./w.sh']],
    ['flock /tmp/l ./x.sh', ['./x.sh']],
    ['node -r ./reg.js main.js', ['./reg.js', 'main.js']],
    ['node scripts/verify', ['scripts/verify', 'scripts/verify.js', 'scripts/verify.mjs', 'scripts/verify.cjs', 'scripts/verify/index.js']],
    ['perl -I lib x.pl', ['x.pl']],
  ];
  for (const [text, names] of cases) assert.deepEqual(hook(text), names, text);
});

test('what a command only reads, text in quotes, case patterns, comments and plain program names are not names', () => {
  for (const text of [
    'git diff --exit-code go.mod go.sum', 'grep -q x package.json', 'npm run build && git add dist/index.js', 'git commit -m release',
    'case "$f" in\n  src/api/types.ts) echo "x"; exit 1;;\nesac', 'echo "Reminder: keep README.md short; docs/guide.md holds the rest"', 'echo "then run ./setup.sh"',
    '# sh old.sh', 'npm test', 'node -e "require(\'./x\')"',
    'bun test', 'bun run build', 'deno task check', 'sh -n ./deploy.sh', 'php -l src/index.php', 'node_modules/.bin/cz --hook', 'node "./node_modules/yorkie/src/runner.js"',
  ]) assert.deepEqual(hook(text), [], text);
});

test('a config value of one path is a name; a program, a branch or a URL is not; $0 means nothing there', () => {
  assert.deepEqual(valueNames('tools/attrs'), ['tools/attrs']);
  assert.deepEqual(valueNames('.gitmessage'), ['.gitmessage']);
  for (const v of ['main', 'status', 'gcloud.sh', 'git@github.com:o/r.git', 'https://x/y', 'log --oneline', '!npm test', 'exec "$(dirname "$0")/x"']) assert.deepEqual(valueNames(v), [], v);
  assert.deepEqual(valueNames('!cd tools && ./fmt.sh'), ['tools/', './fmt.sh', 'tools/./fmt.sh']);
});

test('(review, round 33) a hook of 256 KiB of blanks, newlines, quotes, parentheses or ten thousand cds is read at once (patterns over runs of blanks took minutes; each name given from every cd multiplied them)', { timeout: 20_000 }, () => {
  let cds = '';
  for (let i = 0; i < 10_000; i++) cds += `cd d${i}\n./y${i}\n`;
  const texts = ['inX' + '|inX'.repeat(65_000), ' '.repeat(256 * 1024) + 'x', ('\n' + ' '.repeat(50)).repeat(5000), '\n \t;'.repeat(65_000), ('\na' + ' | b'.repeat(20)).repeat(3000), '` '.repeat(130_000), '" '.repeat(130_000), '$('.repeat(60_000), cds.slice(0, 256 * 1024)];
  for (const t of texts) assert.ok(commandNames(t).length <= 9 * 30_000);
  assert.equal(commandNames(cds).filter((n) => n.endsWith('/y9999')).length, 9, 'a name from the top and from eight folders at most');
});

test("(review, round 34) how hooks find their scripts: bash's BASH_SOURCE, a folder made absolute (HERE=\"$(cd \"$(dirname \"$0\")\" && pwd)\"), a variable given once, a dispatcher's $(basename \"$0\"), git's --git-path hooks, a cd into a computed folder, a script given by an option (sed -f, make -f); control: what only reads stays out", () => {
  const H = '\0hook\0';
  const cases: Array<[string, string | undefined, string[]]> = [
    ['. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"', undefined, [`${H}/../lib.sh`]],
    ['HERE="$(cd "$(dirname "$0")" && pwd)"; . "$HERE/../lib.sh"', undefined, [`${H}/../lib.sh`]],
    ['h="$(git rev-parse --show-toplevel)/.githooks/pre-commit"; exec "$h"', undefined, ['.githooks/pre-commit']],
    ['exec "$(git rev-parse --show-toplevel)/.githooks/$(basename "$0")" "$@"', 'pre-commit', ['.githooks/pre-commit']],
    ['. "$(git rev-parse --git-path hooks)/../lib.sh"', undefined, [`${H}/../lib.sh`]],
    ['cd "$(git rev-parse --show-toplevel)/tools" && ./check.sh', undefined, ['tools/', './check.sh', 'tools/./check.sh']],
    ['TOOLS=tools; "$TOOLS/check.sh"', undefined, ['tools/check.sh']],
    ['sed -f scripts/strip.sed', undefined, ['scripts/strip.sed']],
    ['make --file=build/hooks.mk lint', undefined, ['build/hooks.mk']],
    ['git diff go.mod; cat README.md', undefined, []],
  ];
  for (const [text, hook, want] of cases) assert.deepEqual(commandNames(text, 0, hook), want, text);
});

test('(review, round 34) the new readings stay linear over 256 KiB of what would make them backtrack', { timeout: 20_000 }, () => {
  const N = 256 * 1024;
  for (const t of ['a='.repeat(N / 2), 'x="$('.repeat(N / 4), 'x=$((('.repeat(N / 6), `v=x ${'$v'.repeat(N / 2)}`, 'x="' + '$'.repeat(N), '$(cd "'.repeat(N / 7), '${BASH_SOURCE[0]}'.repeat(N / 17)]) {
    const t0 = Date.now();
    commandNames(t, 0, 'pre-commit');
    assert.ok(Date.now() - t0 < 3000, t.slice(0, 20));
  }
});

test('(review, round 34, of the third pass) a variable put where it is used within bounds (a 150 KB value used a thousand times: read, no string past V8\'s longest); a script on standard input names no file (python3 - "$T", sh -s); control: a value of a few characters is put in', () => {
  const big = `a=${'x/'.repeat(75_000)}; ${'$a '.repeat(1000)}`;
  assert.doesNotThrow(() => commandNames(big));
  assert.deepEqual(commandNames('T=.github/commit-template.txt; python3 - "$T" "$1" <<EOF\nprint(1)\nEOF'), []);
  assert.deepEqual(commandNames('sh -s -- tools/x.sh < tools/y'), []);
  assert.deepEqual(commandNames('S=tools/x.sh; sh "$S"'), ['tools/x.sh']);
});

test('(review, round 34, of the third pass) a variable given more than one value names each (the second was the agent\'s to make); lefthook\'s run in TOML, JSON and a YAML block, in .config too', async () => {
  assert.deepEqual(commandNames('LINT=scripts/lint.sh; if [ -f scripts/lint.local.sh ]; then LINT=scripts/lint.local.sh; fi; sh "$LINT"').sort(), ['scripts/lint.local.sh', 'scripts/lint.sh']);
  const { mkdtempSync, mkdirSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { frameworkCommands } = await import('../../lib/git/named-files.js');
  const top = mkdtempSync(join(tmpdir(), 'fw-'));
  try {
    mkdirSync(join(top, '.config'));
    writeFileSync(join(top, 'lefthook.toml'), '[pre-commit.commands.a]\nrun = "sh tools/a.sh"\n');
    writeFileSync(join(top, 'lefthook.json'), '{"pre-push": {"commands": {"b": {"run": "sh tools/b.sh", "glob": "*"}}}}\n{\n  "run": "sh tools/c.sh",\n}\n');
    writeFileSync(join(top, '.config', 'lefthook.yml'), 'pre-commit:\n  commands:\n    d:\n      run: |\n        sh tools/d.sh\n        sh tools/e.sh\n    f:\n      glob: "*"\n');
    assert.deepEqual(frameworkCommands(top).map((c) => c.command).sort(), ['sh tools/a.sh', 'sh tools/c.sh', 'sh tools/d.sh', 'sh tools/e.sh']);
  } finally {
    rmSync(top, { recursive: true, force: true });
  }
});
