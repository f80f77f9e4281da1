// Which image a Docker run uses, and getting it there: the built-in default
// (built locally from the embedded Dockerfile), a profile's pre-built image
// (docker run pulls it), or a profile's Dockerfile (built from a context of
// stashbase's making, lib/docker/build-context.ts, and tagged by its content).
import { printable } from '../util/printable.js';
import { randomBytes } from 'node:crypto';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Command, formatCommand } from '../../templates/command.js';
import { type AgentsBuild, DEFAULT_IMAGE, defaultBuildCommand, dockerfileBuildCommand, NPM_CA_FILE, REMINDER_DAYS } from '../../templates/docker-image.js';
import { ConfigError, SandboxUnavailableError } from '../errors.js';
import { inside, realRootVariant, resolveRule } from '../paths/rules.js';
import { removeTree } from '../run/run-dir.js';
import { type BuildContext, buildRoots, type DockerfileText, makeContext, readDockerfile, remoteSources } from './build-context.js';
import { ensureBuildTrusted } from '../profile/trust.js';
import { runShown } from '../exec.js';
import type { Profile } from '../profile/types.js';
import { confirm } from '../util/prompt.js';
import { agentsSource, npmSettings } from './agents-source.js';
import { SANDBOX_DOCKERFILE } from './dockerfile-text.js';
import { type ImageFacts, inspectImage, sha256 } from './engine.js';
import type { EngineApi } from './api.js';

export type ImageChoice =
  | { kind: 'default'; ref: string }
  | { kind: 'image'; ref: string }
  | {
    kind: 'dockerfile';
    /** The tag of what the inputs are now (the build may find them changed: then its own). */
    ref: string;
    /** The digest of the Dockerfile and its inputs now (lib/docker/build-context.ts). */
    digest: string;
    file: DockerfileText;
    /** Read-only during runs (lib/docker/build-context.ts buildRoots). */
    roots: string[];
    network: boolean;
    denied: (abs: string) => boolean;
    /** The profile, for the trust command a refusal prints (null: the built-in default). */
    profile: string | null;
  };

/** The built-in image's tag; STASHBASE_DOCKER_IMAGE renames it (tests, side-by-side builds). */
export function defaultImageRef(env: NodeJS.ProcessEnv): string {
  return env.STASHBASE_DOCKER_IMAGE || DEFAULT_IMAGE;
}

/** Where every Dockerfile build is kept: one repository, tagged by content. */
export const DOCKERFILE_REPOSITORY = 'stashbase-dockerfile';

/**
 * A Dockerfile build's tag: from the digest of its text and its inputs, so an
 * edited Dockerfile or input is a new image, and the same content (a worktree's
 * copy) is the same one.
 */
export function dockerfileTag(digest: string): string {
  return `${DOCKERFILE_REPOSITORY}:${digest.slice(0, 32)}`;
}

const real = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};

/**
 * Whether a deny_read rule of the profile (or stashbase's own home) names a
 * path: a build never reads it. The inputs' paths are real ones: each rule is
 * resolved from your home and folder as given and as they really are (a home
 * under a link names the same files).
 */
export function readDenied(profile: Profile, home: string, cwd: string, stashbaseHome: string): (abs: string) => boolean {
  const rules = [...new Set([`${home}\0${cwd}`, `${real(home)}\0${real(cwd)}`])].flatMap((k) => {
    const [h, c] = k.split('\0') as [string, string];
    return profile.filesystem.denyRead.flatMap((e) => {
      const r = resolveRule(e, h, c);
      const v = realRootVariant(e, r, h, c);
      return v === null ? [r] : [r, v];
    });
  });
  const homes = [stashbaseHome, real(stashbaseHome)];
  // Each path's real path resolved once, not per question (a remote run asks of every file in its history).
  const paths = rules.flatMap((r) => (r.kind === 'path' ? [r.path, real(r.path)] : []));
  const patterns = rules.flatMap((r) => (r.kind === 'path' ? [] : [r.regex]));
  return (abs) => homes.some((h) => inside(abs, h)) || paths.some((p) => inside(abs, p)) || patterns.some((re) => re.test(abs));
}

