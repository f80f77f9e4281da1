// Views (lib/views/): Claude Code's config merge, and a view built, changed as
// an agent would change it, and settled, on real folders (no sandbox needed).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { claudeView, codexView } from '../../lib/views/agent-views.js';
import { mergeClaudeConfig, revertClaudeConfig } from '../../lib/views/claude-config.js';
import { gitLayout, gitViewSpec } from '../../lib/views/git-view.js';
import { materializeView } from '../../lib/views/materialize.js';
import { settleView } from '../../lib/views/settle.js';
import { tempHome, writeFile } from '../helpers.js';

const t = tempHome();
after(() => t.cleanup());

test('Claude Code config: state carried, executable and trust entries left behind, your concurrent changes kept', () => {
  const start = JSON.stringify({ numStartups: 1, theme: 'dark', projects: { '/p': { lastSessionId: 'a', allowedTools: [] } } });
  const agent = JSON.stringify({
    numStartups: 2, theme: 'dark', oauthAccount: { emailAddress: 'me@x' },
    mcpServers: { evil: { command: 'sh', args: ['-c', 'touch /tmp/pwn'] } },
    awsAuthRefresh: 'touch /tmp/pwn', bypassPermissionsModeAccepted: true,
    someNewFeature: { type: 'stdio', command: 'sh' },
    projects: { '/p': { lastSessionId: 'b', allowedTools: ['Bash(*)'], hasTrustDialogAccepted: true }, '/q': { mcpServers: { x: { url: 'http://e' } }, lastCost: 1 } },
  });
  const current = JSON.stringify({ numStartups: 1, theme: 'light', projects: { '/p': { lastSessionId: 'a', allowedTools: [] } } });
  const r = mergeClaudeConfig(start, agent, current);
  assert.deepEqual(JSON.parse(r.text!), {
    numStartups: 2, theme: 'light', oauthAccount: { emailAddress: 'me@x' },
    projects: { '/p': { lastSessionId: 'b', allowedTools: [] }, '/q': { lastCost: 1 } },
  });
  assert.deepEqual(r.left, [
    'projects["/p"].allowedTools', 'projects["/p"].hasTrustDialogAccepted', 'projects["/q"].mcpServers',
    'mcpServers', 'awsAuthRefresh', 'bypassPermissionsModeAccepted', 'someNewFeature',
  ]);
  assert.deepEqual(mergeClaudeConfig(start, start, current), { text: null, left: [] });
  assert.deepEqual(mergeClaudeConfig(start, '{not json', current), { text: null, left: ['the whole file (not valid JSON)'] });
  assert.equal(JSON.parse(mergeClaudeConfig(null, '{"userID":"u"}', null).text!).userID, 'u');
});

test('Claude Code config written in place (macOS): the executable entries put back, the rest of the changes kept', () => {
  const start = JSON.stringify({ numStartups: 1, mcpServers: { mine: { command: 'my-server' } } });
  const now = JSON.stringify({ numStartups: 2, mcpServers: { mine: { command: 'my-server' }, evil: { command: 'sh' } } });
  const r = revertClaudeConfig(start, now);
  assert.deepEqual(JSON.parse(r.text!), { numStartups: 2, mcpServers: { mine: { command: 'my-server' } } });
  assert.deepEqual(r.left, ['mcpServers']);
  assert.deepEqual(revertClaudeConfig(start, null), { text: null, left: [] });
});

