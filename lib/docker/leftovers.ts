// What Docker holds of stashbase runs: per-run networks and containers grouped
// by session, whether that session is still alive here, and isolated-path volumes.
import { listContainersCommand, listNetworksCommand, listRunVolumesCommand, listVolumesCommand, listWorkspacesCommand } from '../../templates/docker-resources.js';
import { parseJson } from '../readback/json.js';
import { NETWORK_PREFIX } from '../../templates/docker-run.js';
import { capture } from '../exec.js';
import { liveSessionIds, processAlive, SESSION_ID } from '../run/session.js';
import { hostname } from 'node:os';
import { escaped, printable } from '../util/printable.js';

/** A label's value as `{{json .Label …}}` printed it (a name any co-tenant of the engine may have written): the string, made printable, or ''. */
function labelText(json: string): string {
  return shown(parseJson(json)?.value);
}

/** A label's value as it is shown, in a row of columns: a string, made printable (tabs and line breaks too) and bounded; anything else ''. */
const shown = (v: unknown) => (typeof v === 'string' ? printable(v, true).replace(/[\t\n]/g, escaped).slice(0, 300) : '');

export interface RunLeftover {
  session: string;
  network: string | null;
  createdAt: string | null;
  containers: string[];
  live: boolean;
  /** Containers of a run whose stashbase is gone: an agent may still be running without it (until its watchdog removes them). */
  orphaned: boolean;
  /** A remote run's volumes of its own (its tools); the machine it was started from, as its labels say. */
  volumes: string[];
  origin: string | null;
}

/** A label printed as JSON (templates/docker-resources.ts): the string, or '' (absent, or not a string). */
const labelValue = (json: string) => {
  const v = parseJson(json)?.value;
  return typeof v === 'string' ? v : '';
};

export interface VolumeLeftover {
  name: string;
  repo: string;
  path: string;
}

/** Tab-separated rows; a row of more columns than asked for is no row of ours (a JSON string holds no raw tab). */
const rows = (out: string, columns: number) => out.split('\n').filter(Boolean).map((l) => l.split('\t')).filter((r) => r.length === columns);

/** The names Docker gives containers and networks. */
const CONTAINER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/**
 * `remote`: the engine is another machine's (lib/remote/target.ts). There a
 * run is live only by a live record of this home: a pid label names a process
 * of whichever machine started the run, never one to look for here.
 */
