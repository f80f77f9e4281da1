// Carries out a Docker run: images, session and audit, the run's network, the
// proxy on its gateway, the holder and its firewall self-check, the agent, and
// the teardown of all of it on every way out. Loaded only for real runs.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Server as HttpServer } from 'node:http';
import { BlockList, createServer, isIPv4, type Server } from 'node:net';
import { type Command, formatCommand } from '../../templates/command.js';
import { FIREWALL_FAILED, FIREWALL_READY } from '../../templates/docker-firewall.js';
import { agentCommand, gatewayCommand, HOME_VOLUME, holderCommand, networkCreateCommand, runLabels, runNames, sealedAgentCommand, teardownCommands, teardownContainers } from '../../templates/docker-run.js';
import { type EventWatch, removeContainer, watchDie } from './api.js';
import { imageEntrypoint, listenPath, loopbackDoor } from './sealed.js';
import { connect } from 'node:net';
import { RelayMux } from '../relay/mux.js';
import { TerminalLink } from '../relay/terminal.js';
import { socketDir } from '../util/socket-dir.js';
import { WATCHDOG_DONE, watchdogCommand } from '../../templates/docker-watchdog.js';
import { AuditLog } from '../run/audit.js';
import { CommandFailedError, SandboxUnavailableError, setupFailure } from '../errors.js';
import { capture, forwardSignals, runForwarded, type Spawned, start } from '../exec.js';
import { proxyForRun, runLimits, type RunProxy } from '../proxy/setup.js';
import { reportFirstTlsFailure } from '../proxy/tls-failure.js';
import { reapStaleRuns } from '../run/reap.js';
import { alert, noteLines } from '../util/style.js';
import { terminalAfterAgent } from '../util/terminal.js';
import { createPlaceholders, createRunDir, removePlaceholders, removeRunDir, runStateDirOf } from '../run/run-dir.js';
import { endSession, writeSession } from '../run/session.js';
import { Trace } from '../run/trace.js';
import { defaultImageRef, ensureRunImages } from './image.js';
import { forgetSize, growthWarning, holdMeasure, lastSize, recordSize } from './home-volume.js';
import { sizeBytes } from '../profile/docker-values.js';
import { type DockerContext, type DockerPrepared, prepareDocker, seccompFileOf } from './prepare.js';
import { writeEnvFile } from './env-file.js';
import { agentSeccompProfile } from '../../templates/docker-seccomp.js';
import { hookEndpoints, type HookEndpointsInput } from '../hooks/endpoints.js';
import { HOOK_PATH, HOOK_TOKEN_VAR, HOOK_URL_VAR } from '../hooks/hook-env.js';
import { standInScript } from '../../templates/stand-in.js';
import { SETTINGS_VAR } from '../deps/settings.js';
import { registryVars } from '../deps/registry-vars.js';
import { PROXY_USER } from '../../templates/native-plan.js';
import { caDirOf } from '../run/run-dir.js';
import { newVolumes, prepareVolumes } from './volumes.js';
import { createRunGitDir } from '../git/run-git-dir.js';
import { settleGitDir } from '../git/settle.js';
import { hiddenWithin } from '../paths/hidden.js';

export interface DockerExecuteInput {
  ctx: DockerContext;
  warn: (msg: string) => void;
  announce: boolean;
  interactive: boolean;
}

const HOLDER_TIMEOUT_MS = 60_000;
/** How long a sealed agent is given to end after a signal that ends runs, before its container is removed. */
const ENDING_GRACE_MS = 10_000;

function listen(server: Server | HttpServer, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (e) => reject(new SandboxUnavailableError(`cannot listen on ${host} (${(e as Error).message}); nothing was run`)));
    server.listen({ host, port: 0 }, () => resolve((server.address() as { port: number }).port));
  });
}

