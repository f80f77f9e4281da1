// Which engine a remote run uses: a Docker context named by --remote or the
// profile's [sandbox] remote, or the engine DOCKER_HOST or the current context
// names when it is not this machine's own (lib/docker/endpoint.ts). A named
// context is given to every docker command of the run (DOCKER_CONTEXT, with
// DOCKER_HOST unset: Docker lets DOCKER_HOST win over DOCKER_CONTEXT).
import { UsageError } from '../errors.js';
import { capture } from '../exec.js';
import { dockerEndpoint, type Endpoint, isLocalHost } from '../docker/endpoint.js';
import { CONTEXT_NAME } from './context-name.js';
import { stashbaseHome, userHome } from '../home.js';
import { remoteDockerConfig } from '../docker/cli-config.js';

export interface RemoteTarget {
  /** The context named, or null when the environment names the engine. */
  context: string | null;
  /** The context whose settings (its TLS among them) the docker CLI uses for it: the one named, or DOCKER_CONTEXT's or the current one; null for DOCKER_HOST. */
  settings: string | null;
  /** Its address, as the CLI reports it. */
  host: string;
  /** How the run names it, for what it says. */
  from: string;
}


/**
 * The run's engine: remote (`named`: --remote or the profile's; or DOCKER_HOST / the current context not this
 * machine's), or else this machine's, with the endpoint the CLI uses (a local run speaks to it: lib/docker/api.ts).
 */
async function engineTarget(docker: string, env: NodeJS.ProcessEnv, home: string, named: string | undefined): Promise<{ remote: RemoteTarget | null; local: Endpoint | null }> {
  if (named !== undefined) {
    if (!CONTEXT_NAME.test(named)) throw new UsageError(`--remote takes a Docker context's name, not ${JSON.stringify(named)} (make one with: docker context create NAME --docker host=ssh://user@host)`);
    const host = await capture({ file: docker, args: ['context', 'inspect', '--format', '{{.Endpoints.docker.Host}}', '--', named], unsetEnv: ['DOCKER_HOST', 'DOCKER_CONTEXT'] }).catch(() => null);
    if (host === null) throw new UsageError(`there is no Docker context named ${JSON.stringify(named)} (docker context ls lists them; make one with: docker context create ${named} --docker host=ssh://user@host)`);
    return { remote: { context: named, settings: named, host: host.trim(), from: `the context ${JSON.stringify(named)}` }, local: null };
  }
  const e = await dockerEndpoint(docker, env, home);
  if (isLocalHost(e.host)) return { remote: null, local: e };
  // Found in review: a context chosen by DOCKER_CONTEXT or `docker context use` keeps its TLS settings, as a named one does.
  return { remote: { context: null, settings: e.context ?? null, host: e.host, from: e.from }, local: null };
}

/**
 * Points every docker command of this process at the target's engine, with a configuration of stashbase's own
 * (lib/docker/cli-config.ts: your proxies and registry logins stay here).
 */
export function useTarget(t: RemoteTarget, env: NodeJS.ProcessEnv): void {
  env.DOCKER_CONFIG = remoteDockerConfig(env, userHome(env), stashbaseHome(env));
  if (t.context === null) return;
  delete env.DOCKER_HOST;
  env.DOCKER_CONTEXT = t.context;
}

/** The engine a run or command uses (a remote one applied to `env`): remote, or this machine's with its endpoint. */
export async function engineFor(docker: string, env: NodeJS.ProcessEnv, named: string | undefined): Promise<{ remote: RemoteTarget | null; local: Endpoint | null }> {
  const t = await engineTarget(docker, env, userHome(env), named);
  if (t.remote !== null) useTarget(t.remote, env);
  // The engine decided is every later docker command's (found in review: a `docker context use` during the run, yours or
  // Docker Desktop's, moved the agent's container, the teardown and the watchdog to another engine than the API's).
  if (!env.DOCKER_HOST) env.DOCKER_CONTEXT = t.remote?.settings ?? t.local?.context ?? 'default';
  return t;
}

/** For the docker commands that take --remote: the engine they manage when it is not this machine's (applied to `env`), else null. */
export async function engineOf(docker: string, env: NodeJS.ProcessEnv, named: string | undefined): Promise<RemoteTarget | null> {
  return (await engineFor(docker, env, named)).remote;
}
