import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentArgv, CODEX_SANDBOX_OFF } from '../../lib/run/agent-argv.js';

test("codex gets its own sandbox off unless its command line decides it; an explicit sandbox is kept and warned about; other agents are left alone", () => {
  assert.deepEqual(agentArgv(['codex', 'exec', 'hi']).command, ['codex', ...CODEX_SANDBOX_OFF, 'exec', 'hi']);
  assert.deepEqual(agentArgv(['/opt/bin/codex']).command, ['/opt/bin/codex', '-c', 'sandbox_mode="danger-full-access"']);
  assert.equal(agentArgv(['codex', 'exec']).note?.level, 'note');
  for (const off of [['--dangerously-bypass-approvals-and-sandbox'], ['--yolo'], ['-s', 'danger-full-access'], ['--sandbox=danger-full-access'], ['-c', 'sandbox_mode="danger-full-access"']]) {
    assert.deepEqual(agentArgv(['codex', 'exec', ...off, 'x']), { command: ['codex', 'exec', ...off, 'x'], note: null });
  }
  for (const off of [['--config=sandbox_mode="danger-full-access"'], ['-csandbox_mode=danger-full-access'], ['-s=danger-full-access']]) {
    assert.deepEqual(agentArgv(['codex', ...off, 'exec']).note, null, off.join(' '));
  }
  for (const on of [['--full-auto'], ['-s', 'workspace-write'], ['--sandbox', 'read-only'], ['--config', 'sandbox_mode = "workspace-write"'], ['--config=sandbox_mode="read-only"'], ['-csandbox_mode=workspace-write'], ['-s=read-only'], ['-c', 'sandbox_mode="workspace-write" # danger-full-access']]) {
    const r = agentArgv(['codex', ...on, 'exec']);
    assert.deepEqual(r.command, ['codex', ...on, 'exec']);
    assert.match(r.note?.text ?? '', /cannot start inside stashbase's/);
    assert.equal(r.note?.level, 'warn');
  }
  // After "--" the words are the prompt's, not flags.
  assert.deepEqual(agentArgv(['codex', 'exec', '--', '--yolo']).command, ['codex', ...CODEX_SANDBOX_OFF, 'exec', '--', '--yolo']);
  assert.deepEqual(agentArgv(['claude', '--sandbox']), { command: ['claude', '--sandbox'], note: null });
  assert.deepEqual(agentArgv(['sh', '-c', 'codex exec']), { command: ['sh', '-c', 'codex exec'], note: null });
});

test("Claude Code is given the profile's MCP servers by --mcp-config (said in a notice), unless its line names a config itself; other commands are not", () => {
  const mcp = { everything: 'https://mcp.test/mcp', gh: 'https://api.example.test/mcp/' };
  const r = agentArgv(['claude', '-p', 'hi'], mcp);
  assert.deepEqual(r.command, ['claude', '--mcp-config', '{"mcpServers":{"everything":{"type":"http","url":"https://mcp.test/mcp"},"gh":{"type":"http","url":"https://api.example.test/mcp/"}}}', '-p', 'hi']);
  assert.deepEqual(r.note, { level: 'note', text: "Claude Code is given the profile's MCP servers (--mcp-config: everything, gh), their tools as the profile allows them" });
  assert.deepEqual(agentArgv(['claude', '--mcp-config', 'mine.json'], mcp).command, ['claude', '--mcp-config', 'mine.json']);
  assert.deepEqual(agentArgv(['claude'], {}), { command: ['claude'], note: null });
  assert.deepEqual(agentArgv(['sh', '-c', 'claude'], mcp).command, ['sh', '-c', 'claude']);
});
