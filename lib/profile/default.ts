import { DEFAULT_HOME_VOLUME_WARN } from './docker-values.js';
import { DEFAULT_DENY_WRITE, defaultDenyRead } from './credential-stores.js';
import { defaultHookSettings } from './hooks.js';
import type { Profile } from './types.js';

/**
 * The built-in profile used when no --profile is given: native backend, writes
 * only to the working directory, the run's own temp and the agents' state
 * (the rest of the host read-only), credential stores and histories
 * unreadable, egress only to the hosts the known agents need for their API and
 * login, no secrets. Every profile's lists add to these denials (validate.ts);
 * the deny_write entries matter where the working directory is your home, and
 * for profiles with writes = "deny-list".
 */
export function defaultProfile(): Profile {
  return {
    name: 'default',
    source: 'builtin',
    file: null,
    description: 'Built-in default: native sandbox, credential stores hidden, agent API hosts only',
    allowHooks: [],
    sandbox: { backend: 'native', isolatedPaths: [], nativeNetwork: 'proxy-only', allowUnixSockets: false, buildNetwork: false, homeVolumeWarn: DEFAULT_HOME_VOLUME_WARN, macosAllow: [], agentSessions: 'sandbox' },
    filesystem: {
      denyRead: defaultDenyRead(),
      allowRead: [],
      denyWrite: [...DEFAULT_DENY_WRITE],
      allowWrite: [],
      keepExecutables: [],
      writes: 'allow-list',
    },
    network: {
      egressHosts: [
        'api.anthropic.com', 'platform.claude.com', 'claude.ai', 'console.anthropic.com', 'statsig.anthropic.com',
        'api.openai.com', 'auth.openai.com', 'chatgpt.com',
      ],
      denyHosts: [],
      hosts: {},
      allowUpgrades: [],
      limits: {},
    },
    secrets: {},
    configEnv: {},
    environment: { inherit: 'all', include: [], exclude: [] },
    workspace: { worktree: false },
    hooks: defaultHookSettings(),
    mcp: { servers: {} },
  };
}
