// The agent container's environment as the docker CLI reads it (--env-file), in the run's own folder: never on the
// CLI's command line, which every user of the machine reads in /proc (templates/docker-run.ts splitEnv, envFileText).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AgentInput, envFileText } from '../../templates/docker-run.js';

/** Where a run's container environment is written. */
export const envFileOf = (runDir: string) => join(runDir, 'container.env');

/** Writes the agent container's environment where its command reads it (its folder is the run's, 0700), readable by you alone. */
export function writeEnvFile(a: Pick<AgentInput, 'envFile' | 'env'>): void {
  writeFileSync(a.envFile, envFileText(a.env), { mode: 0o600 });
}
