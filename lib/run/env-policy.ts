// What of your environment a native agent inherits ([environment] of the
// profile; the Docker backend passes none of it). stashbase's own variables,
// the secrets' sources and proxy settings never pass. Then:
// - inherit = "all" (the default): everything else but what looks like a
//   credential (its name, or a URL with a password as its value), which is
//   dropped and named at the start of the run;
// - inherit = "core": only the variables a shell and its tools need (CORE);
// - inherit = "none": nothing;
// and `include` globs pass names back (a credential-looking one is then
// inherited, said as weaker), `exclude` globs drop more. What the profile
// sets itself ([config_env], placeholders) is the sandbox's, not inherited.
import { CREDENTIAL_NAME, CREDENTIAL_VALUE, PROXY_VARS, STASHBASE_API_KEY, URL_WITH_PASSWORD } from '../env-names.js';
import type { Profile } from '../profile/types.js';

/** inherit = "core": what a shell, git and the agents' tools need to work, and nothing that holds a credential. */
export const CORE = ['HOME', 'LOGNAME', 'USER', 'USERNAME', 'SHELL', 'PATH', 'TERM', 'COLORTERM', 'LANG', 'LANGUAGE', 'LC_*', 'TZ', 'TMPDIR', 'EDITOR', 'VISUAL', 'PAGER', 'NO_COLOR', 'FORCE_COLOR'];

/** A name matches a glob (`*` any run of characters, `?` one), case-sensitively as the environment is. */
export function globMatch(glob: string, name: string): boolean {
  const re = new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
  return re.test(name);
}

const anyOf = (globs: readonly string[], name: string) => globs.some((g) => globMatch(g, name));

/** Whether a variable looks like it holds a credential: its name, or a value that is one (a URL with a password or a token as its user, a known token, a private key, a connection string's key). */
export function looksLikeCredential(name: string, value: string | undefined): boolean {
  return value !== undefined && value !== '' && (CREDENTIAL_NAME.test(name) || URL_WITH_PASSWORD.test(value) || CREDENTIAL_VALUE.test(value));
}

export interface EnvDecision {
  /** Removed from the agent's environment, in a stable order (stashbase's own first, then by name). */
  removed: string[];
  /** Credential-looking variables the policy dropped (a subset of removed): said at the start. */
  droppedCredentials: string[];
  /** Credential-looking variables the agent inherits all the same (include named them): said as weaker. */
  inheritedCredentials: string[];
}

export function envDecision(profile: Profile, env: NodeJS.ProcessEnv): EnvDecision {
  // The variables secrets are read from, the bindings' and the local MCP servers' (lib/mcp/local-server.ts): never the agent's.
  const localSources = Object.values(profile.mcp.servers).flatMap((m) => Object.values(m.local?.env ?? {}).flatMap((v) => ('from' in v && v.from.kind === 'env' ? [v.from.variable] : [])));
  const always = new Set<string>([STASHBASE_API_KEY, ...Object.values(profile.secrets).flatMap((s) => (s.from.kind === 'env' ? [s.from.variable] : [])), ...localSources, ...PROXY_VARS]);
  const policy = profile.environment;
  const own = new Set([...Object.keys(profile.configEnv), ...Object.keys(profile.secrets)]);
  const removed = [...always].filter((n) => env[n] !== undefined);
  const droppedCredentials: string[] = [];
  const inheritedCredentials: string[] = [];
  for (const name of Object.keys(env).sort()) {
    const value = env[name];
    if (value === undefined || always.has(name)) continue;
    const credential = looksLikeCredential(name, value);
    const included = anyOf(policy.include, name);
    let keep: boolean;
    if (anyOf(policy.exclude, name)) keep = false;
    else if (included) keep = true;
    else if (policy.inherit === 'none') keep = false;
    else if (policy.inherit === 'core') keep = anyOf(CORE, name) && !credential;
    else keep = !credential;
    if (!keep) {
      removed.push(name);
      if (credential && !own.has(name)) droppedCredentials.push(name);
    } else if (credential && !own.has(name)) inheritedCredentials.push(name);
  }
  return { removed, droppedCredentials, inheritedCredentials };
}

/** Removed from the agent's environment. */
export function removedVariables(profile: Profile, env: NodeJS.ProcessEnv): string[] {
  return envDecision(profile, env).removed;
}
