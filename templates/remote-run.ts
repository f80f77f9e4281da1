// The docker commands of a remote run (docs/remote.md): everything a run needs
// on the other engine travels in a container's standard input or comes back
// on its standard output; nothing is bound from this machine's disk.
//
//   setup   a tar on its input: the run's tools (the relay, the proxy's CA) into
//           the run's volume, and, for a new workspace, the repository's bundle,
//           cloned into the workspace volume on the run's branch
//   agent   the sealed agent container (templates/docker-run.ts), its tree the
//           workspace volume, its tools the run's volume, read-only
//   lease   the run's lease, in the agent's process namespace (relay/main.go)
//   export  the run's branch out of the workspace: its tip on a line, then a
//           pack of what the tip reaches and the run's base does not
import type { Command } from './command.js';
import { runLabels, runNames } from './docker-run.js';
import { shellQuote } from './shell-quote.js';

/** Where the run's volume (the relay, the CA files) is mounted in its containers. */
export const REMOTE_TOOLS = '/etc/stashbase';
export const REMOTE_RELAY = `${REMOTE_TOOLS}/stashbase-relay`;
/** Where the workspace volume (the clone's top) is mounted in the helper containers. */
const WORK = '/w';

export const LABEL_ORIGIN = 'stashbase.origin';
export const LABEL_WORKSPACE = 'stashbase.workspace';

export function remoteNames(session: string): { tools: string; setup: string; lease: string; export: string } {
  const n = runNames(session).network;
  return { tools: `${n}-tools`, setup: `${n}-setup`, lease: `${n}-lease`, export: `${n}-export` };
}

/** A helper's confinement: no network, no capability but those named, no new privileges, nothing written outside its volumes. */
function helperArgs(caps: string[]): string[] {
  return ['--network', 'none', '--cap-drop', 'ALL', ...caps.flatMap((c) => ['--cap-add', c]), '--security-opt', 'no-new-privileges', '--read-only', '--tmpfs', '/tmp'];
}

export interface SetupInput {
  docker: string;
  session: string;
  pid: number;
  /** The built-in image (it has git and tar). */
  image: string;
  /** The workspace volume, and whether this run makes it (a --resume finds it made). */
  workspace: string;
  fresh: boolean;
  /** The run's branch, in short (stashbase/<name>). */
  branch: string;
  /** The agent's "uid:gid": the workspace becomes theirs. */
  user: string;
  /** Labels the volumes carry: origin (this machine and folder) and the workspace's name. */
  labels: string[];
}

/**
 * The setup container: as root with only what it needs to make files the
 * agent's (CHOWN, FOWNER, DAC_OVERRIDE), on a tar from its input. The bundle
 * is the repository's own, made by your git; the clone runs no hook (the
 * image's templates have none) and is handed to the agent only once made.
 */
export function setupCommand(s: SetupInput): Command {
  const names = remoteNames(s.session);
  const clone = s.fresh
    ? [
        `git clone -q --no-checkout /tmp/in/repo.bundle ${WORK}`,
        `git -C ${WORK} checkout -q -b ${shellQuote(s.branch)} "$(cat /tmp/in/base)"`,
        `git -C ${WORK} remote remove origin`,
        `chown -R ${s.user} ${WORK}`,
      ]
    : [`test -d ${WORK}/.git`];
  const script = [
    'set -eu',
    'mkdir /tmp/in',
    'tar -x -C /tmp/in --no-same-owner --no-same-permissions',
    `install -m 0755 /tmp/in/stashbase-relay ${REMOTE_RELAY}`,
    `for f in ca.pem ca-bundle.pem; do if [ -f /tmp/in/$f ]; then install -m 0644 /tmp/in/$f ${REMOTE_TOOLS}/$f; fi; done`,
    ...clone,
  ].join('\n');
  return {
    file: s.docker,
    args: [
      'run', '--rm', '-i', '--name', names.setup, ...runLabels(s.session, s.pid), ...helperArgs(['CHOWN', 'FOWNER', 'DAC_OVERRIDE']), '--user', '0:0',
      '--mount', `type=volume,source=${names.tools},target=${REMOTE_TOOLS}`,
      '--mount', `type=volume,source=${s.workspace},target=${WORK}`,
      ...(s.fresh ? s.labels.flatMap((l) => ['--label', l]) : []),
      '--env', 'HOME=/tmp', '--env', 'GIT_CONFIG_NOSYSTEM=1',
      '--entrypoint', 'sh', s.image, '-c', script,
    ],
  };
}

