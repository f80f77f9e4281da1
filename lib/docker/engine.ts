// Facts about the Docker engine a run or command needs: the CLI, whether the
// daemon answers, whether it is Docker Desktop, and what images are there.
import { capture } from '../exec.js';
import { CommandFailedError, SandboxUnavailableError } from '../errors.js';
import { findTool } from '../util/find-tool.js';
import { imageInspectCommand } from '../../templates/docker-image.js';

export function findDocker(env: NodeJS.ProcessEnv): string {
  const docker = findTool(process.platform === 'win32' ? 'docker.exe' : 'docker', env);
  if (!docker) throw new SandboxUnavailableError('the Docker backend needs the docker CLI, which is not on PATH (install Docker); nothing was run, and it never falls back to the native backend');
  return docker;
}

export interface Engine {
  version: string;
  operatingSystem: string;
  /** Containers run in a VM: the proxy is reached through host.docker.internal. */
  desktop: boolean;
}

/** Docker Desktop runs the engine in a VM on every platform, Linux included. */
export function isDesktop(platform: NodeJS.Platform, operatingSystem: string): boolean {
  return platform === 'darwin' || platform === 'win32' || /docker desktop/i.test(operatingSystem);
}

export async function engineInfo(docker: string): Promise<Engine> {
  try {
    const out = await capture({ file: docker, args: ['info', '--format', '{{.ServerVersion}}|{{.OperatingSystem}}'] });
    const [version = '', operatingSystem = ''] = out.trim().split('|');
    return { version, operatingSystem, desktop: isDesktop(process.platform, operatingSystem) };
  } catch (e) {
    const why = e instanceof CommandFailedError ? e.stderr.trim().split('\n').pop() : (e as Error).message;
    throw new SandboxUnavailableError(`the Docker daemon is not reachable (${why}); start Docker and try again; nothing was run`);
  }
}

export interface ImageFacts {
  created: Date;
  builtLabel: string;
  dockerfileSha256: string;
  /** Labels of how the agents were installed ('' when not recorded): installer or npm, and the npm versions asked for. */
  agentsFrom: string;
  claudeVersion: string;
  codexVersion: string;
}

/** The image's creation time and stashbase labels, or null when it is not there. */
export async function inspectImage(docker: string, ref: string): Promise<ImageFacts | null> {
  try {
    const out = (await capture(imageInspectCommand(docker, ref))).trim();
    const [created = '', built = '', sha = '', from = '', claude = '', codex = ''] = out.split('|');
    const clean = (s: string) => (s === '<no value>' ? '' : s);
    return { created: new Date(created), builtLabel: clean(built), dockerfileSha256: clean(sha), agentsFrom: clean(from), claudeVersion: clean(claude), codexVersion: clean(codex) };
  } catch (e) {
    if (e instanceof CommandFailedError && /no such (image|object)/i.test(e.stderr)) return null;
    throw e;
  }
}

export { sha256 } from '../util/sha256.js';
