// A remote run (docs/remote.md): the agent on another Docker engine, sealed
// (no network interface; the relay over the engine's exec stream to the proxy
// here), its working tree a clone of your commits in a volume there, its
// commits coming back as its branch through the import local runs use. Your
// secrets and the proxy stay on this machine; nothing is bound from its disk.
import { firstFew, printable } from '../util/printable.js';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { runNames, sealedAgentCommand } from '../../templates/docker-run.js';
import { REMOTE_RELAY, remoteNames, remoteTeardownCommands, remoteTeardownContainers, volumeCreateOf } from '../../templates/remote-run.js';
import { WATCHDOG_DONE, watchdogCommand } from '../../templates/docker-watchdog.js';
import { removeVolumesCommand } from '../../templates/docker-resources.js';
import { agentSeccompProfile } from '../../templates/docker-seccomp.js';
import { AuditLog } from '../run/audit.js';
import { SandboxUnavailableError, setupFailure, UsageError } from '../errors.js';
import { capture, probe, runForwarded, start } from '../exec.js';
import { proxyForRun, runLimits, type RunProxy } from '../proxy/setup.js';
import { reportFirstTlsFailure } from '../proxy/tls-failure.js';
import { alert, noteLines } from '../util/style.js';
import { terminalAfterAgent } from '../util/terminal.js';
import { socketDir } from '../util/socket-dir.js';
import { caDirOf, createRunDir, removeRunDir, runDirOf, runStateDirOf } from '../run/run-dir.js';
import { removeSession, writeSession } from '../run/session.js';
import { Trace } from '../run/trace.js';
import { ensureRunImages, type ImageChoice, readDenied } from '../docker/image.js';
import { imageEntrypoint, listenPath, type RunningRelay, startRelay } from '../docker/sealed.js';
import { type DockerContext, seccompFileOf } from '../docker/prepare.js';
import { writeEnvFile } from '../docker/env-file.js';
import { sha256 } from '../docker/engine.js';
import { closeApi, createVolume, type EngineApi, removeContainer, removeVolume, volumeExists } from '../docker/api.js';
import { createRunGitDir, planRunGitDir } from '../git/run-git-dir.js';
import { checkedOutBranches } from '../git/checked-out.js';
import { readRefStore } from '../git/ref-store.js';
import { settleGitDir } from '../git/settle.js';
import { BRANCH_PREFIX, git, statusCommand } from '../../templates/git.js';
import { driversIn, findRepo, type Repo } from '../worktree/layout.js';
import { freshName, NAME_PATTERN } from '../worktree/names.js';
import type { RemoteTarget } from './target.js';
import { tarOf } from './tar.js';
import { bringBack, type HeldExport, holdExport, LEASE_END_MS, leaseGone } from './export.js';
import { holdLease, leaseSeconds, type Lease } from './lease.js';
import { prepareRemote } from './prepare.js';
import type { SshMux } from './ssh-mux.js';

export interface RemoteRunInput {
  ctx: Omit<DockerContext, 'network' | 'worktree'>;
  target: RemoteTarget;
  plan: RemotePlan;
  warn: (msg: string) => void;
  announce: boolean;
  interactive: boolean;
  /** The run's one SSH connection to an ssh:// engine, stopped after its last docker command. */
  mux?: SshMux | null;
}

/** The repository the run's folder is in: its main checkout. */
function repositoryOf(cwd: string, env: NodeJS.ProcessEnv): Repo {
  return findRepo(cwd, env, 'a remote run', { run: true, who: 'remote runs', none: `a remote run takes your repository's commits to the engine, and ${cwd} is in no git repository; run it from a repository, or run locally` });
}

/**
 * The files a deny_read rule covers that the bundle would carry, where the
 * agent reads them: every path any commit up to the base added, changed or
 * removed (a secret deleted since is still in the history that travels), a
 * merge against each of its parents.
 */
function deniedTracked(repo: Repo, base: string, denied: (abs: string) => boolean): string[] {
  // Your config may not narrow it (log.showRoot, log.diffMerges, replace refs): the history the bundle carries, whole.
  const g = git(repo.git, repo.root, ['-c', 'core.quotePath=false', '-c', 'log.showSignature=false', '-c', 'log.showRoot=true', '-c', 'log.diffMerges=separate', '-c', 'diff.renames=false', 'log', '--format=', '--name-only', '-z', '-m', '--no-renames', '--no-ext-diff', '--no-textconv', '--full-history', base]);
  const r = probe({ ...g, env: { ...g.env, GIT_NO_REPLACE_OBJECTS: '1' } }, 120_000, 1 << 30);
  if (r.code !== 0) throw new SandboxUnavailableError(`could not list the files in the history of ${base} (${r.stderr.trim()}); nothing was run`);
  const out: string[] = [];
  for (const rel of [...new Set(r.stdout.split('\0').map((p) => p.replace(/^\n+/, '')).filter(Boolean))]) {
    // The file or any folder above it inside the repository.
    let hit = false;
    for (let p = join(repo.root, rel); !hit && p.length > repo.root.length; p = p.slice(0, p.lastIndexOf('/'))) hit = denied(p);
    if (hit) out.push(rel);
  }
  return out;
}

