// Which Docker engine the docker CLI will talk to, as the CLI decides it
// (DOCKER_HOST, then DOCKER_CONTEXT, then the config's currentContext), and
// whether it is this machine's own. A run mounts this machine's paths into the
// container by name and listens for it here: on another machine's engine the
// same names are that machine's paths, so a run there is a remote run
// (lib/remote/target.ts, docs/remote.md).
import { join } from 'node:path';
import { readBack } from '../readback/file.js';
import { goReadsAsWritten, isJsonObject, parseJson } from '../readback/json.js';
import { capture } from '../exec.js';

export interface Endpoint {
  /** What names it: DOCKER_HOST, a context's name, or the default. */
  from: string;
  host: string;
  /** The context that names it (not the default): its address as the CLI reported it ('' when it could not). */
  context?: string;
}

/** Whether an engine address is this machine's: a local socket or pipe, or TCP to loopback. */
export function isLocalHost(host: string): boolean {
  if (host === '' || host.startsWith('unix://') || host.startsWith('npipe://') || host.startsWith('fd://')) return true;
  const m = /^tcp:\/\/(\[[^\]]+\]|[^:/]+)/i.exec(host);
  if (!m) return false;
  const name = (m[1] as string).replace(/^\[|\]$/g, '').toLowerCase();
  return name === 'localhost' || name === '::1' || /^127\.\d+\.\d+\.\d+$/.test(name);
}

/** The docker CLI's configuration folder (config.json, the contexts' store); an empty DOCKER_CONFIG is unset, as for the CLI (found in review: read as '', config.json was the working directory's). */
export function dockerConfigDir(env: NodeJS.ProcessEnv, home: string): string {
  // The CLI's home is HOME as set, even relative (Go's os.UserHomeDir), the account's only without one (found in review).
  return env.DOCKER_CONFIG || join(env.HOME || home, '.docker');
}

/**
 * Whether the CLI may send headers of the user's own with its requests to the
 * engine (DOCKER_CUSTOM_HEADERS, or config.json's HttpHeaders in any spelling
 * Go reads as that name): an engine behind a proxy that wants them is then the
 * CLI's to speak to. A config stashbase cannot read as strict JSON may hold them too.
 */
export function cliSendsHeaders(env: NodeJS.ProcessEnv, home: string): boolean {
  if (env.DOCKER_CUSTOM_HEADERS) return true;
  const r = readBack(join(dockerConfigDir(env, home), 'config.json'), 1 << 20);
  if (!r.ok) return r.why !== 'missing';
  const parsed = parseJson(r.data.toString('utf8'));
  if (parsed === null || !isJsonObject(parsed.value)) return true;
  return Object.hasOwn(parsed.value, 'HttpHeaders') || !goReadsAsWritten(parsed.value, ['HttpHeaders']);
}

/** The engine the CLI will use; a context other than the default is asked of the CLI itself. */
export async function dockerEndpoint(docker: string, env: NodeJS.ProcessEnv, home: string): Promise<Endpoint> {
  if (env.DOCKER_HOST) return { from: 'DOCKER_HOST', host: env.DOCKER_HOST };
  let context = env.DOCKER_CONTEXT ?? '';
  if (context === '') {
    const r = readBack(join(dockerConfigDir(env, home), 'config.json'), 1 << 20);
    const parsed = r.ok ? parseJson(r.data.toString('utf8')) : null;
    const config = parsed !== null && isJsonObject(parsed.value) ? parsed.value : null;
    if (!r.ok && r.why === 'missing') context = '';
    else if (config !== null && goReadsAsWritten(config, ['currentContext'])) {
      const current = Object.hasOwn(config, 'currentContext') ? config.currentContext : undefined;
      context = typeof current === 'string' ? current : '';
    } else {
      // A config the CLI reads otherwise than strict JSON would (found in review: Go's decoder takes the first value and
      // names in any case; past the bound, through a link): the CLI itself says which context is current.
      context = (await capture({ file: docker, args: ['context', 'show'] }).catch(() => '')).trim();
    }
  }
  if (context === '' || context === 'default') return { from: 'the default context', host: '' };
  const host = (await capture({ file: docker, args: ['context', 'inspect', '--format', '{{.Endpoints.docker.Host}}', '--', context] }).catch(() => '')).trim();
  return { from: `the context ${JSON.stringify(context)}`, host, context };
}
