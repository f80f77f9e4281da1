// The docker commands of a remote run (docs/remote.md): everything a run needs
// on the other engine travels in a container's standard input or comes back
// on its standard output; nothing is bound from this machine's disk.
//
//   lease   first the setup: a tar on its input, the run's tools (the relay,
//           the proxy's CA) into the run's volume and, for a new workspace, the
//           repository's bundle cloned into the workspace volume on the run's
//           branch; then, as a user of its own with no capability, the run's
//           lease (relay/main.go): the init of the process namespace the
//           agent's container joins, renewed by the rest of its input
//   agent   the sealed agent container (templates/docker-run.ts), its tree the
//           workspace volume, its tools the run's volume, read-only
//   export  the run's branch out of the workspace: its tip on a line, then a
//           pack of what the tip reaches and the run's base does not
import type { Command } from './command.js';
import { LABEL_PID, LABEL_SESSION, runLabels, runNames } from './docker-run.js';
import { shellQuote } from './shell-quote.js';

/** Where the run's volume (the relay, the CA files) is mounted in its containers. */
export const REMOTE_TOOLS = '/etc/stashbase';
export const REMOTE_RELAY = `${REMOTE_TOOLS}/stashbase-relay`;
/** Where the workspace volume (the clone's top) is mounted in the helper containers. */
const WORK = '/w';

export const LABEL_ORIGIN = 'stashbase.origin';
export const LABEL_WORKSPACE = 'stashbase.workspace';

export function remoteNames(session: string): { tools: string; lease: string; export: string } {
  const n = runNames(session).network;
  return { tools: `${n}-tools`, lease: `${n}-lease`, export: `${n}-export` };
}

/** Every container of a remote run: the machine it came from (status on any side tells it from a run of here), and runc by name (an engine's default runtime may be gVisor, whose containers do not share a process namespace: templates/remote-run.ts leaseCommand). */
export function remoteRunArgs(origin: string): string[] {
  return ['--label', `${LABEL_ORIGIN}=${origin}`, '--runtime', 'runc'];
}

/** The lease's user: one no image uses, below the relay's (templates/docker-run.ts RELAY_UID). */
export const LEASE_UID = 2147483645;

/**
 * The lease's user: LEASE_UID, or another should the agent's be that (an agent of the lease's uid could signal it, or
 * reach its mounts through /proc); never the relay's (templates/docker-run.ts relayUid: RELAY_UID, or RELAY_UID - 2).
 */
export function leaseUid(agentUser: string | null): number {
  return agentUser !== null && agentUser.split(':')[0] === String(LEASE_UID) ? LEASE_UID - 2 : LEASE_UID;
}

/** A helper's confinement: no network, no capability but those named, no new privileges, nothing written outside its volumes. */
function helperArgs(caps: string[]): string[] {
  return ['--network', 'none', '--cap-drop', 'ALL', ...caps.flatMap((c) => ['--cap-add', c]), '--security-opt', 'no-new-privileges', '--read-only', '--tmpfs', '/tmp'];
}

export interface LeaseInput {
  docker: string;
  session: string;
  pid: number;
  /** The built-in image (it has git, tar and setpriv). */
  image: string;
  /** The workspace volume, and whether this run makes it (a --resume finds it made). */
  workspace: string;
  fresh: boolean;
  /** The run's branch, in short (stashbase/<name>). */
  branch: string;
  /** The agent's "uid:gid": the workspace becomes theirs. */
  user: string;
  /** The lease's length, in seconds. */
  seconds: number;
  /** This machine's name (the containers' origin label). */
  origin: string;
}

/**
 * The setup and the lease, one container. As root with only what it needs to
 * make files the agent's (CHOWN, FOWNER, DAC_OVERRIDE) and to leave root
 * (SETUID, SETGID), no network, read-only but for its two volumes, it reads
 * a tar stashbase writes (in 512-byte blocks, so tar reads no further than
 * the archive): the relay and the CA into the tools volume and, for a new
 * workspace, the bundle (your repository's, made by your git) cloned there; the
 * clone runs no hook (the image's templates have none). A resumed workspace
 * runs no git: nothing runs as root in what the agent left. Then it becomes
 * the lease: the relay as LEASE_UID with no capability (setuid clears them,
 * no-new-privileges keeps them cleared), reading the rest of its input.
 */
