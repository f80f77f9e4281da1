// The real Claude Code and Codex in remote runs (docs/remote.md), on the
// engine in a container (scripts/start-remote-engine.sh, given the agents
// image by test/run.mjs): full turns with the recipes of docs/agents.md, the
// keys substituted by the proxy on this machine. Each turn is held to the same
// promises as locally (test/agent-recipes.ts checkTurn: placeholders inside,
// real keys on the wire only, ~/.ssh unreadable, example.com refused, every
// request audited here); the probe comes back as a commit of the run's branch.
// And the engine never holds a real value: not in its containers' inspect or
// process lists while the turns run, not in its volumes after (control: the
// same search finds the placeholders the probe saved there).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { checkTurn, plantSshKey, REAL_ANTHROPIC, REAL_OAUTH, REAL_OPENAI, recipe, runTurn, type Stub, startStubs, type TurnOptions, wired, workRepository } from '../agent-recipes.js';
import { REPO, requirement, tempHome, writeFile } from '../helpers.js';
import { onEngine, remoteEngine } from '../remote-setup.js';

const { engine, options } = remoteEngine();
const { AGENTS_IMAGE } = (await import(join(REPO, 'test', 'agents-image.mjs'))) as { AGENTS_IMAGE: string };
const onThere = engine !== null && onEngine(engine, ['image', 'inspect', AGENTS_IMAGE]).code === 0;
const imageThere = options.skip ? options : requirement(onThere, `the agents image is not on the remote engine (node test/run.mjs integration/real-agents-remote.test.js loads it)`);
const REAL = [REAL_ANTHROPIC, REAL_OPENAI, REAL_OAUTH];

describe('the real Claude Code and Codex in remote runs (real engine over tcp://)', imageThere, () => {
  const t = tempHome();
  const repo = join(t.home, 'work');
  let anthropic: Stub;
  let openai: Stub;
  let platform: Stub;
  let env: NodeJS.ProcessEnv;
  let sshKey = '';
  /** What the engine showed of its stashbase containers while turns ran: inspect (env, command) and process lists. */
  const seen: string[] = [];
  let watching: NodeJS.Timeout | null = null;

  before(async () => {
    const stubs = await startStubs(t.dir);
    ({ anthropic, openai, platform } = stubs);
    for (const name of ['claude', 'codex']) writeFile(join(t.sbHome, 'agents', `${name}.toml`), `${wired(recipe(name), stubs.wiring)}\n${recipe('docker')}`);
    sshKey = plantSshKey(t.home);
    workRepository(repo);
    env = { ...t.env, STASHBASE_DOCKER_IMAGE: AGENTS_IMAGE, DOCKER_HOST: engine!.tcp };
    watching = setInterval(() => {
      const ids = onEngine(engine!, ['ps', '-q', '--filter', 'label=stashbase.session']).out.split('\n').filter(Boolean);
      for (const id of ids) {
        seen.push(onEngine(engine!, ['inspect', '--format', '{{json .Config.Env}} {{json .Config.Cmd}} {{json .Args}}', id]).out);
        seen.push(onEngine(engine!, ['top', id, '-eo', 'pid,args']).out);
      }
    }, 300);
  });
  after(async () => {
    if (watching) clearInterval(watching);
    await anthropic?.close();
    await openai?.close();
    await platform?.close();
    const mine = onEngine(engine!, ['volume', 'ls', '--filter', 'label=stashbase.workspace', '--format', '{{.Name}}|{{.Label "stashbase.origin"}}']).out.split('\n').filter((l) => l.includes(`:${repo}`)).map((l) => l.split('|')[0]!);
    if (mine.length > 0) onEngine(engine!, ['volume', 'rm', '--force', ...mine]);
    t.cleanup();
  });

  const turn = (name: string, command: string, stub: Stub, secrets: string[], o: TurnOptions = {}) => runTurn({ env, cwd: repo, sshKey, timeoutMs: 170_000 }, name, command, stub, secrets, { ...o, remote: true });
  const placeholders: string[] = [];

  test('Claude Code (recipes claude, claude-turn, docker) on the engine', { timeout: 200_000 }, async () => {
    const r = await turn('remote-claude', 'claude-turn', anthropic, ['ANTHROPIC_API_KEY']);
    placeholders.push(...Object.values(await checkTurn(r)));
    assert.match(r.result.stdout, /stub-finished/);
  });

  test('Codex (recipes codex, codex-turn, docker) on the engine, over the WebSocket', { timeout: 200_000 }, async () => {
    const r = await turn('remote-codex', 'codex-turn', openai, ['CODEX_API_KEY']);
    placeholders.push(...Object.values(await checkTurn(r)));
    assert.ok(r.stub.requests.slice(r.before).some((q) => q.method === 'WS'), 'the turn went over the WebSocket');
  });

  test('the engine never held a real value: its containers\' inspect and process lists during the turns, its volumes after (control: the placeholders are found there)', { timeout: 120_000 }, async () => {
    assert.ok(seen.some((s) => s.includes('HTTPS_PROXY')), 'the agent\'s container was inspected while it ran');
    for (const real of REAL) assert.equal(seen.some((s) => s.includes(real)), false, 'a real value in an inspect or a process list');
    assert.ok(placeholders.length >= 2);
    // The engine's own disk: its containers' records and every volume (workspaces, the agents' home).
    const search = (needle: string) => spawnSync('docker', ['exec', 'stashbase-remote-engine', 'grep', '-rlF', '--', needle, '/var/lib/docker/volumes', '/var/lib/docker/containers'], { encoding: 'utf8' }).stdout.trim();
    for (const p of placeholders) assert.notEqual(search(p), '', `control: the placeholder ${p} is on the engine's disk`);
    for (const real of REAL) assert.equal(search(real), '', 'a real value on the engine\'s disk');
  });
});