export interface ChoiceContext {
  cwd: string;
  env: NodeJS.ProcessEnv;
  home: string;
  stashbaseHome: string;
}

export function chooseImage(profile: Profile, flags: { dockerImage?: string; dockerDockerfile?: string }, c: ChoiceContext): ImageChoice {
  const { cwd, env } = c;
  // A per-run flag replaces the profile's choice of either kind.
  const fromFlags = flags.dockerImage !== undefined || flags.dockerDockerfile !== undefined;
  const image = fromFlags ? flags.dockerImage : profile.sandbox.image;
  const dockerfile = fromFlags ? flags.dockerDockerfile : profile.sandbox.dockerfile;
  if (image !== undefined) return { kind: 'image', ref: image };
  if (dockerfile !== undefined) {
    const file = readDockerfile(dockerfile, cwd, fromFlags ? '--docker-dockerfile' : 'sandbox.dockerfile');
    const network = profile.sandbox.buildNetwork;
    const remote = remoteSources(file.text);
    if (remote.length > 0 && !network) {
      throw new ConfigError(`sandbox.dockerfile: ${file.path} has ADD ${remote[0]}, which the engine downloads with its own network even in a build without one; download it yourself and COPY it, or set build_network = true under [sandbox] (weaker)`);
    }
    const denied = readDenied(profile, c.home, cwd, c.stashbaseHome);
    const digest = makeContext(file, denied, network, null).digest;
    return { kind: 'dockerfile', ref: dockerfileTag(digest), digest, file, roots: buildRoots(file), network, denied, profile: profile.file === null ? null : profile.name };
  }
  return { kind: 'default', ref: defaultImageRef(env) };
}

/**
 * What a run keeps read-only for the next build of the profile's Dockerfile:
 * the Dockerfile and what it copies. A copy that would hold the folder the
 * agent writes (`writable`, as COPY . does from the top of your project)
 * cannot be kept: the run is refused.
 */
export function buildReadOnly(choice: ImageChoice, writable: string): string[] {
  return choice.kind === 'dockerfile' ? rootsOutside(choice.file.path, choice.roots, writable) : [];
}

function rootsOutside(dockerfile: string, roots: string[], writable: string): string[] {
  for (const r of roots) {
    if (inside(writable, r)) {
      throw new ConfigError(
        `${dockerfile} copies ${r}, which holds the folder the agent writes (${writable}): the run cannot keep it read-only for your next build, so nothing was run. Copy only what the image needs (COPY requirements.txt …), or build the image yourself and name it in sandbox.image`,
      );
    }
  }
  return roots;
}

/** For a native run of a profile that names a Dockerfile: what its build reads (no content read), or the Dockerfile alone when it cannot be read (the agent must not create it either). */
export function nativeBuildReadOnly(profile: Profile, c: ChoiceContext, writable: string): string[] {
  if (profile.sandbox.dockerfile === undefined) return [];
  let file: DockerfileText;
  try {
    file = readDockerfile(profile.sandbox.dockerfile, c.cwd, 'sandbox.dockerfile');
  } catch (e) {
    if (e instanceof ConfigError) return [resolve(c.cwd, profile.sandbox.dockerfile)];
    throw e;
  }
  let roots: string[];
  try {
    roots = buildRoots(file);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    roots = [file.path, join(file.context, '.dockerignore')];
  }
  return rootsOutside(file.path, roots, writable);
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

/**
 * Builds a profile's Dockerfile from a context of stashbase's making (its
 * inputs only, copied; what deny_read names left out and said), with no
 * network unless the profile's build_network asks for the engine's.
 */
export async function buildDockerfile(docker: string, c: Extract<ImageChoice, { kind: 'dockerfile' }>, pull: boolean, o: { stashbaseHome: string; env: NodeJS.ProcessEnv; interactive: boolean }): Promise<string> {
  const dir = join(o.stashbaseHome, 'docker', 'builds', randomBytes(8).toString('hex'));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    // Read once, written as read: what is built is what is hashed and trusted.
    const made: BuildContext = makeContext(c.file, c.denied, c.network, dir);
    // Names in the build's folder are anyone's who could write there (an agent's run): shown escaped (review, round 29).
    for (const l of made.left) process.stderr.write(`stashbase: left out of the build: ${printable(l, true)}\n`);
    await ensureBuildTrusted({ path: c.file.path, digest: made.digest, text: c.file.text, files: made.files, profile: c.profile, interactive: o.interactive, env: o.env });
    const tag = dockerfileTag(made.digest);
    const cmd = dockerfileBuildCommand({ docker, tag, dockerfile: made.dockerfile as string, context: join(dir, 'context'), pull, network: c.network, source: c.file.path, digest: made.digest });
    process.stderr.write(`Building ${c.file.path} as ${tag}${c.network ? '' : ' (no network)'}\n`);
    const code = await runShown(cmd, { noInput: true, toStderr: true });
    if (code !== 0) {
      const hint = c.network ? '' : '; the build has no network (a step that downloads fails): build_network = true under [sandbox] gives it the engine\'s (weaker, see docs/docker.md)';
      throw new SandboxUnavailableError(`the build of ${c.file.path} failed (exit code ${code})${hint}`);
    }
    return tag;
  } finally {
    removeTree(dir);
  }
}

