import { flagBool, flagString, type FlagSpec, parseCommand } from '../lib/util/argv.js';
import { asciiJson } from '../lib/util/printable.js';
import { UsageError } from '../lib/errors.js';
import { type DependencyCheckSettings, settingsFromEnv } from '../lib/deps/settings.js';
import type { Decision, Ecosystem, Requested } from '../lib/deps/types.js';
import { ECOSYSTEMS } from '../lib/deps/types.js';
import { type HookAgent, HOOK_AGENTS } from '../lib/hooks/hook-answer.js';
import { JSON_FLAG, PROFILE_FLAGS, profileSource } from './shared-flags.js';

export const usage = 'stashbase agent hooks deps check [--agent claude|codex] | --ecosystem npm|pypi|crates|go <package>... [--json]';
export const summary = "Check the packages a command would install: as an agent's PreToolUse hook (the hook's JSON on stdin), or the packages named.";
export const flags: FlagSpec[] = [
  { name: 'agent', kind: 'value', value: 'claude|codex', help: "The hook's agent, whose answer format to use (default: claude)" },
  { name: 'ecosystem', kind: 'value', value: 'npm|pypi|crates|go', help: 'Check these packages instead of reading a hook input' },
  { ...JSON_FLAG, help: 'With --ecosystem: the decisions as JSON' },
  ...PROFILE_FLAGS.map((f) => (f.name === 'profile' ? { ...f, help: 'Take the [hooks.dependency_check] thresholds of this profile' } : f)),
];
const notes = [
  'As a hook it reads the PreToolUse JSON on stdin and prints the answer: "deny" for a package that does not exist',
  "in its registry or has a malicious-package advisory, \"ask\" for one that is new, a near miss of a popular name",
  'or has a new install script, and for what could not be checked; nothing otherwise. Thresholds: the profile\'s,',
  'else those a run passes in STASHBASE_DEPENDENCY_CHECK, else the defaults. With --ecosystem it exits 1 when any',
  'package is blocked. See docs/hooks.md.',
].join('\n');
const spec = { name: 'agent hooks deps check', usage, summary, flags, notes };

async function settingsFor(p: { flags: Map<string, string | boolean> }): Promise<DependencyCheckSettings> {
  const name = p.flags.get('profile');
  if (typeof name !== 'string') return settingsFromEnv(process.env);
  const { displayPath, loadProfile } = await import('../lib/profile/load.js');
  const { ensureTrusted } = await import('../lib/profile/trust.js');
  const source = profileSource(p.flags.get('profile-source') as string | undefined);
  const cwd = process.cwd();
  const loaded = loadProfile({ name, source, cwd, env: process.env });
  // A repository's profile is used only once trusted, as by agent run and scan (review, round 29: one an agent planted
  // beside the tree loosened the check); a hook has no terminal to ask on, so an untrusted one fails the check.
  await ensureTrusted(loaded, { interactive: () => false, env: process.env, label: loaded.profile.file ? displayPath(loaded.profile.file, cwd) : name });
  return loaded.profile.hooks.dependencyCheck;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The hook's working directory: the one the agent names when it lies within ours, else ours. */
function workDir(named: string | undefined): string {
  const own = process.cwd();
  return named !== undefined && (named === own || named.startsWith(own.endsWith('/') ? own : `${own}/`)) ? named : own;
}

async function check(requests: Requested[], cwd: string, settings: DependencyCheckSettings): Promise<Decision[]> {
  const { checkPackages } = await import('../lib/deps/check.js');
  return checkPackages({ requests, cwd, env: process.env, settings });
}

async function report(decisions: Decision[], answer: 'deny' | 'ask' | 'none', agent: HookAgent | null): Promise<void> {
  const { dependencyEvents, reportEvents } = await import('../lib/hooks/report.js');
  await reportEvents(dependencyEvents(decisions, answer, agent), process.env);
}

async function hookMode(agent: HookAgent, settings: () => Promise<DependencyCheckSettings>): Promise<number> {
  const { failureOutput, hookOutput, answerOf, parseHookInput } = await import('../lib/hooks/hook-answer.js');
  try {
    const input = parseHookInput(await readStdin());
    if (input === null) return 0;
    const { findInstalls } = await import('../lib/deps/install-commands.js');
    const requests = findInstalls(input.command);
    if (requests.length === 0) return 0;
    const s = await settings();
    const decisions = await check(requests, workDir(input.cwd), s);
    process.stdout.write(hookOutput(decisions, s, agent));
    await report(decisions, answerOf(decisions, s), agent);
    return 0;
  } catch (e) {
    // A check that fails must not wave the command through.
    process.stdout.write(failureOutput((e as Error).message, agent));
    return 0;
  }
}

async function directMode(ecosystem: Ecosystem, names: string[], json: boolean, settings: DependencyCheckSettings): Promise<number> {
  // The commands' own readers, so a name means here what it means to the package manager.
  const { cratesSpec, goSpec, npmSpec, pypiSpec } = await import('../lib/deps/specs.js');
  const read = { npm: npmSpec, pypi: pypiSpec, crates: cratesSpec, go: goSpec }[ecosystem];
  const requests = names.map((n) => {
    const r = read(n);
    if (r === null) throw new UsageError(`${JSON.stringify(n)} is not a ${ecosystem} package name`);
    return r;
  });
  const decisions = await check(requests, process.cwd(), settings);
  const { answerOf } = await import('../lib/hooks/hook-answer.js');
  await report(decisions, answerOf(decisions, settings), null);
  if (json) process.stdout.write(asciiJson(decisions) + '\n');
  else {
    const { formatDecisions } = await import('../lib/deps/format.js');
    process.stdout.write(formatDecisions(decisions));
  }
  return decisions.some((d) => d.verdict === 'block') ? 1 : 0;
}

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.rest !== null) throw new UsageError('agent hooks deps check takes no "--"');
  const agent = flagString(p, 'agent') ?? 'claude';
  if (!(HOOK_AGENTS as readonly string[]).includes(agent)) throw new UsageError(`--agent takes claude or codex, not ${JSON.stringify(agent)}`);
  const ecosystem = flagString(p, 'ecosystem');
  if (ecosystem === undefined) {
    if (p.positionals.length > 0) throw new UsageError('package names need --ecosystem (without it, the hook input is read from stdin)');
    if (flagBool(p, 'json')) throw new UsageError('--json goes with --ecosystem');
    return hookMode(agent as HookAgent, () => settingsFor(p));
  }
  if (!(ECOSYSTEMS as readonly string[]).includes(ecosystem)) throw new UsageError(`--ecosystem takes ${ECOSYSTEMS.join(', ')}, not ${JSON.stringify(ecosystem)}`);
  if (p.positionals.length === 0) throw new UsageError('name at least one package to check');
  return directMode(ecosystem as Ecosystem, p.positionals, flagBool(p, 'json') === true, await settingsFor(p));
}
