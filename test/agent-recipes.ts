// The real-agent tests' shared parts. The profiles and commands they run are
// read from docs/agents.md (blocks marked `<!-- recipe: NAME -->`), so the
// documented recipes are the tested ones; the tests add only the wiring to
// the local stand-ins of the APIs (network.hosts, upstream_ca_file). Each turn
// asks the agent's shell tool for a probe: the secret variables it sees (as
// `env` would show them), whether ~/.ssh reads, and whether example.com
// answers; checkTurn then holds the stubs' records and the run's audit log to
// the promises docs/agents.md makes.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { LeafCache } from '../lib/tls/leaves.js';
import { type CliResult, cli, REPO, writeFile } from './helpers.js';
import { testCa } from './upstream-ca.js';

export const REAL_ANTHROPIC = 'sk-ant-api03-realRealRealRealRealRealReal-0123456789';
export const REAL_OPENAI = 'sk-proj-realRealRealRealRealRealReal0123456789';
export const REAL_OAUTH = 'sk-ant-oat01-realRealRealRealRealRealReal-0123456789';
/** Host variables the recipes name as their sources, with their real values. */
const HOST_KEYS: Record<string, string> = { ANTHROPIC_API_KEY: REAL_ANTHROPIC, OPENAI_API_KEY: REAL_OPENAI, CLAUDE_CODE_OAUTH_TOKEN: REAL_OAUTH };
const REAL_BY_SECRET: Record<string, string> = { ANTHROPIC_API_KEY: REAL_ANTHROPIC, CODEX_API_KEY: REAL_OPENAI, CLAUDE_CODE_OAUTH_TOKEN: REAL_OAUTH };

export interface StubRequest {
  method: string;
  path: string;
  headers: Record<string, string | undefined>;
  body: unknown;
  /** When the stub read it (Date.now()). */
  at: number;
}
export interface Stub {
  port: number;
  requests: StubRequest[];
  /** A command for a Bash tool call, or a call of the named tool (an MCP server's) with its input (for Codex in code mode, from JavaScript that first lists its MCP tools and then tries each of `also`). */
  setCommand(command: string | { tool: string; input: Record<string, unknown>; also?: string[] }): void;
  /** true: accept; false: refuse with 426; a status: refuse with it; 'reset': cut the connection. */
  setWebsocket(mode: boolean | number | 'reset'): void;
  close(): Promise<void>;
}

/** A block of docs/agents.md, by its recipe name. */
export function recipe(name: string): string {
  const doc = readFileSync(join(REPO, 'docs', 'agents.md'), 'utf8');
  const m = new RegExp(`<!-- recipe: ${name} -->\\n\`\`\`(?:toml|sh)\\n([\\s\\S]*?)\`\`\`\\n`).exec(doc);
  assert.ok(m, `docs/agents.md has no recipe ${name}`);
  return m[1] as string;
}

/**
 * The host's real keys a profile recipe's secrets are sourced from, and only
 * those: the native backend passes every other exported variable to the agent
 * as it is (docs/agents.md says so), which the probe would rightly report.
 */
export function hostKeysFor(profile: string): Record<string, string> {
  const sources = [...profile.matchAll(/^source = "([A-Z_]+)"/gm)].map((m) => m[1] as string);
  return Object.fromEntries(sources.map((s) => [s, HOST_KEYS[s] as string]));
}

/** A command recipe as argv after `stashbase` (simple quoting only: "…" and '…'). */
export function commandRecipe(name: string): string[] {
  const words = [...recipe(name).trim().matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? (m[3] as string));
  assert.equal(words[0], 'stashbase', `recipe ${name} does not start with stashbase`);
  return words.slice(1);
}

export interface Wiring {
  caFile: string;
  anthropicPort: number;
  openaiPort: number;
  /** Claude Code's interactive first start asks platform.claude.com (its OAuth hello). */
  platformPort: number;
}

/** A profile recipe with the stubs wired in: the CA after [network], the vendor hosts mapped to loopback. */
export function wired(profile: string, w: Wiring): string {
  assert.match(profile, /^\[network\]$/m);
  const withCa = profile.replace(/^\[network\]$/m, `[network]\nupstream_ca_file = "${w.caFile}"`);
  return `${withCa}\n[network.hosts]\n"api.anthropic.com" = "127.0.0.1:${w.anthropicPort}"\n"api.openai.com" = "127.0.0.1:${w.openaiPort}"\n"platform.claude.com" = "127.0.0.1:${w.platformPort}"\n`;
}