/** What a failed build said that means its base image or a download could not be had (no registry, no network). */
const UNREACHABLE = /pull access denied|no such host|failed to resolve|manifest unknown|error pulling image|failed to fetch|dial tcp|i\/o timeout|TLS handshake timeout|Temporary failure resolving|Could not resolve|connection refused/i;

/** Why a build failed, in words, with what to do when its base or its downloads were out of reach. */
export function buildFailure(code: number, said: string, cmd: Command, env: NodeJS.ProcessEnv): string {
  const base = env.STASHBASE_SANDBOX_BASE_IMAGE;
  const m = UNREACHABLE.exec(said);
  if (m === null) return `the image build failed (exit code ${code}): ${formatCommand(cmd)}`;
  return [
    `the image build failed (exit code ${code}): it could not reach a registry or a download (Docker said: ${JSON.stringify(m[0])})`,
    `${base ? `its base image is ${base} (STASHBASE_SANDBOX_BASE_IMAGE)` : 'its base image comes from a registry'}; where none is reachable:`,
    '  - build from an image you have: STASHBASE_SANDBOX_BASE_IMAGE=<local image> stashbase agent docker build',
    "  - take the agents from npm's registry (your npm config) instead of the vendors' installers: stashbase agent docker build --agents-from npm",
    '  - or run an image you already have: stashbase agent run --docker-image <image> -- …',
  ].join('\n');
}

/** Runs a build with Docker's own progress on stderr (stdout stays for results); what it said is kept to explain a failure. */
export async function streamBuild(cmd: Command, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let said = '';
  // The engine's words (a remote one's are its own to choose): shown line by line, escaped; all of it read before its
  // end is judged.
  const code = await runShown(cmd, { noInput: true, toStderr: true, tap: (d) => (said = (said + d.toString('utf8')).slice(-64 * 1024)) });
  if (code !== 0) throw new SandboxUnavailableError(buildFailure(code, said, cmd, env));
}

export function ageDays(facts: ImageFacts, now = Date.now()): number {
  const built = facts.builtLabel ? new Date(facts.builtLabel) : facts.created;
  return Math.floor((now - built.getTime()) / 86_400_000);
}

export interface EnsureInput {
  docker: string;
  /** The engine's API, where stashbase speaks to it directly (lib/docker/api.ts). */
  api?: EngineApi | null;
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
    inspectImage(o.docker, ref, o.api ?? null),
    o.choice.kind === 'dockerfile' ? inspectImage(o.docker, o.choice.ref, o.api ?? null) : Promise.resolve(null),
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
    // The tag of what was built: the run runs that image.
    o.choice.ref = await buildDockerfile(o.docker, o.choice, false, { stashbaseHome: o.home, env: o.env, interactive: o.interactive });
  }
}
