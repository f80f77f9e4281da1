// The terminal's foreground process group around a native run: the agent runs
// in a group of its own (templates/gate.ts PGRP_LINE), which takes the
// terminal where stashbase's had it, and stashbase takes it back once the
// agent ends, as a shell does for its jobs. And the /proc stat fields both
// this and run.ts read.
import { readFileSync } from 'node:fs';
import { takeTerminalCommand } from '../../templates/gate.js';
import { probe } from '../exec.js';

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

/**
 * Whether this process's group is its controlling terminal's foreground one (/proc/self/stat: pgrp, tty_nr, tpgid),
 * whatever its standard input is (review, round 35: with input from a pipe the agent still shared the terminal, took
 * it, and stashbase, in the background with `tostop` set, was stopped at its first warning, before its checks).
 */
export function terminalForeground(): boolean {
  const f = procStatFields('self');
  if (f === null) return false;
  const [pgrp, tty, tpgid] = [Number(f[2]), Number(f[4]), Number(f[5])];
  return tty !== 0 && pgrp > 0 && tpgid === pgrp;
}

/** Whether this process has a controlling terminal (/proc/self/stat's tty_nr): the agent's would otherwise be it. */
export function hasControllingTerminal(): boolean {
  const f = procStatFields('self');
  return f !== null && Number(f[4]) !== 0;
}

/** Gives the controlling terminal back to this process's group; quiet if it cannot. */
export function takeTerminalBack(perl: string): void {
  probe(takeTerminalCommand(perl));
}