/** Creates the workspace volume with its labels (origin, name), before the setup fills it. */
export function workspaceCreateCommand(docker: string, workspace: string, labels: string[]): Command {
  return { file: docker, args: ['volume', 'create', ...labels.flatMap((l) => ['--label', l]), workspace] };
}

/** The run's tools volume, labelled with the run and the machine it runs from (status and cleanup on the engine find it, and say where it is from). */
export function toolsCreateCommand(docker: string, session: string, pid: number, origin: string): Command {
  return { file: docker, args: ['volume', 'create', ...runLabels(session, pid), '--label', `${LABEL_ORIGIN}=${origin}`, remoteNames(session).tools] };
}

/**
 * The lease: a container in the agent's process namespace with CAP_KILL
 * alone, as root (the agent can neither signal nor trace it), no network,
 * its input the run's heartbeat (lib/remote/lease.ts).
 */
export function leaseCommand(docker: string, session: string, pid: number, image: string, seconds: number): Command {
  const names = remoteNames(session);
  return {
    file: docker,
    args: [
      'run', '--rm', '-i', '--name', names.lease, ...runLabels(session, pid), '--pid', `container:${runNames(session).agent}`,
      ...helperArgs(['KILL']), '--user', '0:0', '--pids-limit', '8',
      '--mount', `type=volume,source=${names.tools},target=${REMOTE_TOOLS},readonly`,
      '--entrypoint', REMOTE_RELAY, image, 'lease', String(seconds),
    ],
  };
}

/**
 * The export: as the agent's user (its files), read-only, no network. Prints
 * the branch's tip (or "none") on a line, then a pack of the objects the tip
 * reaches and `base` does not (base left out when the clone lacks it). Its
 * output is the agent's as much as the clone is: lib/remote/transfer.ts
 * checks it, and the import checks what it holds (lib/git/import.ts).
 */
export function exportCommand(docker: string, session: string, pid: number, image: string, workspace: string, user: string, branch: string, base: string): Command {
  const ref = `refs/heads/${branch}`;
  const script = [
    'set -eu',
    `cd ${WORK}`,
    `tip=$(git rev-parse -q --verify ${shellQuote(ref)}) || { echo none; exit 0; }`,
    'git cat-file -e "$tip^{commit}" 2>/dev/null || { echo "its branch names no commit the clone holds" >&2; exit 1; }',
    'echo "$tip"',
    `if git cat-file -e ${shellQuote(`${base}^{commit}`)} 2>/dev/null; then not=${shellQuote(`^${base}`)}; else not=; fi`,
    'printf \'%s\\n%s\\n\' "$tip" "$not" | git pack-objects -q --revs --stdout --delta-base-offset',
  ].join('\n');
  return {
    file: docker,
    args: [
      'run', '--rm', '--name', remoteNames(session).export, ...runLabels(session, pid), ...helperArgs([]), '--user', user,
      '--mount', `type=volume,source=${workspace},target=${WORK},readonly`,
      '--env', 'HOME=/tmp', '--env', 'GIT_CONFIG_NOSYSTEM=1', '--env', 'GIT_CONFIG_GLOBAL=/dev/null',
      '--entrypoint', 'sh', image, '-c', script,
    ],
  };
}

/** After the run: its containers (usually gone), then its tools volume; the workspace stays for --resume. */
export function remoteTeardownCommands(docker: string, session: string): Command[] {
  const names = remoteNames(session);
  return [
    { file: docker, args: ['rm', '--force', runNames(session).agent, names.lease, names.setup, names.export] },
    { file: docker, args: ['volume', 'rm', '--force', names.tools] },
  ];
}

/** The tools volume of a remote run, mounted read-only into the agent's container. */
export const toolsMount = (session: string) => ({ type: 'volume' as const, source: remoteNames(session).tools, target: REMOTE_TOOLS, readonly: true });
