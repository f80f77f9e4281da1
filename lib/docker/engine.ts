// Facts about the Docker engine a run or command needs: the CLI, whether the
// daemon answers, whether it is Docker Desktop, and what images are there.
import { capture } from '../exec.js';
import { CommandFailedError, SandboxUnavailableError } from '../errors.js';
import { findTool } from '../util/find-tool.js';
import { imageInspectCommand } from '../../templates/docker-image.js';
import { isJsonObject, parseJson } from '../readback/json.js';

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
  /** The engine's architecture as Go names it (amd64, arm64), or what it said. */
  arch: string;
  /** The OCI runtimes it has registered (each with its program and arguments), and the one it uses unless told. */
  runtimes: Runtimes;
  defaultRuntime: string;
}

export type Runtimes = Record<string, { path: string; args: string[] }>;

/** The engine's own word for its architecture (x86_64, aarch64) as Go names it. */
export function goArch(machine: string): string {
  return ({ x86_64: 'amd64', amd64: 'amd64', aarch64: 'arm64', arm64: 'arm64' } as Record<string, string>)[machine] ?? machine;
}

/** `docker info`'s Runtimes object (JSON): each runtime's program and arguments; none when it is not one. */
export function runtimesOf(json: string): Runtimes {
  const out: Runtimes = Object.create(null) as Runtimes;
  const parsed = parseJson(json);
  if (parsed === null || !isJsonObject(parsed.value)) return out;
  for (const [name, v] of Object.entries(parsed.value)) {
    if (!isJsonObject(v)) continue;
    const args = Array.isArray(v.runtimeArgs) ? v.runtimeArgs.filter((a): a is string => typeof a === 'string') : [];
    out[name] = { path: typeof v.path === 'string' ? v.path : '', args };
  }
  return out;
}

/** Docker Desktop runs the engine in a VM on every platform, Linux included. */
export function isDesktop(platform: NodeJS.Platform, operatingSystem: string): boolean {
  return platform === 'darwin' || platform === 'win32' || /docker desktop/i.test(operatingSystem);
}

export async function engineInfo(docker: string): Promise<Engine> {
  try {
    const out = await capture({ file: docker, args: ['info', '--format', '{{.ServerVersion}}|{{.OperatingSystem}}|{{.Architecture}}|{{.DefaultRuntime}}|{{json .Runtimes}}'] });
    const [version = '', operatingSystem = '', machine = '', defaultRuntime = '', ...runtimes] = out.trim().split('|');
    return { version, operatingSystem, desktop: isDesktop(process.platform, operatingSystem), arch: goArch(machine), defaultRuntime, runtimes: runtimesOf(runtimes.join('|')) };
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
