import { flagBool, flagString, type FlagSpec, parseCommand } from '../lib/util/argv.js';
import { UsageError } from '../lib/errors.js';
import { type HookAgent, HOOK_AGENTS } from '../lib/hooks/hook-answer.js';
import { HOME_VOLUME } from '../templates/docker-run.js';

export const usage = 'stashbase agent hooks deps install <claude|codex> [--docker [--volume <name>]] [--uninstall]';
export const summary = "Install the dependency check as the agent's PreToolUse hook (merged into its settings; --uninstall removes it).";
export const flags: FlagSpec[] = [
  { name: 'docker', kind: 'bool', help: "Into the Docker backend's home volume (every Docker run's agent home) instead of your home" },
  { name: 'volume', kind: 'value', value: 'name', help: `With --docker: another volume (default: ${HOME_VOLUME})` },
  { name: 'uninstall', kind: 'bool', help: 'Remove our hook; everything else in the file stays' },
];
const notes = [
  'Claude Code: ~/.claude/settings.json (or $CLAUDE_CONFIG_DIR). Codex: ~/.codex/hooks.json (or $CODEX_HOME); Codex runs',
  'a new hook only after you trust it in its /hooks view, and its hooks cannot ask, so a warning blocks there.',
].join('\n');
const spec = { name: 'agent hooks deps install', usage, summary, flags, notes };

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.rest !== null || p.positionals.length !== 1) throw new UsageError('name one agent: claude or codex');
  const agent = p.positionals[0] as string;
  if (!(HOOK_AGENTS as readonly string[]).includes(agent)) throw new UsageError(`the agent is claude or codex, not ${JSON.stringify(agent)}`);
  const uninstall = flagBool(p, 'uninstall') === true;
  const volume = flagString(p, 'volume');
  if (volume !== undefined && flagBool(p, 'docker') !== true) throw new UsageError('--volume goes with --docker');
  let result;
  if (flagBool(p, 'docker') === true) {
    const { findDocker, inspectImage, isDesktop } = await import('../lib/docker/engine.js');
    const { defaultImageRef } = await import('../lib/docker/image.js');
    const { containerUser } = await import('../lib/docker/prepare.js');
    const { SandboxUnavailableError } = await import('../lib/errors.js');
    const docker = findDocker(process.env);
    const image = defaultImageRef(process.env);
    if ((await inspectImage(docker, image)) === null) throw new SandboxUnavailableError(`the Docker sandbox image ${image} is not built; build it with: stashbase agent docker build`);
    const { installInVolume } = await import('../lib/hooks/agent-install.js');
    result = await installInVolume(agent as HookAgent, { docker, image, volume: volume ?? HOME_VOLUME, user: containerUser(isDesktop(process.platform, '')) }, uninstall);
  } else {
    const { installOnHost } = await import('../lib/hooks/agent-install.js');
    result = installOnHost(agent as HookAgent, process.env, uninstall);
  }
  const what = uninstall ? (result.changed ? 'removed from' : 'was not in') : result.changed ? 'installed in' : 'already in';
  process.stderr.write(`The dependency check hook ${what} ${result.where}\n`);
  if (!uninstall && agent === 'codex') process.stderr.write('Codex runs it only once you trust it: start codex and review it under /hooks.\n');
  if (result.command !== null) process.stdout.write(`${result.command}\n`);
  return 0;
}
