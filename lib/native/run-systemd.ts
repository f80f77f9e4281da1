// Runs a systemd-run plan: the agent's environment goes to a mode-0600
// EnvironmentFile (never onto a command line), then systemd-run starts the
// transient unit and waits for it.
import { writeFileSync } from 'node:fs';
import type { Command } from '../../templates/command.js';
import { runForwarded } from '../exec.js';

/**
 * EnvironmentFile lines: values double-quoted with backslash and quote escaped.
 * A value with a line break cannot be written safely and is left out (returned).
 */
export function environmentFile(env: NodeJS.ProcessEnv): { text: string; skipped: string[] } {
  const lines: string[] = [];
  const skipped: string[] = [];
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue;
    if (/[\r\n\0]/.test(v) || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) {
      skipped.push(k);
      continue;
    }
    lines.push(`${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\$/g, '\\$')}"`);
  }
  return { text: lines.join('\n') + '\n', skipped };
}

export async function runSystemd(cmd: Command, envFile: string, agentEnv: { set: Record<string, string>; unset: string[] }, warn: (m: string) => void): Promise<number> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of agentEnv.unset) delete env[k];
  Object.assign(env, agentEnv.set);
  const { text, skipped } = environmentFile(env);
  for (const k of skipped) warn(`${k} is not passed to the systemd unit: its name or value cannot be written to an EnvironmentFile safely`);
  writeFileSync(envFile, text, { mode: 0o600 });
  return runForwarded(cmd);
}
