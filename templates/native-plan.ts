// The whole native run as a Plan: in-process steps as comments, the sandbox
// command, and the bridge that gives the sandbox its only way out.
import { buildBwrapCommand, BWRAP_FDS, type BwrapInput } from './bwrap.js';
import type { Command } from './command.js';
import { commandStep, internalStep, type Plan, type PlanStep } from './plan.js';
import { buildSystemdRunCommand, type SystemdRunInput } from './systemd-run.js';

/** The proxy's port on the loopback of the sandbox's own network namespace. */
export const BRIDGE_PORT = 18080;

export interface BridgeInput {
  nsenter: string;
  node: string;
  helper: string;
  /** bwrap made a user namespace (unprivileged run): join it too, keeping our uid. */
  userns: boolean;
}

export function buildBridgeCommand(b: BridgeInput, pid: string): Command {
  return {
    file: b.nsenter,
    args: ['--target', pid, ...(b.userns ? ['--user', '--preserve-credentials'] : []), '--net', '--', b.node, b.helper, String(BRIDGE_PORT)],
  };
}

export interface NativePlanInput {
  session: string;
  profile: string;
  sessionFile: string;
  auditFile: string;
  runDir: string;
  placeholders: string[];
  parents: string[];
  warnings: string[];
  proxyUrl: string;
  sandbox: { kind: 'bwrap'; input: BwrapInput; bridge: BridgeInput | null } | { kind: 'systemd-run'; input: SystemdRunInput };
}

export function proxyEnv(proxyUrl: string): Record<string, string> {
  const noProxy = 'localhost,127.0.0.1,::1';
  return {
    HTTP_PROXY: proxyUrl, HTTPS_PROXY: proxyUrl, ALL_PROXY: proxyUrl,
    http_proxy: proxyUrl, https_proxy: proxyUrl, all_proxy: proxyUrl,
    NO_PROXY: noProxy, no_proxy: noProxy,
  };
}

export function buildNativePlan(p: NativePlanInput): Plan {
  const steps: PlanStep[] = [
    internalStep('session', `write session record ${p.sessionFile}`),
    internalStep('audit-start', `append the start event to ${p.auditFile}`),
    internalStep('run-dir', `create ${p.runDir}: seccomp.bpf (refuses the TIOCSTI and TIOCLINUX ioctls), denied (empty file, mode 000), empty/ (empty directory)`),
  ];
  if (p.parents.length > 0) {
    steps.push(internalStep('parents', ['create missing parent directories under home (kept):', ...p.parents.map((x) => `  ${x}`)].join('\n')));
  }
  if (p.placeholders.length > 0) {
    steps.push(internalStep('placeholders', ['create stand-in directories at missing protected paths (removed after the run):', ...p.placeholders.map((x) => `  ${x}`)].join('\n')));
  }
  const sb = p.sandbox;
  if (sb.kind === 'bwrap' && sb.bridge) {
    steps.push(internalStep('proxy', `start the egress proxy in this process, served at ${p.proxyUrl} inside the sandbox's own network namespace`));
    steps.push(commandStep('sandbox', buildBwrapCommand(sb.input), true));
    steps.push(internalStep('bridge-wait', `bwrap reports its pid on fd ${BWRAP_FDS.info} and waits on fd ${BWRAP_FDS.block}; then, outside the sandbox's PID namespace:`));
    steps.push(commandStep('bridge', buildBridgeCommand(sb.bridge, '<pid>')));
    steps.push(internalStep('release', `serve the proxy on the socket the bridge hands over, then release bwrap (write to fd ${BWRAP_FDS.block})`));
  } else if (sb.kind === 'bwrap') {
    steps.push(internalStep('proxy', `start the egress proxy in this process on ${p.proxyUrl} (host network: raw connections are not blocked)`));
    steps.push(commandStep('sandbox', buildBwrapCommand(sb.input), true));
  } else {
    steps.push(internalStep('env-file', `write the agent's environment to ${sb.input.envFile} (mode 0600)`));
    steps.push(internalStep('proxy', `start the egress proxy in this process on ${p.proxyUrl}`));
    steps.push(commandStep('sandbox', buildSystemdRunCommand(sb.input), true));
  }
  for (const w of p.warnings) steps.push(internalStep('warning', `warning: ${w}`));
  steps.push(internalStep('teardown', `after the agent exits: stop the proxy, remove the stand-ins and ${p.runDir}, append the end event, remove ${p.sessionFile}`));
  return { title: `stashbase agent run: session ${p.session}, profile ${p.profile}, native backend (${sb.kind})`, steps };
}