export async function runLeftovers(docker: string, home: string, remote = false): Promise<RunLeftover[]> {
  const [nets, containers, volumes] = await Promise.all([capture(listNetworksCommand(docker)), capture(listContainersCommand(docker)), remote ? capture(listRunVolumesCommand(docker)) : Promise.resolve('')]);
  // Live: a record of this home says so, or the process that labelled it is
  // still running on this machine (a run under another STASHBASE_HOME, or user).
  const records = liveSessionIds(home);
  const isLive = (session: string, pid: string) => records.has(session) || (!remote && processAlive(Number(pid)));
  const bySession = new Map<string, RunLeftover>();
  const entry = (session: string) => {
    let e = bySession.get(session);
    if (!e) bySession.set(session, (e = { session, network: null, createdAt: null, containers: [], live: false, orphaned: false, volumes: [], origin: null }));
    return e;
  };
  for (const [name = '', rawCreated = '', sessionJson = '', pidJson = ''] of rows(nets, 4)) {
    const [session, pid] = [labelValue(sessionJson), labelValue(pidJson)];
    const createdAt = shown(rawCreated);
    // Only what stashbase names and labels: never a network someone else labelled alike.
    if (!SESSION_ID.test(session) || name !== `${NETWORK_PREFIX}${session}`) continue;
    const e = entry(session);
    Object.assign(e, { network: name, createdAt, live: e.live || isLive(session, pid) });
  }
  const here = hostname();
  for (const [name = '', sessionJson = '', pidJson = '', rawCreated = '', originJson = ''] of rows(containers, 5)) {
    const [session, pid] = [labelValue(sessionJson), labelValue(pidJson)];
    // A name Docker could have given (an engine that is not this machine's is not trusted to): no escape sequence of it reaches your terminal.
    if (!SESSION_ID.test(session) || !name.startsWith(`${NETWORK_PREFIX}${session}-`) || !CONTAINER_NAME.test(name)) continue;
    const createdAt = shown(rawCreated);
    const e = entry(session);
    e.containers.push(name);
    const origin = labelText(originJson);
    if (origin !== '') e.origin = origin;
    // A run started from another machine: its pid is that machine's, never one to look for here. One started from this
    // one (its origin this machine's name), on any engine: its process is looked for, as a local run's is (review,
    // round 35: a live remote run of another STASHBASE_HOME here was called orphaned, and cleanup removed it mid-run).
    e.live ||= origin !== '' && origin !== here ? records.has(session) : records.has(session) || processAlive(Number(pid));
    // A run without a network (sealed, remote): its oldest container says when it began.
    if (e.network === null && createdAt !== '' && (e.createdAt === null || createdAt < e.createdAt)) e.createdAt = createdAt;
  }
  for (const [name = '', sessionJson = '', originJson = '', pidJson = ''] of rows(volumes, 4)) {
    const session = labelValue(sessionJson);
    if (!SESSION_ID.test(session) || name !== `${NETWORK_PREFIX}${session}-tools`) continue;
    const e = entry(session);
    e.volumes.push(name);
    const origin = labelText(originJson);
    e.origin ??= origin || null;
    // As a container's: a run this machine started is live while its process is (review, round 35: before its
    // containers were made, a live run of another STASHBASE_HOME here showed its tools volume as not live).
    e.live ||= records.has(session) || ((origin === '' || origin === here) && processAlive(Number(labelValue(pidJson))));
  }
  // Orphaned: its stashbase is known gone. A run of another machine's is not known so here: it shows its origin instead.
  for (const e of bySession.values()) e.orphaned = !e.live && e.containers.length > 0 && (remote || e.origin === null || e.origin === here);
  return [...bySession.values()].sort((a, b) => (a.createdAt ?? '').localeCompare(b.createdAt ?? '') || a.session.localeCompare(b.session));
}

const VOLUME_NAME = /^stashbase-isolated-[A-Za-z0-9_.-]+$/;

/**
 * Isolated-path volumes as listVolumesCommand prints them: their labels as written (anyone who makes volumes on the
 * engine writes them), '' where absent or not a string. A line that is not a name and two JSON strings is passed by.
 */
export function parseVolumeRows(out: string): VolumeLeftover[] {
  return out.split('\n').flatMap((line) => {
    const [name = '', repo = '', path = '', ...more] = line.split('\t');
    return more.length === 0 && VOLUME_NAME.test(name) ? [{ name, repo: labelValue(repo), path: labelValue(path) }] : [];
  });
}

/** The same, each label made printable and bounded for the terminal. */
export async function volumeLeftovers(docker: string): Promise<VolumeLeftover[]> {
  return parseVolumeRows(await capture(listVolumesCommand(docker))).map((v) => ({ name: v.name, repo: shown(v.repo), path: shown(v.path) }));
}

export interface WorkspaceLeftover {
  name: string;
  /** The run's name and where it came from, as its labels say (made printable; '' when absent). */
  run: string;
  origin: string;
}

/** Remote runs' workspaces on the engine: each label a JSON string (anyone who makes volumes there writes them). */
export async function workspaceLeftovers(docker: string): Promise<WorkspaceLeftover[]> {
  return (await capture(listWorkspacesCommand(docker))).split('\n').filter(Boolean).map((line) => {
    const [name = '', run = '', origin = ''] = line.split('\t');
    return { name: printable(name, true), run: labelText(run), origin: labelText(origin) };
  });
}
