// Gathers what a Docker run needs (image, mounts, environment, names) and
// builds its Plan. Nothing here changes the disk or talks to Docker: facts
// that need the engine (gateway, ports, which volumes exist) come in as input.
import { existsSync } from 'node:fs';
import { interceptsTls } from '../proxy/intercepts.js';
import type { EngineApi } from './api.js';
import { basename, dirname, join, relative } from 'node:path';
import { caEnv, proxyEnv, SANDBOX_MARKER_ENV } from '../../templates/native-plan.js';
import { hookVariables } from '../hooks/run-env.js';
import type { ScanMount } from '../hooks/host-scan.js';
import { STAND_IN_PATH } from '../../templates/stand-in.js';
import { buildDockerPlan, type DockerPlanInput } from '../../templates/docker-plan.js';
import { DESKTOP_HOST } from '../../templates/docker-firewall.js';
import { AGENT_HOME, type AgentInput, HOME_VOLUME, type HolderInput, type Mount, RELAY_PORT, type SealedInput } from '../../templates/docker-run.js';
import type { DockerNetwork } from './sealed.js';
import { sizeArg } from '../relay/terminal.js';
import type { IsolatedVolume } from '../../templates/docker-volumes.js';
import type { Plan } from '../../templates/plan.js';
import { auditFile } from '../run/audit.js';
import { refuseLinkedSources } from '../paths/bind-sources.js';
import { SandboxUnavailableError, UsageError } from '../errors.js';
import { planProtection, type Protection } from '../paths/protect.js';
import { isolatedPathProblem, sizeBytes } from '../profile/docker-values.js';
import { runLimits } from '../proxy/setup.js';
import type { Profile } from '../profile/types.js';
import { executableGitState, findRepoRoot, gitConfigTargets, gitLinkProblem } from '../git/repo.js';
import { agentGitConfigEnv } from '../git/agent-git-env.js';
import { realPathOf } from '../util/real-path.js';
import { checkoutGit, plannedGitDir, planRunGitDir, repoFormat, type RunGitDirPlan, alternateStores, moduleGitDirs, untakenGitState, untakenWarning } from '../git/run-git-dir.js';
import { inside, resolveRule } from '../paths/rules.js';
import { existingToolConfigs } from '../paths/tool-configs.js';
import { ownExecutables } from '../hooks/cli-files.js';
import { sessionFile } from '../run/session.js';
import { PROXY_VARS } from '../env-names.js';
import { caDirOf, runDirOf, runStateDirOf } from '../run/run-dir.js';
import { measureSeccompPath } from './home-volume.js';
import { envFileOf } from './env-file.js';

/** Where a run's seccomp profile for the agent container is written (lib/docker/execute.ts). */
export const seccompFileOf = (runDir: string) => join(runDir, 'seccomp.json');
import { sha256 } from './engine.js';
import { buildReadOnly, defaultImageRef, type ImageChoice } from './image.js';
import type { DockerWorktree } from '../worktree/run.js';

export const TERMINAL_VARS = ['TERM', 'COLORTERM', 'TERM_PROGRAM', 'TERM_PROGRAM_VERSION', 'LC_TERMINAL'] as const;
/** Where the CA files are mounted inside the container. */
export const CONTAINER_CA_DIR = '/etc/stashbase';

export interface DockerContext {
  session: string;
  profile: Profile;
  command: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  home: string;
  stashbaseHome: string;
  placeholders: Record<string, string>;
  proxyToken: string;
  /** The bearer token of the run's hook endpoints (lib/hooks/endpoints.ts). */
  hookToken: string;
  docker: string;
  choice: ImageChoice;
  desktop: boolean;
  extraIsolated: string[];
  memory?: string;
  cpus?: string;
  gitIdentity: { name?: string; email?: string };
  tty: boolean;
  /** A worktree run: the worktree and the repository's .git are mounted instead of the working directory. */
  worktree?: DockerWorktree;
  /** The firewall holder (the specification's design) or a sealed container and the relay (lib/docker/sealed.ts). */
  network: DockerNetwork;
  /** The OCI runtime of the agent's container; unset: the engine's default. */
  runtime?: string;
  /** A sealed run's relay binary, for the engine's architecture. */
  relay?: string;
  /** The runtime is gVisor's runsc (its seccomp profile differs: templates/docker-seccomp.ts). */
  gvisor?: boolean;
  /** The engine's API where stashbase speaks to it directly (a local socket: lib/docker/api.ts); else the CLI does. */
  api?: EngineApi | null;
}

