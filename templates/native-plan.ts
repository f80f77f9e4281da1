// The whole native run as a Plan: in-process steps as comments, the sandbox
// command, and the bridge that gives the sandbox its only way out.
import { type RelayInput, withRelay } from './bridge-relay.js';
import { type PtyInput, withPty } from './pty-relay.js';
import { buildBwrapCommand, BWRAP_FDS, type BwrapInput } from './bwrap.js';
import type { Command } from './command.js';
import { gitDirStepText, type PlannedGitDir } from './git-import.js';
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
  writes: 'allow-list' | 'deny-list';
  /** socket(AF_UNIX) allowed (the profile's weaker choice). */
  unixSockets: boolean;
  views: PlannedView[];
  /** The run's own git directory, when the working directory is in a repository. */
  gitDir: PlannedGitDir | null;
  sandbox: { kind: 'bwrap'; input: BwrapInput; relay: RelayInput | null } | { kind: 'systemd-run'; input: SystemdRunInput } | { kind: 'seatbelt'; command: Command };
}

/** A view (lib/views/spec.ts) as the plan shows it. */
export interface PlannedView {
  label: string;
  at: string;
  dir: string;
  live: string[];
  readOnly: string[];
  copies: string[];
  empty: string[];
  merge: Record<string, string>;
}

/** The relay's descriptor toward stashbase: the first after bwrap's own. */
export function relayControlFd(userns: boolean): number {
  return userns ? BWRAP_FDS.userns + 1 : BWRAP_FDS.userns;
}

/** The sandbox step, on a pseudo-terminal of its own where stashbase has a controlling terminal. */
function onPty(sandbox: Command, pty: PtyInput | null | undefined): PlanStep[] {
  if (!pty) return [commandStep('sandbox', sandbox, true)];
  return [
    internalStep('pty', 'the sandbox runs in a session of its own on a pseudo-terminal with your terminal\'s settings and size: the process stashbase spawns (perl) opens it, forks, and the child puts it in place of each standard descriptor that is your terminal and execs the sandbox\'s command; the parent relays between the two terminals (yours raw while the run lasts), passes on a change of size, and exits as the sandbox does'),
    commandStep('sandbox', withPty(sandbox, pty), true),
  ];
}

/** bwrap's own descriptors, which the relay closes. */
export function sandboxFds(userns: boolean): number[] {
  return [BWRAP_FDS.seccomp, BWRAP_FDS.info, BWRAP_FDS.block, ...(userns ? [BWRAP_FDS.userns] : []), BWRAP_FDS.gate];
}

/** The user name in the proxy URL; the per-run token is its password (Proxy-Authorization: Basic). */
export const PROXY_USER = 'stashbase';

/**
 * Set in every sandbox, both backends: the agent runs confined. Claude Code
 * reads it to allow --dangerously-skip-permissions as root (a container's
 * usual user), which it otherwise refuses. A profile's [config_env] may override it.
 */
export const SANDBOX_MARKER_ENV: Readonly<Record<string, string>> = { IS_SANDBOX: '1' };

/** The proxy variables: the URL carries the run's credential, which the proxy asks of every request. */
export function proxyEnv(proxyUrl: string, token: string): Record<string, string> {
  proxyUrl = proxyUrl.replace('://', `://${PROXY_USER}:${token}@`);
  const noProxy = 'localhost,127.0.0.1,::1';
  return {
    HTTP_PROXY: proxyUrl, HTTPS_PROXY: proxyUrl, ALL_PROXY: proxyUrl,
    http_proxy: proxyUrl, https_proxy: proxyUrl, all_proxy: proxyUrl,
    NO_PROXY: noProxy, no_proxy: noProxy,
  };
}

