// `agent run` from parsed options to the agent's exit code: profile, trust,
// backend, plan; then either print the plan (--dry-run) or carry it out with a
// session record and audit log around it.
import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import getPort from 'get-port';
import { availableParallelism } from 'node:os';
import pc from 'picocolors';
import { formatPlan, planToJson } from '../templates/plan.js';
import { AuditLog } from './audit.js';
import { resolveBackend, type BackendFlags } from './backend.js';
import { credentialLookingVariables } from './env-policy.js';
import { SandboxUnavailableError, UsageError } from './errors.js';
import { stashbaseHome, userHome } from './home.js';
import { prepareNative } from './native/prepare.js';
import { probeNative } from './native/probe.js';
import { createPlaceholders, createRunDir, removePlaceholders, removeRunDir, runBwrap } from './native/run.js';
import { selectMechanism } from './native/select.js';
import { cpusProblem, memoryProblem } from './profile/docker-values.js';
import { displayPath, loadProfile, type SourceChoice } from './profile/load.js';
import { ensureTrusted } from './profile/trust.js';
import { isInteractive } from './prompt.js';
import { makePlaceholders } from './secrets/placeholder.js';
import { createProxy } from './proxy/server.js';
import { newSessionId, removeSession, writeSession } from './session.js';

export interface RunOptions extends BackendFlags {
  command: string[];
  profile?: string;
  profileSource: SourceChoice;
  worktree?: boolean;
  resume?: string;
  silent: boolean;
  dryRun: boolean;
  json: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

const warn = (silent: boolean, msg: string) => {
  if (!silent) process.stderr.write(`${pc.yellow('warning:')} ${msg}\n`);
};

function checkDockerValues(o: RunOptions): void {
  if (o.dockerMemory !== undefined) {
    const p = memoryProblem(o.dockerMemory);
    if (p) throw new UsageError(`--docker-memory: ${p}`);
  }
  if (o.dockerCpus !== undefined) {
    const p = cpusProblem(o.dockerCpus, availableParallelism());
    if (p) throw new UsageError(`--docker-cpus: ${p}`);
  }
}

export async function runAgent(o: RunOptions): Promise<number> {
  if (o.command.length === 0) throw new UsageError('no agent command: put it after --, as in: stashbase agent run -- claude');
  checkDockerValues(o);
  const loaded = loadProfile({ name: o.profile, source: o.profileSource, cwd: o.cwd, env: o.env });
  const profile = loaded.profile;
  await ensureTrusted(loaded, { interactive: isInteractive(o.silent), env: o.env, label: profile.file ? displayPath(profile.file, o.cwd) : 'default' });
  const { backend, notes } = resolveBackend(profile, o);
  for (const n of notes) warn(o.silent, n);
  if (o.worktree === true || o.resume !== undefined || (profile.workspace.worktree && o.worktree !== false)) {
    throw new SandboxUnavailableError('worktree runs (--worktree, --resume, [workspace] worktree) are not built yet; nothing was run');
  }
  if (backend === 'docker') {
    throw new SandboxUnavailableError('the Docker backend is not built yet; nothing was run (it never falls back to the native backend)');
  }
  const home = stashbaseHome(o.env);
  const session = newSessionId();
  const mechanism = selectMechanism(probeNative(o.env));
  const policy = { egressHosts: profile.network.egressHosts, denyHosts: profile.network.denyHosts, mapped: profile.network.hosts };
  const audit = o.dryRun ? null : (mkdirSync(home, { recursive: true, mode: 0o700 }), new AuditLog(home, session));
  // Without a namespace of its own the sandbox reaches the proxy on the host's
  // loopback, at a port known only once it listens.
  const onHostLoopback = profile.sandbox.nativeNetwork === 'host' || mechanism.kind !== 'bwrap';
  const hostPort = audit && onHostLoopback ? await getPort({ host: '127.0.0.1' }) : null;
  const prep = prepareNative({
    session,
    profile,
    command: o.command,
    cwd: o.cwd,
    env: o.env,
    home: userHome(o.env),
    stashbaseHome: home,
    mechanism,
    placeholders: makePlaceholders(profile.secrets, o.env),
    proxyUrl: hostPort === null ? undefined : `http://127.0.0.1:${hostPort}`,
  });
  if (o.dryRun) {
    process.stdout.write(o.json ? JSON.stringify(planToJson(prep.plan), null, 2) + '\n' : formatPlan(prep.plan));
    return 0;
  }
  for (const name of credentialLookingVariables(profile, o.env)) {
    warn(o.silent, `${name} looks like a credential and is inherited by the agent (bind it under [secrets] to keep the real value out)`);
  }
  for (const w of prep.protection.warnings) warn(o.silent, w);
  if (prep.bwrap === null || audit === null) {
    throw new SandboxUnavailableError('the systemd-run fallback is planned (see --dry-run) but not run by this version; install bubblewrap');
  }
  if (!o.silent) {
    process.stderr.write(`Agent session: ${session}\nAudit log: ${audit.file}\nSandbox: native (${mechanism.kind}: ${mechanism.why})\n`);
  }
  const started = Date.now();
  writeSession(home, {
    id: session, pid: process.pid, backend, mechanism: mechanism.kind, profile: profile.name, cwd: o.cwd, argv: o.command,
    startedAt: new Date(started).toISOString(), placeholders: prep.protection.placeholders,
  });
  audit.write({ type: 'start', profile: profile.name, profileFile: profile.file, backend, mechanism: mechanism.kind, argv: o.command, cwd: o.cwd });
  let created: string[] = [];
  let exitCode = 1;
  let hostProxy: Server | null = null;
  try {
    if (hostPort !== null) hostProxy = await listenLoopback(createProxy({ policy, audit: (e) => audit.write(e) }), hostPort);
    createRunDir(prep);
    const ph = createPlaceholders(prep.protection.placeholders, prep.protection.parents);
    created = ph.created;
    for (const w of ph.warnings) warn(o.silent, w);
    exitCode = await runBwrap(prep, { policy, audit: (e) => audit.write(e), hostProxy: hostProxy ?? undefined });
    return exitCode;
  } finally {
    hostProxy?.close();
    removePlaceholders(created);
    removeRunDir(prep);
    audit.write({ type: 'end', exitCode, durationMs: Date.now() - started });
    removeSession(home, session);
  }
}

function listenLoopback(server: Server, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', (e) => reject(new SandboxUnavailableError(`the proxy cannot listen on 127.0.0.1:${port} (${(e as Error).message}); nothing was run`)));
    server.listen({ host: '127.0.0.1', port }, () => resolve(server));
  });
}
