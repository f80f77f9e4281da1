import type { Profile } from './types.js';

/**
 * The built-in profile used when no --profile is given: native backend, the
 * common credential stores unreadable, shell start-up files and git's executable
 * configuration unwritable, egress only to the hosts the known agents need for
 * their API and login, no secrets.
 */
export function defaultProfile(): Profile {
  return {
    name: 'default',
    source: 'builtin',
    file: null,
    description: 'Built-in default: native sandbox, credential stores hidden, agent API hosts only',
    allowHooks: [],
    sandbox: { backend: 'native', isolatedPaths: [], nativeNetwork: 'proxy-only' },
    filesystem: {
      denyRead: [
        '~/.ssh', '~/.aws', '~/.gnupg', '~/.azure', '~/.kube', '~/.docker', '~/.netrc',
        '~/.git-credentials', '~/.npmrc', '~/.pypirc', '~/.password-store', '~/.vault-token',
        '~/.config/gcloud', '~/.config/gh', '~/.config/hub', '~/.local/share/keyrings',
        '~/.cargo/credentials', '~/.cargo/credentials.toml', '~/.gem/credentials',
        '~/.terraform.d/credentials.tfrc.json',
      ],
      denyWrite: [
        '~/.bashrc', '~/.bash_profile', '~/.bash_login', '~/.bash_logout', '~/.profile',
        '~/.zshrc', '~/.zshenv', '~/.zprofile', '~/.zlogin', '~/.config/fish',
        '~/.gitconfig', '~/.config/git', '.git/hooks', '.git/config',
      ],
    },
    network: {
      egressHosts: [
        'api.anthropic.com', 'platform.claude.com', 'claude.ai', 'console.anthropic.com', 'statsig.anthropic.com',
        'api.openai.com', 'auth.openai.com', 'chatgpt.com',
      ],
      denyHosts: [],
      hosts: {},
    },
    secrets: {},
    configEnv: {},
    workspace: { worktree: false },
  };
}
