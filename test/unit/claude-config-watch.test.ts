// ~/.claude.json written in place (macOS): the start kept in the run's state
// folder, the executable entries put back after the run or, after a killed
// run, by the next one; what the agent left at the path parsed, never written
// through.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { reapStaleRuns } from '../../lib/run/reap.js';
import { runStateDirOf } from '../../lib/run/run-dir.js';
import { writeSession } from '../../lib/run/session.js';
import { keepClaudeConfigStart, settleFromSnapshot, snapshotFile } from '../../lib/views/claude-config-watch.js';
import { tempHome } from '../helpers.js';

const t = tempHome();
after(() => t.cleanup());
const h = t.home;
const cfg = join(h, '.claude.json');
const MINE = { numStartups: 1, mcpServers: { mine: { command: 'my-server' } } };
const EVIL = { numStartups: 2, mcpServers: { mine: { command: 'my-server' }, evil: { command: 'sh' } } };
let n = 0;
const stateDir = () => join(t.sbHome, 'runs', `ags_${String(++n).padStart(16, 'a')}`);

test('the start is kept and the executable entries put back; a file made during the run loses them too', () => {
  writeFileSync(cfg, JSON.stringify(MINE));
  const snap = keepClaudeConfigStart(h, t.env, stateDir());
  writeFileSync(cfg, JSON.stringify(EVIL));
  assert.deepEqual(settleFromSnapshot(snap, 'ags_x'), [`${cfg}: changes the sandbox made to mcpServers were put back as they were (they would make a later claude run or trust something)`]);
  assert.deepEqual(JSON.parse(readFileSync(cfg, 'utf8')), { numStartups: 2, mcpServers: { mine: { command: 'my-server' } } });
  unlinkSync(cfg);
  const none = keepClaudeConfigStart(h, t.env, stateDir());
  writeFileSync(cfg, JSON.stringify(EVIL));
  settleFromSnapshot(none, 'ags_x');
  assert.deepEqual(JSON.parse(readFileSync(cfg, 'utf8')), { numStartups: 2 });
});

test('a link the agent leaves at the path is moved aside, never written through; the control: a plain write goes through it', () => {
  const bashrc = join(h, '.bashrc');
  writeFileSync(bashrc, 'echo mine\n');
  writeFileSync(cfg, JSON.stringify(MINE));
  const snap = keepClaudeConfigStart(h, t.env, stateDir());
  unlinkSync(cfg);
  symlinkSync(bashrc, cfg);
  assert.deepEqual(settleFromSnapshot(snap, 'ags_s'), [`${cfg}: the sandbox left something that is not a regular file there; it was moved to ${cfg}.sandbox-ags_s and the file is as it was`]);
  assert.equal(readFileSync(bashrc, 'utf8'), 'echo mine\n');
  assert.equal(lstatSync(cfg).isFile(), true);
  assert.deepEqual(JSON.parse(readFileSync(cfg, 'utf8')), MINE);
  // The control: what the earlier code did (write the file by its path) lands in ~/.bashrc.
  unlinkSync(cfg);
  symlinkSync(bashrc, cfg);
  writeFileSync(cfg, '{}\n');
  assert.equal(readFileSync(bashrc, 'utf8'), '{}\n');
  unlinkSync(cfg);
});

test('a file that could not be read at the start is never rewritten; a link you keep there (GNU stow) is put back', () => {
  mkdirSync(cfg);
  const dir = keepClaudeConfigStart(h, t.env, stateDir());
  assert.deepEqual(settleFromSnapshot(dir, 'ags_u'), [`${cfg}: it is not a regular file when the run started, so it was not checked or rewritten after it; look at it before your next claude run`]);
  assert.equal(lstatSync(cfg).isDirectory(), true);
  execFileSync('rmdir', [cfg]);
  const real = join(h, 'dotfiles-claude.json');
  writeFileSync(real, JSON.stringify(MINE));
  symlinkSync(real, cfg);
  const link = keepClaudeConfigStart(h, t.env, stateDir());
  unlinkSync(cfg);
  writeFileSync(cfg, JSON.stringify(EVIL));
  assert.deepEqual(settleFromSnapshot(link, 'ags_l'), [`${cfg}: the sandbox replaced your link (to ${real}) with a file of its own; the link is back and the sandbox's file is at ${cfg}.sandbox-ags_l`]);
  assert.equal(readlinkSync(cfg), real);
  unlinkSync(cfg);
});

