import { flagBool, flagString, type FlagSpec, parseCommand } from '../lib/util/argv.js';
import { findDocker, inspectImage, isDesktop } from '../lib/docker/engine.js';
import { defaultImageRef } from '../lib/docker/image.js';
import { containerUser } from '../lib/docker/prepare.js';
import { SandboxUnavailableError, UsageError } from '../lib/errors.js';
import { capture, runForwarded } from '../lib/exec.js';
import { imageEnvCommand, shellCommand } from '../templates/docker-image.js';
import { AGENT_HOME } from '../templates/docker-run.js';

export const usage = 'stashbase agent docker shell [--image <ref>] [--root] [--trust-home]';
export const summary = 'An interactive bash in the sandbox image with the persistent home volume; no run sandboxing.';
export const flags: FlagSpec[] = [
  { name: 'image', kind: 'value', value: 'ref', help: 'Image to open (default: the default sandbox image)' },
  { name: 'root', kind: 'bool', help: 'Run as root on Linux' },
  { name: 'trust-home', kind: 'bool', help: "Keep the home's own bin folders (~/.local/bin, ~/.npm-global/bin) on PATH" },
];
const spec = {
  name: 'agent docker shell', usage, summary, flags,
  notes: "No per-run network, firewall or working-directory mount: use it to log in, install tools, look around. The home volume is every run's agent's to write: the shell gets no capabilities, and the home's bin folders are off PATH unless --trust-home (a program planted there as `nano` or `make` would otherwise run when you type its name).",
};

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.positionals.length > 0 || p.rest !== null) throw new UsageError('agent docker shell takes no arguments');
  const docker = findDocker(process.env);
  // Another machine's engine (DOCKER_HOST, the current context): its commands with stashbase's own CLI configuration,
  // as a remote run's (lib/docker/cli-config.ts: review, round 36, your proxies reached the shell's container there).
  const { engineOf } = await import('../lib/remote/target.js');
  await engineOf(docker, process.env, undefined);
  const image = flagString(p, 'image') ?? defaultImageRef(process.env);
  if (flagString(p, 'image') === undefined && (await inspectImage(docker, image)) === null) {
    throw new SandboxUnavailableError(`the Docker sandbox image ${image} is not built; build it with: stashbase agent docker build`);
  }
  // The same user as agent runs, so what it creates in the home stays theirs.
  const user = flagBool(p, 'root') === true ? '0:0' : containerUser(isDesktop(process.platform, ''));
  const path = flagBool(p, 'trust-home') === true ? null : await pathWithoutHome(docker, image);
  return runForwarded(shellCommand(docker, image, user, process.stdin.isTTY === true && process.stdout.isTTY === true, path));
}

/** The image's PATH without the folders in the home volume (the system's own when the image names none). */
async function pathWithoutHome(docker: string, image: string): Promise<string> {
  const env = await capture(imageEnvCommand(docker, image)).catch(() => '');
  const path = env.split('\n').find((l) => l.startsWith('PATH='))?.slice(5) ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
  return path.split(':').filter((d) => d !== '' && d !== AGENT_HOME && !d.startsWith(`${AGENT_HOME}/`) && !d.startsWith('~')).join(':');
}
