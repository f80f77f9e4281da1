// Isolated-path volumes: created with labels that say what they belong to, and
// handed to the agent's user once (a fresh volume's root belongs to root).
import type { Command } from './command.js';

export const LABEL_ISOLATED = 'stashbase.isolated-path';
export const LABEL_REPO = 'stashbase.repo';

export interface IsolatedVolume {
  name: string;
  /** The entry as the profile wrote it, relative to the working directory. */
  entry: string;
  /** Where it is mounted: the entry under the working directory. */
  target: string;
  repo: string;
}

export function volumeCreateCommand(docker: string, v: IsolatedVolume): Command {
  return { file: docker, args: ['volume', 'create', '--label', `${LABEL_ISOLATED}=${v.entry}`, '--label', `${LABEL_REPO}=${v.repo}`, v.name] };
}

/** A throwaway container with CHOWN only, no network, that gives the volume to the agent's user. */
export function volumeOwnCommand(docker: string, image: string, user: string, names: string[]): Command {
  const args = ['run', '--rm', '--network', 'none', '--cap-drop', 'ALL', '--cap-add', 'CHOWN', '--security-opt', 'no-new-privileges', '--user', '0:0'];
  names.forEach((n, i) => args.push('--mount', `type=volume,source=${n},target=/v/${i}`));
  args.push('--entrypoint', 'chown', image, user, ...names.map((_, i) => `/v/${i}`));
  return { file: docker, args };
}

export function volumeInspectCommand(docker: string, names: string[]): Command {
  return { file: docker, args: ['volume', 'inspect', '--format', '{{.Name}}', ...names] };
}

/**
 * How du runs: as root with only the capability to read any folder (the
 * agent's chmod 000 hides nothing), read-only, and with a seccomp profile
 * that refuses every socket call (templates/docker-seccomp.ts
 * measureSeccompProfile). So it needs no network namespace of its own:
 * `--network host`, whose namespace it cannot use (a namespace of its own
 * would cost ~150 ms of its start and slow the agent's, made at once).
 */
const MEASURE_CONFINED = (seccomp: string) => ['--network', 'host', '--security-opt', `seccomp=${seccomp}`, '--cap-drop', 'ALL', '--cap-add', 'DAC_READ_SEARCH', '--security-opt', 'no-new-privileges'];

/**
 * The same measurement, started with the run and held until told: a container
 * that waits for one line on its stdin, then prints the volume's size in KiB
 * (du as in volumeSizeCommand). Its start overlaps the run's own; what is
 * left at the end is du itself. End of input without a line (the run never
 * started its agent, or stashbase died) ends it unmeasured; --rm removes it.
 */
export function volumeMeasureCommand(docker: string, image: string, volume: string, name: string, labels: string[], seccomp: string): Command {
  return {
    file: docker,
    args: [
      'run', '-i', '--rm', '--name', name, ...labels, ...MEASURE_CONFINED(seccomp),
      '--user', '0:0', '--read-only', '--mount', `type=volume,source=${volume},target=/v,readonly`, '--entrypoint', 'sh', image, '-c', 'read -r _ && exec du -skx /v',
    ],
  };
}

/**
 * The size of a volume, in KiB: du confined as MEASURE_CONFINED says, the
 * volume read-only.
 * `name` lets a run's teardown and `agent docker cleanup` find it.
 */
export function volumeSizeCommand(docker: string, image: string, volume: string, name: string, labels: string[], seccomp: string): Command {
  return {
    file: docker,
    args: [
      'run', '--rm', '--name', name, ...labels, ...MEASURE_CONFINED(seccomp),
      '--user', '0:0', '--read-only', '--mount', `type=volume,source=${volume},target=/v,readonly`, '--entrypoint', 'du', image, '-skx', '/v',
    ],
  };
}
