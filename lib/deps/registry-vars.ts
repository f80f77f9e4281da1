// The variables that say where the registries and OSV are, as the check reads
// them (registry-config.ts, osv.ts; npm and pip read the same from their
// environment). A Docker run's check runs on the host, where the container's
// environment is not: the run passes it these, from the profile's config_env,
// the values the container's package managers get, so that the check asks the
// registry the install would use. Only URLs and switches: a path in config_env
// names a file in the container, not on the host.
import { OSV_URL_VAR } from './osv.js';

export const REGISTRY_VARS = ['npm_config_registry', 'NPM_CONFIG_REGISTRY', 'PIP_INDEX_URL', 'PIP_EXTRA_INDEX_URL', 'PIP_FIND_LINKS', 'GOPROXY', OSV_URL_VAR] as const;

/** The registry variables among `configEnv` (the profile's config_env). */
export function registryVars(configEnv: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of REGISTRY_VARS) if (Object.hasOwn(configEnv, name)) out[name] = configEnv[name] as string;
  return out;
}
