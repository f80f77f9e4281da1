// The whole Docker-backend run as a Plan: every docker command in the order a
// real run executes it, teardown included, with the in-process steps between.
import { FIREWALL_READY } from './docker-firewall.js';
import { agentCommand, type AgentInput, gatewayCommand, HOME_VOLUME, holderCommand, type HolderInput, networkCreateCommand, RELAY_PORT, runLabels, runNames, sealedAgentCommand, type SealedInput, splitEnv, teardownCommands } from './docker-run.js';
import { type IsolatedVolume, volumeCreateCommand, volumeMeasureCommand, volumeOwnCommand } from './docker-volumes.js';
import { WATCHDOG_DONE, watchdogCommand } from './docker-watchdog.js';
import { gitDirStepText, type PlannedGitDir } from './git-import.js';
import { commandStep, internalStep, type Plan, type PlanStep } from './plan.js';

export interface DockerPlanInput {
  session: string;
  profile: string;
  sessionFile: string;
  auditFile: string;
  runDir: string;
  /** Which images run, and what happens when one is missing. */
  image: string;
  /** Isolated-path volumes not there yet: created and handed to the agent's user. */
  newVolumes: IsolatedVolume[];
  /** The run's own git directory, when the container's folder is the top of a checkout. */
  gitDir: PlannedGitDir | null;
  placeholders: string[];
  /** Read-only stand-in files at missing write-denied paths (.git/commondir holds "."). */
  fileStandIns: string[];
  warnings: string[];
  /** Where the proxy listens: the gateway (Linux) or loopback (Desktop). */
  proxyBind: string;
  interceptTls: boolean;
  holder: HolderInput;
  agent: AgentInput;
  /** A sealed run: no holder, no network; the agent's container, whose process is the relay. */
  sealed: SealedInput | null;
  /** Whether the home volume is measured after the run (not with home_volume_warn = "0"). */
  measureHome?: boolean;
  /** The measuring container's seccomp profile (lib/docker/home-volume.ts measureSeccompFile). */
  measureSeccomp?: string;
}

export function buildDockerPlan(p: DockerPlanInput): Plan {
  const docker = p.agent.docker;
  const names = runNames(p.session);
  const steps: PlanStep[] = [
    internalStep('session', `write session record ${p.sessionFile}`),
    internalStep('audit-start', `append the start event to ${p.auditFile}`),
    internalStep('image', p.image),
  ];
  steps.push(
    internalStep('run-dir', `create ${p.runDir}: denied (empty file, mode 000) and empty/ (empty directory), the sources of the shadow mounts${p.interceptTls ? '; ca.pem and ca-bundle.pem (stashbase\'s local CA, for TLS interception)' : ''}`),
  );
  if (p.gitDir) steps.push(internalStep('git-dir', gitDirStepText(p.gitDir)));
  if (p.placeholders.length > 0) {
    steps.push(internalStep('placeholders', ['create stand-in directories at missing protected paths (removed after the run):', ...p.placeholders.map((x) => `  ${x}`)].join('\n')));
  }
  if (p.fileStandIns.length > 0) {
    steps.push(internalStep('stand-in-files', ['create read-only stand-in files at missing write-denied paths (removed after the run):', ...p.fileStandIns.map((x) => `  ${x}`)].join('\n')));
  }
  if (p.sealed) return sealedPlan(p, p.sealed, steps);
  steps.push(
    internalStep('watchdog', `start the watchdog in a session of its own, reading a pipe of this process's: "${WATCHDOG_DONE}" when the run ends, and on end of file (stashbase killed) it removes ${names.agent}, ${names.holder} and ${names.network}:`),
    commandStep('watchdog', watchdogCommand(docker, p.session)),
    ...measureSteps(docker, p),
    commandStep('network', networkCreateCommand(docker, p.session, p.holder.pid, p.holder.desktop)),
    ...(p.holder.desktop ? [] : [commandStep('gateway', gatewayCommand(docker, p.session))]),
    internalStep('proxy', `start the egress proxy in this process on ${p.proxyBind}:<proxy-port>, and a canary listener on ${p.proxyBind}:<canary-port> that the firewall must make unreachable`),
    commandStep('holder', holderCommand(p.holder)),
  );
  if (p.newVolumes.length > 0) {
    steps.push(internalStep('volumes', 'meanwhile, the isolated-path volumes that do not exist yet:'));
    for (const v of p.newVolumes) steps.push(commandStep('volume-create', volumeCreateCommand(docker, v)));
    if (p.agent.user !== null && p.agent.user !== '0:0') steps.push(commandStep('volume-own', volumeOwnCommand(docker, p.holder.image, p.agent.user, p.newVolumes.map((v) => v.name))));
  }
  steps.push(
    internalStep('holder-wait', `wait for the holder to print "${FIREWALL_READY}"; anything else tears everything down and nothing runs`),
    envFileStep(p.agent),
    commandStep('agent', agentCommand(p.agent), true),
    internalStep('teardown', `after the agent exits (or on Ctrl+C, or on any failure above): remove ${names.agent}, ${names.holder} and ${names.network}, stop the proxy, ${p.gitDir ? 'import the run\'s git work into yours, ' : ''}remove ${p.runDir} and the stand-ins, append the end event, remove ${p.sessionFile}`),
    ...teardownCommands(docker, p.session).map((c) => commandStep('teardown', c)),
  );
  for (const w of p.warnings) steps.push(internalStep('warning', `warning: ${w}`));
  return { title: `stashbase agent run: session ${p.session}, profile ${p.profile}, docker backend (image ${p.agent.image})`, steps };
}

