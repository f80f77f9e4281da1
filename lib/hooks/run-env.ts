// What a run gives the hooks inside its sandbox, when its profile allows any:
// where its proxy serves the hook endpoints (lib/hooks/endpoints.ts), the
// per-run token they ask for, and the dependency check's thresholds. With no
// allow_hooks, nothing: the git hook then says why it cannot scan, and the
// Docker stand-in stands aside.
import type { Profile } from '../profile/types.js';
import { SETTINGS_VAR, settingsToEnv } from '../deps/settings.js';
import { HOOK_PREFIX, HOOK_TOKEN_VAR, HOOK_URL_VAR } from './hook-env.js';

/** `proxyBase` is the proxy as the sandbox reaches it (http://host:port, no credentials). */
export function hookVariables(profile: Profile, proxyBase: string, token: string): Record<string, string> {
  if (profile.allowHooks.length === 0) return {};
  return {
    [HOOK_URL_VAR]: `${proxyBase}${HOOK_PREFIX}`,
    [HOOK_TOKEN_VAR]: token,
    ...(profile.allowHooks.includes('dependency_check') ? { [SETTINGS_VAR]: settingsToEnv(profile.hooks.dependencyCheck) } : {}),
  };
}
