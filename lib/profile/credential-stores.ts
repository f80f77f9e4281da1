// Where credentials and histories live by default, for the built-in profile's
// read denials: grouped by kind, each with the tool whose documentation names
// the path (docs/profiles.md has the same table). A folder is denied whole
// where the tool keeps more than one secret in it; `*` entries are walked in
// their (small) folder when the run starts.

export const CREDENTIAL_STORES: ReadonlyArray<{ kind: string; paths: readonly string[]; from: string; platform?: 'darwin' }> = [
  { kind: 'keys and agents', paths: ['~/.ssh', '~/.gnupg', '~/.password-store', '~/.local/share/keyrings', '~/.config/sops', '~/.age'], from: 'OpenSSH, GnuPG, pass, GNOME Keyring, sops/age' },
  { kind: 'git', paths: ['~/.git-credentials', '~/.config/git/credentials', '~/.netrc', '~/.config/gh', '~/.config/hub', '~/.config/glab-cli'], from: "git-credential-store (both of its files), curl/git's netrc, GitHub CLI, hub, GitLab CLI" },
  {
    kind: 'cloud CLIs',
    paths: ['~/.aws', '~/.azure', '~/.config/gcloud', '~/.kube', '~/.oci', '~/.config/doctl', '~/.fly', '~/.config/configstore', '~/.wrangler', '~/.config/.wrangler', '~/.vercel', '~/.local/share/com.vercel.cli', '~/.config/netlify', '~/.config/scw', '~/.config/linode-cli', '~/.config/hcloud', '~/.s3cfg', '~/.boto', '~/.config/rclone', '~/.vault-token', '~/.config/op'],
    from: 'AWS, Azure, Google Cloud, kubectl, OCI, doctl, flyctl, configstore (Firebase and other Node CLIs), Cloudflare wrangler, Vercel, Netlify, Scaleway, Linode, Hetzner, s3cmd, boto, rclone, Vault, 1Password CLI',
  },
  { kind: 'container registries', paths: ['~/.docker', '~/.dockercfg', '~/.config/containers/auth.json', '~/.config/helm'], from: 'Docker, Podman/Buildah/Skopeo (containers-auth.json), Helm repository credentials' },
  { kind: 'databases', paths: ['~/.pgpass', '~/.pg_service.conf', '~/.my.cnf', '~/.mylogin.cnf', '~/.cassandra'], from: 'libpq, MySQL client, cqlsh' },
  {
    kind: 'package and build tools',
    paths: ['~/.npmrc', '~/.yarnrc', '~/.yarnrc.yml', '~/.pypirc', '~/.config/pip', '~/.pip', '~/.cargo/credentials', '~/.cargo/credentials.toml', '~/.gem/credentials', '~/.bundle/config', '~/.m2/settings.xml', '~/.m2/settings-security.xml', '~/.gradle/gradle.properties', '~/.ivy2/.credentials', '~/.sbt/.credentials', '~/.nuget/NuGet/NuGet.Config', '~/.config/NuGet/NuGet.Config', '~/.composer/auth.json', '~/.config/composer/auth.json', '~/.terraformrc', '~/.terraform.d/credentials.tfrc.json'],
    from: 'npm, Yarn, PyPI/twine, pip (index URLs with passwords), Cargo, RubyGems, Bundler, Maven, Gradle, Ivy, sbt, NuGet, Composer, Terraform',
  },
  {
    kind: 'shell and REPL histories',
    paths: ['~/.*hist*', '~/.local/share/fish/fish_history', '~/.local/share/atuin', '~/.viminfo', '~/.local/state/nvim/shada', '~/.julia/logs/repl_history.jl', '~/.dbshell'],
    from: 'every dotfile in home whose name holds "hist" (bash, zsh, Python, Node, psql, MySQL, SQLite, redis-cli, irb, pry, R, less), fish, atuin, Vim and Neovim, Julia, mongosh',
  },
  { kind: 'browser profiles (cookies)', paths: ['~/.mozilla', '~/.config/google-chrome', '~/.config/chromium', '~/.config/BraveSoftware', '~/.config/microsoft-edge'], from: 'Firefox, Chrome, Chromium, Brave, Edge' },
  {
    kind: "a Mac's own stores",
    platform: 'darwin',
    paths: [
      '~/Library/Keychains', '~/Library/Cookies', '~/Library/Safari', '~/Library/Containers/com.apple.Safari', '~/Library/Application Support/Google/Chrome', '~/Library/Application Support/Chromium',
      '~/Library/Application Support/BraveSoftware', '~/Library/Application Support/Microsoft Edge', '~/Library/Application Support/Arc', '~/Library/Application Support/Firefox',
      '~/Library/Application Support/Claude', '~/Library/Application Support/pip', '~/Library/Application Support/com.vercel.cli', '~/Library/Preferences/.wrangler',
      '~/Library/Application Support/Slack', '~/Library/Group Containers/2BUA8C4S2C.com.1password', '~/.zsh_sessions',
    ],
    from: "macOS: the Keychain's files, cookies, Safari, Chrome, Chromium, Brave, Edge, Arc and Firefox profiles, Claude desktop (its MCP servers' tokens), pip, Vercel and Wrangler's Mac homes, Slack, 1Password's app group, Terminal's per-session zsh histories",
  },
];