/** The agent container's environment written to its file (never on the docker CLI's command line, which any user reads). */
function envFileStep(a: AgentInput): PlanStep {
  const names = Object.keys(splitEnv(a.env).file);
  return internalStep('env-file', `write ${a.envFile} (yours alone): the container's environment, a NAME=VALUE line each${names.length > 0 ? `: ${names.join(', ')}` : ' (none)'}`);
}

/** The home volume's measurement, started with the run and told to measure once the agent's container is gone (lib/docker/home-volume.ts). */
function measureSteps(docker: string, p: DockerPlanInput): PlanStep[] {
  if (p.measureHome === false) return [internalStep('volume-measure', `home_volume_warn = "0": ${HOME_VOLUME} is not measured after the run (and the size kept after an earlier one is dropped)`)];
  return [
    internalStep('volume-measure', `start the home volume's measurement in a session of its own: it waits for a line, sent once the agent's container is gone, then prints ${HOME_VOLUME}'s size (on end of file, the agent never started or stashbase was killed, it ends unmeasured):`),
    commandStep('volume-measure', volumeMeasureCommand(docker, p.holder.image, HOME_VOLUME, `${runNames(p.session).network}-du`, runLabels(p.session, p.holder.pid), p.measureSeccomp ?? '<measure-seccomp.json>')),
  ];
}

/** A sealed run: no network or holder; the proxy on loopback, the agent's container with no interface, the relay its process. */
function sealedPlan(p: DockerPlanInput, a: SealedInput, steps: PlanStep[]): Plan {
  const docker = a.docker;
  const names = runNames(p.session);
  // On a terminal of yours (its size given), the agent's is the relay's, and the watchdog holds yours.
  const onTerminal = a.size !== undefined && a.size !== '-';
  steps.push(
    internalStep('watchdog', `start the watchdog in a session of its own, reading a pipe of this process's: "${WATCHDOG_DONE}" when the run ends, and on end of file (stashbase killed) it removes ${names.agent}:`),
    ...(onTerminal ? [internalStep('watchdog', 'on a terminal, your terminal is its descriptor 3: its settings kept, and set back if stashbase is killed:')] : []),
    commandStep('watchdog', watchdogCommand(docker, p.session, true, undefined, onTerminal)),
    ...measureSteps(docker, p),
    internalStep('proxy', 'start the egress proxy in this process on 127.0.0.1:<proxy-port> (loopback only: the relay\'s stream is its only client from the container)'),
  );
  if (p.newVolumes.length > 0) {
    steps.push(internalStep('volumes', 'the isolated-path volumes that do not exist yet:'));
    for (const v of p.newVolumes) steps.push(commandStep('volume-create', volumeCreateCommand(docker, v)));
    if (a.user !== null && a.user !== '0:0') steps.push(commandStep('volume-own', volumeOwnCommand(docker, p.holder.image, a.user, p.newVolumes.map((v) => v.name))));
  }
  steps.push(
    envFileStep(a),
    internalStep('agent-sealed', `the agent's container has no network interface but loopback; its process is the relay, which listens on 127.0.0.1:${RELAY_PORT} inside and then runs the image's entrypoint and the command ${onTerminal ? `on a terminal of its own (${(a.size as string).replace('x', ' rows, ')} columns; your terminal raw meanwhile, its size followed)` : 'on pipes'}; the container's standard input and output (the docker client's, this process's pipes) carry the command's streams and each connection to the proxy (lib/relay/mux.ts checks every frame); no exec:`),
    commandStep('agent', sealedAgentCommand(a), true),
    internalStep('teardown', `after the agent exits (or on Ctrl+C, or on any failure above): end the relay's stream, remove ${names.agent}, stop the proxy, ${p.gitDir ? 'import the run\'s git work into yours, ' : ''}remove ${p.runDir} and the stand-ins, append the end event, remove ${p.sessionFile}`),
    ...teardownCommands(docker, p.session, true).map((c) => commandStep('teardown', c)),
  );
  for (const w of p.warnings) steps.push(internalStep('warning', `warning: ${w}`));
  return { title: `stashbase agent run: session ${p.session}, profile ${p.profile}, docker backend, sealed network${a.runtime !== undefined ? `, runtime ${a.runtime}` : ''} (image ${a.image})`, steps };
}
