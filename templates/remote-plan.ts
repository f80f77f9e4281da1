// A remote run as a Plan (docs/remote.md): every docker command in the order
// a real run executes it, with the in-process steps between, as --dry-run shows it.
import type { Command } from './command.js';
import { relayExecCommand, relayUid, runNames, sealedAgentCommand, type SealedInput } from './docker-run.js';
import { WATCHDOG_DONE, watchdogCommand } from './docker-watchdog.js';
import { commandStep, internalStep, type Plan } from './plan.js';
import { exportCommand, type ExportInput, leaseCommand, type LeaseInput, REMOTE_RELAY, remoteNames, remoteTeardownCommands } from './remote-run.js';

export interface RemotePlanInput {
  session: string;
  profile: string;
  /** The engine and how the run names it. */
  engine: string;
  from: string;
  sessionFile: string;
  runDir: string;
  /** Your repository's top, the run's name and branch, whether it is new. */
  repo: string;
  name: string;
  branch: string;
  fresh: boolean;
  /** The bundle of a new run: your git's command. */
  bundle: Command | null;
  /** The run's tools volume, and a new run's workspace. */
  volumes: Command[];
  lease: LeaseInput;
  sealed: SealedInput;
  export: ExportInput;
  /** Over ssh://, the run's one connection: its master, the shim first on the docker CLI's PATH, its end; else null. */
  ssh: { master: Command; shim: string; exit: Command } | null;
}

export function buildRemotePlan(p: RemotePlanInput): Plan {
  const docker = p.lease.docker;
  const names = runNames(p.session);
  const steps = [
    ...(p.ssh === null ? [] : [
      internalStep('ssh', `one SSH connection for every docker command of the run: a master with its socket in ${p.runDir}, ending 30 s after its last channel closes, and, first on the docker CLI's PATH, an ssh that uses it: ${JSON.stringify(p.ssh.shim)}`),
      commandStep('ssh-master', p.ssh.master),
    ]),
    internalStep('session', `write session record ${p.sessionFile} (it names the engine ${p.engine})`),
    ...(p.fresh ? [internalStep('branch', `create the run's branch ${p.branch} in ${p.repo} at your HEAD, and the run's own git directory in ${p.runDir}`), commandStep('bundle', p.bundle!)] : [internalStep('branch', `resume ${p.name}: its branch ${p.branch} here, its workspace on the engine`)]),
    internalStep('watchdog', `start the watchdog in a session of its own, reading a pipe of this process's: "${WATCHDOG_DONE}" when the run ends, and on end of file (stashbase killed) it removes the run's containers and tools volume on the engine:`),
    commandStep('watchdog', watchdogCommand(docker, p.session, true, remoteTeardownCommands(docker, p.session))),
    internalStep('proxy', `start the egress proxy in this process on a Unix socket in ${p.runDir} (the relay's stream its only client)`),
    ...p.volumes.map((c) => commandStep('volume-create', c)),
    internalStep('lease', `the setup and then the lease, in a session of its own; its input a tar (the relay${p.fresh ? ', the CA if the run intercepts TLS, the bundle and the base' : ', the CA if the run intercepts TLS'}), then a byte every 5 s; the agent starts once it prints "stashbase-relay lease":`),
    commandStep('lease', leaseCommand(p.lease)),
    internalStep('relay', 'once the lease holds, the relay in the lease\'s container, as a user of its own: it listens on the loopback of the lease\'s network namespace (no interface but loopback), which the agent\'s container joins; its standard input and output, the engine\'s exec stream, carry each connection to the proxy. It ends with the lease:'),
    commandStep('relay', relayExecCommand(docker, p.session, relayUid(p.sealed.user), p.sealed.relayStreams, REMOTE_RELAY, remoteNames(p.session).lease)),
    internalStep('export', `the export, in a session of its own, started with the agent's container: it waits for a line "go", sent once the agent exited and the lease with it, then its output is read as hostile into the run's own git directory and imported as any run's git work (only ${p.branch} moves):`),
    commandStep('export', exportCommand(p.export)),
    internalStep('agent', `the agent's container, sealed, in the lease's process and network namespaces; its command starts once the relay listens:`),
    commandStep('agent', sealedAgentCommand(p.sealed), true),
    internalStep('export', 'after the agent exits: stop the relay and the lease (its input ends), wait for the lease\'s container to end (the agent\'s process namespace with it), then tell the export "go"'),
    internalStep('teardown', `remove ${names.agent}'s leftovers and the tools volume (the workspace stays for --resume ${p.name}), stop the proxy, remove ${p.runDir}, append the end event, remove ${p.sessionFile}`),
    ...remoteTeardownCommands(docker, p.session).map((c) => commandStep('teardown', c)),
    ...(p.ssh === null ? [] : [commandStep('ssh-exit', p.ssh.exit)]),
  ];
  return { title: `stashbase agent run: session ${p.session}, profile ${p.profile}, docker backend on a remote engine, ${p.engine} (${p.from}), sealed network, workspace ${p.lease.workspace}`, steps };
}
