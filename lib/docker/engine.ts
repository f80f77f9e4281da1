// Facts about the Docker engine a run or command needs: the CLI, whether the
// daemon answers, whether it is Docker Desktop, and what images are there.
import { capture } from '../exec.js';
import { CommandFailedError, SandboxUnavailableError } from '../errors.js';
import { findTool } from '../util/find-tool.js';
import { imageInspectCommand, LABEL_AGENTS_FROM, LABEL_BUILT, LABEL_CLAUDE, LABEL_CODEX, LABEL_DOCKERFILE } from '../../templates/docker-image.js';
import { isJsonObject, parseJson } from '../readback/json.js';
import { apiRequest, EngineApiError, type EngineApi } from './api.js';

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
  // Anything else as a plain word (review, round 31: an engine's "../../tmp/x" chose the local file sent as the relay).
  return ({ x86_64: 'amd64', amd64: 'amd64', aarch64: 'arm64', arm64: 'arm64' } as Record<string, string>)[machine] ?? (machine.replace(/[^A-Za-z0-9_]/g, '').slice(0, 32) || 'unknown');
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

export async function engineInfo(docker: string, api: EngineApi | null = null): Promise<Engine> {
  if (api !== null) return engineInfoOfApi(api);
  try {
    const out = await capture({ file: docker, args: ['info', '--format', '{{.ServerVersion}}|{{.OperatingSystem}}|{{.Architecture}}|{{.DefaultRuntime}}|{{json .Runtimes}}'] });
    const [version = '', operatingSystem = '', machine = '', defaultRuntime = '', ...runtimes] = out.trim().split('|');
    return { version, operatingSystem, desktop: isDesktop(process.platform, operatingSystem), arch: goArch(machine), defaultRuntime, runtimes: runtimesOf(runtimes.join('|')) };
  } catch (e) {
    const why = e instanceof CommandFailedError ? e.stderr.trim().split('\n').pop() : (e as Error).message;
    throw new SandboxUnavailableError(`the Docker daemon is not reachable (${why}); start Docker and try again; nothing was run`);
  }
}

/** The same facts through the engine's API (lib/docker/api.ts): GET /info, read as `docker info` is. */
async function engineInfoOfApi(api: EngineApi): Promise<Engine> {
  const info = await apiRequest(api, 'GET', '/info', undefined, { timeoutMs: 30_000 }).catch((e: Error) => {
    throw new SandboxUnavailableError(`the Docker daemon is not reachable (${e.message}); start Docker and try again; nothing was run`);
  });
  const v = isJsonObject(info) ? info : {};
  const text = (k: string) => (Object.hasOwn(v, k) && typeof v[k] === 'string' ? (v[k] as string) : '');
  const operatingSystem = text('OperatingSystem');
  return { version: text('ServerVersion'), operatingSystem, desktop: isDesktop(process.platform, operatingSystem), arch: goArch(text('Architecture')), defaultRuntime: text('DefaultRuntime'), runtimes: runtimesOf(JSON.stringify(Object.hasOwn(v, 'Runtimes') ? v.Runtimes : null)) };
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
export async function inspectImage(docker: string, ref: string, api: EngineApi | null = null): Promise<ImageFacts | null> {
  if (api !== null && imageRefPath(ref) !== null) return inspectImageOfApi(api, ref);
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

/** GET /images/<ref>/json, or null where the ref holds what a path would need escaped (the CLI asks then). */
export function imageRefPath(ref: string): string | null {
  // No segment the engine would clean (and answer with a redirect): empty, `.`, `..`, a trailing slash.
  const clean = /^[A-Za-z0-9][A-Za-z0-9._/:@-]*$/.test(ref) && ref.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..');
  return clean ? `/images/${ref}/json` : null;
}

/** The image's facts as `docker image inspect` gives them, or null when the engine has no such image. */
export async function imageConfigOfApi(api: EngineApi, ref: string): Promise<{ created: string; labels: Record<string, string>; entrypoint: unknown } | null> {
  let v: unknown;
  try {
    v = await apiRequest(api, 'GET', imageRefPath(ref)!, undefined, { timeoutMs: 30_000 });
  } catch (e) {
    if (e instanceof EngineApiError && e.status === 404) return null;
    throw e;
  }
  const top = isJsonObject(v) ? v : {};
  const config = Object.hasOwn(top, 'Config') && isJsonObject(top.Config) ? top.Config : {};
  const rawLabels = Object.hasOwn(config, 'Labels') && isJsonObject(config.Labels) ? config.Labels : {};
  const labels = Object.create(null) as Record<string, string>;
  for (const k of Object.keys(rawLabels)) if (typeof rawLabels[k] === 'string') labels[k] = rawLabels[k] as string;
  return { created: Object.hasOwn(top, 'Created') && typeof top.Created === 'string' ? top.Created : '', labels, entrypoint: Object.hasOwn(config, 'Entrypoint') ? config.Entrypoint : null };
}

async function inspectImageOfApi(api: EngineApi, ref: string): Promise<ImageFacts | null> {
  const c = await imageConfigOfApi(api, ref);
  if (c === null) return null;
  const label = (k: string) => (Object.hasOwn(c.labels, k) ? (c.labels[k] as string) : '');
  return { created: new Date(c.created), builtLabel: label(LABEL_BUILT), dockerfileSha256: label(LABEL_DOCKERFILE), agentsFrom: label(LABEL_AGENTS_FROM), claudeVersion: label(LABEL_CLAUDE), codexVersion: label(LABEL_CODEX) };
}

export { sha256 } from '../util/sha256.js';
