import { flagBool, type FlagSpec, parseCommand } from '../lib/util/argv.js';
import { findDocker } from '../lib/docker/engine.js';
import { runLeftovers } from '../lib/docker/leftovers.js';
import { UsageError } from '../lib/errors.js';
import { stashbaseHome } from '../lib/home.js';
import { JSON_FLAG } from './shared-flags.js';

export const usage = 'stashbase agent docker status [--json]';
export const summary = 'List the per-run networks (and containers) of agent runs, with their sessions.';
export const flags: FlagSpec[] = [JSON_FLAG];
const spec = { name: 'agent docker status', usage, summary, flags, notes: 'Removes nothing; see stashbase agent docker cleanup.' };

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.positionals.length > 0 || p.rest !== null) throw new UsageError('agent docker status takes no arguments');
  const runs = await runLeftovers(findDocker(process.env), stashbaseHome(process.env));
  if (flagBool(p, 'json')) {
    process.stdout.write(JSON.stringify({ runs }, null, 2) + '\n');
    return 0;
  }
  if (runs.length === 0) {
    process.stdout.write('No per-run Docker networks or containers.\n');
    return 0;
  }
  const lines = ['NETWORK\tSESSION\tCREATED\tLIVE\tCONTAINERS'];
  for (const r of runs) lines.push([r.network ?? '-', r.session, r.createdAt ?? '-', r.live ? 'live' : r.orphaned ? 'orphaned' : 'not live', r.containers.join(',') || '-'].join('\t'));
  process.stdout.write(lines.join('\n') + '\n');
  return 0;
}