export function leaseCommand(l: LeaseInput): Command {
  const names = remoteNames(l.session);
  const clone = l.fresh
    ? [
        `git clone -q --no-checkout /tmp/in/repo.bundle ${WORK}`,
        `git -C ${WORK} checkout -q -b ${shellQuote(l.branch)} "$(cat /tmp/in/base)"`,
        `git -C ${WORK} remote remove origin`,
        `chown -R ${l.user} ${WORK}`,
      ]
    : [`test -d ${WORK}/.git`];
  const script = [
    'set -eu',
    'mkdir /tmp/in',
    'tar -x -b 1 -C /tmp/in --no-same-owner --no-same-permissions',
    `install -m 0755 /tmp/in/stashbase-relay ${REMOTE_RELAY}`,
    `for f in ca.pem ca-bundle.pem; do if [ -f /tmp/in/$f ]; then install -m 0644 /tmp/in/$f ${REMOTE_TOOLS}/$f; fi; done`,
    ...clone,
    'rm -rf /tmp/in',
    `exec setpriv --reuid=${leaseUid(l.user)} --regid=${leaseUid(l.user)} --clear-groups --inh-caps=-all ${REMOTE_RELAY} lease ${l.seconds}`,
  ].join('\n');
  return {
    file: l.docker,
    args: [
      'run', '--rm', '-i', '--name', names.lease, ...runLabels(l.session, l.pid), ...remoteRunArgs(l.origin), ...helperArgs(['CHOWN', 'FOWNER', 'DAC_OVERRIDE', 'SETUID', 'SETGID']), '--user', '0:0', '--pids-limit', '128',
      '--mount', `type=volume,source=${names.tools},target=${REMOTE_TOOLS}`,
      '--mount', `type=volume,source=${l.workspace},target=${WORK}`,
      '--env', 'HOME=/tmp', '--env', 'GIT_CONFIG_NOSYSTEM=1',
      '--entrypoint', 'sh', l.image, '-c', script,
    ],
  };
}

/** A volume a remote run makes, with its labels: made by the CLI (volumeCreateOf) or the engine's API alike. */
export interface VolumeSpec {
  name: string;
  labels: [string, string][];
}

/** The workspace volume with its labels (origin, name), made before the setup fills it. */
export function workspaceVolume(workspace: string, origin: string, name: string): VolumeSpec {
  return { name: workspace, labels: [[LABEL_ORIGIN, origin], [LABEL_WORKSPACE, name]] };
}

/** `docker volume create --label … NAME`. */
export function volumeCreateOf(docker: string, v: VolumeSpec): Command {
  return { file: docker, args: ['volume', 'create', ...v.labels.flatMap(([k, val]) => ['--label', `${k}=${val}`]), v.name] };
}

/** A container's state, as the engine says it; "No such container" once it is gone. */
export function containerStateCommand(docker: string, name: string): Command {
  return { file: docker, args: ['container', 'inspect', '--format', '{{.State.Status}}', name] };
}

/** The run's tools volume, labelled with the run and the machine it runs from (status and cleanup on the engine find it, and say where it is from). */
export function toolsVolume(session: string, pid: number, origin: string): VolumeSpec {
  return { name: remoteNames(session).tools, labels: [[LABEL_SESSION, session], [LABEL_PID, String(pid)], [LABEL_ORIGIN, origin]] };
}

export interface ExportInput {
  docker: string;
  session: string;
  pid: number;
  image: string;
  workspace: string;
  /** The agent's "uid:gid": the clone is theirs. */
  user: string;
  branch: string;
  /** Your base commit: what the pack leaves out (left out when the clone lacks it). */
  base: string;
  /** Your repository's object format: the export's own git directory is made in it (review, round 34: made sha1, it found none of a sha256 clone's commits). */
  objectFormat: 'sha1' | 'sha256';
  /** The agent's own confinement: its seccomp profile's file (read by the docker CLI), memory and CPUs. */
  seccomp: string;
  /** This machine's name (the container's origin label). */
  origin: string;
  /** How long it waits for a renewal before it ends unread: the lease's length. */
  seconds: number;
  memory?: string;
  cpus?: string;
}

/** The byte the held export waits for before it reads the clone. */
export const EXPORT_GO = 'g';
/** What renews the held export's wait. */
export const EXPORT_BEAT = '.';

/**
 * The export: as the agent's user (its files), read-only, no network, the
 * agent's seccomp profile and limits. Started while the agent's container
 * starts (its own start then costs the end of the run nothing), it waits for
 * its word, sent once the agent's processes are gone, renewed as the lease is;
 * on end of input, or with no renewal for the lease's length, it ends
 * without a word. Then it prints the branch's tip (or "none") on a
 * line, then a pack of the objects the tip reaches and `base` does not. No git
 * runs in the agent's repository: its config (hooks, a partial clone's fetch
 * command, alternates of its choosing in config) would run the agent's code
 * here. The tip is read from the ref files as text; the objects through a git
 * directory made here, empty but for an alternate naming the clone's object
 * store. What it prints is the agent's to shape all the same:
 * lib/remote/transfer.ts checks it, and the import checks what it holds
 * (lib/git/import.ts).
 */
