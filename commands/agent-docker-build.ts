import { flagBool, flagString, type FlagSpec, parseCommand } from '../lib/argv.js';
import { findDocker, inspectImage } from '../lib/docker/engine.js';
import { ageDays, chooseImage, customBuild, defaultBuild, defaultImageRef, type ImageChoice, streamBuild } from '../lib/docker/image.js';
import { UsageError } from '../lib/errors.js';
import { stashbaseHome } from '../lib/home.js';
import { displayPath, loadProfile } from '../lib/profile/load.js';
import { ensureTrusted } from '../lib/profile/trust.js';
import { isInteractive } from '../lib/prompt.js';
import { PROFILE_FLAGS, profileSource } from './shared-flags.js';

export const usage = 'stashbase agent docker build [--force] [--profile <name>] [--profile-source <where>]';
export const summary = "Build the default sandbox image (or a profile's custom image) ahead of time.";
export const flags: FlagSpec[] = [{ name: 'force', kind: 'bool', help: 'Rebuild: pull the base image and reinstall the agent CLIs' }, ...PROFILE_FLAGS];
const spec = { name: 'agent docker build', usage, summary, flags, notes: "Docker's own progress is streamed on stderr." };

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.positionals.length > 0 || p.rest !== null) throw new UsageError('agent docker build takes no arguments');
  const cwd = process.cwd();
  const env = process.env;
  const force = flagBool(p, 'force') === true;
  const name = flagString(p, 'profile');
  const docker = findDocker(env);
  let choice: ImageChoice = { kind: 'default', ref: defaultImageRef(env) };
  if (name !== undefined) {
    const loaded = loadProfile({ name, source: profileSource(flagString(p, 'profile-source')), cwd, env });
    // Building a repository's Dockerfile runs its RUN lines: the profile must be trusted first.
    await ensureTrusted(loaded, { interactive: () => isInteractive(false), env, label: loaded.profile.file ? displayPath(loaded.profile.file, cwd) : 'default' });
    choice = chooseImage(loaded.profile, {}, cwd, env);
  }
  if (choice.kind === 'image') {
    process.stdout.write(`Profile ${name} runs the image ${choice.ref}: nothing to build (docker run pulls it when it is missing).\n`);
    return 0;
  }
  const existing = await inspectImage(docker, choice.ref);
  if (existing && !force) {
    process.stdout.write(`${choice.ref} is already built (${ageDays(existing)} days old); --force rebuilds it.\n`);
    return 0;
  }
  if (choice.kind === 'dockerfile') {
    await streamBuild(customBuild(docker, choice, force));
  } else {
    const build = defaultBuild(docker, stashbaseHome(env), env, force);
    build.write();
    await streamBuild(build.command);
  }
  process.stdout.write(`Built ${choice.ref}.\n`);
  return 0;
}