/** Where the agent's tools look for CA certificates, when the proxy intercepts TLS. */
export function caEnv(caDir: string): Record<string, string> {
  const bundle = `${caDir}/ca-bundle.pem`;
  return {
    NODE_EXTRA_CA_CERTS: `${caDir}/ca.pem`,
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
  steps.push(internalStep('writes', p.writes === 'allow-list'
    ? 'writes: an allow-list: the host is read-only but for the working directory, the run\'s private temp folders, the views below and allow_write'
    : 'writes: a deny-list (writes = "deny-list", weaker): the host is writable but for deny_write'));
  if (p.unixSockets) steps.push(internalStep('unix-sockets', 'Unix sockets: allowed (allow_unix_sockets = true, weaker): every host socket the user can open is reachable'));
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
        ? `create ${p.runDir}: seccomp.bpf (refuses ${p.unixSockets ? '' : 'socket(AF_UNIX), '}io_uring, setuid and setgid modes, the TIOCSTI and TIOCLINUX ioctls and the keyring calls), denied (empty file, mode 000), empty/ (empty directory)${sb.input.privateTmp.length > 0 ? `, ${sb.input.privateTmp.map((t) => `${t.src.slice(p.runDir.length + 1)}/ (the private ${t.dest})`).join(', ')}` : ''}${sb.input.scratch.map((c) => `, ${c.src.slice(p.runDir.length + 1)}/ (a copy of ${c.from}, bound writable there and discarded)`).join('')}${p.interceptTls ? ', ca/ca.pem and ca/ca-bundle.pem (the system CAs and stashbase\'s local CA, for TLS interception)' : ''}`
        : `create ${p.runDir} (its environment file is written there)`,
    ),
  );
  if (p.parents.length > 0) {
    steps.push(internalStep('parents', ['create missing parent directories under home (kept):', ...p.parents.map((x) => `  ${x}`)].join('\n')));
  }
  if (p.placeholders.length > 0) {
    steps.push(internalStep('placeholders', ['create stand-in directories at missing protected paths (removed after the run):', ...p.placeholders.map((x) => `  ${x}`)].join('\n')));
  }
  if (p.gitDir) steps.push(internalStep('git-dir', gitDirStepText(p.gitDir)));
  for (const v of p.views) {
    const list = (what: string, names: string[]) => (names.length > 0 ? [`  ${what}: ${names.join(', ')}`] : []);
    const merged = Object.entries(v.merge).map(([n, rule]) => `${n} (${rule})`);
    steps.push(internalStep('view', [
      `create ${v.dir}, mounted at ${v.at} (the view of ${v.label}):`,
      ...list('bound writable', v.live), ...list('bound read-only', v.readOnly), ...list('copied in', v.copies), ...list('empty of its own', v.empty),
      ...list('carried back after the run', merged),
    ].join('\n')));
  }
  if (p.fileStandIns.length > 0) {
    steps.push(internalStep('stand-in-files', ['create read-only stand-in files at missing write-denied paths (removed after the run; empty, .git/commondir holds "."):', ...p.fileStandIns.map((x) => `  ${x}`)].join('\n')));
  }
  if (sb.kind === 'bwrap' && sb.relay) {
    steps.push(internalStep('proxy', `start the egress proxy in this process; it accepts on a socket in the sandbox's own network namespace, which the sandbox reaches as ${p.proxyUrl}`));
    const joins = sb.input.userns ? 'user and network namespaces' : 'network namespace';
    const ctl = relayControlFd(sb.input.userns);
    steps.push(internalStep('relay-start', `one process starts the sandbox and its relay: perl forks; the parent becomes bwrap; the child is the relay, in a session of its own, talking to stashbase on Node's IPC channel, fd ${ctl} (closed in the sandbox): it waits for the sandbox's pid, joins its ${joins} with setns(2) (not its PID namespace), listens on its loopback, hands the listening socket to stashbase (SCM_RIGHTS) and exits:`));
    const bwrap = buildBwrapCommand(sb.input);
    // The held bind sources are bwrap's alone too (it closes each once bound).
    const held = (bwrap.fds ?? []).filter((f) => f.held === true).map((f) => f.fd);
    steps.push(...onPty(withRelay(bwrap, sb.relay, ctl, [...sandboxFds(sb.input.userns), ...held]), sb.input.pty));
    const maps = sb.input.userns ? `; write its uid_map and gid_map (your ids only, setgroups denied)` : '';
    steps.push(internalStep('relay-wait', `bwrap reports its pid on fd ${BWRAP_FDS.info} and waits on fd ${BWRAP_FDS.block}${maps}; the relay is given that pid`));
    steps.push(internalStep('release', `${sb.input.userns ? `once the relay says "joined", let bwrap go on (write to fd ${BWRAP_FDS.userns}); ` : ''}once the proxy listens on the relay's socket and the relay is gone, release bwrap (write to fd ${BWRAP_FDS.block}); once the gate, the first process inside, says "r" on fd ${BWRAP_FDS.gate} (bwrap made its mounts; an exit before that is bwrap's own failure, tried up to 3 times), open it (write "1" there: it runs the agent on that word only, and exits 125 on an end of file)`));
  } else if (sb.kind === 'bwrap') {
    steps.push(internalStep('proxy', `start the egress proxy in this process on ${p.proxyUrl} (host network: raw connections are not blocked)`));
    steps.push(...onPty(buildBwrapCommand(sb.input), sb.input.pty));
  } else {
    steps.push(internalStep('env-file', `write the agent's environment to ${sb.input.envFile} (mode 0600)`));
    steps.push(internalStep('proxy', `start the egress proxy in this process on ${p.proxyUrl}`));
    steps.push(commandStep('sandbox', buildSystemdRunCommand(sb.input), true));
  }
  for (const w of p.warnings) steps.push(internalStep('warning', `warning: ${w}`));
  steps.push(internalStep('teardown', `after the agent exits: stop the proxy, ${p.gitDir ? 'import the run\'s git work into yours, ' : ''}${p.views.length > 0 ? 'carry back what each view names, ' : ''}remove the stand-ins and ${p.runDir}, append the end event, remove ${p.sessionFile}`));
  return { title: `stashbase agent run: session ${p.session}, profile ${p.profile}, native backend (${sb.kind})`, steps };
}
