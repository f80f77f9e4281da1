// The docker commands of one Docker-backend run: the run's network, the holder
// that owns its firewall, the agent container that joins it, and the teardown.
import type { Command } from './command.js';
import { buildFirewallScript, DESKTOP_HOST, type FirewallInput } from './docker-firewall.js';

export const LABEL_SESSION = 'stashbase.session';
/** The stashbase process that owns the run: `cleanup` never removes what a live process owns. */
export const LABEL_PID = 'stashbase.pid';
export const NETWORK_PREFIX = 'stashbase-agent-run-';
export const HOME_VOLUME = 'stashbase-agent-home';
export const AGENT_HOME = '/home/agent';
/** Fork bombs stay in the container's cgroup; never configurable (the spec's value). */
export const AGENT_PIDS_LIMIT = '2048';

export function runNames(session: string): { network: string; holder: string; agent: string } {
  const network = `${NETWORK_PREFIX}${session}`;
  return { network, holder: `${network}-net`, agent: `${network}-agent` };
}

export function runLabels(session: string, pid: number): string[] {
  return ['--label', `${LABEL_SESSION}=${session}`, '--label', `${LABEL_PID}=${pid}`];
}

export interface Mount {
  type: 'bind' | 'volume';
  source: string;
  target: string;
  readonly: boolean;
}

