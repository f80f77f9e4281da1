import { flagBool, flagString, type FlagSpec, parseCommand } from '../lib/util/argv.js';
import { findDocker, inspectImage } from '../lib/docker/engine.js';
import { AGENTS_FROM_VAR, agentsSource, CLAUDE_VERSION_VAR, CODEX_VERSION_VAR } from '../lib/docker/agents-source.js';
import { ageDays, buildDockerfile, chooseImage, defaultBuild, defaultImageRef, hasAgents, type ImageChoice, streamBuild } from '../lib/docker/image.js';
import { UsageError } from '../lib/errors.js';
import { stashbaseHome, userHome } from '../lib/home.js';
import { displayPath, loadProfile } from '../lib/profile/load.js';
import { ensureTrusted } from '../lib/profile/trust.js';
import { isInteractive } from '../lib/util/prompt.js';
import { PROFILE_FLAGS, profileSource, REMOTE_FLAG } from './shared-flags.js';
import { engineOf } from '../lib/remote/target.js';

export const usage = 'stashbase agent docker build [--remote <context>] [--force] [--agents-from installer|npm] [--claude-version <v>] [--codex-version <v>] [--profile <name>] [--profile-source <where>]';
export const summary = "Build the default sandbox image (or a profile's custom image) ahead of time.";
export const flags: FlagSpec[] = [
  { name: 'force', kind: 'bool', help: 'Rebuild: pull the base image and reinstall the agent CLIs' },
  { name: 'agents-from', kind: 'value', value: 'installer|npm', help: `Install Claude Code and Codex from their official installers (default) or from npm's registry (${AGENTS_FROM_VAR})` },
  { name: 'claude-version', kind: 'value', value: 'version', help: `With --agents-from npm: the @anthropic-ai/claude-code version or dist-tag (default latest; ${CLAUDE_VERSION_VAR})` },
  { name: 'codex-version', kind: 'value', value: 'version', help: `With --agents-from npm: the @openai/codex version or dist-tag (default latest; ${CODEX_VERSION_VAR})` },
  ...PROFILE_FLAGS,
  REMOTE_FLAG,
];
const spec = {
  name: 'agent docker build', usage, summary, flags,
  notes: "Docker's own progress is streamed on stderr. With --agents-from npm the build uses the registry and CA file of this host's npm config. An existing image is kept unless --force, or unless the agents it holds differ from what --agents-from and the versions ask for.",
};

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.positionals.length > 0 || p.rest !== null) throw new UsageError('agent docker build takes no arguments');
  const cwd = process.cwd();
  const env = process.env;
  const force = flagBool(p, 'force') === true;
  const name = flagString(p, 'profile');
  const docker = findDocker(env);
  // On another machine's engine: the same build, its context sent by the docker CLI (docs/remote.md).
  const target = await engineOf(docker, env, flagString(p, 'remote'));
  if (target !== null) process.stderr.write(`Building on ${target.host} (${target.from}), not this machine's engine.\n`);
  const agentFlags = { agentsFrom: flagString(p, 'agents-from'), claudeVersion: flagString(p, 'claude-version'), codexVersion: flagString(p, 'codex-version') };
  const askedAgents = Object.values(agentFlags).some((v) => v !== undefined) || [AGENTS_FROM_VAR, CLAUDE_VERSION_VAR, CODEX_VERSION_VAR].some((v) => env[v]);
  const agents = agentsSource(agentFlags, env);
  let choice: ImageChoice = { kind: 'default', ref: defaultImageRef(env) };
  if (name !== undefined) {
    if (Object.values(agentFlags).some((v) => v !== undefined)) throw new UsageError("--agents-from and the agent versions are for the default image; a profile's Dockerfile installs what it says");
    const loaded = loadProfile({ name, source: profileSource(flagString(p, 'profile-source')), cwd, env });
    // Building a repository's Dockerfile runs its RUN lines: the profile must be trusted first.
    await ensureTrusted(loaded, { interactive: () => isInteractive(false), env, label: loaded.profile.file ? displayPath(loaded.profile.file, cwd) : 'default' });
    choice = chooseImage(loaded.profile, {}, { cwd, env, home: userHome(env), stashbaseHome: stashbaseHome(env) });
  }
  if (choice.kind === 'image') {
    process.stdout.write(`Profile ${name} runs the image ${choice.ref}: nothing to build (docker run pulls it when it is missing).\n`);
    return 0;
  }
  const existing = await inspectImage(docker, choice.ref);
  // Asked for other agents than the image holds: rebuilt (the layers before the agents come from the cache).
  const stale = existing !== null && choice.kind === 'default' && askedAgents && !hasAgents(existing, agents);
  if (existing && !force && !stale) {
    process.stdout.write(`${choice.ref} is already built (${ageDays(existing)} days old); --force rebuilds it.\n`);
    return 0;
  }
  if (choice.kind === 'dockerfile') {
    choice.ref = await buildDockerfile(docker, choice, force, { stashbaseHome: stashbaseHome(env), env, interactive: isInteractive(false) });
  } else {
    const build = await defaultBuild(docker, stashbaseHome(env), env, force, agents);
    build.write();
    await streamBuild(build.command);
  }
  process.stdout.write(`Built ${choice.ref}.\n`);
  return 0;
}
