// `agent run` on the Docker backend: the run's facts (CLI, engine, image, git
// identity), then the plan printed (--dry-run) or carried out.
import type { Plan } from '../../templates/plan.js';
import type { DockerWorktree } from '../worktree/run.js';
import { capture } from '../exec.js';
import { findTool } from '../util/find-tool.js';
import type { Profile } from '../profile/types.js';
import { SandboxUnavailableError } from '../errors.js';
import { findDocker, goArch, isDesktop } from './engine.js';
import { chooseNetwork, type DockerNetwork, gvisorNote, isGvisor, relayBinary, relayPath } from './sealed.js';
import { chooseImage } from './image.js';
import type { DockerContext } from './prepare.js';
import { type EngineApi, engineApiOfEndpoint } from './api.js';
import type { SshMux } from '../remote/ssh-mux.js';
import { runDirOf } from '../run/run-dir.js';
import { cliSendsHeaders, dockerEndpoint, type Endpoint } from './endpoint.js';

export interface DockerRunInput {
  session: string;
  profile: Profile;
  command: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  home: string;
  stashbaseHome: string;
  placeholders: Record<string, string>;
  /** The per-run credential the proxy asks of every request. */
  proxyToken: string;
  /** The bearer token of the run's hook endpoints (lib/hooks/endpoints.ts). */
  hookToken: string;
  flags: { dockerImage?: string; dockerDockerfile?: string; dockerMemory?: string; dockerCpus?: string; dockerIsolatedPaths?: string; dockerNetwork?: string; dockerRuntime?: string };
  dryRun: boolean;
  /** Prints a dry run's plan (as text or JSON, wrapped in a worktree's steps). */
  print: (plan: Plan) => void;
  worktree?: DockerWorktree;
  /** Where the profile's paths are from: your folder, also for a worktree run (a Dockerfile is built from your checkout, never from the agent's). */
  profileCwd: string;
  interactive: boolean;
  warn: (msg: string) => void;
  announce: boolean;
  /** A remote run (lib/remote/execute.ts): its engine, and what was worked out before it was contacted. */
  remote?: { target: import('../remote/target.js').RemoteTarget; plan: import('../remote/execute.js').RemotePlan };
  /** This machine's engine as the CLI reaches it, when agent run has already asked (lib/remote/target.ts engineFor). */
  endpoint?: Endpoint;
}

/** The host's global git identity, forwarded as authorship metadata (never a credential). */
export async function gitIdentity(env: NodeJS.ProcessEnv): Promise<{ name?: string; email?: string }> {
  const git = findTool('git', env);
  if (!git) return {};
  // Exit status 1: no such setting.
  const stdout = await capture({ file: git, args: ['config', '--global', '--get-regexp', '^user\\.(name|email)$'] }).catch(() => '');
  const out: { name?: string; email?: string } = {};
  for (const line of stdout.split('\n')) {
    const m = /^user\.(name|email) (.*)$/.exec(line);
    if (m) out[m[1] as 'name' | 'email'] = m[2] as string;
  }
  return out;
}

export async function runDocker(o: DockerRunInput): Promise<number> {
  const docker = o.dryRun ? (findTool('docker', o.env) ?? 'docker') : findDocker(o.env);
  // Asked while the engine is (a process start of its own).
  const identity = gitIdentity(o.env);
  // Which engine this is was decided before (lib/remote/target.ts, by agent run): another machine's makes `o.remote`.
  // A dry run does not ask the engine: its runtimes are not checked, and the relay is the one for this machine's architecture.
  // A local engine is asked through its API where the CLI would use a socket (lib/docker/api.ts): no process start per question.
  // A remote run over ssh:// shares one connection among its docker commands, this first question included (lib/remote/ssh-mux.ts).
  const mux = o.remote !== undefined && !o.dryRun ? await (await import('../remote/ssh-mux.js')).startSshMux(o.remote.target.host, runDirOf(o.stashbaseHome, o.session)) : null;
  const api = o.dryRun ? null : await runEngineApi(o, docker, mux);
  try {
    return await runDockerOn(o, docker, api, mux, identity);
  } finally {
    await mux?.stop();
  }
}

/**
 * The engine's API for a run, where stashbase speaks to it as the CLI would; null leaves every request to the CLI:
 * a remote engine's where the CLI would reach it without TLS (lib/remote/engine-api.ts), a local one's socket, and
 * none when the CLI sends headers of the user's with every request (config.json's HttpHeaders).
 */
export async function runEngineApi(o: Pick<DockerRunInput, 'env' | 'home' | 'remote' | 'endpoint'>, docker: string, mux: SshMux | null): Promise<EngineApi | null> {
  if (cliSendsHeaders(o.env, o.home)) return null;
  if (o.remote !== undefined) return (await import('../remote/engine-api.js')).remoteEngineApi(o.remote.target, o.env, o.home, mux);
  return engineApiOfEndpoint(o.endpoint ?? (await dockerEndpoint(docker, o.env, o.home)), o.env);
}