/** Both API stubs, with certificates from a CA of the test's own (named in upstream_ca_file). */
export async function startStubs(dir: string): Promise<{ anthropic: Stub; openai: Stub; platform: Stub; wiring: Wiring; leaves: LeafCache }> {
  const { startAgentApiStub } = (await import(join(REPO, 'test', 'fixtures', 'agent-api-stub.mjs'))) as { startAgentApiStub: (o: { key: string; cert: string; command: string }) => Promise<Stub> };
  const ca = testCa();
  const caFile = join(dir, 'upstream-ca.pem');
  writeFileSync(caFile, ca.certPem);
  const leaves = new LeafCache(ca);
  const a = leaves.get('api.anthropic.com');
  const o = leaves.get('api.openai.com');
  const anthropic = await startAgentApiStub({ key: a.keyPem, cert: a.certPem, command: 'true' });
  const openai = await startAgentApiStub({ key: o.keyPem, cert: o.certPem, command: 'true' });
  const p = leaves.get('platform.claude.com');
  const platform = await startAgentApiStub({ key: p.keyPem, cert: p.certPem, command: 'true' });
  return { anthropic, openai, platform, wiring: { caFile, anthropicPort: anthropic.port, openaiPort: openai.port, platformPort: platform.port }, leaves };
}

/** A fake SSH key in the host home: the probe must not read it. */
/** The repository the turns run in: one commit of a README. */
export function workRepository(repo: string): void {
  mkdirSync(repo);
  const git = (args: string[]) => spawnSync('git', ['-c', 'user.name=me', '-c', 'user.email=me@x', ...args], { cwd: repo });
  git(['init', '-q']);
  writeFileSync(join(repo, 'README'), 'work\n');
  git(['add', 'README']);
  git(['commit', '-qm', 'init']);
}

export function plantSshKey(home: string): string {
  return writeFile(join(home, '.ssh', 'id_ed25519'), 'FAKE-SSH-PRIVATE-KEY\n');
}

/** The tool call's command: what the agent sees of the secrets, ~/.ssh and example.com, saved and printed. */
export function probe(name: string, sshKey: string, commit = false): string {
  return [
    `{ env | grep -E '^(ANTHROPIC_API_KEY|CODEX_API_KEY|CLAUDE_CODE_OAUTH_TOKEN)=' | sort`,
    `if cat '${sshKey}' >/dev/null 2>&1; then echo ssh=readable; else echo ssh=unreadable; fi`,
    `if curl -sS --max-time 10 -o /dev/null https://example.com 2>/dev/null; then echo example.com=reached; else echo example.com=refused; fi; } > probe-${name}.txt 2>&1`,
    `cat probe-${name}.txt`,
    // A remote run's tree is on the engine: the probe comes back as a commit of the run's branch.
    ...(commit ? [`git add probe-${name}.txt && git -c user.name=probe -c user.email=probe@x commit -qm probe-${name}`] : []),
  ].join('; ');
}

export interface Turn {
  name: string;
  /** The stub the agent talks to, and how many requests it had before the turn. */
  stub: Stub;
  before: number;
  /** The secrets the profile binds (their variables inside). */
  secrets: string[];
  /** Bound secrets the agent keeps from its own tool's environment (Claude Code does so with CLAUDE_CODE_OAUTH_TOKEN). */
  hidden?: string[];
  cwd: string;
  result: CliResult;
  env: NodeJS.ProcessEnv;
  /** The probe came back committed on the run's branch (a remote run). */
  remote?: boolean;
}

export interface TurnSetup {
  /** The run's environment without keys: each turn adds the host keys its profile sources. */
  env: NodeJS.ProcessEnv;
  cwd: string;
  sshKey: string;
  timeoutMs: number;
}

