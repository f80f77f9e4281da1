import { flagBool, flagString, type FlagSpec, parseCommand } from '../lib/util/argv.js';
import { UsageError } from '../lib/errors.js';
import { runAgent } from '../lib/run/run-agent.js';
import { JSON_FLAG, PROFILE_FLAGS, profileSource } from './shared-flags.js';

export const usage = 'stashbase agent run [options] -- <command...>';
export const summary = 'Run an agent command inside the sandbox the profile describes.';

export const flags: FlagSpec[] = [
  ...PROFILE_FLAGS,
  { name: 'docker-sandbox', kind: 'value', value: 'true|false', help: "Force the Docker (true) or native (false) backend for this run" },
  { name: 'backend', kind: 'value', value: 'native|docker', help: 'The same as --docker-sandbox, by the backend\'s name' },
  { name: 'docker-image', kind: 'value', value: 'ref', help: 'Run this image instead of the profile\'s (implies Docker)' },
  { name: 'docker-dockerfile', kind: 'value', value: 'path', help: 'Build and run this Dockerfile (implies Docker)' },
  { name: 'docker-memory', kind: 'value', value: 'size', help: 'docker run --memory for this run (Docker only)' },
  { name: 'docker-cpus', kind: 'value', value: 'n', help: 'docker run --cpus for this run (Docker only)' },
  { name: 'docker-isolated-paths', kind: 'value', value: 'a,b', help: "Add to the profile's isolated_paths (Docker only)" },
  { name: 'docker-network', kind: 'value', value: 'firewall|sealed', help: "The container's way out for this run: the firewall holder, or sealed (no interface; the relay) (Docker only)" },
  { name: 'docker-runtime', kind: 'value', value: 'name', help: 'Run the agent container under this OCI runtime the engine has registered, such as runsc (Docker only)' },
  { name: 'remote', kind: 'value', value: 'context', help: 'Run on the Docker engine of this context (docs/remote.md): your commits go there, the agent\'s come back as its branch; the proxy and secrets stay here (implies Docker)' },
  { name: 'allow-dirty', kind: 'bool', help: 'A remote run with uncommitted changes here: run on your last commit, and leave them (said)' },
  { name: 'worktree', kind: 'optional-bool', help: 'Run in a fresh git worktree on its own branch (=false to skip)' },
  { name: 'resume', kind: 'value', value: 'name', help: 'Continue in the worktree of an earlier run (implies --worktree)' },
  { name: 'silent', kind: 'bool', help: 'No prompts and no notices; fail closed where a question would be asked' },
  { name: 'dry-run', kind: 'bool', help: 'Print every command the run would execute, and run nothing' },
  { ...JSON_FLAG, help: 'With --dry-run: print the plan as JSON' },
];

const spec = { name: 'agent run', usage, summary, flags, notes: 'The agent command follows "--"; agent run exits with its exit code (128+N for signal N).' };

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.positionals.length > 0) throw new UsageError(`put the agent command after --, as in: stashbase agent run -- ${p.positionals.join(' ')}`);
  const json = flagBool(p, 'json') === true;
  const dryRun = flagBool(p, 'dry-run') === true;
  if (json && !dryRun) throw new UsageError('--json goes with --dry-run');
  return runAgent({
    command: p.rest ?? [],
    profile: flagString(p, 'profile'),
    profileSource: profileSource(flagString(p, 'profile-source')),
    dockerSandbox: flagString(p, 'docker-sandbox'),
    backend: flagString(p, 'backend'),
    dockerImage: flagString(p, 'docker-image'),
    dockerDockerfile: flagString(p, 'docker-dockerfile'),
    dockerMemory: flagString(p, 'docker-memory'),
    dockerCpus: flagString(p, 'docker-cpus'),
    dockerIsolatedPaths: flagString(p, 'docker-isolated-paths'),
    dockerNetwork: flagString(p, 'docker-network'),
    dockerRuntime: flagString(p, 'docker-runtime'),
    remote: flagString(p, 'remote'),
    allowDirty: flagBool(p, 'allow-dirty') === true,
    worktree: flagBool(p, 'worktree'),
    resume: flagString(p, 'resume'),
    silent: flagBool(p, 'silent') === true,
    dryRun,
    json,
    cwd: process.cwd(),
    env: process.env,
  });
}
