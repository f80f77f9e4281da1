// Which image a Docker run uses, and getting it there: the built-in default
// (built locally from the embedded Dockerfile), a profile's pre-built image
// (docker run pulls it), or a profile's Dockerfile (tagged from its path).
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { type Command, formatCommand } from '../../templates/command.js';
import { type AgentsBuild, DEFAULT_IMAGE, defaultBuildCommand, dockerfileBuildCommand, NPM_CA_FILE, REMINDER_DAYS } from '../../templates/docker-image.js';
import { ConfigError, SandboxUnavailableError } from '../errors.js';
import { start } from '../exec.js';
import type { Profile } from '../profile/types.js';
import { confirm } from '../util/prompt.js';
import { agentsSource, npmSettings } from './agents-source.js';
import { SANDBOX_DOCKERFILE } from './dockerfile-text.js';
import { type ImageFacts, inspectImage, sha256 } from './engine.js';

export type ImageChoice =
  | { kind: 'default'; ref: string }
  | { kind: 'image'; ref: string }
  | { kind: 'dockerfile'; ref: string; dockerfile: string; context: string };

/** The built-in image's tag; STASHBASE_DOCKER_IMAGE renames it (tests, side-by-side builds). */
export function defaultImageRef(env: NodeJS.ProcessEnv): string {
  return env.STASHBASE_DOCKER_IMAGE || DEFAULT_IMAGE;
}

/** A Dockerfile's tag: readable from its folder, unique by its full path. */
export function dockerfileTag(path: string): string {
  const slug = basename(dirname(path)).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'root';
  return `stashbase-dockerfile-${slug}-${sha256(path).slice(0, 12)}:latest`;
}

export function chooseImage(profile: Profile, flags: { dockerImage?: string; dockerDockerfile?: string }, cwd: string, env: NodeJS.ProcessEnv): ImageChoice {
  // A per-run flag replaces the profile's choice of either kind.
  const fromFlags = flags.dockerImage !== undefined || flags.dockerDockerfile !== undefined;
  const image = fromFlags ? flags.dockerImage : profile.sandbox.image;
  const dockerfile = fromFlags ? flags.dockerDockerfile : profile.sandbox.dockerfile;
  if (image !== undefined) return { kind: 'image', ref: image };
  if (dockerfile !== undefined) {
    let path: string;
    try {
      path = realpathSync(resolve(cwd, dockerfile));
    } catch (e) {
      throw new ConfigError(`${fromFlags ? '--docker-dockerfile' : 'sandbox.dockerfile'}: cannot read ${resolve(cwd, dockerfile)} (${(e as NodeJS.ErrnoException).code})`);
    }
    return { kind: 'dockerfile', ref: dockerfileTag(path), dockerfile: path, context: dirname(path) };
  }
  return { kind: 'default', ref: defaultImageRef(env) };
}

/** Build arguments for the default image; tests build it offline from a local base. */
function defaultBuildArgs(env: NodeJS.ProcessEnv): Record<string, string> {
  const args: Record<string, string> = {};
  if (env.STASHBASE_SANDBOX_BASE_IMAGE) args.BASE_IMAGE = env.STASHBASE_SANDBOX_BASE_IMAGE;
  if (env.STASHBASE_SANDBOX_INSTALL_AGENTS) args.INSTALL_AGENTS = env.STASHBASE_SANDBOX_INSTALL_AGENTS;
  return args;
}

/**
 * The build of the default image: the embedded Dockerfile written out, and a
 * context holding only the CA file npm trusts (empty unless the agents come from npm).
 */
export async function defaultBuild(docker: string, home: string, env: NodeJS.ProcessEnv, force: boolean, agents: AgentsBuild = agentsSource({}, env)): Promise<{ command: Command; write: () => void }> {
  const dir = join(home, 'docker');
  const dockerfile = join(dir, 'Dockerfile.sandbox');
  const context = join(dir, 'context');
  const npm = agents.from === 'npm' ? await npmSettings(env) : {};
  const command = defaultBuildCommand({
    docker, tag: defaultImageRef(env), dockerfile, context, force,
    builtAt: new Date().toISOString(), dockerfileSha256: sha256(SANDBOX_DOCKERFILE), buildArgs: defaultBuildArgs(env),
    agents: agents.from === 'npm' && npm.registry !== undefined ? { ...agents, registry: npm.registry } : agents,
  });
  const write = () => {
    mkdirSync(context, { recursive: true, mode: 0o700 });
    writeFileSync(dockerfile, SANDBOX_DOCKERFILE);
    writeFileSync(join(context, NPM_CA_FILE), npm.caPem ?? '');
  };
  return { command, write };
}

/** Whether an image's labels say it holds the agents a build asks for (installer builds: any version). */
export function hasAgents(facts: ImageFacts, agents: AgentsBuild): boolean {
  if (agents.from === 'installer') return facts.agentsFrom === 'installer' || facts.agentsFrom === '';
  return facts.agentsFrom === 'npm' && facts.claudeVersion === agents.claude && facts.codexVersion === agents.codex;
}

export function customBuild(docker: string, c: Extract<ImageChoice, { kind: 'dockerfile' }>, pull: boolean): Command {
  return dockerfileBuildCommand(docker, c.ref, c.dockerfile, c.context, pull);
}

/** Runs a build with Docker's own progress on stderr (stdout stays for results). */
export async function streamBuild(cmd: Command): Promise<void> {
  const code = await start(cmd, ['ignore', process.stderr, process.stderr]).exit;
  if (code !== 0) throw new SandboxUnavailableError(`the image build failed (exit code ${code}): ${formatCommand(cmd)}`);
}

export function ageDays(facts: ImageFacts, now = Date.now()): number {
  const built = facts.builtLabel ? new Date(facts.builtLabel) : facts.created;
  return Math.floor((now - built.getTime()) / 86_400_000);
}

export interface EnsureInput {
  docker: string;
  home: string;
  env: NodeJS.ProcessEnv;
  choice: ImageChoice;
  interactive: boolean;
  warn: (msg: string) => void;
}

/**
 * Before a run: the default image (the holder always uses it) must exist; in a
 * terminal a missing one is offered for building, elsewhere the run fails
 * closed with the command. A profile's Dockerfile is built when its tag is missing.
 */
export async function ensureRunImages(o: EnsureInput): Promise<void> {
  const ref = defaultImageRef(o.env);
  const [facts, custom] = await Promise.all([
    inspectImage(o.docker, ref),
    o.choice.kind === 'dockerfile' ? inspectImage(o.docker, o.choice.ref) : Promise.resolve(null),
  ]);
  if (facts === null) {
    const how = `stashbase agent docker build`;
    if (!o.interactive) throw new SandboxUnavailableError(`the Docker sandbox image ${ref} is not built; nothing was run. Build it with: ${how}`);
    if (!(await confirm(`The Docker sandbox image ${ref} is not built yet. Build it now (a few minutes)?`))) {
      throw new SandboxUnavailableError(`the Docker sandbox image ${ref} is not built; nothing was run. Build it with: ${how}`);
    }
    const build = await defaultBuild(o.docker, o.home, o.env, false);
    build.write();
    await streamBuild(build.command);
  } else if (ageDays(facts) > REMINDER_DAYS) {
    o.warn(`the sandbox image ${ref} is ${ageDays(facts)} days old; for current agent CLIs run: stashbase agent docker build --force`);
  }
  if (o.choice.kind === 'dockerfile' && custom === null) {
    process.stderr.write(`Building ${o.choice.dockerfile} as ${o.choice.ref}\n`);
    await streamBuild(customBuild(o.docker, o.choice, false));
  }
}