export interface TurnOptions {
  /** Another profile than the command recipe's (a profile recipe's name: the tests save each under it). */
  profile?: string;
  /** Flag values to drop with their flag (e.g. api_key_model_discovery drops --disable api_key_model_discovery). */
  drop?: string[];
  /** Lone flags to drop (e.g. --dangerously-bypass-approvals-and-sandbox). */
  dropFlags?: string[];
  hidden?: string[];
  /** agent run flags of this turn's own (--docker-runtime runsc). */
  flags?: string[];
  /** A remote run: the probe is committed there, and read from the branch that comes back. */
  remote?: boolean;
}

/** Runs a command recipe quietly (`agent run --silent`); the stub's tool call is the probe. */
export async function runTurn(s: TurnSetup, name: string, command: string, stub: Stub, secrets: string[], o: TurnOptions = {}): Promise<Turn & { ms: number }> {
  stub.setCommand(probe(name, s.sshKey, o.remote === true));
  let argv = commandRecipe(command);
  if (o.profile) argv = argv.map((a, i) => (argv[i - 1] === '--profile' ? o.profile! : a));
  for (const d of o.drop ?? []) {
    const at = argv.indexOf(d);
    assert.ok(at > 0, `${command} has no ${d}`);
    argv.splice(at - 1, 2);
  }
  for (const f of o.dropFlags ?? []) {
    assert.ok(argv.includes(f), `${command} has no ${f}`);
    argv = argv.filter((a) => a !== f);
  }
  const env = { ...s.env, ...hostKeysFor(recipe(argv[argv.indexOf('--profile') + 1]!)) };
  const before = stub.requests.length;
  const started = Date.now();
  const result = await cli(['agent', 'run', '--silent', ...(o.flags ?? []), ...argv.slice(2)], { env, cwd: s.cwd, timeoutMs: s.timeoutMs });
  return { name, stub, before, secrets, hidden: o.hidden, cwd: s.cwd, result, env, ms: Date.now() - started, remote: o.remote === true };
}

/** What the probe saved: in the tree, or for a remote run in the commit of it that came back. */
function probeText(t: Turn): string {
  if (!t.remote) return readFileSync(join(t.cwd, `probe-${t.name}.txt`), 'utf8');
  const git = (...a: string[]) => spawnSync('git', ['-C', t.cwd, ...a], { encoding: 'utf8' }).stdout;
  const commit = git('log', '--branches=stashbase/*', '--format=%H', '-1', `--grep=^probe-${t.name}$`).trim();
  assert.match(commit, /^[0-9a-f]{40}$/, `the probe of ${t.name} did not come back: ${t.result.stderr}`);
  return git('show', `${commit}:probe-${t.name}.txt`);
}