/** Known once the engine answered; dry runs show placeholders. */
export interface RuntimeFacts {
  gateway: string;
  proxyPort: number | string;
  canaryPort: number | string;
  /** Isolated-path volumes that do not exist yet; null in a dry run (all shown). */
  newVolumes: IsolatedVolume[] | null;
  /** A sealed run: the image's ENTRYPOINT, which the relay's gate runs; unknown in a dry run. */
  entrypoint?: string[];
}

export interface DockerPrepared {
  plan: Plan;
  holder: HolderInput;
  agent: AgentInput;
  /** A sealed run's agent container (with the relay, its gate and no network). */
  sealed: SealedInput | null;
  runDir: string;
  protection: Protection;
  volumes: IsolatedVolume[];
  proxyBind: string;
  interceptTls: boolean;
  /** The working tree and its git directories as the container sees them (for the secret scan's confinement). */
  treeMounts: ScanMount[];
  /** The stand-in stashbase's file in the run directory (mounted in every run). */
  standIn: string;
  /** The run's own git directory: made before the container starts, imported after it. */
  gitDir: RunGitDirPlan | null;
}

function slug(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 30) || 'x';
}

/** One volume per repository and entry, named so `docker volume ls` says whose it is. */
export function isolatedVolumes(cwd: string, entries: string[]): IsolatedVolume[] {
  const repo = findRepoRoot(cwd)?.root ?? cwd;
  const seen = new Set<string>();
  const out: IsolatedVolume[] = [];
  for (const entry of entries) {
    const problem = isolatedPathProblem(entry);
    if (problem) throw new UsageError(`--docker-isolated-paths: ${problem}`);
    const target = join(cwd, entry);
    const rel = relative(repo, target);
    if (seen.has(rel)) continue;
    seen.add(rel);
    out.push({ name: `stashbase-isolated-${slug(basename(repo))}-${sha256(repo).slice(0, 10)}-${slug(rel)}-${sha256(rel).slice(0, 6)}`, entry: rel, target, repo });
  }
  return out;
}

/** Exactly what the container gets; a profile's own GIT_* variables win over the host's identity. */
export function containerEnv(ctx: DockerContext, proxyUrl: string, interceptTls: boolean, ownGitDir = false): Record<string, string> {
  const env: Record<string, string> = { HOME: AGENT_HOME, ...SANDBOX_MARKER_ENV };
  for (const name of TERMINAL_VARS) {
    const v = ctx.env[name];
    if (v !== undefined && v !== '') env[name] = v;
  }
  if (ctx.gitIdentity.name !== undefined) env.GIT_AUTHOR_NAME = env.GIT_COMMITTER_NAME = ctx.gitIdentity.name;
  if (ctx.gitIdentity.email !== undefined) env.GIT_AUTHOR_EMAIL = env.GIT_COMMITTER_EMAIL = ctx.gitIdentity.email;
  Object.assign(env, proxyEnv(proxyUrl, ctx.proxyToken));
  // Every other proxy variable set, empty: the docker CLI adds to a container each one it does not set from your
  // config.json's `proxies` (review, round 36: FTP_PROXY, with your proxy's user and password, reached the agent).
  for (const name of PROXY_VARS) env[name] ??= '';
  if (interceptTls) Object.assign(env, caEnv(CONTAINER_CA_DIR));
  Object.assign(env, ctx.placeholders, ctx.profile.configEnv, hookVariables(ctx.profile, proxyUrl, ctx.hookToken));
  // The agent's git in the run's own git directory: its modes shared with no one (lib/git/agent-git-env.ts).
  if (ownGitDir) Object.assign(env, agentGitConfigEnv(env));
  return env;
}

