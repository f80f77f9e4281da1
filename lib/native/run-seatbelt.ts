// Runs a Seatbelt plan: sandbox-exec is the agent's parent and passes signals
// and the exit status through; stashbase forwards what is sent to it alone.
import type { Command } from '../../templates/command.js';
import { forwardSignals, start } from '../exec.js';

export async function runSeatbelt(cmd: Command): Promise<number> {
  const child = start(cmd, 'inherit');
  const unforward = forwardSignals((sig) => child.child.kill(sig));
  try {
    return await child.exit;
  } finally {
    unforward();
  }
}
