import { flagBool, flagString, type FlagSpec, parseCommand } from '../lib/util/argv.js';
import { printable } from '../lib/util/printable.js';
import { findDocker } from '../lib/docker/engine.js';
import { runLeftovers, volumeLeftovers } from '../lib/docker/leftovers.js';
import { UsageError } from '../lib/errors.js';
import { capture } from '../lib/exec.js';
import { stashbaseHome } from '../lib/home.js';
import { approve } from '../lib/util/prompt.js';
import { removeContainersCommand, removeNetworkCommand, removeVolumesCommand } from '../templates/docker-resources.js';
import { REMOTE_FLAG } from './shared-flags.js';
import { engineOf } from '../lib/remote/target.js';
import { hostname } from 'node:os';

export const usage = 'stashbase agent docker cleanup [--remote <context>] [--yes] [--isolated-paths]';
export const summary = 'Remove the networks and containers crashed runs left (or the isolated-path volumes).';
export const flags: FlagSpec[] = [
  { name: 'yes', kind: 'bool', help: 'Skip the confirmation' },
  { name: 'isolated-paths', kind: 'bool', help: 'List and remove isolated-path volumes instead' },
  REMOTE_FLAG,
];
const spec = { name: 'agent docker cleanup', usage, summary, flags, notes: 'Networks of sessions still alive on this machine are skipped.' };

const approved = (what: string, yes: boolean) => approve(`Remove ${what}?`, { yes, refusal: `${what}: confirm in a terminal or pass --yes; nothing was removed` });

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.positionals.length > 0 || p.rest !== null) throw new UsageError('agent docker cleanup takes no arguments');
  const docker = findDocker(process.env);
  const yes = flagBool(p, 'yes') === true;
  const out = (s: string) => process.stdout.write(s + '\n');
  // The engine named first: --isolated-paths --remote cleaned this machine's engine (review, round 31).
  const target = await engineOf(docker, process.env, flagString(p, 'remote'));
  if (flagBool(p, 'isolated-paths')) {
    if (target !== null) throw new UsageError('isolated-path volumes belong to this machine\'s engine (remote runs make none): run agent docker cleanup --isolated-paths without --remote');
    const volumes = await volumeLeftovers(docker);
    if (volumes.length === 0) return (out('No isolated-path volumes.'), 0);
    for (const v of volumes) out(`${v.name}\t${v.repo}\t${v.path}`);
    if (!(await approved(`${volumes.length} isolated-path volume(s)`, yes))) return (out('Nothing removed.'), 1);
    await capture(removeVolumesCommand(docker, volumes.map((v) => v.name)));
    out(`Removed ${volumes.length} volume(s).`);
    return 0;
  }
  // Another machine's engine: a run is skipped only when it runs from here; the others show where they are from and since when, for you to judge.
  if (target !== null) out(`Engine: ${target.host} (${target.from}), not this machine's: a run started elsewhere may still be going; see its origin and creation time`);
  const runs = await runLeftovers(docker, stashbaseHome(process.env), target !== null);
  for (const r of runs.filter((x) => x.live)) out(`skipping ${r.network ?? r.session}: session ${r.session} is still running here`);
  const stale = runs.filter((x) => !x.live);
  if (stale.length === 0) return (out('Nothing to clean up.'), 0);
  const here = hostname();
  // Another machine's run (its origin label): it may still be going there; its origin and age are shown for you to judge.
  const from = (r: (typeof stale)[number]) => (target !== null ? `\tfrom ${r.origin ?? 'an unknown machine'}` : r.origin !== null && r.origin !== here ? `\tfrom ${r.origin}, another machine: it may still be running there` : '');
  for (const r of stale) out(`${r.network ?? '(no network)'}\t${r.session}\tcreated ${r.createdAt ?? '-'}${from(r)}\t${r.containers.join(',') || 'no containers'}${r.volumes.length > 0 ? `\t${r.volumes.join(',')}` : ''}`);
  if (!(await approved(`${stale.length} run(s) left behind`, yes))) return (out('Nothing removed.'), 1);
  // Containers first: a network with containers attached cannot be removed.
  let failed = 0;
  for (const r of stale) {
    try {
      if (r.containers.length > 0) await capture(removeContainersCommand(docker, r.containers));
      if (r.network) await capture(removeNetworkCommand(docker, r.network));
      if (r.volumes.length > 0) await capture(removeVolumesCommand(docker, r.volumes, true));
      out(`removed ${r.network ?? [...r.containers, ...r.volumes].join(', ')}`);
    } catch (e) {
      failed++;
      process.stderr.write(`could not remove ${printable(r.network ?? r.session, true)}: ${printable((e as Error).message, true)}\n`);
    }
  }
  return failed === 0 ? 0 : 1;
}