/** Holds a finished turn to the promises (see the top of this file). Returns the placeholders seen. */
export async function checkTurn(t: Turn): Promise<Record<string, string>> {
  assert.equal(t.result.code, 0, t.result.stdout + t.result.stderr);
  const lines = probeText(t).trim().split('\n');
  const seen = Object.fromEntries(lines.filter((l) => /^[A-Z_]+=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  assert.deepEqual(Object.keys(seen).sort(), t.secrets.filter((s) => !(t.hidden ?? []).includes(s)).sort(), lines.join('\n'));
  for (const [name, value] of Object.entries(seen)) {
    assert.match(value, /SBPH/, `${name} inside is not a placeholder`);
    assert.notEqual(value, REAL_BY_SECRET[name]);
  }
  assert.deepEqual(lines.filter((l) => !/^[A-Z_]+=/.test(l)), ['ssh=unreadable', 'example.com=refused']);

  const requests = t.stub.requests.slice(t.before);
  const calls = requests.filter((q) => q.method !== 'WS' && /^\/v1\/(messages|responses)/.test(q.path));
  assert.ok(calls.length >= 1, JSON.stringify(requests.map((q) => `${q.method} ${q.path}`)));
  // The real key on the wire, in the header its API uses.
  const keys = new Set(calls.map((q) => q.headers['x-api-key'] ?? q.headers.authorization));
  const expected = t.secrets.filter((s) => /^\/v1\/messages/.test(calls[0]!.path) ? s !== 'CODEX_API_KEY' : s === 'CODEX_API_KEY');
  assert.deepEqual([...keys], expected.map((s) => (s === 'ANTHROPIC_API_KEY' ? REAL_ANTHROPIC : `Bearer ${REAL_BY_SECRET[s]}`)));
  // The tool's output went back to the model with the placeholders, never a real value.
  const sent = JSON.stringify(requests.map((q) => q.body));
  const trace = () => `\nrequests: ${JSON.stringify(requests.map((q) => `+${q.at - (requests[0]?.at ?? 0)}ms ${q.method} ${q.path} ${JSON.stringify(q.body ?? null).slice(0, 300)}`))}\nstdout: ${t.result.stdout.slice(-2000)}\nstderr: ${t.result.stderr.slice(-2000)}`;
  for (const [name, value] of Object.entries(seen)) assert.ok(sent.includes(value), `the tool result with ${name}'s placeholder never reached the model${trace()}`);
  for (const real of Object.values(REAL_BY_SECRET)) assert.equal(sent.includes(real), false, 'a real value in a request body');

  // The audit lists every request the stub saw, and the refusal of example.com.
  const audit = await cli(['agent', 'audit', '--json'], { env: t.env, cwd: t.cwd });
  const events = JSON.parse(audit.stdout) as Array<Record<string, unknown>>;
  const host = /^\/v1\/messages/.test(calls[0]!.path) ? 'api.anthropic.com' : 'api.openai.com';
  // An allowed decision repeated is written once, then counted (lib/run/audit.ts).
  const each = events.flatMap((e) => (e.type === 'proxy' ? [e] : e.type === 'repeated' ? Array<Record<string, unknown>>(Number(e.count)).fill(e) : []));
  const audited = each.filter((e) => e.host === host && e.method !== 'CONNECT' && e.decision !== 'deny').map((e) => `${e.method} ${e.path}`).sort();
  const atStub = requests.filter((q) => q.method !== 'WS').map((q) => `${q.method} ${q.path.split('?')[0]}`).sort();
  assert.deepEqual(audited, atStub);
  assert.ok(events.some((e) => e.type === 'proxy' && e.host === 'example.com' && e.decision === 'deny'), 'example.com was not refused at the proxy');
  return seen;
}

/**
 * A Codex turn (the codex-turn recipe under `profile`) whose model, in code
 * mode, lists the MCP tools Codex has, calls the everything server's echo, and
 * tries its get-env (test/fixtures/agent-api-stub.mjs). Returns what the
 * script reported to the model and the tools/calls that reached the server.
 */
export async function codexMcpTurn(o: { stub: Stub; mcp: { reached: string[] }; env: NodeJS.ProcessEnv; cwd: string; profile: string }): Promise<{ outputs: string[]; calls: string[] }> {
  o.stub.setCommand({ tool: 'mcp__everything__echo', input: { message: 'through-the-proxy' }, also: ['mcp__everything__get_env'] });
  const before = o.stub.requests.length;
  const reached = o.mcp.reached.length;
  try {
    const argv = commandRecipe('codex-turn').slice(2).map((a, i, all) => (all[i - 1] === '--profile' ? o.profile : a));
    const r = await cli(['agent', 'run', '--silent', ...argv], { env: { ...o.env, ...hostKeysFor(recipe('codex')) }, cwd: o.cwd, timeoutMs: 170_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /stub-finished/);
  } finally {
    o.stub.setCommand('true');
  }
  type Input = { type: string; output?: Array<{ text?: string }> };
  const outputs = o.stub.requests.slice(before).flatMap((q) => { const input = (q.body as { input?: unknown } | undefined)?.input; return Array.isArray(input) ? (input as Input[]) : []; })
    .filter((i) => i.type === 'custom_tool_call_output').flatMap((i) => (i.output ?? []).map((x) => x.text ?? ''));
  const calls = o.mcp.reached.slice(reached).filter((b) => b.includes('tools/call')).map((b) => (JSON.parse(b.slice(5)) as { params: { name: string } }).params.name);
  return { outputs, calls };
}

/** What codexMcpTurn's script reports when only echo is allowed: Codex has that tool alone; get-env is not there to call. */
export const CODEX_MCP_ALLOWED_ECHO = [
  '{"mcpTools":["mcp__everything__echo"]}',
  '{"content":[{"type":"text","text":"Echo: through-the-proxy"}]}',
  'mcp__everything__get_env failed: TypeError: tools.mcp__everything__get_env is not a function',
];
