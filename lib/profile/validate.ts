// Strict validation of a parsed profile: unknown keys, wrong types and values
// that Docker or the proxy would not accept are errors naming file, line and key.
import { CONTEXT_NAME } from '../remote/context-name.js';
import { isIP } from '../util/ip.js';
import { availableParallelism } from 'node:os';
import { ConfigError } from '../errors.js';
import { CA_VARS, ENV_NAME, PROXY_VARS, STASHBASE_API_KEY } from '../env-names.js';
import { MIN_SECRET_BYTES } from '../proxy/scrub.js';
import { cpusProblem, DEFAULT_HOME_VOLUME_WARN, isolatedPathProblem, memoryProblem, sizeBytes } from './docker-values.js';
import { MACOS_SERVICES, type MacosService } from '../../templates/seatbelt-base.js';
import { portableRegex } from '../paths/portable-regex.js';
import { anyBuiltinRead, DEFAULT_DENY_WRITE, defaultDenyRead } from './credential-stores.js';
import { readHooks } from './hooks.js';
import { parseSource } from '../secrets/sources.js';
import { lineOf } from './toml-lines.js';
import type { LocalMcpConfig, McpServerConfig, Profile, ProfileLimits, ProfileSource, SecretBinding } from './types.js';
import { TOOL_GLOB } from '../mcp/tool-policy.js';
import { normalizeHost } from '../proxy/policy.js';
import { formatPath, type KeyPath, type Problem, Reader } from './validators.js';

