// Our hook merged into an agent's settings: everything else kept, installing
// twice changes nothing, uninstalling leaves the file as it was before.
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { hookCommandLine, withHook, withoutHook } from '../../lib/hooks/hook-config.js';
import { installOnHost } from '../../lib/hooks/agent-install.js';
import { tempHome, writeFile } from '../helpers.js';

const CMD = hookCommandLine(['/usr/bin/node', '/opt/stash base/bin/stashbase.cjs'], 'claude');

const EXISTING = {
  model: 'opus',
  permissions: { allow: ['Bash(npm test)'] },
  hooks: {
    PreToolUse: [
      { matcher: 'Bash', hooks: [{ type: 'command', command: '~/bin/audit-bash.sh' }] },
      { matcher: 'Write|Edit', hooks: [{ type: 'command', command: 'prettier --check' }] },
    ],
    Stop: [{ hooks: [{ type: 'command', command: 'notify-send done' }] }],
  },
};

test('the command line: quoted paths, the check, and a fallback that fails closed', () => {
  assert.equal(CMD, "/usr/bin/node '/opt/stash base/bin/stashbase.cjs' agent hooks deps check || { echo 'stashbase dependency check could not run (see above); the command was not run. Remove the hook with: stashbase agent hooks deps install claude --uninstall' >&2; exit 2; }");
  assert.match(hookCommandLine(['stashbase'], 'codex'), /^stashbase agent hooks deps check --agent codex \|\| /);
});

test('into a missing or empty file: one Bash matcher with our hook', () => {
  for (const text of [null, '', '  \n']) {
    const r = withHook(text, CMD, 'settings.json');
    assert.equal(r.changed, true);
    assert.deepEqual(JSON.parse(r.text), { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: CMD, timeout: 30 }] }] } });
  }
});

test('into existing settings: every other key, event, matcher and hook is kept; twice is once; uninstall restores', () => {
  const text = JSON.stringify(EXISTING, null, 2) + '\n';
  const once = withHook(text, CMD, 'settings.json');
  const v = JSON.parse(once.text) as typeof EXISTING & { hooks: { PreToolUse: Array<{ matcher: string; hooks: unknown[] }> } };
  assert.equal(v.model, 'opus');
  assert.deepEqual(v.permissions, EXISTING.permissions);
  assert.deepEqual(v.hooks.Stop, EXISTING.hooks.Stop);
  assert.deepEqual(v.hooks.PreToolUse.slice(0, 2), EXISTING.hooks.PreToolUse);
  assert.deepEqual(v.hooks.PreToolUse[2], { matcher: 'Bash', hooks: [{ type: 'command', command: CMD, timeout: 30 }] });
  const twice = withHook(once.text, CMD, 'settings.json');
  assert.deepEqual(twice, { text: once.text, changed: false });
  // A new path (stashbase moved) replaces ours in place, not beside it.
  const moved = withHook(once.text, hookCommandLine(['stashbase'], 'claude'), 'settings.json');
  assert.equal(moved.changed, true);
  assert.equal((JSON.parse(moved.text) as typeof v).hooks.PreToolUse.length, 3);
  const removed = withoutHook(moved.text, 'settings.json');
  assert.deepEqual(JSON.parse(removed.text), EXISTING);
  assert.deepEqual(withoutHook(removed.text, 'settings.json'), { text: removed.text, changed: false });
  // Uninstalling from a file that held only ours leaves no empty hooks behind.
  assert.deepEqual(JSON.parse(withoutHook(withHook('{"theme":"dark"}', CMD, 's').text, 's').text), { theme: 'dark' });
});

test('a file that is not settings is refused, not clobbered', () => {
  assert.throws(() => withHook('{ nope', CMD, '/h/.claude/settings.json'), /\/h\/\.claude\/settings\.json is not valid JSON .*nothing was changed/);
  assert.throws(() => withHook('[1]', CMD, 's'), /s is not a JSON object/);
  assert.throws(() => withHook('{"hooks": []}', CMD, 's'), /"hooks" is not an object/);
  assert.throws(() => withHook('{"hooks": {"PreToolUse": {}}}', CMD, 's'), /"hooks.PreToolUse" is not a list/);
});

const t = tempHome();
after(() => t.cleanup());

test('on disk: ~/.claude/settings.json or $CLAUDE_CONFIG_DIR, ~/.codex/hooks.json or $CODEX_HOME; the mode is kept', () => {
  const settings = join(t.home, '.claude', 'settings.json');
  writeFile(settings, JSON.stringify(EXISTING));
  chmodSync(settings, 0o640);
  const r = installOnHost('claude', t.env, false);
  assert.equal(r.where, settings);
  assert.equal(r.changed, true);
  assert.equal(statSync(settings).mode & 0o777, 0o640);
  assert.equal(installOnHost('claude', t.env, false).changed, false);
  assert.equal(installOnHost('claude', t.env, true).changed, true);
  assert.deepEqual(JSON.parse(readFileSync(settings, 'utf8')), EXISTING);
  const configDir = join(t.dir, 'cfg');
  assert.equal(installOnHost('claude', { ...t.env, CLAUDE_CONFIG_DIR: configDir }, false).where, join(configDir, 'settings.json'));
  const codex = installOnHost('codex', t.env, false);
  assert.equal(codex.where, join(t.home, '.codex', 'hooks.json'));
  assert.match(codex.command ?? '', / agent hooks deps check --agent codex \|\| /);
  assert.equal(installOnHost('codex', { ...t.env, CODEX_HOME: join(t.dir, 'cx') }, false).where, join(t.dir, 'cx', 'hooks.json'));
  writeFileSync(settings, '{ broken');
  assert.throws(() => installOnHost('claude', t.env, false), /not valid JSON/);
  assert.equal(readFileSync(settings, 'utf8'), '{ broken');
});
