// What a remote run runs, worked out without touching the disk or the engine
// (facts that need the engine come in): the setup-and-lease, the agent's
// sealed container, the export, and the run's Plan for --dry-run.
import { hostname } from 'node:os';
import { join } from 'node:path';
import { AGENT_HOME, RELAY_PORT, type SealedInput } from '../../templates/docker-run.js';
import type { ExportInput, LeaseInput } from '../../templates/remote-run.js';
import { sshDestination, sshExitCommand, sshMasterCommand, sshShimScript } from '../../templates/remote-ssh.js';
import type { RemotePlanInput } from '../../templates/remote-plan.js';
import { findTool } from '../util/find-tool.js';
import { LABEL_ORIGIN, REMOTE_RELAY, remoteHomeVolume, remoteNames, toolsMount, toolsVolume, volumeCreateOf, type VolumeSpec, workspaceVolume } from '../../templates/remote-run.js';
import { git } from '../../templates/git.js';
import type { Command } from '../../templates/command.js';
import { sha256 } from '../docker/engine.js';
import { interceptsTls } from '../proxy/intercepts.js';
import { buildRemotePlan } from '../../templates/remote-plan.js';
import type { Plan } from '../../templates/plan.js';
import { containerEnv, containerUser, type DockerContext, seccompFileOf } from '../docker/prepare.js';
import { envFileOf } from '../docker/env-file.js';
import { defaultImageRef } from '../docker/image.js';
import { runDirOf } from '../run/run-dir.js';
import { sessionFile } from '../run/session.js';
import type { RemotePlan } from './execute.js';
import { runLimits } from '../proxy/setup.js';
import { repoFormat } from '../git/run-git-dir.js';
import type { RemoteTarget } from './target.js';

export interface RemotePrepared {
  /** The run's tools volume, and a new run's workspace, made on the engine (labelled with where they came from): by the CLI, or the API. */
  volumes: VolumeSpec[];
  /** A new run's bundle of its branch, made by your git into `bundleFile`; null for a resumed one. */
  bundle: Command | null;
  bundleFile: string;
  lease: LeaseInput;
  /** The agent's container; its entrypoint is a placeholder until the engine said the image's. */
  sealed: SealedInput;
  export: ExportInput;
  interceptTls: boolean;
  plan: Plan;
}

/** The agents' home volume on a remote engine of this machine, user and stashbase home (one per origin there). */
export function remoteHome(stashbaseHome: string): string {
  return remoteHomeVolume(hostname(), process.getuid?.() ?? 0, stashbaseHome, sha256);
}

export function prepareRemote(ctx: DockerContext, target: RemoteTarget, rp: RemotePlan, facts: { seconds: number }): RemotePrepared {
  const docker = ctx.docker;
  const runDir = runDirOf(ctx.stashbaseHome, ctx.session);
  const interceptTls = interceptsTls(ctx.profile);
  const user = containerUser(false) ?? '0:0';
  const memory = ctx.memory ?? ctx.profile.sandbox.memory;
  const cpus = ctx.cpus ?? ctx.profile.sandbox.cpus;
  const helperImage = defaultImageRef(ctx.env);
  const origin = hostname();
  const home = remoteHome(ctx.stashbaseHome);
  const lease: LeaseInput = { docker, session: ctx.session, pid: process.pid, image: helperImage, workspace: rp.workspace, fresh: rp.fresh, branch: rp.branch, user, seconds: facts.seconds, origin };
  const sealed: SealedInput = {
    docker, session: ctx.session, pid: process.pid, image: ctx.choice.ref, user, cwd: rp.repo.subdir === '' ? rp.repo.root : join(rp.repo.root, rp.repo.subdir),
    env: containerEnv({ ...ctx, network: 'sealed' }, `http://127.0.0.1:${RELAY_PORT}`, interceptTls),
    mounts: [
      { type: 'volume', source: rp.workspace, target: rp.repo.root, readonly: false },
      { type: 'volume', source: home, target: AGENT_HOME, readonly: false },
      toolsMount(ctx.session),
    ],
    memory, cpus, tty: ctx.tty, command: ctx.command,
    // runc by name: an engine's default runtime may be gVisor, whose containers never share the lease's namespace.
    hostEnv: {}, seccomp: seccompFileOf(runDir), envFile: envFileOf(runDir), runtime: 'runc', labels: [`${LABEL_ORIGIN}=${origin}`],
    // The lease is the namespace's init (it reaps; docker-init would be no init there).
    pidNamespace: remoteNames(ctx.session).lease, networkOf: remoteNames(ctx.session).lease,
    relay: REMOTE_RELAY, relayInside: REMOTE_RELAY, entrypoint: ['<the image\'s entrypoint, if any>'], relayStreams: runLimits(ctx.profile).maxConnections,
  };
  const exp: ExportInput = { docker, session: ctx.session, pid: process.pid, image: helperImage, workspace: rp.workspace, user, branch: rp.branch, base: rp.base, objectFormat: repoFormat(rp.repo.gitDir).objectFormat, seccomp: seccompFileOf(runDir), origin, seconds: facts.seconds, ...(memory !== undefined ? { memory } : {}), ...(cpus !== undefined ? { cpus } : {}) };
  const volumes = [toolsVolume(ctx.session, process.pid, origin), ...(rp.fresh ? [workspaceVolume(rp.workspace, `${origin}:${rp.repo.root}`, rp.name)] : [])];
  // The run's branch, made at the base: exactly the history checked for deny_read (HEAD may have moved since).
  const bundleFile = join(runDir, 'repo.bundle');
  const g = git(rp.repo.git, rp.repo.root, ['bundle', 'create', '-q', bundleFile, `refs/heads/${rp.branch}`]);
  const bundle = rp.fresh ? { ...g, env: { ...g.env, GIT_NO_REPLACE_OBJECTS: '1' } } : null;
  const plan = buildRemotePlan({
    session: ctx.session, profile: ctx.profile.name, engine: target.host, from: target.from, sessionFile: sessionFile(ctx.stashbaseHome, ctx.session), runDir,
    repo: rp.repo.root, name: rp.name, branch: rp.branch, fresh: rp.fresh, bundle, volumes: volumes.map((v) => volumeCreateOf(docker, v)), lease, sealed, export: exp,
    ssh: sshSteps(target.host, join(runDir, 'ssh')),
  });
  return { volumes, bundle, bundleFile, lease, sealed, export: exp, interceptTls, plan };
}

/** Over ssh://, the run's one connection (lib/remote/ssh-mux.ts) as the dry run shows it: its master, its shim, its end. */
function sshSteps(host: string, dir: string): RemotePlanInput['ssh'] {
  const d = sshDestination(host);
  if (d === null) return null;
  const ssh = findTool('ssh') ?? 'ssh';
  const socket = join(dir, 'mux');
  return { master: sshMasterCommand(ssh, d, socket), shim: sshShimScript(ssh, socket, d), exit: sshExitCommand(ssh, d, socket) };
}
