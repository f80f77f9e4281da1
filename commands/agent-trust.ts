import { flagString, type FlagSpec, parseCommand } from '../lib/util/argv.js';
import { UsageError } from '../lib/errors.js';
import { displayPath, loadProfile } from '../lib/profile/load.js';
import { describeProfile, recordTrust, trustState } from '../lib/profile/trust.js';
import { PROFILE_FLAGS, profileSource } from './shared-flags.js';

export const usage = 'stashbase agent trust --profile <name> [options]';
export const summary = 'Trust a repository profile (.stashbase/agents/<name>.toml) at its current content.';
export const flags: FlagSpec[] = PROFILE_FLAGS;

const spec = { name: 'agent trust', usage, summary, flags, notes: 'Trust is pinned to the file\'s SHA-256: any later change needs trusting again.' };

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.positionals.length > 0 || p.rest !== null) throw new UsageError('agent trust takes no arguments');
  const name = flagString(p, 'profile');
  if (name === undefined) throw new UsageError('agent trust needs --profile <name>');
  const cwd = process.cwd();
  const { profile, text } = loadProfile({ name, source: profileSource(flagString(p, 'profile-source')), cwd, env: process.env });
  if (profile.source !== 'directory' || profile.file === null || text === null) {
    process.stdout.write(`${profile.name} is a ${profile.source} profile${profile.file ? ` (${profile.file})` : ''}: only repository profiles need trust\n`);
    return 0;
  }
  const label = displayPath(profile.file, cwd);
  const before = trustState(profile.file, text, process.env);
  await recordTrust(profile.file, text, process.env);
  process.stdout.write(`${before === 'trusted' ? 'Already trusted' : 'Trusted'}: ${label}\n${describeProfile(profile)}\n`);
  return 0;
}
