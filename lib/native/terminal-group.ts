// The terminal's foreground process group around a native run: the agent runs
// in a group of its own (templates/gate.ts PGRP_LINE), which takes the
// terminal where stashbase's had it, and stashbase takes it back once the
// agent ends, as a shell does for its jobs.
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

/**
 * Whether this process's group is its controlling terminal's foreground one (/proc/self/stat: pgrp, tty_nr, tpgid),
 * whatever its standard input is (review, round 35: with input from a pipe the agent still shared the terminal, took
 * it, and stashbase, in the background with `tostop` set, was stopped at its first warning, before its checks).
 */
export function terminalForeground(): boolean {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // The command name may hold spaces and parentheses: the fields after it follow the last ')'.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const [pgrp, tty, tpgid] = [Number(f[2]), Number(f[4]), Number(f[5])];
    return tty !== 0 && pgrp > 0 && tpgid === pgrp;
  } catch {
    return false;
  }
}

/** Gives the controlling terminal back to this process's group (TIOCSPGRP from a child of it, SIGTTOU ignored); quiet if it cannot. */
export function takeTerminalBack(perl: string): void {
  spawnSync(perl, ['-e', `$SIG{TTOU} = 'IGNORE'; open(my $t, '+<', '/dev/tty') or exit 1; ioctl($t, 0x5410, pack('i', getpgrp(0)))`], { stdio: 'ignore', env: {}, timeout: 5000 });
}
