// `stashbase agent status`: the runs of this machine's stashbase, native and
// Docker, from their session records: running, or killed (what they left is
// settled by the next run). The Docker side's networks and the home volume
// are `agent docker status`.
import { asciiJson } from '../lib/util/printable.js';
import { flagBool, type FlagSpec, parseCommand } from '../lib/util/argv.js';
import { UsageError } from '../lib/errors.js';
import { stashbaseHome } from '../lib/home.js';
import { quoted } from '../lib/run/audit-read.js';
import { processAlive, readSessions } from '../lib/run/session.js';
import { JSON_FLAG } from './shared-flags.js';
import { alignedRows } from '../lib/util/table.js';

export const usage = 'stashbase agent status [--json]';
export const summary = 'The runs in progress (native and Docker), and any killed before they could clean up.';
export const flags: FlagSpec[] = [JSON_FLAG];
const spec = { name: 'agent status', usage, summary, flags, notes: 'What a killed run left is settled by the next run (or stashbase agent docker cleanup for Docker).' };

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.positionals.length > 0 || p.rest !== null) throw new UsageError('agent status takes no arguments');
  const runs = readSessions(stashbaseHome(process.env))
    .map((r) => ({ session: r.id, state: processAlive(r.pid) ? 'running' : 'killed', pid: r.pid, backend: r.backend, profile: r.profile, startedAt: r.startedAt, cwd: r.cwd, argv: r.argv, worktree: r.worktree ?? null }))
    .sort((a, b) => (a.startedAt < b.startedAt ? 1 : -1));
  if (flagBool(p, 'json')) {
    process.stdout.write(asciiJson(runs) + '\n');
    return 0;
  }
  if (runs.length === 0) {
    process.stdout.write('No runs.\n');
    return 0;
  }
  const rows = runs.map((r) => [r.session, r.state, r.backend, quoted(r.profile), String(r.startedAt).replace('T', ' ').replace(/\.\d+Z$/, 'Z'), quoted(r.cwd), quoted(r.argv.join(' '))]);
  const head = ['SESSION', 'STATE', 'BACKEND', 'PROFILE', 'STARTED', 'DIRECTORY', 'COMMAND'];
  process.stdout.write(alignedRows([head, ...rows]).join('\n') + '\n');
  return 0;
}