export function exportCommand(x: ExportInput): Command {
  const ref = `refs/heads/${x.branch}`;
  const script = [
    'set -eu',
    // Started with the run, it waits for its word ("g"), sent once the agent's processes are gone, reading a byte at a
    // time: a "." every few seconds renews the wait, and without one for the lease's length, at end of input, or on
    // anything else it ends unread (a connection that hangs does not keep it, nor the workspace, on the engine).
    `while :; do c=$(timeout ${x.seconds} dd bs=1 count=1 2>/dev/null) || exit 0; case "$c" in .) ;; ${EXPORT_GO}) break ;; *) exit 0 ;; esac; done`,
    // A FIFO anywhere in the workspace (behind an object file's name, or where a link of the agent's leads) would hold git open forever.
    `if [ -n "$(find ${WORK} -xdev \\( -type p -o -xtype p \\) -print -quit)" ]; then echo "the clone holds a FIFO (a named pipe), or a link to one, which git would wait on" >&2; exit 1; fi`,
    // Nor does git here follow a link of the agent's out of the object store, or an alternate (found in review: one
    // naming /dev/stdout held it until its time ran out): a clone made from your bundle has neither.
    `if [ -L ${WORK}/.git ] || [ -e ${WORK}/.git/objects/info/alternates ] || [ -L ${WORK}/.git/objects/info/alternates ] || [ -n "$(find ${WORK}/.git/objects -xdev -type l -print -quit)" ]; then echo "the clone's git directory is a link, or its object store holds links or an alternate, which a clone of yours never has" >&2; exit 1; fi`,
    `ref=${shellQuote(ref)}`,
    `if [ -f ${WORK}/.git/$ref ] && [ ! -L ${WORK}/.git/$ref ]; then tip=$(head -c 100 ${WORK}/.git/$ref | head -n 1)`,
    `elif [ -f ${WORK}/.git/packed-refs ] && [ ! -L ${WORK}/.git/packed-refs ]; then tip=$(awk -v r="$ref" '$2 == r { print $1; exit }' ${WORK}/.git/packed-refs)`,
    'else tip=; fi',
    'case "$tip" in "" | *[!0-9a-f]*) echo none; exit 0 ;; esac',
    `git init -q --bare --object-format=${x.objectFormat === 'sha256' ? 'sha256' : 'sha1'} /tmp/x`,
    `printf '%s\\n' ${WORK}/.git/objects > /tmp/x/objects/info/alternates`,
    'export GIT_DIR=/tmp/x',
    'git cat-file -e "$tip^{commit}" 2>/dev/null || { echo "its branch names no commit the clone holds" >&2; exit 1; }',
    'echo "$tip"',
    `if git cat-file -e ${shellQuote(`${x.base}^{commit}`)} 2>/dev/null; then not=${shellQuote(`^${x.base}`)}; else not=; fi`,
    'printf \'%s\\n%s\\n\' "$tip" "$not" | git pack-objects -q --revs --stdout --delta-base-offset',
  ].join('\n');
  return {
    file: x.docker,
    args: [
      'run', '--rm', '-i', '--name', remoteNames(x.session).export, ...runLabels(x.session, x.pid), ...remoteRunArgs(x.origin), ...helperArgs([]), '--user', x.user,
      '--security-opt', `seccomp=${x.seccomp}`, '--pids-limit', '64', ...(x.memory !== undefined ? ['--memory', x.memory] : []), ...(x.cpus !== undefined ? ['--cpus', x.cpus] : []),
      '--mount', `type=volume,source=${x.workspace},target=${WORK},readonly`,
      '--env', 'HOME=/tmp', '--env', 'GIT_CONFIG_NOSYSTEM=1', '--env', 'GIT_CONFIG_GLOBAL=/dev/null', '--env', 'GIT_NO_REPLACE_OBJECTS=1',
      '--entrypoint', 'sh', x.image, '-c', script,
    ],
  };
}

/** After the run: its containers (usually gone), then its tools volume; the workspace stays for --resume. */
export function remoteTeardownCommands(docker: string, session: string): Command[] {
  return [
    { file: docker, args: ['rm', '--force', ...remoteTeardownContainers(session)] },
    { file: docker, args: ['volume', 'rm', '--force', remoteNames(session).tools] },
  ];
}

/** The containers a remote run's teardown removes (through the CLI or the engine's API alike). */
export function remoteTeardownContainers(session: string): string[] {
  const names = remoteNames(session);
  return [runNames(session).agent, names.lease, names.export];
}

/** The tools volume of a remote run, mounted read-only into the agent's container. */
export const toolsMount = (session: string) => ({ type: 'volume' as const, source: remoteNames(session).tools, target: REMOTE_TOOLS, readonly: true });

/**
 * The agents' home volume of remote runs from one machine and user: on an
 * engine others use too, a home shared with their runs would carry one run's
 * planted config into another's (and its code back). Shared across this
 * machine's and user's remote runs on that engine, as the home volume is
 * across local runs.
 */
export function remoteHomeVolume(origin: string, uid: number, stashbaseHome: string, hash: (s: string) => string): string {
  return `stashbase-agent-home-${hash(`${origin}\0${uid}\0${stashbaseHome}`).slice(0, 16)}`;
}
