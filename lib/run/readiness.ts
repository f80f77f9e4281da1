// What `agent validate` checks beyond the profile itself: whether the backend
// the profile selects can run here.
import whichSync from 'which';
import { probe } from '../exec.js';
import { findTool } from '../util/find-tool.js';
import { probeNative } from '../native/probe.js';
import { selectMechanism } from '../native/select.js';
import type { Backend } from '../profile/types.js';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export function backendChecks(backend: Backend, env: NodeJS.ProcessEnv): Check[] {
  if (backend === 'docker') {
    // `which` also knows Windows' PATHEXT (docker.exe), where Docker is the only backend; elsewhere PATH's folders the
    // agent cannot write (found in review: `which` took node_modules/.bin's docker, and the check ran it).
    const docker = process.platform === 'win32' ? whichSync.sync('docker', { nothrow: true, path: env.PATH ?? '' }) : findTool('docker', env);
    if (!docker) {
      return [{ name: 'docker', ok: false, detail: 'the docker CLI is not on PATH (install Docker; the Docker backend never falls back to native)' }];
    }
    const r = probe({ file: docker, args: ['version', '--format', '{{.Server.Version}}'] }, 10_000);
    if (r.code !== 0) {
      return [
        { name: 'docker', ok: true, detail: `docker CLI at ${docker}` },
        { name: 'docker daemon', ok: false, detail: `the Docker daemon is not reachable: ${r.stderr.trim().split('\n').pop() ?? ''}` },
      ];
    }
    return [
      { name: 'docker', ok: true, detail: `docker CLI at ${docker}` },
      { name: 'docker daemon', ok: true, detail: `daemon ${r.stdout.trim()} reachable` },
    ];
  }
  try {
    const m = selectMechanism(probeNative(env));
    return [{ name: 'native mechanism', ok: true, detail: `${m.kind}: ${m.why}` }];
  } catch (e) {
    return [{ name: 'native mechanism', ok: false, detail: (e as Error).message }];
  }
}