// --mount is a CSV record: a field holding a comma or a quote is quoted, quotes doubled.
function csvField(field: string): string {
  return /[",\n\r]/.test(field) ? `"${field.replaceAll('"', '""')}"` : field;
}

export function mountArg(m: Mount): string {
  const fields = [`type=${m.type}`, `source=${m.source}`, `target=${m.target}`];
  if (m.readonly) fields.push('readonly');
  return fields.map(csvField).join(',');
}

export function networkCreateCommand(docker: string, session: string, pid: number, desktop: boolean): Command {
  // --internal: no route off the bridge at all; Desktop needs the route to reach
  // host.docker.internal. The holder's firewall is the boundary either way.
  return { file: docker, args: ['network', 'create', '--driver', 'bridge', ...(desktop ? [] : ['--internal']), ...runLabels(session, pid), runNames(session).network] };
}

export function gatewayCommand(docker: string, session: string): Command {
  return { file: docker, args: ['network', 'inspect', '--format', '{{range .IPAM.Config}}{{.Gateway}} {{.Subnet}} {{end}}', runNames(session).network] };
}

export interface HolderInput extends FirewallInput {
  docker: string;
  session: string;
  pid: number;
  /** Always the built-in default image: a custom image never gets NET_ADMIN. */
  image: string;
  desktop: boolean;
}

export function holderCommand(h: HolderInput): Command {
  const names = runNames(h.session);
  return {
    file: h.docker,
    args: [
      'run', '--name', names.holder, ...runLabels(h.session, h.pid),
      '--network', names.network,
      '--cap-drop', 'ALL', '--cap-add', 'NET_ADMIN', '--cap-add', 'SETPCAP', '--security-opt', 'no-new-privileges', '--pids-limit', '64',
      '--dns', '0.0.0.0', '--sysctl', 'net.ipv6.conf.all.disable_ipv6=1',
      ...(h.desktop && h.proxyHost === DESKTOP_HOST ? ['--add-host', `${DESKTOP_HOST}:host-gateway`] : []),
      '--user', '0:0', '--entrypoint', 'bash',
      h.image, '-c', buildFirewallScript(h),
    ],
  };
}

export interface AgentInput {
  docker: string;
  session: string;
  pid: number;
  image: string;
  /** "uid:gid", or null where the image's default user (root on Desktop) is used. */
  user: string | null;
  cwd: string;
  env: Record<string, string>;
  /** The working directory, the home volume, CA files, shadow mounts, isolated paths. */
  mounts: Mount[];
  memory?: string;
  cpus?: string;
  tty: boolean;
  command: string[];
  /** Set on the host's docker process only (HERDR_AGENT), never in the container. */
  hostEnv: Record<string, string>;
  /** The file of stashbase's seccomp profile (templates/docker-seccomp.ts), read by the docker CLI. */
  seccomp: string;
  /**
   * The file the container's environment is read from (--env-file, written by stashbase: envFileText), in the run's
   * own folder: never on the docker CLI's command line, which every user of the machine reads in /proc (the proxy's
   * token is a way to use the run's secrets). A value on more than one line, which such a file cannot hold, goes as --env.
   */
  envFile: string;
  /** The OCI runtime (firewall mode: a runc, named by the profile). */
  runtime?: string;
  /** A container whose process namespace the agent's joins, its init (a remote run's lease: templates/remote-run.ts); then no --init. */
  pidNamespace?: string;
  /** Labels besides the run's (a remote run's origin). */
  labels?: string[];
}

export function agentCommand(a: AgentInput): Command {
  const names = runNames(a.session);
  const args = [
    'run', '--rm', '--name', names.agent, ...runLabels(a.session, a.pid), ...(a.labels ?? []).flatMap((l) => ['--label', l]),
    '--network', `container:${names.holder}`,
    ...(a.runtime !== undefined ? ['--runtime', a.runtime] : []),
    '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges', '--security-opt', `seccomp=${a.seccomp}`, ...(a.pidNamespace !== undefined ? ['--pid', `container:${a.pidNamespace}`] : ['--init']), '--pids-limit', AGENT_PIDS_LIMIT,
    ...(a.memory !== undefined ? ['--memory', a.memory] : []),
    ...(a.cpus !== undefined ? ['--cpus', a.cpus] : []),
    ...(a.user !== null ? ['--user', a.user] : []),
    a.tty ? '-it' : '-i',
    '--workdir', a.cwd,
  ];
  for (const m of a.mounts) args.push('--mount', mountArg(m));
  const { file, flags } = splitEnv(a.env);
  if (Object.keys(file).length > 0) args.push('--env-file', a.envFile);
  for (const [k, v] of Object.entries(flags)) args.push('--env', `${k}=${v}`);
  args.push(a.image, ...a.command);
  const cmd: Command = { file: a.docker, args };
  return Object.keys(a.hostEnv).length > 0 ? { ...cmd, env: a.hostEnv } : cmd;
}

/**
 * The variables an env file holds as given (docker reads each line as NAME=VALUE: the name trimmed of leading blanks,
 * the value to the line's end, a line that starts with # a comment), and those it cannot (a line break or a NUL in the
 * value, a name other than letters, digits and underscores), which go as --env.
 */
export function splitEnv(env: Record<string, string>): { file: Record<string, string>; flags: Record<string, string> } {
  const file: Record<string, string> = {};
  const flags: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    // Only names docker reads back as written (found in review: Go trims more blanks than a JavaScript \s, U+0085 among them).
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) && !/[\r\n\0]/.test(v)) file[k] = v;
    else flags[k] = v;
  }
  return { file, flags };
}

/** The env file's text for a container's environment (splitEnv's `file` part). */
export function envFileText(env: Record<string, string>): string {
  return Object.entries(splitEnv(env).file).map(([k, v]) => `${k}=${v}\n`).join('');
}

/** Containers first (the agent's is usually gone already), then the network; a sealed run has only its agent's container. */
export function teardownCommands(docker: string, session: string, sealed = false): Command[] {
  const containers: Command = { file: docker, args: ['rm', '--force', ...teardownContainers(session, sealed)] };
  return sealed ? [containers] : [containers, { file: docker, args: ['network', 'rm', runNames(session).network] }];
}

/** The containers a run's teardown removes (the agent's; the firewall holder too). */
export function teardownContainers(session: string, sealed = false): string[] {
  const n = runNames(session);
  return sealed ? [n.agent] : [n.agent, n.holder];
}

/** Where the relay listens in a sealed container (on its loopback, the only interface there), and where its binary is mounted. */
export const RELAY_PORT = 3128;
export const RELAY_PATH = '/.stashbase-relay';