async function runDockerOn(o: DockerRunInput, docker: string, api: EngineApi | null, mux: SshMux | null, identity: Promise<{ name?: string; email?: string }>): Promise<number> {
  const engine = o.dryRun ? null : await (await import('./engine.js')).engineInfo(docker, api);
  // A remote run is sealed: the firewall's proxy would listen where the engine's containers reach it, on another machine.
  if (o.remote !== undefined && (o.flags.dockerNetwork ?? o.profile.sandbox.dockerNetwork) === 'firewall') {
    throw new SandboxUnavailableError(`network = "firewall" cannot run on a remote engine: its proxy listens where the engine's containers reach it, which is another machine's network; a remote run is sealed (its only way out the relay, over the engine's own connection). Leave the network unset or "sealed"; nothing was run`);
  }
  // A remote run's lease is the init of the process namespace the agent's container joins (templates/remote-run.ts): a
  // runtime with a kernel of its own per container (gVisor) gives the agent a namespace of its own, and no lease.
  const runtimeAsked = o.flags.dockerRuntime ?? o.profile.sandbox.dockerRuntime;
  if (o.remote !== undefined && runtimeAsked !== undefined && runtimeAsked !== 'runc') {
    throw new SandboxUnavailableError(`runtime = "${runtimeAsked}" cannot run a remote run: its lease is the init of the process namespace the agent's container joins, and a runtime with a kernel of its own per container (gVisor's runsc) would give the agent a namespace of its own, with no lease to end it when the connection is lost. Remote runs use runc; nothing was run`);
  }
  // A remote run: sealed, under runc by name (lib/remote/prepare.ts).
  const choice: { network: DockerNetwork; runtime?: string; note?: string } = o.remote !== undefined ? { network: 'sealed' } : chooseNetwork(o.profile, o.flags, engine?.runtimes ?? null);
  if (choice.note) o.warn(choice.note);
  // A gVisor that implements clone3 lets the agent make namespaces inside it: said, never silent.
  if (engine !== null && choice.runtime !== undefined && isGvisor(engine.runtimes, choice.runtime)) {
    const note = await gvisorNote(engine.runtimes[choice.runtime]!.path, o.stashbaseHome);
    if (note !== null) o.warn(note);
  }
  const relay = choice.network !== 'sealed' ? undefined : engine === null ? relayPath(goArch(process.arch === 'x64' ? 'x86_64' : process.arch)) : relayBinary(engine.arch);
  const ctx: DockerContext = {
    session: o.session, profile: o.profile, command: o.command, cwd: o.cwd, env: o.env, home: o.home, stashbaseHome: o.stashbaseHome,
    placeholders: o.placeholders, proxyToken: o.proxyToken, hookToken: o.hookToken, docker,
    choice: chooseImage(o.profile, o.flags, { cwd: o.profileCwd, env: o.env, home: o.home, stashbaseHome: o.stashbaseHome }),
    desktop: isDesktop(process.platform, ''),
    extraIsolated: (o.flags.dockerIsolatedPaths ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    memory: o.flags.dockerMemory,
    cpus: o.flags.dockerCpus,
    gitIdentity: await identity,
    tty: process.stdin.isTTY === true && process.stdout.isTTY === true,
    worktree: o.worktree,
    network: choice.network,
    ...(choice.runtime !== undefined ? { runtime: choice.runtime } : {}),
    ...(relay !== undefined ? { relay } : {}),
    gvisor: choice.runtime !== undefined && isGvisor(engine?.runtimes ?? null, choice.runtime),
    api,
  };
  if (o.remote !== undefined && o.dryRun) {
    const { prepareRemote } = await import('../remote/prepare.js');
    const { leaseSeconds } = await import('../remote/lease.js');
    o.print(prepareRemote(ctx, o.remote.target, o.remote.plan, { seconds: leaseSeconds(o.env) }).plan);
    return 0;
  }
  if (o.remote !== undefined) {
    const { executeRemote } = await import('../remote/execute.js');
    return executeRemote({ ctx: { ...ctx, desktop: false }, target: o.remote.target, plan: o.remote.plan, warn: o.warn, announce: o.announce, interactive: o.interactive, mux });
  }
  if (o.dryRun) {
    const { prepareDocker } = await import('./prepare.js');
    o.print(prepareDocker(ctx, { gateway: '<gateway>', proxyPort: '<proxy-port>', canaryPort: '<canary-port>', newVolumes: null }).plan);
    return 0;
  }
  const { executeDocker } = await import('./execute.js');
  return executeDocker({ ctx: { ...ctx, desktop: engine!.desktop }, warn: o.warn, announce: o.announce, interactive: o.interactive });
}