function shadowMounts(protection: Protection, runDir: string): Mount[] {
  const mounts: Mount[] = [];
  for (const d of protection.denyRead) {
    // Mode 000 and read-only: unreadable without CAP_DAC_OVERRIDE, and chmod hits EROFS.
    mounts.push({ type: 'bind', source: d.kind === 'dir' ? join(runDir, 'empty') : join(runDir, 'denied'), target: d.path, readonly: true });
  }
  for (const d of protection.denyWrite) mounts.push({ type: 'bind', source: d.path, target: d.path, readonly: true });
  return mounts;
}

/**
 * The directories between the mounted folder and each protected path, bound
 * onto themselves: a mount point cannot be renamed (EBUSY), so the agent cannot
 * move `.git` (or any parent of a protected path) away and plant a new
 * `.git/config` in its place, which your own git would run on the host later.
 * Docker mounts parents before children whatever the order given.
 */
function pinMounts(protection: Protection, within: string, taken: Mount[]): Mount[] {
  const targets = new Set(taken.map((m) => m.target));
  return [...new Set(protection.pinned)]
    .filter((p) => p.startsWith(within + '/') && !targets.has(p) && existsSync(p))
    .map((p): Mount => ({ type: 'bind', source: p, target: p, readonly: false }));
}

/** The folders strictly between `top` and `path`, outermost first. */
function between(top: string, path: string): string[] {
  const out: string[] = [];
  for (let d = dirname(path); d !== top && d.startsWith(top + '/'); d = dirname(d)) out.unshift(d);
  return out;
}

export function containerUser(desktop: boolean): string | null {
  // Docker Desktop maps file ownership itself and runs as root; on Linux, the user's ids.
  if (desktop && process.platform !== 'linux') return null;
  return `${process.getuid?.() ?? 0}:${process.getgid?.() ?? 0}`;
}

/**
 * The run's own git directory (lib/git/run-git-dir.ts), when the folder the
 * container gets is the top of a checkout: a repository's `.git`, a linked
 * worktree's (an agent worktree's, whose other worktrees it never sees) or a
 * submodule's. A folder deeper in a repository shows no git directory, as before.
 */
export function dockerGitDir(ctx: Pick<DockerContext, 'cwd' | 'worktree' | 'session' | 'stashbaseHome'>): RunGitDirPlan | null {
  const located = checkoutGit(ctx.worktree?.path ?? ctx.cwd);
  if (located === null || !('gitDir' in located) || repoFormat(located.gitDir).reftable) return null;
  return planRunGitDir({ gitDir: located.gitDir, admin: located.admin, stateDir: runStateDirOf(ctx.stashbaseHome, ctx.session), hideOthers: ctx.worktree !== undefined, own: ctx.worktree?.branch, workTree: ctx.worktree?.path ?? ctx.cwd });
}

/** The shadow mounts' paths, from the disk as it is before the run creates its stand-ins. */
export function dockerProtection(ctx: DockerContext, git: RunGitDirPlan | null): Protection {
  const p = ctx.profile;
  // Inside the git directory, the run's own one protects what git obeys.
  const outsideGit = (e: string) => {
    const r = resolveRule(e, ctx.home, ctx.cwd);
    return git === null || r.kind === 'pattern' || !inside(r.path, git.gitDir);
  };
  const gitTargets = gitConfigTargets(ctx.cwd, ctx.home, ctx.env, p.filesystem.allowWrite);
  // No git directory of the run's own for the top's (reftable refs, an objects or refs linked elsewhere, a pointer not
  // taken): what git would use of it, and where its links lead, read-only where the container sees them, not folders of
  // the tree whose HEAD, refs, reflogs and hooks the agent writes live (found in review).
  const top = ctx.worktree?.path ?? ctx.cwd;
  const realTop = realPathOf(top) ?? top;
  const inTree = (p: string) => inside(p, top) || inside(p, realTop);
  const untaken = git === null ? untakenGitState(top).filter(inTree) : [];
  // The stores your objects/info/alternates names, read as your own objects: those in the tree read-only.
  const alternates = git !== null ? [git.gitDir, ...moduleGitDirs(git.gitDir)].flatMap(alternateStores).filter(inTree) : [];
  const protection = planProtection({
    denyRead: p.filesystem.denyRead,
    fileStandInsAt: gitTargets.files,
    // Any folder core.hooksPath sends your git to for hooks (lib/git/repo.ts).
    // And what the next build of the profile's Dockerfile reads (lib/docker/image.ts).
    denyWrite: [
      ...p.filesystem.denyWrite, ...gitTargets.paths, ...existingToolConfigs(ctx.cwd, ctx.home, p.filesystem.allowWrite),
      ...buildReadOnly(ctx.choice, ctx.worktree?.path ?? ctx.cwd),
      // stashbase's own bin/ and dist/ (the relay among them), where the tree holds them.
      ...ownExecutables(),
    ].filter(outsideGit),
    alwaysDenyRead: [],
    stateDir: ctx.stashbaseHome,
    // A worktree run mounts its own pointer file read-only already.
    alwaysDenyWrite: [...executableGitState(ctx.cwd).filter((f) => f !== ctx.worktree?.pointer && outsideGit(f)), ...untaken, ...alternates],
    home: ctx.home,
    cwd: ctx.cwd,
    within: ctx.worktree?.path ?? ctx.cwd,
  });
  const said = git === null ? untakenWarning(top) : null;
  if (said !== null) protection.warnings.push(said);
  return protection;
}

