// The stashbase process the host runs for a hook the sandbox asked for.
import type { Command } from './command.js';

export interface HostCheckInput {
  /** node and the CLI script (or the stashbase binary). */
  stashbase: string[];
  args: string[];
  cwd: string;
  env: Record<string, string>;
  unsetEnv: string[];
}

export function hostCheckCommand(i: HostCheckInput): Command {
  const [file, ...pre] = i.stashbase;
  if (file === undefined) throw new Error('no stashbase command');
  return { file, args: [...pre, ...i.args], cwd: i.cwd, env: i.env, unsetEnv: i.unsetEnv, pipes: [{ fd: 3, direction: 'from-child' }] };
}
