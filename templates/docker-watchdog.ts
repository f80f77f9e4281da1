// The watchdog of a Docker run: a shell started with the run, in a session of
// its own, that reads one line from a pipe of stashbase's. A run that ends
// writes "done" and the watchdog exits; a stashbase killed with SIGKILL (or a
// crash) closes the pipe unwritten, and the watchdog removes the run's two
// containers and its network at once, so an orphaned agent cannot go on
// writing to your repository.
import { type Command, formatCommand } from './command.js';
import { teardownCommands } from './docker-run.js';

export const WATCHDOG_DONE = 'done';

/**
 * `terminal`: your terminal is its descriptor 3 (a sealed run on a terminal, which stashbase makes raw while the run
 * lasts): its settings are kept as the watchdog starts, and set back when stashbase was killed (found in review: a
 * SIGKILL of stashbase left your terminal raw; a docker client with -t, holding it, set it back): at once, before the
 * removals, and only while its settings are still exactly those stashbase made (a line `raw:<stty -g>` stashbase sends
 * once it made it raw). Second review: set back after the removals, it undid what the next program had set, a password
 * prompt's echo off; third review: "still raw" read as -icanon let it undo a getpass's echo off, which keeps -icanon.
 */
export function watchdogCommand(docker: string, session: string, sealed = false, removing: Command[] = teardownCommands(docker, session, sealed), terminal = false): Command {
  const removals = removing.map((c) => `${formatCommand(c)} >/dev/null 2>&1; `).join('');
  const script = terminal
    ? `saved=$(stty -g <&3 2>/dev/null); raw=; while read -r line; do case "$line" in ${WATCHDOG_DONE}) exit 0;; raw:*) raw=\${line#raw:};; esac; done; [ -n "$saved" ] && [ -n "$raw" ] && [ "$(stty -g <&3 2>/dev/null)" = "$raw" ] && stty "$saved" <&3 2>/dev/null; ${removals}exit 0`
    : `read -r line; [ "$line" = ${WATCHDOG_DONE} ] && exit 0; ${removals}exit 0`;
  return { file: '/bin/sh', args: ['-c', script] };
}
