// The real Claude Code and Codex on the Docker backend, with the recipes of
// docs/agents.md plus its `docker` block: full turns in the agents image
// (test/agents-image.mjs: the default image's Dockerfile with both agents from
// npm, built by test/run.mjs), as your uid (root here, so Claude Code's
// --dangerously-skip-permissions needs the IS_SANDBOX=1 the container gets).
// The stubs listen on this host's loopback; the proxy, on the host too, dials
// them through network.hosts, and the container reaches nothing but the proxy.
// Each turn is held to the same promises as on the native backend
// (test/agent-recipes.ts checkTurn).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { checkTurn, CODEX_MCP_ALLOWED_ECHO, codexMcpTurn, plantSshKey, recipe, runTurn, type Stub, startStubs, type TurnOptions, type Wiring, wired, workRepository } from '../agent-recipes.js';
import type { LeafCache } from '../../lib/tls/leaves.js';
import { needsMcpServer, startMcpFront } from '../mcp-front.js';
import { cli, needs, REPO, REQUIRED, tempHome, writeFile } from '../helpers.js';
import { leftoversOf } from '../docker-setup.js';

interface AgentsImage {
  AGENTS_IMAGE: string;
  agentsImageReady(): boolean;
}

/** The agents image built (test/run.mjs builds it); in CI its absence fails, elsewhere it skips loudly. */
async function needsAgentsImage(): Promise<{ skip?: string; image: string }> {
  const m = (await import(join(REPO, 'test', 'agents-image.mjs'))) as AgentsImage;
  if (spawnSync('docker', ['info'], { stdio: 'ignore' }).status !== 0 || m.agentsImageReady()) return { image: m.AGENTS_IMAGE };
  const msg = `the Docker agents image ${m.AGENTS_IMAGE} is not built (node test/run.mjs integration/real-agents-docker.test.js builds it)`;
  if (REQUIRED) throw new Error(`${msg}: required in CI`);
  process.stderr.write(`\n*** SKIPPING: ${msg} ***\n\n`);
  return { skip: msg, image: m.AGENTS_IMAGE };
}

const img = await needsAgentsImage();

describe('the real Claude Code and Codex on the Docker backend, with the recipes of docs/agents.md', needs('docker', 'git'), () => {
  const skip = img.skip ? { skip: img.skip } : {};
  const t = tempHome();
  const repo = join(t.home, 'work');
  let anthropic: Stub;
  let openai: Stub;
  let platform: Stub;
  let wiring: Wiring;
  let leaves: LeafCache;
  let env: NodeJS.ProcessEnv;
  let sshKey = '';

  before(async () => {
    if (skip.skip) return;
    const stubs = await startStubs(t.dir);
    ({ anthropic, openai, platform, wiring, leaves } = stubs);
    for (const name of ['claude', 'codex', 'claude-and-codex', 'claude-subscription']) {
      writeFile(join(t.sbHome, 'agents', `${name}.toml`), `${wired(recipe(name), stubs.wiring)}\n${recipe('docker')}`);
    }
    sshKey = plantSshKey(t.home);
    workRepository(repo);
    // The holder and the agent run the agents image; nothing of the host's PATH matters inside.
    env = { ...t.env, STASHBASE_DOCKER_IMAGE: img.image };
  });
  after(async () => {
    await anthropic?.close();
    await openai?.close();
    await platform?.close();
    t.cleanup();
  });

  const turn = (name: string, command: string, stub: Stub, secrets: string[], o: TurnOptions = {}) => runTurn({ env, cwd: repo, sshKey, timeoutMs: 170_000 }, name, command, stub, secrets, o);

  test('Claude Code (recipes claude, claude-turn, docker)', { ...skip, timeout: 200_000 }, async () => {
    const r = await turn('claude', 'claude-turn', anthropic, ['ANTHROPIC_API_KEY']);
    await checkTurn(r);
    assert.match(r.result.stdout, /stub-finished/);
  });

  test('Codex (recipes codex, codex-turn, docker), over the WebSocket', { ...skip, timeout: 200_000 }, async () => {
    const r = await turn('codex', 'codex-turn', openai, ['CODEX_API_KEY']);
    await checkTurn(r);
    assert.ok(r.stub.requests.slice(r.before).some((q) => q.method === 'WS'), 'the turn went over the WebSocket');
  });

  test("Codex with the profile's MCP server (docker): it has only the allowed tool, whose result reaches the model through the proxy on the host", { ...skip, ...needsMcpServer(), timeout: 200_000 }, async () => {
    const mcp = await startMcpFront(leaves, 'mcp.test');
    try {
      writeFile(join(t.sbHome, 'agents', 'codex-mcp.toml'), `${wired(recipe('codex'), wiring)}"mcp.test" = "127.0.0.1:${mcp.frontPort}"\n[mcp.servers.everything]\nurl = "https://mcp.test:${mcp.frontPort}/mcp"\nallow_tools = ["echo"]\n\n${recipe('docker')}`);
      const r = await codexMcpTurn({ stub: openai, mcp, env, cwd: repo, profile: 'codex-mcp' });
      assert.deepEqual(r.outputs.slice(1), CODEX_MCP_ALLOWED_ECHO);
      assert.deepEqual(r.calls, ['echo']);
    } finally {
      mcp.close();
    }
  });

  test('under gVisor (runsc, so sealed): Claude Code and Codex each complete a turn, held to the same promises', { ...skip, timeout: 300_000 }, async () => {
    const claude = await turn('runsc-claude', 'claude-turn', anthropic, ['ANTHROPIC_API_KEY'], { flags: ['--docker-runtime', 'runsc'] });
    await checkTurn(claude);
    assert.match(claude.result.stdout, /stub-finished/);
    const codex = await turn('runsc-codex', 'codex-turn', openai, ['CODEX_API_KEY'], { flags: ['--docker-runtime', 'runsc'] });
    await checkTurn(codex);
  });

  test('sealed with runc: Claude Code completes a turn', { ...skip, timeout: 200_000 }, async () => {
    const r = await turn('sealed-claude', 'claude-turn', anthropic, ['ANTHROPIC_API_KEY'], { flags: ['--docker-network', 'sealed'] });
    await checkTurn(r);
    assert.match(r.result.stdout, /stub-finished/);
  });

  test('two secrets in one profile, Claude Code as root with --dangerously-skip-permissions (IS_SANDBOX=1 in the container), then Codex', { ...skip, timeout: 300_000 }, async () => {
    const both = ['ANTHROPIC_API_KEY', 'CODEX_API_KEY'];
    const claude = await turn('both-claude', 'claude-unattended', anthropic, both, { profile: 'claude-and-codex' });
    await checkTurn(claude);
    assert.match(claude.result.stdout, /stub-finished/, `as uid ${process.getuid?.()}`);
    await checkTurn(await turn('both-codex', 'codex-turn', openai, both, { profile: 'claude-and-codex' }));
  });

  test('Claude Code with a subscription token (claude-subscription, docker)', { ...skip, timeout: 200_000 }, async () => {
    await checkTurn(await turn('subscription', 'claude-turn', anthropic, ['CLAUDE_CODE_OAUTH_TOKEN'], { profile: 'claude-subscription', hidden: ['CLAUDE_CODE_OAUTH_TOKEN'] }));
  });

  test('nothing of the runs is left in Docker', { ...skip }, async () => {
    const audits = (await cli(['agent', 'audit', '--json'], { env, cwd: repo })).stdout;
    const session = (JSON.parse(audits) as Array<{ session?: string }>)[0]?.session ?? '';
    assert.match(session, /^ags_/);
    assert.deepEqual(leftoversOf(session), []);
  });
});
