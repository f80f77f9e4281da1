import { flagBool, flagString, type FlagSpec, parseCommand } from '../lib/util/argv.js';
import { findDocker, inspectImage, isDesktop } from '../lib/docker/engine.js';
import { defaultImageRef } from '../lib/docker/image.js';
import { containerUser } from '../lib/docker/prepare.js';
import { SandboxUnavailableError, UsageError } from '../lib/errors.js';
import { runForwarded } from '../lib/exec.js';
import { shellCommand } from '../templates/docker-image.js';

export const usage = 'stashbase agent docker shell [--image <ref>] [--root]';
export const summary = 'An interactive bash in the sandbox image with the persistent home volume; no run sandboxing.';
export const flags: FlagSpec[] = [
  { name: 'image', kind: 'value', value: 'ref', help: 'Image to open (default: the default sandbox image)' },
  { name: 'root', kind: 'bool', help: 'Run as root on Linux' },
];
const spec = { name: 'agent docker shell', usage, summary, flags, notes: 'No per-run network, firewall or working-directory mount: use it to log in, install tools, look around.' };

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.positionals.length > 0 || p.rest !== null) throw new UsageError('agent docker shell takes no arguments');
  const docker = findDocker(process.env);
  const image = flagString(p, 'image') ?? defaultImageRef(process.env);
  if (flagString(p, 'image') === undefined && (await inspectImage(docker, image)) === null) {
    throw new SandboxUnavailableError(`the Docker sandbox image ${image} is not built; build it with: stashbase agent docker build`);
  }
  // The same user as agent runs, so what it creates in the home stays theirs.
  const user = flagBool(p, 'root') === true ? '0:0' : containerUser(isDesktop(process.platform, ''));
  return runForwarded(shellCommand(docker, image, user, process.stdin.isTTY === true && process.stdout.isTTY === true));
}
