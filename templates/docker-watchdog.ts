// The watchdog of a Docker run: a shell started with the run, in a session of
// its own, that reads one line from a pipe of stashbase's. A run that ends
// writes "done" and the watchdog exits; a stashbase killed with SIGKILL (or a
// crash) closes the pipe unwritten, and the watchdog removes the run's two
// containers and its network at once, so an orphaned agent cannot go on
// writing to your repository.
import { type Command, formatCommand } from './command.js';
import { teardownCommands } from './docker-run.js';

export const WATCHDOG_DONE = 'done';

export function watchdogCommand(docker: string, session: string): Command {
  const [containers, network] = teardownCommands(docker, session) as [Command, Command];
  const script = `read -r line; [ "$line" = ${WATCHDOG_DONE} ] && exit 0; ${formatCommand(containers)} >/dev/null 2>&1; ${formatCommand(network)} >/dev/null 2>&1; exit 0`;
  return { file: 'sh', args: ['-c', script] };
}
