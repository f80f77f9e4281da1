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
}

export function agentCommand(a: AgentInput): Command {
  const names = runNames(a.session);
  const args = [
    'run', '--rm', '--name', names.agent, ...runLabels(a.session, a.pid),
    '--network', `container:${names.holder}`,
    '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges', '--security-opt', `seccomp=${a.seccomp}`, '--init', '--pids-limit', AGENT_PIDS_LIMIT,
    ...(a.memory !== undefined ? ['--memory', a.memory] : []),
    ...(a.cpus !== undefined ? ['--cpus', a.cpus] : []),
    ...(a.user !== null ? ['--user', a.user] : []),
    a.tty ? '-it' : '-i',
    '--workdir', a.cwd,
  ];
  for (const m of a.mounts) args.push('--mount', mountArg(m));
  for (const [k, v] of Object.entries(a.env)) args.push('--env', `${k}=${v}`);
  args.push(a.image, ...a.command);
  const cmd: Command = { file: a.docker, args };
  return Object.keys(a.hostEnv).length > 0 ? { ...cmd, env: a.hostEnv } : cmd;
}

/** Containers first (the agent's is usually gone already), then the network. */
export function teardownCommands(docker: string, session: string): Command[] {
  const n = runNames(session);
  return [
    { file: docker, args: ['rm', '--force', n.agent, n.holder] },
    { file: docker, args: ['network', 'rm', n.network] },
  ];
}
