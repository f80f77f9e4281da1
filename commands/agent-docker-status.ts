import { randomBytes } from 'node:crypto';
import { HOME_VOLUME } from '../templates/docker-run.js';
import { remoteHome } from '../lib/remote/prepare.js';
import { capture } from '../lib/exec.js';
import { humanSize, measureVolume } from '../lib/docker/home-volume.js';
import { defaultImageRef } from '../lib/docker/image.js';
import { flagBool, flagString, type FlagSpec, parseCommand } from '../lib/util/argv.js';
import { findDocker } from '../lib/docker/engine.js';
import { runLeftovers, workspaceLeftovers } from '../lib/docker/leftovers.js';
import { asciiJson, printable } from '../lib/util/printable.js';
import { hostname } from 'node:os';
import { UsageError } from '../lib/errors.js';
import { stashbaseHome } from '../lib/home.js';
import { JSON_FLAG, REMOTE_FLAG } from './shared-flags.js';
import { engineOf } from '../lib/remote/target.js';

export const usage = 'stashbase agent docker status [--remote <context>] [--json]';
export const summary = "The agents' home volume's size, and the per-run networks (and containers) of agent runs, with their sessions.";
export const flags: FlagSpec[] = [REMOTE_FLAG, JSON_FLAG];
const spec = { name: 'agent docker status', usage, summary, flags, notes: 'Removes nothing; see stashbase agent docker cleanup.' };

/** The home volume's size now, or why it is not known. */
async function homeVolumeSize(docker: string, image: string, name: string): Promise<{ bytes: number } | { why: string }> {
  const ok = (cmd: string[]) => capture({ file: docker, args: cmd }).then(() => true, () => false);
  const [volume, built] = await Promise.all([ok(['volume', 'inspect', name]), ok(['image', 'inspect', image])]);
  if (!volume) return { why: 'not created yet (the first Docker run makes it)' };
  if (!built) return { why: `size unknown (measuring it needs the image ${image}: stashbase agent docker build)` };
  return measureVolume(docker, image, name, `stashbase-status-du-${randomBytes(6).toString('hex')}`, [], stashbaseHome(process.env));
}

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.positionals.length > 0 || p.rest !== null) throw new UsageError('agent docker status takes no arguments');
  const docker = findDocker(process.env);
  // Another machine's engine (--remote, DOCKER_HOST, the current context): its runs are live only by a record here (lib/docker/leftovers.ts).
  const target = await engineOf(docker, process.env, flagString(p, 'remote'));
  // A remote engine's runs of this machine have a home volume of their own there (lib/remote/prepare.ts).
  const homeVolume = target !== null ? remoteHome(stashbaseHome(process.env)) : HOME_VOLUME;
  const [runs, volume, workspaces] = await Promise.all([
    runLeftovers(docker, stashbaseHome(process.env), target !== null),
    homeVolumeSize(docker, defaultImageRef(process.env), homeVolume),
    target !== null ? workspaceLeftovers(docker) : Promise.resolve([]),
  ]);
  const remote = target !== null ? { engine: printable(target.host, true), from: target.from, workspaces } : null;
  if (flagBool(p, 'json')) {
    process.stdout.write(asciiJson({ ...(remote ? { remote } : {}), runs, homeVolume: { name: homeVolume, ...volume } }) + '\n');
    return 0;
  }
  const home = 'bytes' in volume ? `${humanSize(volume.bytes)} (${volume.bytes} bytes)` : volume.why;
  if (remote) {
    process.stdout.write(`Engine: ${remote.engine} (${remote.from}), not this machine's: a run is live only if it runs from here\n`);
    for (const w of remote.workspaces) process.stdout.write(`Workspace ${w.name}: run ${w.run}, from ${w.origin || 'an unknown machine'}\n`);
  }
  // Why the size is unknown holds what the engine's du printed (review, round 34: its C1 and bidi characters went out raw).
  process.stdout.write(`Agents' home volume ${homeVolume}: ${printable(home, true)}\n`);
  if (runs.length === 0) {
    process.stdout.write('No per-run Docker networks or containers.\n');
    return 0;
  }
  const lines = [remote ? 'SESSION\tCREATED\tORIGIN\tLIVE\tCONTAINERS\tVOLUMES' : 'NETWORK\tSESSION\tCREATED\tLIVE\tCONTAINERS'];
  const live = (r: (typeof runs)[number]) => (r.live ? 'live' : r.orphaned ? 'orphaned' : 'not live');
  for (const r of runs) {
    // A run of another machine's on this one's engine: not judged here, its origin said.
    const state = !remote && r.origin !== null && r.origin !== hostname() && !r.live ? `from ${r.origin}` : live(r);
    lines.push((remote ? [r.session, r.createdAt ?? '-', r.origin ?? '-', live(r), r.containers.join(',') || '-', r.volumes.join(',') || '-'] : [r.network ?? '-', r.session, r.createdAt ?? '-', state, r.containers.join(',') || '-']).join('\t'));
  }
  process.stdout.write(lines.join('\n') + '\n');
  return 0;
}
