// Carries out a prepared native run: session record and audit log around it,
// the run directory and stand-ins, the proxy, and bwrap. Loaded only for real
// runs, so --dry-run never pays for the proxy's modules.
import { mkdirSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:net';
import { AuditLog } from '../run/audit.js';
import { freeLoopbackPort } from '../util/free-port.js';
import { childEnv, runForwarded } from '../exec.js';
import { SandboxUnavailableError, StashbaseError } from '../errors.js';
import type { Profile } from '../profile/types.js';
import { fillScratch } from './scratch.js';
import { seatbeltEnvOf, seatbeltStatusOf } from './prepare-seatbelt.js';
import { readBackText } from '../readback/file.js';
import { proxyForRun, runLimits, type RunProxy } from '../proxy/setup.js';
import { reportFirstTlsFailure } from '../proxy/tls-failure.js';
import { holdTerminalWrites, terminalAfterAgent } from '../util/terminal.js';
import { endSession, writeSession } from '../run/session.js';
import { type NativeContext, type NativePrepared, prepareNative } from './prepare.js';
import { runSystemd } from './run-systemd.js';
import { reapStaleRuns } from '../run/reap.js';
import { alert, noteLines } from '../util/style.js';
import { createPlaceholders, createRunDir, removePlaceholders, removeRunDir } from '../run/run-dir.js';
import { runBwrap } from './run.js';
import { Trace } from '../run/trace.js';
import { sandboxFilter, type SeccompArch } from '../../templates/seccomp.js';
import { buildViews, settleViews } from '../views/lifecycle.js';
import { keepClaudeConfigStart, settleFromSnapshot, snapshotFile } from '../views/claude-config-watch.js';
import { hookEndpoints } from '../hooks/endpoints.js';
import { findRepoRoot } from '../git/repo.js';
import { createRunGitDir } from '../git/run-git-dir.js';
import { settleGitDir } from '../git/settle.js';
import { hiddenWithin } from '../paths/hidden.js';

export interface ExecuteInput {
  ctx: NativeContext;
  profile: Profile;
  warn: (msg: string) => void;
  announce: boolean;
}

function listenLoopback(server: Server, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', (e) => reject(new SandboxUnavailableError(`the proxy cannot listen on 127.0.0.1:${port} (${(e as Error).message}); nothing was run`)));
    server.listen({ host: '127.0.0.1', port }, () => resolve(server));
  });
}

