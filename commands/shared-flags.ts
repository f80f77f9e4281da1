// Flags shared by several commands, defined once.
import type { FlagSpec } from '../lib/util/argv.js';
import { UsageError } from '../lib/errors.js';
import { SOURCE_CHOICES, type SourceChoice } from '../lib/profile/load.js';

export const PROFILE_FLAGS: FlagSpec[] = [
  { name: 'profile', kind: 'value', value: 'name', help: 'Profile to use (default: the built-in default profile)' },
  { name: 'profile-source', kind: 'value', value: 'auto|global|directory', help: 'Where --profile is looked up (default: auto, the repository first)' },
];

export const JSON_FLAG: FlagSpec = { name: 'json', kind: 'bool', help: 'Print machine-readable JSON on stdout' };
/** The engine of a Docker context, for commands that manage one (docs/remote.md). */
export const REMOTE_FLAG: FlagSpec = { name: 'remote', kind: 'value', value: 'context', help: 'The Docker engine of this context, another machine\'s (docs/remote.md)' };

export function profileSource(value: string | undefined): SourceChoice {
  if (value === undefined) return 'auto';
  if ((SOURCE_CHOICES as readonly string[]).includes(value)) return value as SourceChoice;
  throw new UsageError(`--profile-source takes auto, global or directory, not ${JSON.stringify(value)}`);
}
