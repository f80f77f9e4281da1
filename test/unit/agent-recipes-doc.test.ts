// docs/agents.md promises that every recipe on it is run by the real-agent
// tests. This keeps the promise honest: each marked block is named in one of
// those test files (a recipe added to the page without a test fails here),
// each profile is TOML the profile loader accepts, and each command is an
// `agent run` with a profile.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { commandRecipe, recipe } from '../agent-recipes.js';
import { REPO, tempHome, writeFile } from '../helpers.js';
import { loadProfile } from '../../lib/profile/load.js';

const doc = readFileSync(join(REPO, 'docs', 'agents.md'), 'utf8');
const names = [...doc.matchAll(/<!-- recipe: ([a-z-]+) -->\n```(toml|sh)\n/g)].map((m) => ({ name: m[1] as string, kind: m[2] as string }));

test('every recipe on docs/agents.md is run by a real-agent test', () => {
  assert.ok(names.length >= 8, JSON.stringify(names));
  assert.equal(new Set(names.map((n) => n.name)).size, names.length, 'a recipe name is used twice');
  const tests = ['real-agents.test.ts', 'real-agents-docker.test.ts'].map((f) => readFileSync(join(REPO, 'test', 'integration', f), 'utf8')).join('\n');
  for (const { name } of names) assert.match(tests, new RegExp(`'${name}'`), `no test runs the recipe ${name}`);
});

test('the profiles load (with their source variables set), alone and with the docker block; the commands are agent runs with a profile', () => {
  const t = tempHome();
  try {
    const env = { ...t.env, ANTHROPIC_API_KEY: 'sk-ant-api03-x', OPENAI_API_KEY: 'sk-proj-x', CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-x' };
    for (const { name, kind } of names) {
      if (kind === 'sh') {
        const argv = commandRecipe(name);
        assert.deepEqual(argv.slice(0, 3), ['agent', 'run', '--profile'], name);
        assert.ok(argv.includes('--'), name);
        continue;
      }
      if (name === 'docker') continue;
      for (const [suffix, text] of [['', recipe(name)], ['-docker', `${recipe(name)}\n${recipe('docker')}`]] as const) {
        writeFile(join(t.sbHome, 'agents', `${name}${suffix}.toml`), text);
        const p = loadProfile({ name: `${name}${suffix}`, source: 'global', cwd: t.home, env }).profile;
        assert.equal(p.sandbox.backend, suffix ? 'docker' : 'native', name);
      }
    }
  } finally {
    t.cleanup();
  }
});
