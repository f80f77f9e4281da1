// Which of the user's variables a native run removes, and which look like
// credentials worth a warning (the native agent inherits everything else).
import { CREDENTIAL_NAME, PROXY_VARS, STASHBASE_API_KEY, URL_WITH_PASSWORD } from '../env-names.js';
import type { Profile } from '../profile/types.js';

/** Removed from the agent's environment, in a stable order. */
export function removedVariables(profile: Profile, env: NodeJS.ProcessEnv): string[] {
  const names = new Set<string>([STASHBASE_API_KEY, ...Object.values(profile.secrets).map((s) => s.source), ...PROXY_VARS]);
  // Only what is actually set needs removing; the order follows the policy.
  return [...names].filter((n) => env[n] !== undefined);
}

/** Inherited variables whose names look like they hold a credential, or whose value is a URL with a password. */
export function credentialLookingVariables(profile: Profile, env: NodeJS.ProcessEnv): string[] {
  const removed = new Set(removedVariables(profile, env));
  return Object.keys(env)
    .filter((n) => {
      const v = env[n];
      return !removed.has(n) && v !== undefined && v !== '' && (CREDENTIAL_NAME.test(n) || URL_WITH_PASSWORD.test(v));
    })
    .sort();
}
