// Reading and writing one file in the Docker backend's persistent home
// volume, through a short-lived container of the sandbox image that has the
// volume and nothing else: no network, no capabilities, the agent's user.
import type { Command } from './command.js';
import { mountArg } from './docker-run.js';

export const MISSING_EXIT = 3;

export interface HomeFileInput {
  docker: string;
  image: string;
  volume: string;
  /** Where the volume is mounted (the agent's home). */
  home: string;
  user: string | null;
  /** Absolute path inside the container, under `home`. */
  path: string;
}

function base(i: HomeFileInput, interactive: boolean): string[] {
  return [
    'run', '--rm', ...(interactive ? ['-i'] : []), '--network', 'none', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges',
    ...(i.user !== null ? ['--user', i.user] : []),
    '--mount', mountArg({ type: 'volume', source: i.volume, target: i.home, readonly: false }),
    '--entrypoint', 'sh', i.image,
  ];
}

/** Prints the file; exits MISSING_EXIT when there is none. */
export function homeFileReadCommand(i: HomeFileInput): Command {
  return { file: i.docker, args: [...base(i, false), '-c', `[ -e "$1" ] || exit ${MISSING_EXIT}; exec cat -- "$1"`, 'sh', i.path] };
}

/** Replaces the file with standard input (written beside it, then renamed). */
export function homeFileWriteCommand(i: HomeFileInput): Command {
  const script = 'mkdir -p -- "$(dirname -- "$1")" && cat > "$1.stashbase-new" && mv -f -- "$1.stashbase-new" "$1"';
  return { file: i.docker, args: [...base(i, true), '-c', script, 'sh', i.path] };
}