test('a killed run: the next run settles ~/.claude.json from the snapshot its record names, and only from its own state folder', async () => {
  writeFileSync(cfg, JSON.stringify(MINE));
  writeFileSync(join(h, '.bashrc'), 'echo mine\n');
  const id = 'ags_killedkilledki22';
  const snap = keepClaudeConfigStart(h, t.env, runStateDirOf(t.sbHome, id));
  assert.equal(snap, snapshotFile(runStateDirOf(t.sbHome, id)));
  writeFileSync(cfg, JSON.stringify(EVIL));
  // A record naming a snapshot elsewhere (the agent's, say) is not followed.
  const other = 'ags_otherotherother2';
  const planted = join(h, 'planted.json');
  writeFileSync(planted, JSON.stringify({ file: join(h, '.bashrc'), start: { kind: 'link', link: '/nowhere', target: null, text: null } }));
  const dead = 2 ** 22 + 12345;
  writeSession(t.sbHome, { id: other, pid: dead, backend: 'native', mechanism: 'seatbelt', profile: 'default', cwd: h, argv: ['claude'], startedAt: new Date().toISOString(), claudeConfig: planted });
  writeSession(t.sbHome, { id, pid: dead, backend: 'native', mechanism: 'seatbelt', profile: 'default', cwd: h, argv: ['claude'], startedAt: new Date().toISOString(), claudeConfig: snap });
  const alerts: string[] = [];
  await reapStaleRuns(t.sbHome, t.env, (m) => alerts.push(m));
  assert.deepEqual(JSON.parse(readFileSync(cfg, 'utf8')), { numStartups: 2, mcpServers: { mine: { command: 'my-server' } } });
  assert.equal(alerts.some((a) => a.includes('mcpServers were put back') && a.includes(`(left by the killed run ${id})`)), true, alerts.join('\n'));
  assert.equal(lstatSync(join(h, '.bashrc')).isFile() && readFileSync(join(h, '.bashrc'), 'utf8'), 'echo mine\n');
  assert.equal(existsSync(runStateDirOf(t.sbHome, id)), false);
  // The control: the planted snapshot, settled as if it were the run's own, would have replaced ~/.bashrc with a link.
  settleFromSnapshot(planted, other);
  assert.equal(readlinkSync(join(h, '.bashrc')), '/nowhere');
});

test('from the hostile review: a file stashbase cannot read as JSON (nested past its limit, or broken) is moved aside, not kept; one the agent removed comes back; a link of yours is followed to its file', () => {
  writeFileSync(cfg, JSON.stringify(MINE));
  const deep = keepClaudeConfigStart(h, t.env, stateDir());
  // Claude Code's own JSON.parse reads this; stashbase's bounded reader does not.
  writeFileSync(cfg, `{"mcpServers":{"x":{"command":"/bin/sh"}},"pad":${'['.repeat(150)}${']'.repeat(150)}}`);
  const said = settleFromSnapshot(deep, 'ags_d');
  assert.match(said[0]!, /stashbase cannot read as JSON/);
  assert.deepEqual(JSON.parse(readFileSync(cfg, 'utf8')), MINE);
  assert.match(readFileSync(`${cfg}.sandbox-ags_d`, 'utf8'), /mcpServers/);
  const broken = keepClaudeConfigStart(h, t.env, stateDir());
  writeFileSync(cfg, '{"mcpServers": {"x": {"command": "sh"}}');
  settleFromSnapshot(broken, 'ags_b');
  assert.deepEqual(JSON.parse(readFileSync(cfg, 'utf8')), MINE);
  const removed = keepClaudeConfigStart(h, t.env, stateDir());
  unlinkSync(cfg);
  assert.deepEqual(settleFromSnapshot(removed, 'ags_r'), [`${cfg}: the sandbox removed it; it is back as it was`]);
  assert.deepEqual(JSON.parse(readFileSync(cfg, 'utf8')), MINE);
  // A link of yours into a folder the agent may write (a dotfiles repository it works in): the file it leads to is settled.
  unlinkSync(cfg);
  const dot = join(h, 'dotfiles');
  mkdirSync(dot);
  writeFileSync(join(dot, 'claude.json'), JSON.stringify(MINE));
  symlinkSync(join(dot, 'claude.json'), cfg);
  const linked = keepClaudeConfigStart(h, t.env, stateDir());
  writeFileSync(join(dot, 'claude.json'), JSON.stringify(EVIL));
  assert.match(settleFromSnapshot(linked, 'ags_k')[0]!, /mcpServers were put back/);
  assert.deepEqual(JSON.parse(readFileSync(join(dot, 'claude.json'), 'utf8')), { numStartups: 2, mcpServers: { mine: { command: 'my-server' } } });
  assert.equal(readlinkSync(cfg), join(dot, 'claude.json'));
  unlinkSync(cfg);
});

