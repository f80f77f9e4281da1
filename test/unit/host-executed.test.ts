// What host tools execute unseen (lib/paths/host-executed.ts): the class, member by member.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { executedKind, sourcedByEnvrc, venvCheck } from '../../lib/paths/host-executed.js';
import { isToolConfigBelow, TOOL_CONFIGS } from '../../lib/paths/tool-configs.js';
import { tempHome, writeFile } from '../helpers.js';

const t = tempHome();
after(() => t.cleanup());

test('the files .envrc sources, by direnv and by sh; dotenv alone is .env; nothing absolute or expanded', () => {
  writeFile(join(t.dir, 'r', '.envrc'), ['source_env_if_exists .envrc.local', 'dotenv', 'dotenv_if_exists "config/.env.dev"', '. ./scripts/env.sh', 'source_env ../up # outside', 'source $HOME/x', 'source /etc/profile', 'export A=1'].join('\n'));
  assert.deepEqual([...sourcedByEnvrc(join(t.dir, 'r'))].sort(), ['../up', '.env', '.envrc.local', 'config/.env.dev', 'scripts/env.sh']);
});

test('each kind, and what is not of the class', () => {
  writeFile(join(t.dir, 'v', 'env', 'pyvenv.cfg'), 'home = /usr/bin\n');
  const isVenv = venvCheck(join(t.dir, 'v'));
  const kind = (p: string) => executedKind(p, new Set(['.envrc.local']), isVenv)?.kind ?? null;
  assert.deepEqual(
    ['a/__pycache__/m.cpython-311.pyc', 'old.pyc', 'm.pyo', 'env/lib/python3.11/site-packages/x.pth', 'env/lib/python3.12/site-packages/usercustomize.py', 'env/bin/activate', 'node_modules/.bin/tsc', 'pkg/node_modules/.bin/vite', '.envrc.local'].map(kind),
    ['bytecode', 'bytecode', 'bytecode', 'startup', 'startup', 'bin', 'bin', 'bin', 'sourced'],
  );
  assert.deepEqual(['src/app.py', 'bin/tool', 'node_modules/x/index.js', 'env/lib/python3.11/site-packages/pkg/__init__.py', '.envrc.local.bak'].map(kind), [null, null, null, null, null]);
});

test('(round 16) .envrc: each command of a line, after a test or a keyword, and $PWD/ or the folder\'s own path; control: nothing else expanded', () => {
  const r = join(t.dir, 'r16');
  writeFile(join(r, '.envrc'), ['[ -f .envrc.local ] && source_env .envrc.local', 'source_env_if_exists "$PWD/.env.local"', `if true; then dotenv ${r}/conf/.env.x; fi`, 'test -f a || . ./b.sh', 'source_env $HOME/elsewhere', 'echo source_env not-a-command'].join('\n'));
  assert.deepEqual([...sourcedByEnvrc(r)].sort(), ['.env.local', '.envrc.local', 'b.sh', 'conf/.env.x']);
});

test('(round 16) a virtual environment is found as Python finds it: pyvenv.cfg a link, or in bin/; its pyvenv.cfg is a start-up file (its home names the standard library each start loads)', () => {
  const root = join(t.dir, 'v16');
  writeFile(join(root, 'linked', 'include', 'cfg'), 'home = /usr/bin\n');
  const { symlinkSync } = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
  symlinkSync('include/cfg', join(root, 'linked', 'pyvenv.cfg'));
  writeFile(join(root, 'inbin', 'bin', 'pyvenv.cfg'), 'home = /usr/bin\n');
  writeFile(join(root, 'none', 'bin', 'python'), '');
  const isVenv = venvCheck(root);
  assert.deepEqual(['linked', 'inbin', 'none'].map(isVenv), [true, true, false]);
  const kind = (p: string) => executedKind(p, new Set(), isVenv)?.kind ?? null;
  assert.deepEqual(['linked/bin/tool', 'inbin/bin/tool', 'none/bin/tool', '.venv/pyvenv.cfg', 'x/bin/pyvenv.cfg'].map(kind), ['bin', 'bin', null, 'startup', 'startup']);
});

