// The proxy a run uses, from its profile: the egress policy always; when the
// profile binds secrets, TLS interception (lib/proxy/intercepting.ts, loaded
// only then: TLS and HTTPS cost a run without secrets ~3 ms of start-up).
import type { Profile } from '../profile/types.js';
import type { BoundSecret } from './secrets.js';
import { secretValue } from '../secrets/sources.js';
import { deferredServer } from './front.js';
import { remoteServers } from '../mcp/servers.js';
import { expandedPaths } from '../paths/expand.js';
import { allowWritePaths } from '../native/write-areas.js';
import { alwaysDenied } from '../native/always-denied.js';
import { stashbaseHome } from '../home.js';
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { socketDir } from '../util/socket-dir.js';
import { runStateDirOf } from '../run/run-dir.js';
import { sandboxFilter, seccompSupported } from '../../templates/seccomp.js';
import { join } from 'node:path';
import { hiddenReadPath, LocalServer, localServerCommand, readServerSecrets } from '../mcp/local-server.js';
import { ConfigError } from '../errors.js';
import { DEFAULT_LIMITS, type ProxyLimits } from './limits.js';
import type { RunProxy, RunProxyInput } from './run-proxy.js';

export type { RunProxy, RunProxyInput } from './run-proxy.js';

export function boundSecrets(profile: Profile, placeholders: Record<string, string>, env: NodeJS.ProcessEnv): BoundSecret[] {
  return Object.entries(profile.secrets).map(([name, s]) => ({
    name,
    placeholder: placeholders[name] as string,
    real: secretValue(s, env),
    hosts: s.hosts,
    inQuery: s.inQuery,
    allowPlaintext: s.allowPlaintext,
  }));
}

/** The run's limits: the profile's overrides over the defaults. */
export function runLimits(profile: Profile): ProxyLimits {
  return { ...DEFAULT_LIMITS, ...profile.network.limits };
}

export async function proxyForRun(o: RunProxyInput): Promise<RunProxy> {
  const policy = { egressHosts: o.profile.network.egressHosts, denyHosts: o.profile.network.denyHosts, mapped: o.profile.network.hosts };
  const secrets = boundSecrets(o.profile, o.placeholders, o.env);
  const limits = runLimits(o.profile);
  // An MCP server's traffic is read to enforce its tools (lib/mcp/): intercepted as a bound secret's is.
  const mcp = remoteServers(o.profile);
  if (secrets.length === 0 && mcp.length === 0) {
    const server = deferredServer(async () => (await import('./server.js')).createProxy({ policy, audit: o.audit, acceptClient: o.acceptClient, token: o.token, limits, hooks: o.hooks }), limits);
    return { server, interceptor: null, ca: null };
  }
  const { interceptingProxy } = await import('./intercepting.js');
  // Local servers are started now (their secrets read, after trust) and stopped with the interceptor.
  const bridges = new Map<string, LocalServer>();
  for (const [name, cfg] of Object.entries(o.profile.mcp.servers)) {
    if (cfg.local === null) continue;
    const server = mcp.find((m) => m.name === name)!;
    // Each server's own folder: its seccomp filter and, with hosts, the socket of a proxy of its own bound into its sandbox (its hosts alone, audited as its).
    // In the run's own folder (no sandbox sees it; reaped with a killed run), else a private temp folder.
    const dir = socketDir(join(runStateDirOf(o.home, o.session), `mcp-${name}`), 'stashbase-mcp-');
    const seccompFile = join(dir, 'seccomp.bpf');
    if (seccompSupported(process.arch)) writeFileSync(seccompFile, sandboxFilter(process.arch, { unixSockets: true }));
    let own: { socket: string; token: string; close: () => void } | undefined;
    let closeOwn = () => {};
    if (cfg.local.hosts.length > 0) {
      const socket = join(dir, 'proxy.sock');
      const token = randomBytes(18).toString('hex');
      const { createProxy } = await import('./server.js');
      const p = createProxy({ policy: { egressHosts: cfg.local.hosts, denyHosts: o.profile.network.denyHosts, mapped: o.profile.network.hosts }, audit: (e) => o.audit({ ...e, mcpServer: name }), token, limits });
      await new Promise<void>((resolve, reject) => p.once('error', reject).listen(socket, () => resolve()));
      own = { socket, token, close: () => p.close() };
      closeOwn = () => p.close();
    }
    const local = cfg.local;
    // What the agent's sandbox hides, the profile's and what no profile opens (sockets, root's credential stores, stashbase's state).
    const denied = [...expandedPaths(o.profile.filesystem.denyRead, o.userHome, o.cwd), ...alwaysDenied({ env: o.env, cwd: o.cwd }).read, stashbaseHome(o.env)];
    // A read path that would show it refuses the run, as its plain spelling does when the profile is read.
    const shown = hiddenReadPath(local.read, { home: o.userHome, cwd: o.cwd, denied });
    if (shown !== null) throw new ConfigError(`[mcp.servers.${name}] ${shown}; nothing was run`);
    const serverSecrets: Array<{ variable: string; value: string }> = [];
    // Its secrets read now, before the agent runs, where the server is planned later (workdir = "write": at its first
    // request): a secret's command may ask on your terminal (lib/mcp/local-server.ts readServerSecrets).
    const secretsRead = local.workdir === 'write' ? readServerSecrets(local, { env: o.env, home: o.userHome, cwd: o.cwd }) : undefined;
    const command = () => localServerCommand(local, {
      onSecret: (variable, value) => serverSecrets.push({ variable, value }), ...(secretsRead !== undefined ? { secrets: secretsRead } : {}),
      env: o.env, home: o.userHome, cwd: o.cwd, proxy: own,
      denied, writable: allowWritePaths(o.profile.filesystem.allowWrite, o.userHome, o.cwd).paths,
      tree: o.tree, ...(seccompSupported(process.arch) ? { seccompFile } : {}), denyListWrites: o.profile.filesystem.writes === 'deny-list',
    });
    // A writable tree's protections are planned when the server starts (its first request), after the run made its stand-ins.
    const bridge = new LocalServer(name, local.workdir === 'write' ? command : command(), server.policy, serverSecrets);
    bridge.onStop = () => {
      closeOwn();
      rmSync(dir, { recursive: true, force: true });
    };
    if (local.workdir !== 'write') bridge.start();
    bridges.set(name, bridge);
  }
  return interceptingProxy(o, policy, secrets, limits, mcp, bridges);
}