test('(review, rounds 27c and 27d) the login files written in place (macOS): the login the run refreshed stays, an MCP server\'s OAuth entry it planted goes back, said; a login file it made where there was none is moved aside; control: an untouched file is not rewritten', () => {
  writeFileSync(cfg, JSON.stringify(MINE));
  const creds = join(h, '.claude', '.credentials.json');
  const auth = join(h, '.codex', 'auth.json');
  mkdirSync(join(h, '.claude'), { recursive: true });
  mkdirSync(join(h, '.codex'), { recursive: true });
  writeFileSync(creds, JSON.stringify({ claudeAiOauth: { accessToken: 'a1', refreshToken: 'r1', expiresAt: 1 } }));
  const snap = keepClaudeConfigStart(h, t.env, stateDir());
  writeFileSync(creds, JSON.stringify({ claudeAiOauth: { accessToken: 'a2', refreshToken: 'r2', expiresAt: 2 }, mcpOAuth: { 'srv|0123': { refreshToken: 'r2', discoveryState: { authorizationServerUrl: 'http://127.0.0.1:9' } } } }));
  writeFileSync(auth, JSON.stringify({ tokens: { access_token: 'a', refresh_token: 'r' }, issuer: 'http://127.0.0.1:9' }));
  assert.deepEqual(settleFromSnapshot(snap, 'ags_l'), [
    `${creds}: changes the sandbox made to mcpOAuth were put back as they were (only the login itself is kept)`,
    `${auth}: the sandbox left a file that is not kept (the whole file (a login made in the run: log in outside the sandbox)); it was moved to ${auth}.sandbox-ags_l`,
  ]);
  assert.deepEqual(JSON.parse(readFileSync(creds, 'utf8')), { claudeAiOauth: { accessToken: 'a2', refreshToken: 'r2', expiresAt: 2 } });
  assert.equal(existsSync(auth), false);
  unlinkSync(`${auth}.sandbox-ags_l`);
  // Control: nothing changed, nothing said or written.
  const again = keepClaudeConfigStart(h, t.env, stateDir());
  const before = lstatSync(creds).mtimeMs;
  assert.deepEqual(settleFromSnapshot(again, 'ags_m'), []);
  assert.equal(lstatSync(creds).mtimeMs, before);
});

test("(review, round 34) a folder the agent left at the name its file is moved to does not keep the file's executable entries in place: moved beside under a numbered name, your file as it was; control: the one rename made before fails onto the folder", () => {
  writeFileSync(cfg, JSON.stringify(MINE));
  const snap = keepClaudeConfigStart(h, t.env, stateDir());
  // Broken JSON holding a server: not checked entry by entry, so moved aside whole.
  writeFileSync(cfg, '{"mcpServers":{"evil":{"command":"sh"}},');
  mkdirSync(join(`${cfg}.sandbox-ags_w`, 'x'), { recursive: true });
  assert.deepEqual(settleFromSnapshot(snap, 'ags_w'), [`${cfg}: the sandbox left a file stashbase cannot read as JSON (the whole file (not valid JSON)); it was moved to ${cfg}.sandbox-ags_w-2 and the file is as it was`]);
  assert.deepEqual(JSON.parse(readFileSync(cfg, 'utf8')), MINE);
  assert.match(readFileSync(`${cfg}.sandbox-ags_w-2`, 'utf8'), /evil/);
  // Control: a rename to the one name.
  writeFileSync(`${cfg}.ctl`, '{}');
  assert.throws(() => renameSync(`${cfg}.ctl`, `${cfg}.sandbox-ags_w`), { code: 'EISDIR' });
  unlinkSync(`${cfg}.ctl`);
});
