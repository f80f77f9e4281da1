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

test("Codex is given each of the profile's MCP servers its line does not configure (-c mcp_servers.NAME.url, a TOML string), with its sandbox off, in one notice", () => {
  const mcp = { everything: 'https://mcp.test/mcp', gh: 'https://api.example.test/a"b\\c\u007f' };
  const r = agentArgv(['codex', 'exec', 'hi'], mcp);
  assert.deepEqual(r.command, ['codex', ...CODEX_SANDBOX_OFF, '-c', 'mcp_servers.everything.url="https://mcp.test/mcp"', '-c', 'mcp_servers.gh.url="https://api.example.test/a\\u0022b\\u005cc\\u007f"', 'exec', 'hi']);
  assert.deepEqual(r.note, { level: 'note', text: "Codex is given the profile's MCP servers (-c mcp_servers.NAME.url: everything, gh), their tools as the profile allows them; Codex's own sandbox is off inside stashbase's (-c sandbox_mode=\"danger-full-access\"): it cannot nest, and stashbase is the sandbox" });
  // A server the line configures itself (any key of it, spaced or not) is left to it; a whole mcp_servers table, all of them.
  assert.deepEqual(agentArgv(['codex', '--yolo', '-c', 'mcp_servers.gh.url = "https://other.test/"', 'exec'], mcp).command, ['codex', '-c', 'mcp_servers.everything.url="https://mcp.test/mcp"', '--yolo', '-c', 'mcp_servers.gh.url = "https://other.test/"', 'exec']);
  assert.deepEqual(agentArgv(['codex', '--yolo', '--config=mcp_servers={}', 'exec'], mcp), { command: ['codex', '--yolo', '--config=mcp_servers={}', 'exec'], note: null });
  // A quoted key is the same key (found in review).
  assert.deepEqual(agentArgv(['codex', '--yolo', '-c', `mcp_servers."gh".command=["x"]`, '-c', `mcp_servers.'everything'.url="y"`, 'exec'], mcp).note, null);
  // After "--" a word is the prompt's.
  assert.deepEqual(agentArgv(['codex', '--yolo', 'exec', '--', '-c', 'mcp_servers.gh.url="x"'], { gh: 'https://g.test/' }).command, ['codex', '-c', 'mcp_servers.gh.url="https://g.test/"', '--yolo', 'exec', '--', '-c', 'mcp_servers.gh.url="x"']);
});
