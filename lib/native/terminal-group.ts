// What /proc says of a process that a native run needs: whether stashbase has
// a controlling terminal (then the sandbox gets one of its own,
// templates/pty-relay.ts), and the stat fields run.ts reads.
import { readFileSync } from 'node:fs';

/**
 * The fields of /proc/PID/stat after the command name (state first: the 3rd field is [0]), or null when the process
 * is gone. The command name (2nd field) may hold spaces and parentheses: the fields after it follow the last ')'.
 */
export function procStatFields(pid: number | 'self'): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** Whether this process has a controlling terminal (/proc/self/stat's tty_nr): the agent's would otherwise be it. */
export function hasControllingTerminal(): boolean {
  const f = procStatFields('self');
  return f !== null && Number(f[4]) !== 0;
}