/** The workspace volume of a repository's run name on an engine: this machine and folder in its name's hash, so two clones never share one. */
export function workspaceName(root: string, name: string): string {
  const slug = root.split('/').pop()!.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 30) || 'x';
  return `stashbase-remote-${slug}-${sha256(`${hostname()}\0${root}`).slice(0, 10)}-${name}`;
}

/** Whether the engine has the workspace: asked through its API, or the CLI when stashbase does not speak it or the API could not say. */
async function workspaceThere(docker: string, name: string, api: EngineApi | null): Promise<boolean> {
  const viaApi = api === null ? null : await volumeExists(api, name);
  return viaApi ?? capture({ file: docker, args: ['volume', 'inspect', '--format', '{{.Name}}', name] }).then(() => true, () => false);
}

/** The run's containers, then its tools volume (templates/remote-run.ts): through the engine's API when stashbase speaks it, else the CLI. */
async function teardownRemote(docker: string, session: string, api: EngineApi | null): Promise<void> {
  if (api === null) {
    await Promise.all(remoteTeardownCommands(docker, session).map((c) => capture(c).catch(() => undefined)));
    return;
  }
  await Promise.all(remoteTeardownContainers(session).map((name) => removeContainer(api, name)));
  await removeVolume(api, remoteNames(session).tools);
}

/** What a remote run is, worked out on this machine before any engine is contacted. */
export interface RemotePlan {
  repo: Repo;
  name: string;
  fresh: boolean;
  branch: string;
  workspace: string;
  base: string;
}

/** The checks that need no engine: a repository's main checkout, committed work (or --allow-dirty), nothing deny_read in it, the run's name and base. */
export function planRemote(o: { cwd: string; env: NodeJS.ProcessEnv; home: string; stashbaseHome: string; profile: DockerContext['profile']; resume?: string; allowDirty: boolean; warn: (msg: string) => void }): RemotePlan {
  const repo = repositoryOf(o.cwd, o.env);
  // What does not travel is said, or refused.
  const status = probe(statusCommand(repo.git, repo.root, driversIn(repo), { untracked: 'normal' }), 60_000);
  if (status.code === 0 && status.stdout.trim() !== '') {
    if (!o.allowDirty) throw new SandboxUnavailableError(`${repo.root} has uncommitted changes, and a remote run takes only commits to the engine: commit or stash them, or pass --allow-dirty to run without them; nothing was run`);
    o.warn('your checkout has uncommitted changes; they stay here, and the remote run works on your last commit');
  }
  if (Object.values(o.profile.mcp.servers).some((s) => s.local !== null)) {
    throw new SandboxUnavailableError('the profile starts local MCP servers, which work in your checkout on this machine; a remote run\'s tree is on the engine: use remote MCP servers, or run locally; nothing was run');
  }
  // The hooks' stand-in and endpoints scan and check your checkout on this machine (the secret scan, the dependency
  // check): on the engine the agent's commits would go without the safety net the profile asks for. Refused, not dropped.
  if (o.profile.allowHooks.length > 0) {
    throw new SandboxUnavailableError(`the profile's allow_hooks (${o.profile.allowHooks.join(', ')}) run on this machine against your checkout, and a remote run's tree is on the engine, where the hooks' stand-in is not: use a profile without allow_hooks for remote runs, or run locally; nothing was run`);
  }
  let name: string;
  let fresh: boolean;
  if (o.resume !== undefined) {
    if (!NAME_PATTERN.test(o.resume)) throw new UsageError(`--resume takes a run's name such as amber-river-storm, not ${JSON.stringify(o.resume)}`);
    name = o.resume;
    fresh = false;
  } else {
    name = freshName((n) => probe(git(repo.git, repo.root, ['rev-parse', '--verify', '--quiet', `refs/heads/${BRANCH_PREFIX}${n}`])).code === 0);
    fresh = true;
  }
  const branch = `${BRANCH_PREFIX}${name}`;
  const baseRef = fresh ? 'HEAD' : `refs/heads/${branch}`;
  const baseOut = probe(git(repo.git, repo.root, ['rev-parse', '--verify', '--quiet', `${baseRef}^{commit}`]));
  if (baseOut.code !== 0) {
    throw new SandboxUnavailableError(fresh ? `${repo.root} has no commit yet: a remote run starts from your last commit; nothing was run` : `there is no branch ${branch} here to resume; nothing was run`);
  }
  const base = baseOut.stdout.trim();
  if (!fresh) {
    // Found in review (round 39): resumed while your checkout had the branch, the import moved it under your working tree,
    // whose files stayed the old commit's (git status showed the agent's work staged in reverse).
    // As git counts them: a symbolic ref's target too, and the branch a paused rebase or bisect works on.
    const where = checkedOutBranches(repo.gitDir, readRefStore(repo.gitDir).refs, null).get(`refs/heads/${branch}`);
    if (where !== undefined) throw new SandboxUnavailableError(`the run's branch ${branch} is checked out in ${printable(where, true)}, and a remote run moves it when it ends without touching that working tree: switch it to another branch first (git switch -, or finish the rebase or bisect there), then resume; nothing was run`);
  } else {
    // Relative rules as a local run resolves them, from the run's folder (found in review: from a subfolder they were
    // resolved at the repository's top, and the file local runs hide there travelled); from the top as well.
    const atCwd = readDenied(o.profile, o.home, o.cwd, o.stashbaseHome);
    const atTop = readDenied(o.profile, o.home, repo.root, o.stashbaseHome);
    const denied = deniedTracked(repo, base, (p) => atCwd(p) || atTop(p));
    if (denied.length > 0) throw new SandboxUnavailableError(`files the profile's deny_read covers are committed, and a remote run would send them to the engine in your history: ${firstFew(denied.map((d) => printable(d, true)), 10)}; run locally (there they are hidden); nothing was run`);
  }
  return { repo, name, fresh, branch, workspace: workspaceName(repo.root, name), base };
}