const bind = (b: { src: string; dest: string; ro: boolean }): Mount => ({ type: 'bind', source: b.src, target: b.dest, readonly: b.ro });

/** The run's plan; its protection and git directory are worked out once per run, from the disk before the stand-ins change it (`draft`). */
export function prepareDocker(ctx: DockerContext, facts: RuntimeFacts, draft?: Pick<DockerPrepared, 'protection' | 'gitDir'>): DockerPrepared {
  const p = ctx.profile;
  if (ctx.cwd === '/') throw new SandboxUnavailableError('the Docker backend mounts the working directory into the container; run it from a project folder, not /');
  const linked = gitLinkProblem(ctx.cwd);
  if (linked !== null) throw new SandboxUnavailableError(linked);
  const runDir = runDirOf(ctx.stashbaseHome, ctx.session);
  // TLS is intercepted for bound secrets and for MCP servers' tools (lib/mcp/).
  const interceptTls = interceptsTls(p);
  const gitDir = draft ? draft.gitDir : dockerGitDir(ctx);
  const protection = draft?.protection ?? dockerProtection(ctx, gitDir);
  const volumes = isolatedVolumes(ctx.cwd, [...p.sandbox.isolatedPaths, ...ctx.extraIsolated]);
  const sealedRun = ctx.network === 'sealed';
  // Sealed: the proxy listens on this host's loopback, and the agent reaches it through the relay on its own.
  const proxyBind = ctx.desktop || sealedRun ? '127.0.0.1' : facts.gateway;
  const proxyHost = sealedRun ? '127.0.0.1' : ctx.desktop ? DESKTOP_HOST : facts.gateway;
  const holder: HolderInput = { docker: ctx.docker, session: ctx.session, pid: process.pid, image: defaultImageRef(ctx.env), desktop: ctx.desktop, proxyHost, proxyPort: facts.proxyPort, canaryPort: facts.canaryPort };
  const mounts: Mount[] = [
    ...(ctx.worktree
      ? [{ type: 'bind' as const, source: ctx.worktree.path, target: ctx.worktree.path, readonly: false }, { type: 'bind' as const, source: ctx.worktree.pointer, target: ctx.worktree.pointer, readonly: true }]
      : [{ type: 'bind' as const, source: ctx.cwd, target: ctx.cwd, readonly: false }]),
    ...(gitDir?.mounts ?? []).map(bind),
    { type: 'volume', source: HOME_VOLUME, target: AGENT_HOME, readonly: false },
  ];
  if (interceptTls) {
    for (const f of ['ca.pem', 'ca-bundle.pem']) mounts.push({ type: 'bind', source: join(caDirOf(runDir), f), target: `${CONTAINER_CA_DIR}/${f}`, readonly: true });
  }
  mounts.push(...shadowMounts(protection, runDir));
  for (const v of volumes) mounts.push({ type: 'volume', source: v.name, target: v.target, readonly: false });
  // The folders above an isolated path too (found in review): renamed away, the host's copy would be where a local MCP server writes.
  const within = ctx.worktree?.path ?? ctx.cwd;
  mounts.push(...pinMounts({ ...protection, pinned: [...protection.pinned, ...volumes.flatMap((v) => between(within, v.target))] }, within, mounts));
  // Docker resolves a bind's source on this machine, and an isolated path's folder in the container: neither through a link in the tree.
  refuseLinkedSources([...mounts.filter((m) => m.type === 'bind').map((m) => m.source), ...volumes.map((v) => v.target)], within);
  // `stashbase agent hooks …` inside the container runs on the host (templates/stand-in.ts).
  // Mounted in every run: where the profile does not allow the check it stands aside, so a
  // hook installed in the shared home volume never blocks the agent's every command.
  const standIn = join(runDir, 'stashbase-stand-in');
  mounts.push({ type: 'bind', source: standIn, target: STAND_IN_PATH, readonly: true });
  const treeMounts = [{ host: ctx.worktree?.path ?? ctx.cwd, sandbox: ctx.worktree?.path ?? ctx.cwd }, ...(gitDir?.mounts ?? []).map((b) => ({ host: b.src, sandbox: b.dest }))];
  const agent: AgentInput = {
    docker: ctx.docker,
    session: ctx.session,
    pid: process.pid,
    image: ctx.choice.ref,
    user: containerUser(ctx.desktop),
    cwd: ctx.cwd,
    env: containerEnv(ctx, `http://${proxyHost}:${sealedRun ? RELAY_PORT : facts.proxyPort}`, interceptTls, gitDir !== null),
    mounts,
    memory: ctx.memory ?? p.sandbox.memory,
    cpus: ctx.cpus ?? p.sandbox.cpus,
    tty: ctx.tty,
    command: ctx.command,
    hostEnv: ctx.env.HERDR_AGENT ? {} : { HERDR_AGENT: basename(ctx.command[0] as string) },
    seccomp: seccompFileOf(runDir),
    envFile: envFileOf(runDir),
    ...(ctx.runtime !== undefined ? { runtime: ctx.runtime } : {}),
  };
  const sealed: SealedInput | null = sealedRun ? { ...agent, relay: ctx.relay ?? '<relay>', entrypoint: facts.entrypoint ?? ['<the image\'s entrypoint, if any>'], relayStreams: runLimits(p).maxConnections, size: sizeArg({ tty: ctx.tty, output: process.stdout }) } : null;
  const image = imageNote(ctx);
  const input: DockerPlanInput = {
    session: ctx.session, profile: p.name,
    sessionFile: sessionFile(ctx.stashbaseHome, ctx.session), auditFile: auditFile(ctx.stashbaseHome, ctx.session),
    runDir, image, newVolumes: facts.newVolumes ?? volumes, gitDir: gitDir === null ? null : plannedGitDir(gitDir), placeholders: protection.placeholders, fileStandIns: protection.fileStandIns, warnings: protection.warnings,
    proxyBind, interceptTls, holder, agent, sealed, measureHome: sizeBytes(p.sandbox.homeVolumeWarn) !== 0,
    measureSeccomp: measureSeccompPath(ctx.stashbaseHome),
  };
  return { plan: buildDockerPlan(input), holder, agent, sealed, runDir, protection, volumes, proxyBind, interceptTls, treeMounts, standIn, gitDir };
}

function imageNote(ctx: DockerContext): string {
  const def = defaultImageRef(ctx.env);
  const holder = `the holder runs ${def} (missing: in a terminal, offer to build it; otherwise fail closed naming stashbase agent docker build)`;
  switch (ctx.choice.kind) {
    case 'default':
      return `the agent runs ${def} too; ${holder}`;
    case 'image':
      return `the agent runs ${ctx.choice.ref} (docker run pulls it if missing); ${holder}`;
    case 'dockerfile':
      return `the agent runs ${ctx.choice.ref}, built from ${ctx.choice.file.path} when that tag is missing; ${holder}`;
  }
}
