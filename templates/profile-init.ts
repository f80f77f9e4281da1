// The starting profiles `stashbase profile init` writes: the recipes of
// docs/agents.md (a unit test holds the two to the same text), each with
// comments saying what to change.
export const STARTERS: Record<string, string> = {
  claude: `description = "Claude Code, API key"

[network]
egress_hosts = ["api.anthropic.com", "platform.claude.com"]

[secrets.ANTHROPIC_API_KEY]
source = "ANTHROPIC_API_KEY"          # your shell's variable holding the real key
hosts = ["api.anthropic.com"]

[config_env]
CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = "1"
`,
  codex: `description = "Codex, API key"

[network]
egress_hosts = ["api.openai.com"]

[secrets.CODEX_API_KEY]
source = "OPENAI_API_KEY"             # your shell's variable holding the real key
hosts = ["api.openai.com"]
`,
};

export const STARTER_HEAD = `# Written by stashbase profile init. The built-in denials (~/.ssh, ~/.aws,
# ~/.npmrc, histories and more) apply whatever this file says; what it lists
# adds to them. docs/profiles.md has every key; \`stashbase profile show\` what
# this profile allows; \`stashbase agent validate --profile …\` whether it runs.
# A secret's source may also be file:, command:[…] or keyring: (docs/profiles.md).

`;
