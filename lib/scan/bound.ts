// The real values the scan looks for by exact match: those of the secrets the
// profile binds (each [secrets.NAME] source variable, read from this
// environment, as `agent run` reads them) and of variables named with
// --secret-env (how a confined scan is handed a run's values).
import type { Profile } from '../profile/types.js';
import { secretValue } from '../secrets/sources.js';
import { type BoundSecret, MIN_BOUND_LENGTH } from './detectors.js';

export function boundSecrets(profile: Profile | null, secretEnv: string[], env: NodeJS.ProcessEnv, note: (msg: string) => void, given: string[] = []): BoundSecret[] {
  const out: BoundSecret[] = [];
  const add = (name: string, variable: string) => {
    const value = env[variable];
    if (value === undefined || value === '') note(`${name}: ${variable} is not set, so its value is not searched for`);
    else if (value.length < MIN_BOUND_LENGTH) note(`${name}: the value of ${variable} is shorter than ${MIN_BOUND_LENGTH} characters, so it is not searched for (it would match ordinary text)`);
    else out.push({ name, value });
  };
  for (const [name, s] of Object.entries(profile?.secrets ?? {})) {
    if (s.from.kind === 'env') add(name, s.from.variable);
    else {
      const value = secretValue(s, env);
      if (value === '') note(`${name}: its value (${s.source}) was not read, so it is not searched for`);
      else out.push({ name, value });
    }
  }
  for (const variable of [...secretEnv, ...given]) add(variable, variable);
  return out;
}
