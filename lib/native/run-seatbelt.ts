// Runs a Seatbelt plan: sandbox-exec is the agent's parent and passes signals
// and the exit status through; stashbase forwards what is sent to it alone.
import type { Command } from '../../templates/command.js';
import { start } from '../exec.js';

const FORWARDED = ['SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'] as const;

export async function runSeatbelt(cmd: Command): Promise<number> {
  const child = start(cmd, 'inherit');
  const forward = (sig: NodeJS.Signals) => child.child.kill(sig);
  const onInt = () => {}; // the terminal delivers Ctrl+C to the agent itself
  process.on('SIGINT', onInt);
  for (const s of FORWARDED) process.on(s, forward);
  try {
    return await child.exit;
  } finally {
    process.off('SIGINT', onInt);
    for (const s of FORWARDED) process.off(s, forward);
  }
}