export async function executeNative({ ctx, profile, warn, announce }: ExecuteInput): Promise<number> {
  const home = ctx.stashbaseHome;
  const trace = new Trace(ctx.env.STASHBASE_TRACE === '1');
  mkdirSync(home, { recursive: true, mode: 0o700 });
  for (const id of await reapStaleRuns(home, ctx.env, alert)) warn(`removed what the killed run ${id} left behind (stand-ins, run directory, session record)`);
  const audit = new AuditLog(home, ctx.session, runLimits(profile).auditMaxBytes);
  // Without a namespace of its own the sandbox reaches the proxy on the host's
  // loopback, at a port that must be in its environment before it starts.
  const onHostLoopback = profile.sandbox.nativeNetwork === 'host' || ctx.mechanism.kind !== 'bwrap';
  const hostPort = onHostLoopback ? await freeLoopbackPort() : null;
  const prep: NativePrepared = prepareNative({ ...ctx, proxyUrl: hostPort === null ? undefined : `http://127.0.0.1:${hostPort}` });
  for (const w of prep.protection.warnings) warn(w);
  trace.mark('prepare');
  if (announce) {
    process.stderr.write(`Agent session: ${ctx.session}\nAudit log: ${audit.file}\nSandbox: native (${ctx.mechanism.kind}: ${ctx.mechanism.why})\n`);
  }
  const started = Date.now();
  writeSession(home, {
    id: ctx.session, pid: process.pid, backend: 'native', mechanism: ctx.mechanism.kind, profile: profile.name, cwd: ctx.cwd, argv: ctx.command,
    startedAt: new Date(started).toISOString(), placeholders: [...prep.protection.placeholders, ...prep.protection.fileStandIns],
    views: prep.views.map((v) => v.dir),
    runDir: prep.runDir,
    gitDirs: prep.gitDir ? [`${prep.gitDir.dir}.json`] : [],
    ...((prep.seatbelt && profile.filesystem.writes === 'allow-list') || prep.claudeConfigExposed === true ? { claudeConfig: snapshotFile(prep.stateDir) } : {}),
  });
  audit.write({ type: 'start', profile: profile.name, profileFile: profile.file, backend: 'native', mechanism: ctx.mechanism.kind, argv: ctx.command, cwd: ctx.cwd });
  let created: string[] = [];
  let exitCode = 1;
  let proxy: RunProxy | null = null;
  let built: string[] = [];
  let gitDir: string | null = null;
  // ~/.claude.json in the tree (the working directory your home): its executable entries go back after the run, as on macOS.
  let exposedConfig: string | null = null;
  try {
    // Git runs hooks at the top of the work tree, which may lie above the working directory.
    const tree = findRepoRoot(ctx.cwd)?.root ?? ctx.cwd;
    const hooks = profile.allowHooks.length === 0 ? undefined : hookEndpoints({
      token: ctx.hookToken, profile, env: ctx.env, workTree: tree, audit: (e) => audit.write(e),
      // The sandbox's own view of the tree: its git directory is the run's own (the agent's index is there).
      mounts: [{ host: tree, sandbox: tree }, ...(prep.gitDir?.mounts ?? []).map((b) => ({ host: b.src, sandbox: b.dest }))],
      hidden: () => hiddenWithin(prep.protection, [], [tree]),
    });
    proxy = await proxyForRun({ session: ctx.session, profile, placeholders: ctx.placeholders, env: ctx.env, home, userHome: ctx.home, cwd: ctx.cwd, audit: (e) => audit.write(e), token: ctx.proxyToken, hooks, tree: { protection: prep.protection, isolated: [] }, onUpstreamTls: reportFirstTlsFailure(alert) });
    if (hostPort !== null) await listenLoopback(proxy.server, hostPort);
    trace.mark('proxy');
    createRunDir(prep.runDir, proxy.ca, prep.bwrap ? sandboxFilter(process.arch as SeccompArch, { unixSockets: profile.sandbox.allowUnixSockets }) : null, prep.temps);
    for (const c of prep.scratch) {
      const why = fillScratch(c, prep.scratchPatterns);
      if (why !== null) warn(why);
    }
    built = buildViews(prep.views);
    if (prep.gitDir) gitDir = createRunGitDir(prep.gitDir).file;
    if (prep.seatbelt) {
      // sandbox-exec is the agent's parent and passes signals and the exit status through.
      // Its start is kept where the session record names it: a killed run's is settled by the next run (lib/run/reap.ts).
      const config = profile.filesystem.writes === 'allow-list' ? keepClaudeConfigStart(ctx.home, ctx.env, prep.stateDir) : null;
      // The agent's environment goes to sandbox-exec through a file of the state folder, never through the helper's own.
      mkdirSync(prep.stateDir, { recursive: true, mode: 0o700 });
      writeFileSync(seatbeltEnvOf(prep.stateDir), JSON.stringify(childEnv({ file: '', args: [], env: prep.agentEnv.set, unsetEnv: prep.agentEnv.unset }, ctx.env)), { mode: 0o600, flag: 'wx' });
      try {
        exitCode = await runForwarded(prep.seatbelt);
        // The agent's own status, as the helper wrote it (script's, on a terminal, is not).
        const status = readBackText(seatbeltStatusOf(prep.stateDir), 16);
        if (status !== null && /^\d+$/.test(status)) exitCode = Number(status);
      } finally {
        // script(1)'s pseudo-terminal gave the agent's output to yours as it was (review, round 36: no reset here).
        terminalAfterAgent(ctx.env);
        if (config !== null) for (const n of settleFromSnapshot(config, ctx.session)) alert(n);
      }
      return exitCode;
    }
    const ph = createPlaceholders(prep.protection.placeholders, prep.protection.parents, prep.protection.fileStandIns, [tree]);
    created = ph.created;
    for (const w of ph.warnings) warn(w);
    trace.mark('run-dir');
    if (prep.systemd) {
      const step = prep.plan.steps.find((x) => x.kind === 'command' && x.id === 'sandbox');
      if (!step || step.kind !== 'command') throw new Error('native plan has no sandbox step');
      try {
        exitCode = await runSystemd(step.command, prep.systemd.envFile, prep.agentEnv, warn);
      } finally {
        terminalAfterAgent(ctx.env);
      }
      return exitCode;
    }
    const interceptor = proxy.interceptor;
    if (prep.claudeConfigExposed === true) exposedConfig = keepClaudeConfigStart(ctx.home, ctx.env, prep.stateDir);
    // Every write of stashbase's to your terminal is held while bwrap runs (lib/util/terminal.ts), then said after the
    // rendering the agent left is reset.
    const release = holdTerminalWrites();
    try {
      exitCode = await runBwrap(prep, { proxy: proxy.server, trace, onStarted: interceptor ? () => interceptor.warm() : undefined });
    } finally {
      release(() => terminalAfterAgent(ctx.env));
    }
    trace.mark('agent');
    return exitCode;
  } catch (e) {
    // The end event says the exit status the run ends with, not the one it began with.
    exitCode = e instanceof StashbaseError ? e.exitCode : 70;
    throw e;
  } finally {
    proxy?.server.close();
    proxy?.interceptor?.close();
    // The file the agent could write in place first, then the view's copy merged into what that leaves.
    if (exposedConfig !== null) for (const n of settleFromSnapshot(exposedConfig, ctx.session)) alert(n);
    for (const n of settleViews(built)) alert(n);
    if (gitDir) await settleGitDir(gitDir, ctx.env, ctx.session, { alert, note: announce ? noteLines : () => {} });
    removePlaceholders(created);
    for (const m of removeRunDir(prep.runDir, prep.stateDir)) alert(m);
    audit.write({ type: 'end', exitCode, durationMs: Date.now() - started });
    // Removed once the tree is checked (lib/run/run-agent.ts), by this run or, if it is stopped first, the next.
    endSession(home, ctx.session);
    trace.mark('teardown');
    trace.print();
  }
}