/** The holder's verdict: resolves once it printed the ready line; rejects on anything else. */
function holderReady(holder: Spawned): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new SandboxUnavailableError(`the firewall holder did not report within ${HOLDER_TIMEOUT_MS / 1000} s; nothing was run`)), HOLDER_TIMEOUT_MS);
    const done = (f: () => void) => {
      clearTimeout(timer);
      f();
    };
    holder.child.stderr?.on('data', (b: Buffer) => (err += b.toString('utf8')));
    holder.child.stdout?.on('data', (b: Buffer) => {
      out += b.toString('utf8');
      const lines = out.split('\n');
      if (lines.includes(FIREWALL_READY)) done(resolve);
      const failed = lines.find((l) => l.startsWith(FIREWALL_FAILED));
      if (failed) done(() => reject(new SandboxUnavailableError(`the firewall self-check failed: ${failed.slice(FIREWALL_FAILED.length).trim()}; nothing was run`)));
    });
    holder.exit.then(
      (code) => done(() => reject(new SandboxUnavailableError(`the firewall holder exited (code ${code}) before its self-check passed; nothing was run${err.trim() ? `\n${err.trim().split('\n').slice(-5).join('\n')}` : ''}`))),
      (e) => done(() => reject(e)),
    );
  });
}

/** Like Promise.all, but a failure is reported only once every step has ended: teardown must know what exists. */
async function allSettled<T extends readonly unknown[]>(steps: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const results = await Promise.allSettled(steps);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return results.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/** The run network's IPv4 gateway (this host's address on it) and its subnet. */
export function parseGateway(out: string): { gateway: string; subnet: string } {
  const words = out.trim().split(/\s+/);
  for (let i = 0; i + 1 < words.length; i += 2) {
    const [gateway = '', subnet = ''] = [words[i], words[i + 1]];
    if (/^\d+\.\d+\.\d+\.\d+$/.test(gateway) && /^\d+\.\d+\.\d+\.\d+\/\d+$/.test(subnet)) return { gateway, subnet };
  }
  throw new SandboxUnavailableError(`the run network has no IPv4 gateway (docker said ${JSON.stringify(out.trim())}); nothing was run`);
}

/** Only the run's containers may use its proxy: not this host's other processes, which reach it from the gateway address. */
function containersOnly(gateway: string, subnet: string): (address: string) => boolean {
  const [base = '', bits = '32'] = subnet.split('/');
  const list = new BlockList();
  list.addSubnet(base, Number(bits), 'ipv4');
  return (address) => {
    const v4 = address.replace(/^::ffff:/, '');
    return v4 !== gateway && isIPv4(v4) && list.check(v4, 'ipv4');
  };
}

/** How the run's container reaches the proxy, as the run announces it. */
function sealedWords(ctx: DockerContext): string {
  const runtime = ctx.runtime !== undefined ? `, runtime ${ctx.runtime}` : '';
  return ctx.network === 'sealed' ? `network sealed: no interface, the relay the only way out${runtime}` : `network ${runNames(ctx.session).network}${runtime}`;
}

export async function executeDocker({ ctx, warn, announce, interactive }: DockerExecuteInput): Promise<number> {
  const trace = new Trace(ctx.env.STASHBASE_TRACE === '1');
  const home = ctx.stashbaseHome;
  mkdirSync(home, { recursive: true, mode: 0o700 });
  for (const id of await reapStaleRuns(home, ctx.env, alert)) warn(`removed what the killed run ${id} left on this host (stand-ins, run directory, session record); its Docker leftovers go with stashbase agent docker cleanup`);
  const names = runNames(ctx.session);
  const audit = new AuditLog(home, ctx.session, runLimits(ctx.profile).auditMaxBytes);
  const draft = prepareDocker(ctx, { gateway: '<gateway>', proxyPort: '<proxy-port>', canaryPort: '<canary-port>', newVolumes: [] });
  for (const w of draft.protection.warnings) warn(w);
  if (announce) process.stderr.write(`Agent session: ${ctx.session}\nAudit log: ${audit.file}\nSandbox: docker (image ${ctx.choice.ref}, ${sealedWords(ctx)})\n`);
  const started = Date.now();
  writeSession(home, {
    id: ctx.session, pid: process.pid, backend: 'docker', mechanism: 'docker', profile: ctx.profile.name, cwd: ctx.cwd, argv: ctx.command,
    startedAt: new Date(started).toISOString(), docker: names, placeholders: [...draft.protection.placeholders, ...draft.protection.fileStandIns],
    runDir: draft.runDir,
    gitDirs: draft.gitDir ? [`${draft.gitDir.dir}.json`] : [],
  });
  audit.write({ type: 'start', profile: ctx.profile.name, profileFile: ctx.profile.file, backend: 'docker', image: ctx.choice.ref, argv: ctx.command, cwd: ctx.cwd });
  let exitCode = 1;
  let proxy: RunProxy | null = null;
  let holder: Spawned | null = null;
  let networkCreated = false;
  const canary = createServer((s) => s.destroy());
  // Started before anything of the run exists in Docker: whatever is made, a SIGKILL of stashbase removes it (templates/docker-watchdog.ts).
  const sealed = ctx.network === 'sealed';
  // A sealed run on a terminal makes yours raw (lib/relay/terminal.ts): the watchdog holds it too, to set it back if stashbase is killed.
  const holdsTerminal = sealed && ctx.tty;
  const watchdog = start(watchdogCommand(ctx.docker, ctx.session, sealed, undefined, holdsTerminal), holdsTerminal ? ['pipe', 'ignore', 'ignore', 0] : ['pipe', 'ignore', 'ignore'], true);
  watchdog.child.stdin?.on('error', () => {});
  watchdog.exit.catch(() => 0);
  watchdog.child.unref();
  let created: string[] = [];
  let gitDir: string | null = null;
  let sealedDir: string | null = null;
  let door: { port: number; close: () => void } | null = null;
  let agentStarted = false;
  // The agents' home volume is measured after the run by a container started now (lib/docker/home-volume.ts); with
  // home_volume_warn = "0" (never warned) it is not measured at all, and the last size kept is dropped (it would be stale).
  const volumeMeasure = sizeBytes(ctx.profile.sandbox.homeVolumeWarn) === 0 ? (forgetSize(home), null) : holdMeasure(ctx.docker, defaultImageRef(ctx.env), HOME_VOLUME, `${names.network}-du`, runLabels(ctx.session, process.pid), home);
  // Measured as soon as the engine says the agent's container died (its removal and the client's exit still to come), not after.
  let agentDied: EventWatch | null = null;
  const measureOnDie = () => {
    if (volumeMeasure === null || !ctx.api) return;
    agentDied = watchDie(ctx.api, names.agent);
    agentDied.heard.then(() => volumeMeasure.begin(), () => undefined);
  };
  try {
    // Until the network exists nobody may connect; then only its containers (Linux), or anyone on loopback (Desktop's VM forwards from there).
    let accept: (address: string) => boolean = () => false;
    // The hook endpoints learn where the proxy listens once it does (the host-side check goes through it).
    const where = { host: '', port: 0 };
    const hooks = ctx.profile.allowHooks.length === 0 ? undefined : hookEndpoints({
      token: ctx.hookToken, profile: ctx.profile, env: ctx.env, workTree: ctx.worktree?.path ?? ctx.cwd, mounts: draft.treeMounts, audit: (e) => audit.write(e),
      hidden: () => hiddenWithin(draft.protection, draft.volumes.map((v) => v.target), [ctx.worktree?.path ?? ctx.cwd]),
      agentHooks: ctx.profile.allowHooks.includes('dependency_check') ? hostCheck(ctx, draft, where) : undefined,
    });
    proxy = await proxyForRun({ session: ctx.session, profile: ctx.profile, placeholders: ctx.placeholders, env: ctx.env, home, userHome: ctx.home, cwd: ctx.cwd, audit: (e) => audit.write(e), acceptClient: (a) => accept(a), token: ctx.proxyToken, hooks, tree: { protection: draft.protection, isolated: draft.volumes.map((v) => v.target) }, onUpstreamTls: reportFirstTlsFailure(alert) });
    createRunDir(draft.runDir, proxy.ca, null);
    writeFileSync(seccompFileOf(draft.runDir), JSON.stringify(agentSeccompProfile({ gvisor: ctx.gvisor === true })));
    if (draft.gitDir) gitDir = createRunGitDir(draft.gitDir).file;
    writeFileSync(draft.standIn, standInScript({ urlVar: HOOK_URL_VAR, tokenVar: HOOK_TOKEN_VAR, checkVar: SETTINGS_VAR, path: HOOK_PATH }), { mode: 0o755 });
    const ph = createPlaceholders(draft.protection.placeholders, draft.protection.parents, draft.protection.fileStandIns, [ctx.worktree?.path ?? ctx.cwd]);
    created = ph.created;
    for (const w of ph.warnings) warn(w);
    trace.mark('prepare');
    if (sealed) {
      // No network, holder or canary. The proxy listens on a Unix socket in the run's own folder (denied to every
      // sandbox, reaped with a killed run; lib/util/socket-dir.ts), where the relay's stream (this process) connects.
      // The host-side dependency check alone, where the profile allows it, gets a loopback door to it (lib/docker/sealed.ts).
      sealedDir = socketDir(join(draft.runDir, 'sealed'), 'stashbase-sealed-');
      const socket = join(sealedDir, 'proxy.sock');
      accept = () => true;
      const [volumesToMake, entrypoint] = await allSettled([
        newVolumes(ctx.docker, draft.volumes),
        entrypointOf(ctx, ensureRunImages({ docker: ctx.docker, api: ctx.api, home, env: ctx.env, choice: ctx.choice, interactive, warn })),
        listenPath(proxy.server, socket),
      ]);
      if (ctx.profile.allowHooks.includes('dependency_check')) {
        door = await loopbackDoor(proxy.server);
        Object.assign(where, { host: '127.0.0.1', port: door.port });
      }
      const prep = prepareDocker(ctx, { gateway: '127.0.0.1', proxyPort: 0, canaryPort: 0, newVolumes: volumesToMake, entrypoint }, draft);
      await prepareVolumes(ctx.docker, prep.holder.image, prep.agent.user, volumesToMake);
      trace.mark('network');
      const interceptor = proxy.interceptor;
      if (interceptor) setImmediate(() => interceptor.warm());
      agentStarted = true;
      measureOnDie();
      writeEnvFile(prep.sealed!);
      // The relay is the container's process (relay/supervise.go): its frames, the agent's streams among them, are
      // the docker client's output, and what this process sends them its input. No exec, nothing to wait for.
      // Removing the agent's container ends the run, whatever asks it (your output gone, a frame out of order, a
      // signal the agent did not end for).
      const removeAgent = () => void capture(teardownCommands(ctx.docker, ctx.session, true)[0]!).catch(() => undefined);
      const terminal = new TerminalLink({
        input: process.stdin, output: process.stdout, error: process.stderr, tty: prep.sealed!.size !== '-',
        // The watchdog sets your terminal back only from exactly these settings (templates/docker-watchdog.ts).
        onRaw: (settings) => watchdog.child.stdin?.write(`raw:${settings}\n`),
        // As a docker client whose output failed ends: the run ends, torn down and checked as any other.
        onLost: (why) => {
          audit.write({ type: 'relay', decision: 'end', rule: why, protocolError: false });
          removeAgent();
        },
      });
      const agent = start(sealedAgentCommand(prep.sealed!), ['pipe', 'pipe', 'inherit']);
      agent.child.stdin?.on('error', () => {});
      const closed = new Promise<void>((resolve) => agent.child.on('close', () => resolve()));
      // A signal that ends a run is passed on; should the agent not end within ENDING_GRACE_MS (it ignores it, or it
      // stopped its relay, which your Ctrl+C, a byte on a raw terminal, then never reaches), its container is removed.
      let ending: NodeJS.Timeout | null = null;
      const unforward = forwardSignals((sig) => {
        agent.child.kill(sig);
        if (ending === null && sig !== 'SIGUSR1' && sig !== 'SIGUSR2') {
          ending = setTimeout(removeAgent, ENDING_GRACE_MS);
          ending.unref();
        }
      });
      const mux = new RelayMux(agent.child.stdout!, agent.child.stdin!, {
        connect: () => connect(socket), maxStreams: runLimits(ctx.profile).maxConnections, terminal,
        onEnd: (why, protocolError) => {
          // Its stream closes with the container: nothing to say then.
          if (!protocolError) return;
          audit.write({ type: 'relay', decision: 'end', rule: why, protocolError });
          // The agent's output and its connections share the stream: one out of order ends the run.
          alert(`the sealed network's relay was ended (${why}): the agent's container is removed`);
          removeAgent();
        },
      });
      mux.ready.then(() => trace.mark('relay'), () => undefined);
      try {
        exitCode = await agent.exit;
        // What the container said before it ended is read to its end before the stream is let go.
        await closed;
      } finally {
        if (ending !== null) clearTimeout(ending);
        unforward();
        mux.end('the run ended');
        terminalAfterAgent(ctx.env);
      }
      trace.mark('agent');
      return exitCode;
    }
    // The images are checked while the network is made (a missing one tears it down again).
    const [, volumesToMake] = await allSettled([
      capture(networkCreateCommand(ctx.docker, ctx.session, process.pid, ctx.desktop)).then(() => (networkCreated = true)),
      newVolumes(ctx.docker, draft.volumes),
      ensureRunImages({ docker: ctx.docker, api: ctx.api, home, env: ctx.env, choice: ctx.choice, interactive, warn }),
    ]);
    // Linux: the gateway is this host's address on the run's bridge. Desktop: loopback, reached as host.docker.internal.
    const net = ctx.desktop ? null : parseGateway(await capture(gatewayCommand(ctx.docker, ctx.session)));
    const gateway = net?.gateway ?? '127.0.0.1';
    const containers = net ? containersOnly(net.gateway, net.subnet) : () => true;
    // The host-side dependency check (this host, from the gateway's own address) goes through the proxy too.
    accept = hooks && ctx.profile.allowHooks.includes('dependency_check') ? (a) => containers(a) || a === gateway || a === `::ffff:${gateway}` : containers;
    const [proxyPort, canaryPort] = await Promise.all([listen(proxy.server, gateway), listen(canary, gateway)]);
    Object.assign(where, { host: gateway, port: proxyPort });
    trace.mark('network');
    const prep = prepareDocker(ctx, { gateway, proxyPort, canaryPort, newVolumes: volumesToMake }, draft);
    holder = start(holderCommand(prep.holder), ['ignore', 'pipe', 'pipe']);
    await allSettled([holderReady(holder), prepareVolumes(ctx.docker, prep.holder.image, prep.agent.user, volumesToMake)]);
    trace.mark('holder');
    // The upstream trust and the bound hosts' certificates are built while the agent's container starts.
    const interceptor = proxy.interceptor;
    if (interceptor) setImmediate(() => interceptor.warm());
    measureOnDie();
    writeEnvFile(prep.agent);
    exitCode = await runForwarded(agentCommand(prep.agent)).finally(() => terminalAfterAgent(ctx.env));
    trace.mark('agent');
    return exitCode;
  } catch (e) {
    // The end event says the exit status the run ends with, not the one it began with.
    const failed = setupFailure(e, 'the Docker sandbox');
    exitCode = failed.exitCode;
    throw failed.err;
  } finally {
    // The agents' home volume, measured while the rest is taken down.
    (agentDied as EventWatch | null)?.cancel();
    door?.close();
    const measuring = volumeMeasure !== null && (holder !== null || agentStarted) ? volumeMeasure.measure() : null;
    if (!measuring) volumeMeasure?.cancel();
    await teardown(ctx, networkCreated || holder !== null || agentStarted, warn);
    watchdog.child.stdin?.end(`${WATCHDOG_DONE}\n`);
    holder?.child.kill('SIGKILL');
    canary.close();
    proxy?.server.close();
    if (sealedDir) rmSync(sealedDir, { recursive: true, force: true });
    proxy?.interceptor?.close();
    // The agent's container is gone: nothing writes the run's git directory any more.
    if (gitDir) await settleGitDir(gitDir, ctx.env, ctx.session, { alert, note: announce ? noteLines : () => {} });
    removePlaceholders(created);
    for (const m of removeRunDir(draft.runDir, runStateDirOf(home, ctx.session))) alert(m);
    if (measuring) reportVolume(await measuring, ctx, warn);
    audit.write({ type: 'end', exitCode, durationMs: Date.now() - started });
    // Removed once the tree is checked (lib/run/run-agent.ts), by this run or, if it is stopped first, the next.
    endSession(home, ctx.session);
    trace.mark('teardown');
    trace.print();
  }
}

/**
 * The run's image's entrypoint, asked while its images are checked: the answer
 * counts once the check is done and the image is still the one asked of (a
 * missing image is built, a Dockerfile's may get a new tag); otherwise it is
 * asked again.
 */
async function entrypointOf(ctx: DockerContext, imagesChecked: Promise<void>): Promise<string[]> {
  const asked = ctx.choice.ref;
  const early = imageEntrypoint(ctx.docker, asked, ctx.api ?? null).catch(() => null);
  await imagesChecked;
  const answer = await early;
  return answer !== null && ctx.choice.ref === asked ? answer : imageEntrypoint(ctx.docker, ctx.choice.ref, ctx.api ?? null);
}

/** The dependency check the host runs for the container: through the run's proxy, confined, with the proxy's CA. */
function hostCheck(ctx: DockerContext, draft: DockerPrepared, where: { host: string; port: number }): NonNullable<HookEndpointsInput['agentHooks']> {
  const ca = draft.interceptTls ? join(caDirOf(draft.runDir), 'ca.pem') : null;
  const check = {
    cwd: ctx.worktree?.path ?? ctx.cwd,
    readable: ca ? [caDirOf(draft.runDir)] : [],
    settings: ctx.profile.hooks.dependencyCheck,
    // The registries the container's package managers are told of, not the host's defaults.
    registryEnv: registryVars(ctx.profile.configEnv),
    get proxyPort() {
      return where.port;
    },
    get proxyEnv(): Record<string, string> {
      const url = `http://${PROXY_USER}:${ctx.proxyToken}@${where.host}:${where.port}`;
      return { HTTPS_PROXY: url, HTTP_PROXY: url, https_proxy: url, http_proxy: url, NO_PROXY: '', no_proxy: '', ...(ca ? { NODE_EXTRA_CA_CERTS: ca, SSL_CERT_FILE: join(caDirOf(draft.runDir), 'ca-bundle.pem') } : {}) };
    },
  };
  return check;
}

function reportVolume(size: { bytes: number } | { why: string }, ctx: DockerContext, warn: (msg: string) => void): void {
  if (!('bytes' in size)) return warn(`could not measure the agents' home volume ${HOME_VOLUME} (${size.why}); see its size with: stashbase agent docker status`);
  const setting = ctx.profile.sandbox.homeVolumeWarn;
  const w = growthWarning(HOME_VOLUME, lastSize(ctx.stashbaseHome), size.bytes, sizeBytes(setting) ?? 0, setting);
  recordSize(ctx.stashbaseHome, size.bytes);
  if (w) warn(w);
}

async function teardown(ctx: DockerContext, any: boolean, warn: (msg: string) => void): Promise<void> {
  if (!any) return;
  const [containers, network] = teardownCommands(ctx.docker, ctx.session, ctx.network === 'sealed') as [Command, Command | undefined];
  // The agent container is usually gone already (--rm): "no such container" is expected. Through the API: the same, a request each.
  const api = ctx.api ?? null;
  if (api !== null) await Promise.all(teardownContainers(ctx.session, ctx.network === 'sealed').map((name) => removeContainer(api, name)));
  else await capture(containers).catch(() => undefined);
  if (network === undefined) return;
  await capture(network).catch((e: unknown) => {
    if (e instanceof CommandFailedError && /not found|no such network/i.test(e.stderr)) return;
    warn(`could not remove the run's network (${(e as Error).message.split('\n')[0]}); remove it with: ${formatCommand(network)} (or stashbase agent docker cleanup)`);
  });
}