/** The Keychain's folder: lifted by `[sandbox] macos_allow = ["keychain"]`. */
export const KEYCHAIN_FOLDER = '~/Library/Keychains';

/** A Mac's store group (added where the native backend runs on macOS). */
export const darwinDenyRead = (): string[] => CREDENTIAL_STORES.filter((s) => s.platform === 'darwin').flatMap((s) => s.paths);

/**
 * Where a plant runs later on a Mac (launchd agents, preferences cfprefsd
 * reads, scripts and plug-ins apps load, tools on PATH, editors' and agents'
 * own configs): never writable, whatever the profile (an allow_write of
 * ~/Library does not open LaunchAgents).
 */
export const DARWIN_DENY_WRITE: readonly string[] = [
  '~/Library/LaunchAgents', '~/Library/Preferences', '~/Library/Application Support/com.apple.backgroundtaskmanagementagent', '~/Library/Scripts', '~/Library/Services',
  '~/Library/Application Scripts', '~/Library/Workflows', '~/Library/Input Methods', '~/Library/QuickLook', '~/Library/Spotlight', '~/Library/PreferencePanes',
  '~/Library/Screen Savers', '~/Library/Internet Plug-Ins', '~/Library/Audio/Plug-Ins', '~/Library/ColorPickers', '~/Library/Keyboard Layouts',
  '~/Library/Application Support/Code/User', '~/Library/Application Support/iTerm2/Scripts', '~/.vscode/extensions', '~/.config/nvim', '~/.tmux.conf',
  '~/.claude/settings.json', '~/.claude/settings.local.json', '~/.claude/hooks', '~/.claude/commands', '~/.claude/agents', '~/.codex/config.toml',
  '/opt/homebrew/bin', '/usr/local/bin',
];

/** Readable only by root: denied as well when stashbase runs as root. */
export const ROOT_CREDENTIAL_STORES = ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/security/opasswd', '/etc/ssh/ssh_host_*key', '/etc/ssl/private', '/etc/krb5.keytab'];

/** Written by your shell or git at their next start: never writable in a sandbox, whatever the profile. */
export const DEFAULT_DENY_WRITE: readonly string[] = [
  '~/.bashrc', '~/.bash_profile', '~/.bash_login', '~/.bash_logout', '~/.profile',
  '~/.zshrc', '~/.zshenv', '~/.zprofile', '~/.zlogin', '~/.config/fish',
  '~/.gitconfig', '~/.config/git', '.git/hooks', '.git/config',
];

/** The store a built-in read denial belongs to, for what lifting it means. */
export function storeOf(path: string): { kind: string; from: string } | undefined {
  return CREDENTIAL_STORES.find((s) => s.paths.includes(path));
}

/** What a profile's denials add to the built-in ones (they always hold the built-ins, less allow_read). */
export function ownDenials(fs: { denyRead: string[]; denyWrite: string[] }): { read: string[]; write: string[] } {
  const builtinRead = new Set(anyBuiltinRead());
  return { read: fs.denyRead.filter((e) => !builtinRead.has(e)), write: fs.denyWrite.filter((e) => !DEFAULT_DENY_WRITE.includes(e)) };
}

/** The built-in read denials in effect on a platform (a Mac's group only there). */
export function defaultDenyRead(platform: NodeJS.Platform = process.platform): string[] {
  return CREDENTIAL_STORES.filter((s) => s.platform === undefined || s.platform === platform).flatMap((s) => s.paths);
}

/** Every built-in read denial on any platform: what allow_read may name (a profile shared between a Mac and Linux). */
export const anyBuiltinRead = (): string[] => CREDENTIAL_STORES.flatMap((s) => s.paths);