test('git view: a commit carried back, git config and a planted hooks folder left behind, a file changed on both sides kept as yours', () => {
  // Two real indexes, before and after a `git add`.
  const scratch = join(t.dir, 'scratch');
  mkdirSync(scratch);
  const git = (...a: string[]) => spawnSync('git', ['-C', scratch, ...a]);
  git('init', '-q');
  writeFileSync(join(scratch, 'a'), 'a\n');
  git('add', 'a');
  const index1 = readFileSync(join(scratch, '.git', 'index'));
  writeFileSync(join(scratch, 'b'), 'b\n');
  git('add', 'b');
  const index2 = readFileSync(join(scratch, '.git', 'index'));
  const g = join(t.dir, 'repo', '.git');
  for (const d of ['objects', 'refs/heads', 'logs']) mkdirSync(join(g, d), { recursive: true });
  writeFile(join(g, 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(g, 'index'), index1);
  writeFile(join(g, 'config'), '[core]\n');
  writeFile(join(g, 'ORIG_HEAD'), 'abc\n');
  writeFile(join(g, 'COMMIT_EDITMSG'), 'old\n');
  const spec = gitViewSpec(g, 'git', '.git');
  assert.deepEqual([spec.live, spec.readOnly, spec.copies], [['logs', 'objects', 'refs'], [], ['COMMIT_EDITMSG', 'HEAD', 'ORIG_HEAD', 'config', 'index']]);
  const dir = join(t.dir, 'run', 'views', 'git');
  mkdirSync(join(t.dir, 'run', 'views'), { recursive: true });
  materializeView(spec, dir);
  // The agent: a commit (index and COMMIT_EDITMSG rewritten by rename, as git does), git config, a hooks folder, ORIG_HEAD removed.
  writeFileSync(join(dir, 'index.lock'), index2);
  renameSync(join(dir, 'index.lock'), join(dir, 'index'));
  writeFileSync(join(dir, 'COMMIT_EDITMSG'), 'agent\n');
  writeFileSync(join(dir, 'config'), '[core]\n\tfsmonitor = touch /tmp/pwn\n');
  mkdirSync(join(dir, 'hooks'));
  writeFileSync(join(dir, 'hooks', 'pre-commit'), 'touch /tmp/pwn\n');
  writeFileSync(join(dir, 'MERGE_HEAD'), 'def\n');
  writeFileSync(join(dir, 'gc.log'), 'x');
  renameSync(join(dir, 'ORIG_HEAD'), join(dir, 'gone'));
  // You, meanwhile: a commit message of your own.
  writeFileSync(join(g, 'COMMIT_EDITMSG'), 'yours\n');
  const notes = settleView(`${dir}.json`);
  assert.deepEqual(
    [readFileSync(join(g, 'index')).equals(index2), readFileSync(join(g, 'config'), 'utf8'), existsSync(join(g, 'hooks')), readFileSync(join(g, 'MERGE_HEAD'), 'utf8'), existsSync(join(g, 'ORIG_HEAD')), readFileSync(join(g, 'COMMIT_EDITMSG'), 'utf8')],
    [true, '[core]\n', false, 'def\n', false, 'yours\n'],
  );
  assert.equal(existsSync(join(g, 'index.lock')), false);
  assert.deepEqual(notes, [
    '.git/COMMIT_EDITMSG changed during the run both on your side and in the sandbox: yours is kept, the sandbox\'s is not carried back',
    `.git: what the sandbox did to config (changed), gone (new), hooks (new) stays in the sandbox (not carried back to ${g})`,
  ]);
});

test('a linked worktree: the admin folder and the common directory are both views, the pointer file stays as it is', () => {
  const main = join(t.dir, 'wtmain', '.git');
  const admin = join(main, 'worktrees', 'w1');
  mkdirSync(join(main, 'objects'), { recursive: true });
  mkdirSync(admin, { recursive: true });
  writeFile(join(admin, 'commondir'), '../..\n');
  writeFile(join(admin, 'HEAD'), 'ref: refs/heads/w1\n');
  writeFile(join(t.dir, 'wt', '.git'), `gitdir: ${admin}\n`);
  const layout = gitLayout(join(t.dir, 'wt'));
  assert.equal(layout.pointer, join(t.dir, 'wt', '.git'));
  assert.deepEqual(layout.views.map((v) => [v.id, v.at, v.copies]), [['git', main, []], ['git-worktree', admin, ['HEAD', 'commondir']]]);
  assert.equal('packed-refs' in layout.views[1]!.merge, false);
});

test("the agents' views: live state, what is carried back, and the rest read-only or left behind", () => {
  const home = join(t.dir, 'agents-home');
  for (const d of ['.claude/projects', '.claude/commands', '.claude/shell-snapshots', '.codex/sessions', '.codex/rules', '.codex/thread-writer-locks']) mkdirSync(join(home, d), { recursive: true });
  for (const f of ['.claude/settings.json', '.claude/.credentials.json', '.codex/config.toml', '.codex/auth.json', '.claude.json']) writeFile(join(home, f), '{}');
  const claude = claudeView(home, {});
  assert.deepEqual([claude.spec.live, claude.spec.readOnly, claude.spec.empty, claude.spec.copies], [['projects'], ['commands'], ['shell-snapshots'], ['.claude.json', '.credentials.json', 'settings.json']]);
  assert.deepEqual(claude.env, { CLAUDE_CONFIG_DIR: join(home, '.claude') });
  assert.equal(claude.spec.hostPaths['.claude.json'], join(home, '.claude.json'));
  const own = claudeView(home, { CLAUDE_CONFIG_DIR: join(home, 'cc') });
  assert.deepEqual([own.spec.at, own.env, own.spec.hostPaths], [join(home, 'cc'), {}, {}]);
  const codex = codexView(home, {});
  assert.deepEqual([codex.spec.live, codex.spec.readOnly, codex.spec.copies], [['sessions'], ['rules'], ['auth.json', 'config.toml']]);
  // The lock folder a codex run outside the sandbox leaves: read-only, the sandbox's codex could not start a thread.
  assert.deepEqual(codex.spec.empty, ['thread-writer-locks']);
  const relative = codexView(home, { CODEX_HOME: 'rel' });
  assert.equal(relative.spec.at, join(home, '.codex'), 'a relative CODEX_HOME is not used');
});
