// The whole native run as a Plan: in-process steps as comments, the sandbox
// command, and the bridge that gives the sandbox its only way out.
import { buildRelayCommand, type RelayInput } from './bridge-relay.js';
import { buildBwrapCommand, BWRAP_FDS, type BwrapInput } from './bwrap.js';
import type { Command } from './command.js';
import { commandStep, internalStep, type Plan, type PlanStep } from './plan.js';
import { buildSystemdRunCommand, type SystemdRunInput } from './systemd-run.js';

export interface NativePlanInput {
  session: string;
  profile: string;
  sessionFile: string;
  auditFile: string;
  runDir: string;
  placeholders: string[];
  /** Empty read-only files at missing write-denied paths under home. */
  fileStandIns: string[];
  parents: string[];
  warnings: string[];
  proxyUrl: string;
  /** The profile binds secrets: the proxy intercepts TLS with the local CA. */
  interceptTls: boolean;
  sandbox: { kind: 'bwrap'; input: BwrapInput; relay: RelayInput | null } | { kind: 'systemd-run'; input: SystemdRunInput } | { kind: 'seatbelt'; command: Command };
}

export function proxyEnv(proxyUrl: string): Record<string, string> {
  const noProxy = 'localhost,127.0.0.1,::1';
  return {
    HTTP_PROXY: proxyUrl, HTTPS_PROXY: proxyUrl, ALL_PROXY: proxyUrl,
    http_proxy: proxyUrl, https_proxy: proxyUrl, all_proxy: proxyUrl,
    NO_PROXY: noProxy, no_proxy: noProxy,
  };
}

/** Where the agent's tools look for CA certificates, when the proxy intercepts TLS. */
export function caEnv(runDir: string): Record<string, string> {
  const bundle = `${runDir}/ca-bundle.pem`;
  return {
    NODE_EXTRA_CA_CERTS: `${runDir}/ca.pem`,
    SSL_CERT_FILE: bundle,
    REQUESTS_CA_BUNDLE: bundle,
    CURL_CA_BUNDLE: bundle,
    GIT_SSL_CAINFO: bundle,
    PIP_CERT: bundle,
  };
}

export function buildNativePlan(p: NativePlanInput): Plan {
  const steps: PlanStep[] = [
    internalStep('session', `write session record ${p.sessionFile}`),
    internalStep('audit-start', `append the start event to ${p.auditFile}`),
  ];
  const sb = p.sandbox;
  if (sb.kind === 'seatbelt') {
    steps.push(internalStep('proxy', `start the egress proxy in this process on ${p.proxyUrl}; the profile lets the sandbox reach only that loopback port`));
    steps.push(commandStep('sandbox', sb.command, true));
    steps.push(internalStep('teardown', `after the agent exits: stop the proxy, append the end event, remove ${p.sessionFile}`));
    return { title: `stashbase agent run: session ${p.session}, profile ${p.profile}, native backend (seatbelt)`, steps };
  }
  steps.push(
    internalStep(
      'run-dir',
      sb.kind === 'bwrap'
        ? `create ${p.runDir}: seccomp.bpf (refuses the TIOCSTI and TIOCLINUX ioctls and the keyring calls), denied (empty file, mode 000), empty/ (empty directory)${p.interceptTls ? ', ca.pem and ca-bundle.pem (the system CAs and stashbase\'s local CA, for TLS interception)' : ''}`
        : `create ${p.runDir} (its environment file is written there)`,
    ),
  );
  if (p.parents.length > 0) {
    steps.push(internalStep('parents', ['create missing parent directories under home (kept):', ...p.parents.map((x) => `  ${x}`)].join('\n')));
  }
  if (p.placeholders.length > 0) {
    steps.push(internalStep('placeholders', ['create stand-in directories at missing protected paths (removed after the run):', ...p.placeholders.map((x) => `  ${x}`)].join('\n')));
  }
  if (p.fileStandIns.length > 0) {
    steps.push(internalStep('stand-in-files', ['create read-only stand-in files at missing write-denied paths (removed after the run; empty, .git/commondir holds "."):', ...p.fileStandIns.map((x) => `  ${x}`)].join('\n')));
  }
  if (sb.kind === 'bwrap' && sb.relay) {
    steps.push(internalStep('proxy', `start the egress proxy in this process on the Unix socket ${sb.relay.socket}; the sandbox reaches it as ${p.proxyUrl} in its own network namespace`));
    const joins = sb.input.userns ? 'user and network namespaces' : 'network namespace';
    steps.push(internalStep('relay-start', `start the relay beside bwrap: it waits for the sandbox's pid on its stdin, then joins its ${joins} with setns(2) (not its PID namespace) and listens on its loopback:`));
    steps.push(commandStep('relay', buildRelayCommand(sb.relay, '<stashbase pid>')));
    steps.push(commandStep('sandbox', buildBwrapCommand(sb.input), true));
    const maps = sb.input.userns ? `; write its uid_map and gid_map (your ids only, setgroups denied)` : '';
    steps.push(internalStep('relay-wait', `bwrap reports its pid on fd ${BWRAP_FDS.info} and waits on fd ${BWRAP_FDS.block}${maps}; the relay is given that pid`));
    steps.push(internalStep('release', `${sb.input.userns ? `once the relay prints "joined", let bwrap go on (write to fd ${BWRAP_FDS.userns}); ` : ''}once the relay prints "ready", release bwrap (write to fd ${BWRAP_FDS.block})`));
  } else if (sb.kind === 'bwrap') {
    steps.push(internalStep('proxy', `start the egress proxy in this process on ${p.proxyUrl} (host network: raw connections are not blocked)`));
    steps.push(commandStep('sandbox', buildBwrapCommand(sb.input), true));
  } else {
    steps.push(internalStep('env-file', `write the agent's environment to ${sb.input.envFile} (mode 0600)`));
    steps.push(internalStep('proxy', `start the egress proxy in this process on ${p.proxyUrl}`));
    steps.push(commandStep('sandbox', buildSystemdRunCommand(sb.input), true));
  }
  for (const w of p.warnings) steps.push(internalStep('warning', `warning: ${w}`));
  steps.push(internalStep('teardown', `after the agent exits: stop the relay and the proxy, remove the stand-ins and ${p.runDir}, append the end event, remove ${p.sessionFile}`));
  return { title: `stashbase agent run: session ${p.session}, profile ${p.profile}, native backend (${sb.kind})`, steps };
}