export async function executeRemote(o: RemoteRunInput): Promise<number> {
  const { ctx, warn, announce } = o;
  const trace = new Trace(ctx.env.STASHBASE_TRACE === '1');
  const docker = ctx.docker;
  const { repo, name, fresh, branch, workspace, base } = o.plan;
  const home = ctx.stashbaseHome;
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const names = runNames(ctx.session);
  const runDir = runDirOf(home, ctx.session);
  // Over ssh://, one connection for every docker command of the run (lib/remote/ssh-mux.ts, started by lib/docker/run.ts).
  const mux = o.mux ?? null;
  try {
    const exists = await workspaceThere(docker, workspace, ctx.api ?? null);
    if (!fresh && !exists) throw new SandboxUnavailableError(`the engine (${o.target.host}) has no workspace ${workspace} for ${name}: its uncommitted work is gone; start a new run; nothing was run`);
    if (fresh && exists) throw new SandboxUnavailableError(`the engine already has a workspace named ${workspace}; nothing was run`);
  } catch (e) {
    await mux?.stop();
    for (const m of removeRunDir(runDir)) alert(m);
    throw e;
  }

  let audit: AuditLog;
  let prep: ReturnType<typeof prepareRemote>;
  let plan: ReturnType<typeof planRunGitDir>;
  let branchMade = false;
  try {
    audit = new AuditLog(home, ctx.session, runLimits(ctx.profile).auditMaxBytes);
    prep = prepareRemote({ ...ctx, network: 'sealed' }, o.target, o.plan, { seconds: leaseSeconds(ctx.env) });
    // Your branch first (at the base), so the run's own git directory starts with it; the import moves it.
    if (fresh) {
      await capture(git(repo.git, repo.root, ['branch', '--no-track', branch, base]));
      branchMade = true;
    }
    plan = planRunGitDir({ gitDir: repo.gitDir, admin: null, stateDir: runStateDirOf(home, ctx.session), hideOthers: true, own: `refs/heads/${branch}`, workTree: repo.root, remote: true });
  } catch (e) {
    // Nothing of the run is left (found in review: a failure here left the run's SSH connection and folder).
    if (branchMade) probe(git(repo.git, repo.root, ['branch', '-D', branch]));
    await mux?.stop();
    for (const m of removeRunDir(runDir)) alert(m);
    throw e;
  }
  if (announce) {
    process.stderr.write(`Agent session: ${ctx.session}\nAudit log: ${audit.file}\nSandbox: docker on a remote engine, ${o.target.host} (${o.target.from}); image ${ctx.choice.ref}, network sealed: the relay the only way out${ctx.runtime !== undefined ? `, runtime ${ctx.runtime}` : ''}\nRemote workspace: ${workspace} (branch ${branch}${fresh ? '' : ', resumed'})\n`);
  }
  const started = Date.now();
  writeSession(home, {
    id: ctx.session, pid: process.pid, backend: 'docker', mechanism: 'docker-remote', profile: ctx.profile.name, cwd: ctx.cwd, argv: ctx.command,
    startedAt: new Date(started).toISOString(), docker: names, runDir, gitDirs: [`${plan.dir}.json`], worktree: name,
    remote: { engine: o.target.host, context: o.target.context, workspace },
  });
  audit.write({ type: 'start', profile: ctx.profile.name, profileFile: ctx.profile.file, backend: 'docker', image: ctx.choice.ref, argv: ctx.command, cwd: ctx.cwd, remote: o.target.host });
  let exitCode = 1;
  let proxy: RunProxy | null = null;
  let relay: RunningRelay | null = null;
  let lease: Lease | null = null;
  let sealedDir: string | null = null;
  let gitRecord: string | null = null;
  let agentStarted = false;
  let heldExport: HeldExport | null = null;
  // Killed, the run's SSH connection is ended too once its containers are (found in review: a client left over kept it).
  const watchdog = start(watchdogCommand(docker, ctx.session, true, [...remoteTeardownCommands(docker, ctx.session), ...(mux !== null ? [mux.exit] : [])]), ['pipe', 'ignore', 'ignore'], true);
  watchdog.child.stdin?.on('error', () => {});
  watchdog.exit.catch(() => 0);
  watchdog.child.unref();
  try {
    proxy = await proxyForRun({
      session: ctx.session, profile: ctx.profile, placeholders: ctx.placeholders, env: ctx.env, home, userHome: ctx.home, cwd: ctx.cwd, audit: (e) => audit.write(e),
      acceptClient: () => true, token: ctx.proxyToken, // No local MCP server (refused above): nothing of this machine's tree is anyone's to write.
      tree: { protection: { denyRead: [], denyWrite: [], placeholders: [], fileStandIns: [], pinned: [] }, isolated: [] },
      onUpstreamTls: reportFirstTlsFailure(alert),
    });
    createRunDir(runDir, proxy.ca, null);
    writeFileSync(seccompFileOf(runDir), JSON.stringify(agentSeccompProfile({ gvisor: ctx.gvisor === true })));
    gitRecord = createRunGitDir(plan).file;
    sealedDir = socketDir(join(runDir, 'sealed'), 'stashbase-sealed-');
    const socket = join(sealedDir, 'proxy.sock');
    await listenPath(proxy.server, socket);
    trace.mark('prepare');
    // What the setup container takes: the relay and the CA, and for a new workspace your commits up to the base; made
    // while the run's volumes are made and its images checked.
    const api = ctx.api ?? null;
    const files = [{ name: 'stashbase-relay', data: readFileSync(ctx.relay!), mode: 0o755 }];
    if (prep.interceptTls) for (const f of ['ca.pem', 'ca-bundle.pem']) files.push({ name: f, data: readFileSync(join(caDirOf(runDir), f)), mode: 0o644 });
    const bundled = (async () => {
      if (!prep.bundle) return;
      await capture(prep.bundle, undefined, 600_000).catch((e: Error) => {
        throw new SandboxUnavailableError(`could not bundle the repository's commits (${e.message.split('\n')[0]}); nothing was run`);
      });
      files.push({ name: 'repo.bundle', data: readFileSync(prep.bundleFile), mode: 0o644 }, { name: 'base', data: Buffer.from(`${base}\n`), mode: 0o644 });
      rmSync(prep.bundleFile, { force: true });
    })();
    // The images before the lease (its is the built-in one: missing, the docker CLI would try a registry for it), the
    // entrypoint of the agent's asked while the lease is set up.
    // Every step ended before a failure is reported: a volume still being made when the teardown ran stayed on the engine
    // (review, round 31).
    const steps = await Promise.allSettled([bundled, ensureRunImages({ docker, api, home, env: ctx.env, choice: ctx.choice as ImageChoice, interactive: o.interactive, warn }), ...prep.volumes.map((v) => (api !== null ? createVolume(api, v.name, v.labels) : capture(volumeCreateOf(docker, v))))]);
    const failed = steps.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    const entrypointAsked = imageEntrypoint(docker, ctx.choice.ref, api);
    entrypointAsked.catch(() => {});
    // The setup, then the lease: the init of the agent's process namespace, from now on ending it when this process, or its connection, does (lib/remote/lease.ts).
    lease = await holdLease(prep.lease, tarOf(files));
    trace.mark('setup');
    let agentEnded = false;
    // The relay, in the lease's container, whose network namespace (loopback alone) the agent's joins: started at once,
    // while the agent's container is made, and ended with the lease (an exec in the agent's own container, which shares
    // the lease's process namespace, outlived that container, and the engine held its stream open for good).
    relay = startRelay({
      docker, api, session: ctx.session, agentUser: prep.sealed.user, proxySocket: socket, maxStreams: runLimits(ctx.profile).maxConnections, agentEnded: () => agentEnded, relayAt: REMOTE_RELAY,
      running: remoteNames(ctx.session).lease,
      onEnd: (why, protocolError) => {
        audit.write({ type: 'relay', decision: 'end', rule: why, protocolError });
        if (protocolError) alert(`the sealed network's relay was ended (${why}): the agent has no network for the rest of the run`);
      },
    });
    // The export's container starts while the agent's does; it reads nothing until told, after the agent (lib/remote/export.ts).
    heldExport = holdExport(prep.export);
    const entrypoint = await entrypointAsked;
    agentStarted = true;
    writeEnvFile(prep.sealed);
    const agentRun = runForwarded(sealedAgentCommand({ ...prep.sealed, entrypoint })).finally(() => {
      agentEnded = true;
      terminalAfterAgent(ctx.env);
    });
    relay.ready.then(() => trace.mark('relay'), (e: Error) => {
      if (agentEnded) return;
      alert(`${e.message}: the agent's container is removed`);
      void capture(remoteTeardownCommands(docker, ctx.session)[0]!).catch(() => undefined);
    });
    exitCode = await agentRun;
    trace.mark('agent');
    return exitCode;
  } catch (e) {
    const failed = setupFailure(e, 'the remote run');
    exitCode = failed.exitCode;
    throw failed.err;
  } finally {
    relay?.stop();
    const held = lease as Lease | null;
    held?.stop();
    // The agent's commits, brought back into the run's own git directory, then imported as local runs' are: once the
    // lease's container is gone, and every process of the agent's namespace with it (none writes the clone while it is read).
    const exporter = heldExport as HeldExport | null;
    if (agentStarted && gitRecord !== null && exporter !== null && held !== null) {
      if (await leaseGone(held, docker, ctx.session)) await bringBack({ export: prep.export, held: exporter, dir: plan.dir, objectFormat: plan.objectFormat, env: ctx.env });
      else {
        exporter.cancel();
        alert(`the remote run's commits were not brought back (its lease's container did not end within ${LEASE_END_MS / 1000} s, so the agent's processes may still write the clone); nothing of it was imported (the workspace keeps them)`);
      }
    } else {
      exporter?.cancel();
      held?.release();
    }
    await teardownRemote(docker, ctx.session, ctx.api ?? null);
    watchdog.child.stdin?.end(`${WATCHDOG_DONE}\n`);
    proxy?.server.close();
    proxy?.interceptor?.close();
    if (sealedDir) rmSync(sealedDir, { recursive: true, force: true });
    if (gitRecord !== null) await settleGitDir(gitRecord, ctx.env, ctx.session, { alert, note: announce ? noteLines : () => {} });
    // A new run whose agent never started leaves nothing of it (found in review: its branch and an empty workspace,
    // which a --resume then failed on): the workspace removed, the branch deleted where it is still at the base.
    if (fresh && !agentStarted) {
      const api = ctx.api ?? null;
      await (api !== null ? removeVolume(api, workspace) : capture(removeVolumesCommand(docker, [workspace], true)).then(() => undefined, () => undefined));
      await capture(git(repo.git, repo.root, ['update-ref', '-d', `refs/heads/${branch}`, base])).catch(() => undefined);
    }
    // The API's kept connections (over SSH, each a command and a channel), then the run's connection, after its last
    // docker command (its socket is in the run's folder).
    closeApi(ctx.api);
    await mux?.stop();
    for (const m of removeRunDir(runDir, runStateDirOf(home, ctx.session))) alert(m);
    if (announce && agentStarted) process.stderr.write(`Remote workspace ${workspace} keeps what was not committed: continue with stashbase agent run --remote … --resume ${name}\n`);
    audit.write({ type: 'end', exitCode, durationMs: Date.now() - started });
    // A remote run's tree is on the engine: no check here to wait for.
    removeSession(home, ctx.session);
    trace.mark('teardown');
    trace.print();
  }
}
