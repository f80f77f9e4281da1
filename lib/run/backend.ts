// Which backend enforces a run: the profile's choice, overridden per run by
// --docker-sandbox, and implied by --docker-image / --docker-dockerfile.
import { UsageError } from '../errors.js';
import type { Backend, Profile } from '../profile/types.js';

export interface BackendFlags {
  /** --backend native|docker: the same choice as --docker-sandbox false|true, by its name. */
  backend?: string;
  dockerSandbox?: string;
  dockerImage?: string;
  dockerDockerfile?: string;
  dockerMemory?: string;
  dockerCpus?: string;
  dockerIsolatedPaths?: string;
  dockerNetwork?: string;
  dockerRuntime?: string;
  /** --remote <context>: a remote run, on the Docker backend (docs/remote.md). */
  remote?: string;
}

export function parseBool(flag: string, value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new UsageError(`--${flag} takes true or false, not ${JSON.stringify(value)}`);
}

/** The backend and the notes (flags without effect) for this run. */
export function resolveBackend(profile: Profile, f: BackendFlags): { backend: Backend; notes: string[] } {
  if (f.dockerImage !== undefined && f.dockerDockerfile !== undefined) {
    throw new UsageError('--docker-image and --docker-dockerfile cannot be used together');
  }
  if (f.backend !== undefined && f.backend !== 'native' && f.backend !== 'docker') throw new UsageError(`--backend takes native or docker, not ${JSON.stringify(f.backend)}`);
  const bySandbox = f.dockerSandbox === undefined ? undefined : parseBool('docker-sandbox', f.dockerSandbox);
  const byName = f.backend === undefined ? undefined : f.backend === 'docker';
  if (bySandbox !== undefined && byName !== undefined && bySandbox !== byName) throw new UsageError(`--backend ${f.backend} and --docker-sandbox ${f.dockerSandbox} disagree`);
  const forced = bySandbox ?? byName;
  const impliedBy = f.dockerImage !== undefined ? '--docker-image' : f.dockerDockerfile !== undefined ? '--docker-dockerfile' : f.remote !== undefined ? '--remote' : null;
  if (impliedBy && forced === false) throw new UsageError(`${impliedBy} implies the Docker backend and cannot be used with --docker-sandbox false`);
  const backend: Backend = impliedBy || forced === true ? 'docker' : forced === false ? 'native' : profile.sandbox.backend;
  const notes: string[] = [];
  if (backend === 'native') {
    for (const [flag, v] of [['--docker-memory', f.dockerMemory], ['--docker-cpus', f.dockerCpus], ['--docker-isolated-paths', f.dockerIsolatedPaths], ['--docker-network', f.dockerNetwork], ['--docker-runtime', f.dockerRuntime]] as const) {
      if (v !== undefined) notes.push(`${flag} has no effect on the native backend`);
    }
  }
  return { backend, notes };
}
