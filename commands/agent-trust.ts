import { flagString, type FlagSpec, parseCommand } from '../lib/util/argv.js';
import { TrustError, UsageError } from '../lib/errors.js';
import { isInteractive } from '../lib/util/prompt.js';
import { printable } from '../lib/util/printable.js';
import { displayPath, loadProfile } from '../lib/profile/load.js';
import { buildTrustState, changesSinceTrusted, describeProfile, recordBuildTrust, recordTrust, trustState } from '../lib/profile/trust.js';
import { chooseImage } from '../lib/docker/image.js';
import { stashbaseHome, userHome } from '../lib/home.js';
import type { Profile } from '../lib/profile/types.js';
import { PROFILE_FLAGS, profileSource } from './shared-flags.js';

export const usage = 'stashbase agent trust --profile <name> [options] | --dockerfile <path> [--profile <name>]';
export const summary = 'Trust a repository profile (.stashbase/agents/<name>.toml), or a Dockerfile and what it copies, at its current content.';
export const flags: FlagSpec[] = [...PROFILE_FLAGS, { name: 'dockerfile', kind: 'value', value: 'path', help: 'Trust the build of this Dockerfile (with what it copies, as the profile builds it) at its current content' }];

const spec = {
  name: 'agent trust', usage, summary, flags,
  notes: "Trust is pinned to the file's SHA-256 (a Dockerfile's: to the digest of it and every file it copies): any later change needs trusting again. Trusting a repository profile that names a Dockerfile trusts that Dockerfile's build too.",
};

/** Pins the build of the profile's Dockerfile (or `path`) at what it is now; the line to print. */
async function trustBuild(profile: Profile, path: string | undefined, cwd: string): Promise<string> {
  const env = process.env;
  const choice = chooseImage(profile, path !== undefined ? { dockerDockerfile: path } : {}, { cwd, env, home: userHome(env), stashbaseHome: stashbaseHome(env) });
  if (choice.kind !== 'dockerfile') return '';
  const before = buildTrustState(choice.file.path, choice.digest, env);
  await recordBuildTrust(choice.file.path, choice.digest, env);
  return `${before === 'trusted' ? 'Already trusted' : 'Trusted'}: the build of ${choice.file.path} (${choice.ref})\n`;
}

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.positionals.length > 0 || p.rest !== null) throw new UsageError('agent trust takes no arguments');
  const name = flagString(p, 'profile');
  const dockerfile = flagString(p, 'dockerfile');
  const cwd = process.cwd();
  if (dockerfile !== undefined) {
    const { profile } = loadProfile({ name, source: profileSource(flagString(p, 'profile-source')), cwd, env: process.env });
    process.stdout.write(await trustBuild(profile, dockerfile, cwd));
    return 0;
  }
  if (name === undefined) throw new UsageError('agent trust needs --profile <name> or --dockerfile <path>');
  const { profile, text } = loadProfile({ name, source: profileSource(flagString(p, 'profile-source')), cwd, env: process.env });
  if (profile.source !== 'directory' || profile.file === null || text === null) {
    process.stdout.write(`${profile.name} is a ${profile.source} profile${profile.file ? ` (${profile.file})` : ''}: only repository profiles need trust\n`);
    return 0;
  }
  const label = printable(displayPath(profile.file, cwd), true);
  const before = trustState(profile.file, text, process.env);
  // What it allows first; in a terminal, a yes before it is recorded.
  const changes = before === 'changed' ? changesSinceTrusted(profile.file, text, process.env) : [];
  if (before !== 'trusted' && isInteractive(false)) {
    process.stderr.write(`${changes.map((l) => `${l}\n`).join('')}Repository profile ${label} allows:\n${describeProfile(profile)}\n`);
    const { confirm } = await import('../lib/util/prompt.js');
    if (!(await confirm('Trust it?'))) throw new TrustError(`${label} was not trusted`);
  }
  await recordTrust(profile.file, text, process.env);
  process.stdout.write(`${before === 'trusted' ? 'Already trusted' : 'Trusted'}: ${label}\n${changes.map((l) => `${l}\n`).join('')}${describeProfile(profile)}\n`);
  // Its Dockerfile's build with it, as it is now (one step for the usual case).
  if (profile.sandbox.dockerfile !== undefined) process.stdout.write(await trustBuild(profile, undefined, cwd));
  return 0;
}