test('(round 17) files found by their names alone: Node --test\'s defaults, Jest\'s __tests__, unittest\'s test*.py, a Python extension module; not inside node_modules or site-packages, not ordinary source; PATH_add\'s folder', () => {
  const kind = (p: string, sourced = new Set<string>()) => executedKind(p, sourced, () => false)?.kind ?? null;
  assert.deepEqual(['out/x-test.js', 'out/test-y.mjs', 'out/z_test.cjs', 'out/t/test.js', 'out/test/evil.js', 'a/__tests__/b.ts', 'out/tests.py', 'w.spec.tsx', 'util.so', 'm.cpython-311-x86_64-linux-gnu.so'].map((p) => kind(p)), Array(10).fill('discovered'));
  assert.deepEqual(['src/app.js', 'src/testing.txt', 'node_modules/x/test.js', 'env/lib/python3.11/site-packages/np/core.so', 'latest.js', 'src/contest.py'].map((p) => kind(p)), [null, null, null, null, null, null]);
  const r = join(t.dir, 'r17');
  writeFile(join(r, '.envrc'), ['PATH_add bin', '[ -f "$PWD"/local.env.sh ] && . "$PWD"/local.env.sh', 'source ./lib/../shared.env.sh'].join('\n'));
  const sourced = sourcedByEnvrc(r);
  assert.deepEqual([...sourced].sort(), ['bin/', 'local.env.sh', 'shared.env.sh']);
  assert.deepEqual(['bin/git', 'bin/sub/x', 'local.env.sh'].map((p) => kind(p, sourced)), ['bin', null, 'sourced']);
});

test('the quick passes over every entry of the tree change no answer: each kind found with no .envrc sourcing anything as with one, and every tool config in a subfolder, not in node_modules', () => {
  writeFile(join(t.dir, 'q', 'env', 'pyvenv.cfg'), 'home = /usr/bin\n');
  const isVenv = venvCheck(join(t.dir, 'q'));
  const members = ['a/__pycache__/m.cpython-311.pyc', 'old.pyc', 'm.pyo', 'env/lib/python3.11/site-packages/x.pth', 'env/lib/python3.12/site-packages/sitecustomize.py', 'env/pyvenv.cfg', 'env/bin/activate', 'env/bin/python3', 'node_modules/.bin/tsc', 'pkg/node_modules/.bin/vite', 'out/x-test.js', 'out/test-y.mjs', 'out/z_test.cjs', 'out/t/test.js', 'out/test/evil.js', 'a/__tests__/b.ts', 'out/tests.py', 'conftest.py', 'w.spec.tsx', 'util.so', 'm.cpython-311-x86_64-linux-gnu.so', 'x/test/deep/er.cts', 'build/x_test.go', 'out/spec.js', 'build/pkg/__init__.py', 'pkg/zz.go', 'crate/build.rs', 'crate/benches/b.rs', 'spec/a_spec.rb'];
  const quick = members.map((p) => executedKind(p, new Set(), isVenv)?.kind ?? null);
  assert.ok(quick.every((k) => k !== null), JSON.stringify(quick));
  // A set naming something else takes the whole way, past the quick pass.
  assert.deepEqual(quick, members.map((p) => executedKind(p, new Set(['elsewhere']), isVenv)?.kind ?? null));
  for (const name of TOOL_CONFIGS) {
    assert.equal(isToolConfigBelow(`pkg/${name}`), true, name);
    assert.equal(isToolConfigBelow(`a/b/${name}/x`), true, name);
    assert.equal(isToolConfigBelow(`node_modules/p/${name}`), false, name);
    if (!name.includes("/")) assert.equal(isToolConfigBelow(`pkg/x${name}`), false, name);
  }
});

test('(round 19) more of what tools find by name: Jest\'s +(spec|test) names, Go\'s _test.go, a package\'s __init__.py (unittest imports it on its way); every folder of PATH_add, path_add\'s after its variable; control: look-alike names are not', () => {
  const kind = (p: string, sourced = new Set<string>()) => executedKind(p, sourced, () => false)?.kind ?? null;
  assert.deepEqual(['out/spec.js', 'out/a.spectest.js', 'out/testspec.tsx', 'build/x_test.go', 'build/pkg/__init__.py'].map((p) => kind(p)), Array(5).fill('discovered'));
  assert.deepEqual(['src/spectacle.js', 'src/contest.goo', 'src/init.py', 'node_modules/p/x_test.go', 'src/lib.rs', 'src/build.rsx'].map((p) => kind(p)), [null, null, null, null, null, null]);
  // (Round 21) what Go, cargo, bun, RSpec and minitest take by name.
  assert.deepEqual(['pkg/zz.go', 'crate/build.rs', 'crate/tests/t.rs', 'crate/examples/e.rs', 'a/x_spec.ts', 'spec/x_spec.rb', 'test/x_test.rb'].map((p) => kind(p)), Array(7).fill('discovered'));
  const r = join(t.dir, 'r19');
  writeFile(join(r, '.envrc'), ['PATH_add bin tools', 'path_add PYTHONPATH pylib', 'source ./env.sh arg1 arg2'].join('\n'));
  const sourced = sourcedByEnvrc(r);
  assert.deepEqual([...sourced].sort(), ['bin/', 'env.sh', 'pylib/', 'tools/']);
  assert.deepEqual(['tools/git', 'pylib/json.py', 'arg1'].map((p) => kind(p, sourced)), ['bin', 'bin', null]);
});
