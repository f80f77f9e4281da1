// What stashbase changes in a known agent's command line, and says so. Codex
// brings a sandbox of its own (bubblewrap and seccomp on Linux, Seatbelt on
// macOS) that cannot start inside stashbase's: no user namespace in ours,
// no capabilities in a container, and Seatbelt does not nest. Every command
// Codex ran would then fail. So, on every backend and platform alike, a codex
// command gets its own sandbox turned off (stashbase is the sandbox) unless
// the command line already decides it; an explicit choice is kept and named.
import { basename } from 'node:path';

export const CODEX_SANDBOX_OFF = ['-c', 'sandbox_mode="danger-full-access"'];

export interface AgentArgv {
  command: string[];
  /** What was changed (a notice) or kept against the run's good (a warning). */
  note: { level: 'note' | 'warn'; text: string } | null;
}

/** Whether the command line decides Codex's sandbox itself, and how. */
function codexChoice(args: string[]): 'off' | 'on' | null {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') break;
    if (a === '--dangerously-bypass-approvals-and-sandbox' || a === '--yolo') return 'off';
    if (a === '--full-auto' || a === '-s' || a === '--sandbox' || a.startsWith('--sandbox=')) {
      const v = a.startsWith('--sandbox=') ? a.slice('--sandbox='.length) : a === '--full-auto' ? 'workspace-write' : args[i + 1];
      return v === 'danger-full-access' ? 'off' : 'on';
    }
    if ((a === '-c' || a === '--config') && /^sandbox_mode\s*=/.test(args[i + 1] ?? '')) return /danger-full-access/.test(args[i + 1] as string) ? 'off' : 'on';
  }
  return null;
}

export function agentArgv(command: string[]): AgentArgv {
  const [file, ...args] = command;
  if (file === undefined || basename(file) !== 'codex') return { command, note: null };
  const choice = codexChoice(args);
  if (choice === 'off') return { command, note: null };
  if (choice === 'on') return { command, note: { level: 'warn', text: "Codex's own sandbox is asked for on its command line: it cannot start inside stashbase's, so the commands Codex runs will fail (leave the sandbox flag out and stashbase turns Codex's off; stashbase is the sandbox)" } };
  return { command: [file, ...CODEX_SANDBOX_OFF, ...args], note: { level: 'note', text: `Codex's own sandbox is off inside stashbase's (${CODEX_SANDBOX_OFF.join(' ')}): it cannot nest, and stashbase is the sandbox` } };
}
