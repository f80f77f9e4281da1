import type { HookSettings } from './hooks.js';
import type { MacosService } from '../../templates/seatbelt-base.js';

export type ProfileSource = 'builtin' | 'global' | 'directory';
export type Backend = 'native' | 'docker';
export type NativeNetwork = 'proxy-only' | 'host';
/** allow-list: the host read-only but for the working directory, temp and allow_write; deny-list: the spec's, writable but for deny_write. */
export type WriteMode = 'allow-list' | 'deny-list';

export interface SecretBinding {
  /** Where the real value comes from, as the profile says it: a variable's name, file:, command: or keyring:. */
  source: string;
  /** The same, parsed (lib/secrets/sources.ts reads it). */
  from: SecretSource;
  hosts: string[];
  inQuery: boolean;
  allowPlaintext: boolean;
}

import type { SecretSource } from '../secrets/sources.js';

export interface ProfileLimits {
  headTimeoutMs?: number;
  maxConnections?: number;
  upstreamSocketsPerHost?: number;
  auditMaxBytes?: number;
  mcpBodiesMaxBytes?: number;
}

export interface Profile {
  name: string;
  source: ProfileSource;
  /** Absolute path of the TOML file; null for the built-in default. */
  file: string | null;
  description: string;
  allowHooks: string[];
  sandbox: {
    backend: Backend;
    image?: string;
    dockerfile?: string;
    memory?: string;
    cpus?: string;
    isolatedPaths: string[];
    nativeNetwork: NativeNetwork;
    /** socket(AF_UNIX) allowed in the native sandbox (weaker: host control sockets reachable). */
    allowUnixSockets: boolean;
    /** The build of `dockerfile` gets the engine's network (weaker: its steps reach anything; default none). */
    buildNetwork: boolean;
    /** Docker: warn when a run leaves the agents' home volume larger than this ("1g"; "0": never). */
    homeVolumeWarn: string;
    /** macOS: services the Seatbelt profile adds (templates/seatbelt-base.ts; each weaker). */
    macosAllow: MacosService[];
    /**
     * Native: where the agents' sessions (Claude Code's projects, file-history…, Codex's sessions) live in a run:
     * "sandbox", a store of stashbase's shared by sandboxed runs alone; "shared", your own (weaker: lib/views/agent-views.ts).
     */
    agentSessions: 'sandbox' | 'shared';
    /** Docker: the firewall holder (the specification's design) or a sealed container with the relay; unset: firewall, or sealed where the runtime needs it. */
    dockerNetwork?: 'firewall' | 'sealed';
    /** Docker: the OCI runtime the agent's container runs under (runsc); unset: the engine's default. */
    dockerRuntime?: string;
    /** Docker: the context of the remote engine runs use (docs/remote.md); unset: DOCKER_HOST or the current context. */
    remote?: string;
  };
  filesystem: {
    /** In effect: the built-in denials (less allowRead) and the profile's own. */
    denyRead: string[];
    /** Built-in read denials the profile lifts by name (weaker). */
    allowRead: string[];
    /** In effect: the built-in write denials and the profile's own. */
    denyWrite: string[];
    allowWrite: string[];
    writes: WriteMode;
    /** Folders where what the run makes or changes that host tools execute unseen is kept (lib/paths/host-executed.ts; weaker). */
    keepExecutables: string[];
  };
  network: {
    egressHosts: string[];
    denyHosts: string[];
    upstreamCaFile?: string;
    hosts: Record<string, string>;
    /** Upgrades other than websocket allowed through intercepted tunnels. */
    allowUpgrades: string[];
    /** Overrides of the proxy's limits (lib/proxy/limits.ts); unset ones keep their defaults. */
    limits: ProfileLimits;
  };
  secrets: Record<string, SecretBinding>;
  configEnv: Record<string, string>;
  /** [environment]: what of your environment a native agent inherits (lib/run/env-policy.ts). */
  environment: { inherit: 'all' | 'core' | 'none'; include: string[]; exclude: string[] };
  workspace: { worktree: boolean };
  /** [hooks.*]: settings of the hooks allow_hooks turns on. */
  hooks: HookSettings;
  /** [mcp.servers.*]: MCP servers whose tools the profile restricts (lib/mcp/). */
  mcp: { servers: Record<string, McpServerConfig> };
}

export interface McpServerConfig {
  /** The endpoint the agent uses (https): a remote server's, or the one stashbase serves a local server at. Its host is given to MCP alone. */
  url: string;
  /** A local (stdio) server stashbase runs for the run, confined, outside the agent's sandbox (lib/mcp/local-server.ts); null: remote. */
  local: LocalMcpConfig | null;
  /** Globs over tool names; null: every tool not denied. */
  allowTools: string[] | null;
  denyTools: string[];
}

export interface LocalMcpConfig {
  command: string[];
  /** The server's environment besides a minimal one: literal values, or secrets read after trust (never the agent's). */
  env: Record<string, { value: string } | { source: string; from: SecretSource }>;
  /** The agent's working tree in the server's sandbox: hidden, or read-only less what the agent's sandbox hides. */
  workdir: 'none' | 'read' | 'write';
  /** Paths the server may read besides the system's (its own installation). */
  read: string[];
  /** Folders where the agent writes that the server's arguments may name, as data it works on (never code it runs). */
  data: string[];
  /** The hosts it may reach, only through a proxy of its own (lib/mcp/local-server.ts); none: no network. */
  hosts: string[];
}
