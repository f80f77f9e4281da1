import { flagBool, type FlagSpec, parseCommand } from '../lib/util/argv.js';
import { formatAudit, latestSession, readAudit } from '../lib/run/audit-read.js';
import { ConfigError, UsageError } from '../lib/errors.js';
import { stashbaseHome } from '../lib/home.js';
import { JSON_FLAG } from './shared-flags.js';

export const usage = 'stashbase agent audit [SESSION] [--json]';
export const summary = "Show a run's audit log (the latest run by default), denials marked.";
export const flags: FlagSpec[] = [{ ...JSON_FLAG, help: 'Print the events as a JSON array' }];

const spec = { name: 'agent audit', usage, summary, flags, notes: 'SESSION is an ags_… id, as printed by agent run.' };

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.positionals.length > 1 || p.rest !== null) throw new UsageError('agent audit takes at most one session id');
  const home = stashbaseHome(process.env);
  const session = p.positionals[0] ?? latestSession(home);
  if (session === null) throw new ConfigError(`no audit logs yet in ${home}/audit`);
  const events = readAudit(home, session);
  if (flagBool(p, 'json')) {
    process.stdout.write(JSON.stringify(events, null, 2) + '\n');
    return 0;
  }
  const { createRequire } = await import('node:module');
  const pc = createRequire(import.meta.url)('picocolors') as typeof import('picocolors');
  const colors = pc.createColors(process.stdout.isTTY === true && !process.env.NO_COLOR);
  process.stdout.write(`Audit session: ${session}\n${formatAudit(events, (s) => colors.bold(colors.red(s)))}`);
  return 0;
}