export interface SealedInput extends AgentInput {
  /** The relay binary for the engine's architecture (dist/relay/linux-<arch>/stashbase-relay), mounted read-only. */
  relay: string;
  /** The image's ENTRYPOINT, which the relay's gate runs before the command (it takes the entrypoint's place). */
  entrypoint: string[];
  /** Where the relay already is in the container (a remote run's tools volume); unset: `relay` is bound at RELAY_PATH. */
  relayInside?: string;
  /** A container whose network namespace (loopback alone) the agent's joins, where the relay runs (a remote run's lease); unset: --network none. */
  networkOf?: string;
  /** The run's limit of proxy connections at once (stashbase refuses streams past it): the relay's bound derives from it. */
  relayStreams: number;
  /**
   * A local run's relay is the container's own process (relay/supervise.go: no exec), carrying the agent's standard
   * streams with its connections on the container's one stream: the agent's terminal size inside ("ROWSxCOLS"), or
   * "-" for pipes. Unset: the relay's gate runs the command (a remote run, whose relay runs in its lease).
   */
  size?: string;
}

/**
 * A sealed run's agent container: no interface but loopback (--network none),
 * the relay mounted read-only as its entrypoint. A local run's relay is the
 * container's process, listening before it runs the agent's command on a
 * terminal of its own (or pipes), everything on the container's one stream
 * (`-i`, never `-t`: the terminal is the relay's); a remote run's is its
 * gate, which runs the command once the relay the lease holds listens.
 * Everything else as in agentCommand.
 */
export function sealedAgentCommand(a: SealedInput): Command {
  // A remote run's relay is in its tools volume already (templates/remote-run.ts).
  const relayAt = a.relayInside ?? RELAY_PATH;
  const supervised = a.size !== undefined;
  const cmd = agentCommand({ ...a, tty: supervised ? false : a.tty, mounts: a.relayInside !== undefined ? a.mounts : [...a.mounts, { type: 'bind', source: a.relay, target: RELAY_PATH, readonly: true }] });
  const args = cmd.args;
  const at = args.indexOf('--network');
  args.splice(at, 2, '--network', a.networkOf !== undefined ? `container:${a.networkOf}` : 'none');
  // agentCommand ends with the image and the command.
  const image = args.length - a.command.length - 1;
  const relay = supervised ? ['supervise', String(RELAY_PORT), String(a.relayStreams + RELAY_CONN_ROOM), a.size as string] : ['gate', String(RELAY_PORT)];
  args.splice(image, args.length - image, '--entrypoint', relayAt, a.image, ...relay, '--', ...a.entrypoint, ...a.command);
  return cmd;
}

/**
 * The relay itself, started as a user of its own (the agent can neither signal nor trace it), its stdio the engine's
 * exec stream: in the sealed agent container, or in the container whose network namespace the agent's joins (`container`:
 * a remote run's lease).
 */
export function relayExecCommand(docker: string, session: string, uid: number, streams: number, relayAt = RELAY_PATH, container = runNames(session).agent): Command {
  // At / : the agent's working directory may be closed to the relay's user.
  return { file: docker, args: ['exec', '-i', '--user', `${uid}:${uid}`, '--workdir', '/', container, ...relayServe(relayAt, streams)] };
}

/** Connections the relay holds beyond the run's limit of streams (those not yet sent a byte, those being closed). */
export const RELAY_CONN_ROOM = 64;

/** The relay's command: listening on RELAY_PORT, closing at once any connection past the run's limit and some room. */
export function relayServe(relayAt: string, streams: number): string[] {
  return [relayAt, 'serve', String(RELAY_PORT), String(streams + RELAY_CONN_ROOM)];
}

/**
 * The relay's user: a uid no image or account uses (an image's USER, which
 * decides the agent's user on Docker Desktop, is unknown here: nobody's 65534
 * could be it), or another should the agent's be that; never a remote run's
 * lease's (templates/remote-run.ts leaseUid: found in review, the relay's
 * second choice was the lease's own uid).
 */
export const RELAY_UID = 2147483646;
export function relayUid(agentUser: string | null): number {
  return agentUser !== null && agentUser.split(':')[0] === String(RELAY_UID) ? RELAY_UID - 2 : RELAY_UID;
}