const TOP = ['description', 'allow_hooks', 'sandbox', 'filesystem', 'network', 'secrets', 'config_env', 'environment', 'workspace', 'hooks', 'mcp'] as const;
const MCP_SERVER = ['url', 'allow_tools', 'deny_tools', 'command', 'env', 'workdir', 'read', 'hosts', 'data'] as const;
const MCP_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** A variable name, or a glob of one (`*` any run of characters, `?` one). */
const NAME_GLOB = /^[A-Za-z_*?][A-Za-z0-9_*?]*$/;
/** An OCI runtime's name as an engine registers it (runc, runsc, io.containerd.runc.v2). */
export const RUNTIME_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const SANDBOX = ['backend', 'image', 'dockerfile', 'memory', 'cpus', 'isolated_paths', 'native_network', 'allow_unix_sockets', 'build_network', 'home_volume_warn', 'macos_allow', 'network', 'runtime', 'remote', 'agent_sessions'] as const;
const FILESYSTEM = ['deny_read', 'allow_read', 'deny_write', 'allow_write', 'writes', 'keep_executables'] as const;
const NETWORK = ['egress_hosts', 'deny_hosts', 'upstream_ca_file', 'hosts', 'allow_upgrades', 'limits'] as const;
const LIMITS = ['head_timeout', 'max_connections', 'upstream_sockets_per_host', 'audit_max_mb', 'mcp_bodies_mb'] as const;
/** An upgrade token (RFC 9110 5.6.2), lower case; websocket is always allowed. */
const UPGRADE_TOKEN = /^[a-z0-9!#$%&'*+.^_`|~/-]+$/;
const SECRET = ['source', 'hosts', 'in_query', 'allow_plaintext'] as const;
const HOOKS = ['secret_scan', 'dependency_check'] as const;
const RESERVED_ENV = new Set<string>([...PROXY_VARS, ...CA_VARS, STASHBASE_API_KEY, 'HOME']);

export interface ValidateInput {
  name: string;
  source: ProfileSource;
  file: string | null;
  /** How the file is named in messages (relative to the working directory when inside it). */
  label: string;
  data: unknown;
  lines: Map<string, number>;
  env: NodeJS.ProcessEnv;
  /** false: a secret's variable need not be set (agent validate --no-secrets). */
  checkValues?: boolean;
  hostCpus?: number;
  /** Where the profile will run (default: here). */
  platform?: NodeJS.Platform;
}

export function validateProfile(input: ValidateInput): Profile {
  const r = new Reader();
  const top = r.table(input.data, [], TOP);
  const description = r.string(top.description, ['description']) ?? '';
  const allowHooks = r.strings(top.allow_hooks, ['allow_hooks'], (s, p) => {
    if ((HOOKS as readonly string[]).includes(s)) return true;
    r.fail(p, `${JSON.stringify(s)} is not a known hook (known: ${HOOKS.join(', ')})`);
    return false;
  });
  // The host-side scan must run confined (bubblewrap, Seatbelt); Windows has neither.
  if (allowHooks?.includes('secret_scan') && (input.platform ?? process.platform) === 'win32') {
    r.fail(['allow_hooks'], '"secret_scan" is not available on Windows: the scan it asks for runs on the host only confined (bubblewrap on Linux, Seatbelt on macOS)');
  }

  const sb = r.table(top.sandbox, ['sandbox'], SANDBOX);
  const backend = r.oneOf(sb.backend, ['sandbox', 'backend'], ['native', 'docker'] as const) ?? 'native';
  const image = r.nonEmpty(sb.image, ['sandbox', 'image']);
  const dockerfile = r.nonEmpty(sb.dockerfile, ['sandbox', 'dockerfile']);
  if (image !== undefined && dockerfile !== undefined) {
    r.fail(['sandbox', 'dockerfile'], 'set at most one of sandbox.image and sandbox.dockerfile');
  }
  const memory = r.string(sb.memory, ['sandbox', 'memory']);
  if (memory !== undefined) {
    const p = memoryProblem(memory);
    if (p) r.fail(['sandbox', 'memory'], p);
  }
  let cpus: string | undefined;
  if (typeof sb.cpus === 'number') cpus = String(sb.cpus);
  else cpus = r.string(sb.cpus, ['sandbox', 'cpus']);
  if (cpus !== undefined) {
    const p = cpusProblem(cpus, input.hostCpus ?? availableParallelism());
    if (p) r.fail(['sandbox', 'cpus'], p);
  }
  const isolatedPaths = r.strings(sb.isolated_paths, ['sandbox', 'isolated_paths'], (s, p) => {
    const problem = isolatedPathProblem(s);
    if (problem) r.fail(p, problem);
    return problem === null;
  });
  const nativeNetwork = r.oneOf(sb.native_network, ['sandbox', 'native_network'], ['proxy-only', 'host'] as const) ?? 'proxy-only';
  const allowUnixSockets = r.bool(sb.allow_unix_sockets, ['sandbox', 'allow_unix_sockets']) ?? false;
  const buildNetwork = r.bool(sb.build_network, ['sandbox', 'build_network']) ?? false;
  const agentSessions = r.oneOf(sb.agent_sessions, ['sandbox', 'agent_sessions'], ['sandbox', 'shared'] as const) ?? 'sandbox';
  const macosAllow = unique(r.strings(sb.macos_allow, ['sandbox', 'macos_allow'], (s, p) => {
    if ((MACOS_SERVICES as readonly string[]).includes(s)) return true;
    r.fail(p, `${JSON.stringify(s)} is not one of ${MACOS_SERVICES.map((x) => JSON.stringify(x)).join(', ')}`);
    return false;
  })) as MacosService[];
  // Docker: how the agent's container reaches the proxy (docs/docker.md), and the OCI runtime it runs under.
  const dockerNetwork = r.oneOf(sb.network, ['sandbox', 'network'], ['firewall', 'sealed'] as const);
  const dockerRuntime = r.string(sb.runtime, ['sandbox', 'runtime']);
  if (dockerRuntime !== undefined && !RUNTIME_NAME.test(dockerRuntime)) r.fail(['sandbox', 'runtime'], `${JSON.stringify(dockerRuntime)} is not a runtime name (letters, digits, ".", "_" and "-", as the engine registers it)`);
  const remote = r.string(sb.remote, ['sandbox', 'remote']);
  if (remote !== undefined && !CONTEXT_NAME.test(remote)) r.fail(['sandbox', 'remote'], `${JSON.stringify(remote)} is not a Docker context's name (make one with: docker context create NAME --docker host=ssh://user@host)`);
  const homeVolumeWarn = r.string(sb.home_volume_warn, ['sandbox', 'home_volume_warn']) ?? DEFAULT_HOME_VOLUME_WARN;
  if (sizeBytes(homeVolumeWarn) === null) r.fail(['sandbox', 'home_volume_warn'], `${JSON.stringify(homeVolumeWarn)} is not a size (a number with an optional unit b, k, m, g or t, such as "2g"; "0" never warns)`);

  const fs = r.table(top.filesystem, ['filesystem'], FILESYSTEM);
  const pathRule = (s: string, p: KeyPath): boolean => {
    if (!s.startsWith('re:')) return true;
    // The subset both the Linux walk and Seatbelt implement (lib/paths/portable-regex.ts).
    const t = portableRegex(s.slice(3));
    if ('source' in t) return true;
    r.fail(p, `${JSON.stringify(s)}${t.problem.startsWith('is ') ? ' ' : ': '}${t.problem}`);
    return false;
  };
  // A profile's lists add to the built-in denials; allow_read lifts one of the built-in read denials by its name.
  const builtinRead = defaultDenyRead(input.platform);
  const anyBuiltin = anyBuiltinRead();
  const allowRead = r.strings(fs.allow_read, ['filesystem', 'allow_read'], (s, p) => {
    if (anyBuiltin.includes(s)) return true;
    r.fail(p, `${JSON.stringify(s)} is not one of the built-in read denials; allow_read lifts one of them by its exact name (stashbase profile show lists them)`);
    return false;
  });
  const ownRead = r.strings(fs.deny_read, ['filesystem', 'deny_read'], (s, p) => {
    if (!allowRead.includes(s)) return pathRule(s, p);
    r.fail(p, `${JSON.stringify(s)} is in allow_read too`);
    return false;
  });
  const denyRead = unique([...builtinRead.filter((s) => !allowRead.includes(s)), ...ownRead]);
  const denyWrite = unique([...DEFAULT_DENY_WRITE, ...r.strings(fs.deny_write, ['filesystem', 'deny_write'], pathRule)]);
  const allowWrite = r.strings(fs.allow_write, ['filesystem', 'allow_write'], pathRule);
  const writes = r.oneOf(fs.writes, ['filesystem', 'writes'], ['allow-list', 'deny-list'] as const) ?? 'allow-list';
  const keepExecutables = r.strings(fs.keep_executables, ['filesystem', 'keep_executables'], (s, p) => {
    if (!s.startsWith('re:') && !/[*?[]/.test(s)) return true;
    r.fail(p, `${JSON.stringify(s)}: name a folder (relative to the working directory), not a pattern`);
    return false;
  });

  const net = r.table(top.network, ['network'], NETWORK);
  const egressHosts = r.strings(net.egress_hosts, ['network', 'egress_hosts'], (s, p) => r.hostPattern(s, p, true));
  const denyHosts = r.strings(net.deny_hosts, ['network', 'deny_hosts'], (s, p) => r.hostPattern(s, p, true));
  const upstreamCaFile = r.nonEmpty(net.upstream_ca_file, ['network', 'upstream_ca_file']);
  const hosts: Record<string, string> = {};
  for (const [name, value] of Object.entries(r.table(net.hosts, ['network', 'hosts'], null))) {
    const path = ['network', 'hosts', name];
    const addr = r.nonEmpty(value, path);
    if (!r.hostPattern(name, path, false) || addr === undefined) continue;
    if (!isAddress(addr)) {
      r.fail(path, `${JSON.stringify(addr)} is not an IP address with an optional port (such as "127.0.0.1:8443" or "[::1]:8443")`);
      continue;
    }
    hosts[name] = addr;
  }

  const allowUpgrades = r.strings(net.allow_upgrades, ['network', 'allow_upgrades'], (u, p) => {
    if (UPGRADE_TOKEN.test(u)) return true;
    r.fail(p, `${JSON.stringify(u)} is not an upgrade protocol token in lower case (such as "h2c")`);
    return false;
  });
  const lim = r.table(net.limits, ['network', 'limits'], LIMITS);
  const limits: ProfileLimits = {};
  const headTimeout = r.integer(lim.head_timeout, ['network', 'limits', 'head_timeout'], 1, 600);
  if (headTimeout !== undefined) limits.headTimeoutMs = headTimeout * 1000;
  const maxConnections = r.integer(lim.max_connections, ['network', 'limits', 'max_connections'], 8, 65_536);
  if (maxConnections !== undefined) limits.maxConnections = maxConnections;
  const perHost = r.integer(lim.upstream_sockets_per_host, ['network', 'limits', 'upstream_sockets_per_host'], 1, 1024);
  if (perHost !== undefined) limits.upstreamSocketsPerHost = perHost;
  const auditMb = r.integer(lim.audit_max_mb, ['network', 'limits', 'audit_max_mb'], 1, 65_536);
  if (auditMb !== undefined) limits.auditMaxBytes = auditMb * 1024 * 1024;
  const mcpMb = r.integer(lim.mcp_bodies_mb, ['network', 'limits', 'mcp_bodies_mb'], 4, 65_536);
  if (mcpMb !== undefined) limits.mcpBodiesMaxBytes = mcpMb * 1024 * 1024;

  const secrets: Record<string, SecretBinding> = {};
  for (const [name, value] of Object.entries(r.table(top.secrets, ['secrets'], null))) {
    const path = ['secrets', name];
    if (!ENV_NAME.test(name)) r.fail(path, `${JSON.stringify(name)} is not an environment variable name`);
    else if (RESERVED_ENV.has(name)) r.fail(path, `${name} is set by the sandbox itself and cannot be a secret binding`);
    const t = r.table(value, path, SECRET);
    const source = r.nonEmpty(t.source, [...path, 'source']);
    if (t.source === undefined) r.fail([...path, 'source'], 'is required: where the real value comes from (a variable of your environment, file:, command: or keyring:)');
    const from = source === undefined ? null : parseSource(source);
    if (from !== null && 'problem' in from) r.fail([...path, 'source'], from.problem);
    const boundHosts = r.strings(t.hosts, [...path, 'hosts'], (s, p) => r.hostPattern(s, p, true));
    if (t.hosts === undefined || (Array.isArray(t.hosts) && t.hosts.length === 0)) {
      r.fail([...path, 'hosts'], 'is required: the hosts that may receive this secret');
    }
    // A variable's value is checked now (unless asked not to: a profile checked in CI); a file, a program or the keyring only once the profile is trusted.
    if (source !== undefined && from !== null && !('problem' in from) && from.kind === 'env' && input.checkValues !== false) {
      const real = input.env[source];
      if (real === undefined || real === '') r.fail([...path, 'source'], `the variable ${source} is not set in this environment`);
      else if (/[\r\n\0]/.test(real)) {
        r.fail([...path, 'source'], `the value of ${source} contains a carriage return, line feed or NUL character, which could split a request header`);
      } else if (Buffer.byteLength(real) < MIN_SECRET_BYTES) {
        r.fail([...path, 'source'], `the value of ${source} is ${Buffer.byteLength(real)} bytes; a secret under ${MIN_SECRET_BYTES} bytes cannot be bound: what comes back from its hosts could not be scrubbed of it reliably (its base64 forms are too short to look for)`);
      }
    }
    secrets[name] = {
      source: source ?? '',
      from: from === null || 'problem' in from ? { kind: 'env', variable: '' } : from,
      hosts: boundHosts,
      inQuery: r.bool(t.in_query, [...path, 'in_query']) ?? false,
      allowPlaintext: r.bool(t.allow_plaintext, [...path, 'allow_plaintext']) ?? false,
    };
  }

  const configEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(r.table(top.config_env, ['config_env'], null))) {
    const path = ['config_env', name];
    const v = r.string(value, path);
    if (!ENV_NAME.test(name)) r.fail(path, `${JSON.stringify(name)} is not an environment variable name`);
    else if (RESERVED_ENV.has(name)) r.fail(path, `${name} is set by the sandbox itself`);
    else if (name in secrets) r.fail(path, `${name} is already a secret binding`);
    else if (v !== undefined && v.includes('\0')) r.fail(path, 'contains a NUL character');
    else if (v !== undefined) configEnv[name] = v;
  }

  const envT = r.table(top.environment, ['environment'], ['inherit', 'include', 'exclude']);
  const glob = (s: string, p: KeyPath): boolean => {
    if (NAME_GLOB.test(s)) return true;
    r.fail(p, `${JSON.stringify(s)} is not a variable name or a glob of one (letters, digits, "_", "*" and "?")`);
    return false;
  };
  const environment = {
    inherit: r.oneOf(envT.inherit, ['environment', 'inherit'], ['all', 'core', 'none'] as const) ?? 'all',
    include: r.strings(envT.include, ['environment', 'include'], glob),
    exclude: r.strings(envT.exclude, ['environment', 'exclude'], glob),
  };

  const ws = r.table(top.workspace, ['workspace'], ['worktree']);
  const worktree = r.bool(ws.worktree, ['workspace', 'worktree']) ?? false;
  const hooks = readHooks(r, top.hooks);

  const mcp = readMcp(r, top.mcp, egressHosts, denyRead);
  // An upgraded protocol other than WebSocket frames its data: a real value a bound service hands back in pieces,
  // under any allowed name, passes a byte scrubber (review, round 35: an h2c echo split across two frames).
  if (allowUpgrades.length > 0 && Object.keys(secrets).length > 0) {
    r.fail(['network', 'allow_upgrades'], 'cannot be used with [secrets]: an upgraded protocol frames its data, and a real value handed back in pieces would pass the proxy\'s scrubbing (WebSocket, whose frames the proxy reads, needs no entry)');
  }

  if (r.problems.length > 0) throw new ConfigError(formatProblems(input.label, input.lines, r.problems));
  return {
    name: input.name,
    source: input.source,
    file: input.file,
    description,
    allowHooks,
    sandbox: { backend, image, dockerfile, memory, cpus, isolatedPaths, nativeNetwork, allowUnixSockets, buildNetwork, homeVolumeWarn, macosAllow, agentSessions, ...(dockerNetwork !== undefined ? { dockerNetwork } : {}), ...(dockerRuntime !== undefined && RUNTIME_NAME.test(dockerRuntime) ? { dockerRuntime } : {}), ...(remote !== undefined && CONTEXT_NAME.test(remote) ? { remote } : {}) },
    filesystem: { denyRead, allowRead: unique(allowRead), denyWrite, allowWrite, writes, keepExecutables },
    network: { egressHosts, denyHosts, upstreamCaFile, hosts, allowUpgrades, limits },
    secrets,
    configEnv,
    environment,
    workspace: { worktree },
    hooks,
    mcp,
  };
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}

function isAddress(addr: string): boolean {
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(addr);
  const v4 = /^([^:]+)(?::(\d+))?$/.exec(addr);
  const ip = v6 ? v6[1] : v4 ? v4[1] : addr;
  const port = v6 ? v6[2] : v4 ? v4[2] : undefined;
  if (!ip || isIP(ip) === 0) return isIP(addr) === 6; // bare IPv6 without a port
  return port === undefined || (/^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535);
}

export function formatProblems(label: string, lines: Map<string, number>, problems: Problem[]): string {
  return problems
    .map((p) => {
      const line = lineOf(lines, p.path.filter((x): x is string => typeof x === 'string'));
      const where = line === undefined ? label : `${label}:${line}`;
      return p.path.length === 0 ? `${where}: ${p.message}` : `${where} ${formatPath(p.path)}: ${p.message}`;
    })
    .join('\n');
}

/** Where stashbase serves a local MCP server to the agent: a name no DNS answers, handled by the proxy itself. */
export const LOCAL_MCP_DOMAIN = 'stashbase-mcp.internal';
const LOCAL_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** [mcp.servers.NAME]: remote servers by URL, or local ones by command; their tool globs; each server's host joins egress_hosts (it is the server's alone). */
function readMcp(r: Reader, raw: unknown, egressHosts: string[], denyRead: string[]): Profile['mcp'] {
  const servers: Record<string, McpServerConfig> = Object.create(null) as Record<string, McpServerConfig>;
  const t = r.table(raw, ['mcp'], ['servers']);
  const hosts = new Map<string, string>();
  for (const [name, value] of Object.entries(r.table(t.servers, ['mcp', 'servers'], null))) {
    const path = ['mcp', 'servers', name];
    if (!MCP_NAME.test(name)) r.fail(path, `${JSON.stringify(name)} is not a server name (letters, digits, "_" and "-", at most 64)`);
    const e = r.table(value, path, MCP_SERVER);
    let local: LocalMcpConfig | null = null;
    let url: string | undefined;
    if (e.command !== undefined) {
      if (e.url !== undefined) r.fail([...path, 'url'], 'set url (a remote server) or command (a local one), not both');
      if (!LOCAL_NAME.test(name)) r.fail(path, `${JSON.stringify(name)}: a local server's name is served as a host name (lower-case letters, digits and "-")`);
      const command = r.strings(e.command, [...path, 'command'], (s, p) => {
        if (s !== '' && !s.includes('\0')) return true;
        r.fail(p, 'is empty or holds a NUL');
        return false;
      });
      if (Array.isArray(e.command) && e.command.length === 0) r.fail([...path, 'command'], 'is empty: the program and its arguments');
      const env: LocalMcpConfig['env'] = Object.create(null) as LocalMcpConfig['env'];
      for (const [k, v] of Object.entries(r.table(e.env, [...path, 'env'], null))) {
        const kp = [...path, 'env', k];
        if (!ENV_NAME.test(k)) r.fail(kp, `${JSON.stringify(k)} is not an environment variable name`);
        else if (typeof v === 'string') {
          if (v.includes('\0')) r.fail(kp, 'holds a NUL');
          else env[k] = { value: v };
        } else {
          const st = r.table(v, kp, ['secret']);
          const source = r.nonEmpty(st.secret, [...kp, 'secret']);
          if (source === undefined) r.fail([...kp, 'secret'], 'is required: where the real value comes from (a variable of your environment, file:, command: or keyring:)');
          else {
            const from = parseSource(source);
            if ('problem' in from) r.fail([...kp, 'secret'], from.problem);
            else env[k] = { source, from };
          }
        }
      }
      const workdir = r.oneOf(e.workdir, [...path, 'workdir'], ['none', 'read', 'write'] as const) ?? 'none';
      const read = r.strings(e.read, [...path, 'read'], (s, p) => {
        if (s.startsWith('re:') || /[*?[]/.test(s)) {
          r.fail(p, `${JSON.stringify(s)}: name a path, not a pattern`);
          return false;
        }
        // What the agent's sandbox hides is not the server's to read either, unless allow_read lifts it for both.
        const hidden = denyRead.find((d) => !d.startsWith('re:') && !/[*?[]/.test(d) && (s === d || s.startsWith(d.endsWith('/') ? d : `${d}/`) || d.startsWith(s.endsWith('/') ? s : `${s}/`)));
        if (hidden === undefined) return true;
        r.fail(p, `${JSON.stringify(s)} would show the server ${JSON.stringify(hidden)}, which the sandbox hides (lift it with allow_read, for the agent too, if the server must read it)`);
        return false;
      });
      // Its own network: through a proxy of its own, to these hosts alone.
      const hostsOf = r.strings(e.hosts, [...path, 'hosts'], (h, p) => r.hostPattern(h, p, true));
      const data = r.strings(e.data, [...path, 'data'], (s, p) => {
        if (s.startsWith('re:') || /[*?[]/.test(s)) {
          r.fail(p, `${JSON.stringify(s)}: name a folder, not a pattern`);
          return false;
        }
        return true;
      });
      local = { command, env, workdir, read, hosts: hostsOf, data };
      url = `https://${name}.${LOCAL_MCP_DOMAIN}/mcp`;
    } else {
      for (const k of ['env', 'workdir', 'read', 'hosts', 'data'] as const) if (e[k] !== undefined) r.fail([...path, k], 'belongs to a local server (command); a remote one is reached as egress_hosts and [secrets] say');
      url = r.nonEmpty(e.url, [...path, 'url']);
      if (e.url === undefined) r.fail([...path, 'url'], "is required: the server's https:// endpoint (or a command, for a local server)");
    }
    let host: string | null = null;
    if (url !== undefined) {
      let u: URL | null = null;
      try {
        u = new URL(url);
      } catch {
        r.fail([...path, 'url'], `${JSON.stringify(url)} is not a URL`);
      }
      if (u !== null) {
        if (u.protocol !== 'https:') r.fail([...path, 'url'], `${JSON.stringify(url)}: a remote MCP server is reached over https (the proxy reads its traffic to enforce the tools)`);
        else if (u.username || u.password || u.search || u.hash) r.fail([...path, 'url'], `${JSON.stringify(url)}: no user, query or fragment (a credential is a [secrets] binding for the host)`);
        else if (!r.hostPattern(u.hostname, [...path, 'url'], false)) host = null;
        else host = normalizeHost(u.hostname) ?? u.hostname.toLowerCase();
        // (The host as the proxy matches it: a trailing dot or upper case is the same host.)
        if (local === null && host !== null && (host === LOCAL_MCP_DOMAIN || host.endsWith(`.${LOCAL_MCP_DOMAIN}`))) r.fail([...path, 'url'], `${JSON.stringify(url)}: ${LOCAL_MCP_DOMAIN} is where stashbase serves local servers`);
      }
    }
    const glob = (s: string, p: KeyPath): boolean => {
      if (TOOL_GLOB.test(s)) return true;
      r.fail(p, `${JSON.stringify(s)} is not a glob over tool names (1 to 128 of A-Z a-z 0-9 _ - . and the wildcards * and ?)`);
      return false;
    };
    const allowTools = e.allow_tools === undefined ? null : r.strings(e.allow_tools, [...path, 'allow_tools'], glob);
    const denyTools = r.strings(e.deny_tools, [...path, 'deny_tools'], glob);
    if (host !== null) {
      const other = hosts.get(host);
      if (other !== undefined) r.fail([...path, 'url'], `${host} is already [mcp.servers.${other}]'s: a host is one server's alone`);
      hosts.set(host, name);
      if (!egressHosts.includes(host)) egressHosts.push(host);
    }
    if (url !== undefined) servers[name] = { url, local, allowTools, denyTools };
  }
  return { servers };
}
