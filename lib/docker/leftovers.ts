// What Docker holds of stashbase runs: per-run networks and containers grouped
// by session, whether that session is still alive here, and isolated-path volumes.
import { listContainersCommand, listNetworksCommand, listVolumesCommand } from '../../templates/docker-resources.js';
import { NETWORK_PREFIX } from '../../templates/docker-run.js';
import { capture } from '../exec.js';
import { liveSessionIds, processAlive, SESSION_ID } from '../run/session.js';

export interface RunLeftover {
  session: string;
  network: string | null;
  createdAt: string | null;
  containers: string[];
  live: boolean;
  /** Containers of a run whose stashbase is gone: an agent may still be running without it (until its watchdog removes them). */
  orphaned: boolean;
}

export interface VolumeLeftover {
  name: string;
  repo: string;
  path: string;
}

const rows = (out: string) => out.split('\n').filter(Boolean).map((l) => l.split('|'));

export async function runLeftovers(docker: string, home: string): Promise<RunLeftover[]> {
  const [nets, containers] = await Promise.all([capture(listNetworksCommand(docker)), capture(listContainersCommand(docker))]);
  // Live: a record of this home says so, or the process that labelled it is
  // still running on this machine (a run under another STASHBASE_HOME, or user).
  const records = liveSessionIds(home);
  const isLive = (session: string, pid: string) => records.has(session) || processAlive(Number(pid));
  const bySession = new Map<string, RunLeftover>();
  const entry = (session: string) => {
    let e = bySession.get(session);
    if (!e) bySession.set(session, (e = { session, network: null, createdAt: null, containers: [], live: false, orphaned: false }));
    return e;
  };
  for (const [name = '', createdAt = '', session = '', pid = ''] of rows(nets)) {
    // Only what stashbase names and labels: never a network someone else labelled alike.
    if (!SESSION_ID.test(session) || name !== `${NETWORK_PREFIX}${session}`) continue;
    const e = entry(session);
    Object.assign(e, { network: name, createdAt, live: e.live || isLive(session, pid) });
  }
  for (const [name = '', session = '', pid = ''] of rows(containers)) {
    if (!SESSION_ID.test(session) || !name.startsWith(`${NETWORK_PREFIX}${session}-`)) continue;
    const e = entry(session);
    e.containers.push(name);
    e.live ||= isLive(session, pid);
  }
  for (const e of bySession.values()) e.orphaned = !e.live && e.containers.length > 0;
  return [...bySession.values()].sort((a, b) => (a.createdAt ?? '').localeCompare(b.createdAt ?? '') || a.session.localeCompare(b.session));
}

export async function volumeLeftovers(docker: string): Promise<VolumeLeftover[]> {
  return rows(await capture(listVolumesCommand(docker)))
    .filter(([name = '']) => name.startsWith('stashbase-isolated-'))
    .map(([name = '', repo = '', path = '']) => ({ name, repo, path }));
}
