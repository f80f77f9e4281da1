// `agent run` from parsed options to the agent's exit code: profile, trust,
// backend, plan; then either print the plan (--dry-run) or carry it out.
import { availableParallelism } from 'node:os';
import { formatPlan, planToJson } from '../templates/plan.js';
import { resolveBackend, type BackendFlags } from './backend.js';
import { credentialLookingVariables } from './env-policy.js';
import { SandboxUnavailableError, UsageError } from './errors.js';
import { stashbaseHome, userHome } from './home.js';
import { type NativeContext, prepareNative } from './native/prepare.js';
import { probeNative } from './native/probe.js';
import { selectMechanism } from './native/select.js';
import { cpusProblem, memoryProblem } from './profile/docker-values.js';
import { displayPath, loadProfile, type SourceChoice } from './profile/load.js';
import { ensureTrusted } from './profile/trust.js';
import { isInteractive } from './prompt.js';
import { makePlaceholders } from './secrets/placeholder.js';
import { newSessionId } from './session.js';
import { warningLabel } from './style.js';

export interface RunOptions extends BackendFlags {
  command: string[];
  profile?: string;
  profileSource: SourceChoice;
  worktree?: boolean;
  resume?: string;
  silent: boolean;
  dryRun: boolean;
  json: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

function checkDockerValues(o: RunOptions): void {
  if (o.dockerMemory !== undefined) {
    const p = memoryProblem(o.dockerMemory);
    if (p) throw new UsageError(`--docker-memory: ${p}`);
  }
  if (o.dockerCpus !== undefined) {
    const p = cpusProblem(o.dockerCpus, availableParallelism());
    if (p) throw new UsageError(`--docker-cpus: ${p}`);
  }
}

export async function runAgent(o: RunOptions): Promise<number> {
  if (o.command.length === 0) throw new UsageError('no agent command: put it after --, as in: stashbase agent run -- claude');
  checkDockerValues(o);
  const warn = (msg: string) => {
    if (!o.silent) process.stderr.write(`${warningLabel()} ${msg}\n`);
  };
  const loaded = loadProfile({ name: o.profile, source: o.profileSource, cwd: o.cwd, env: o.env });
  const profile = loaded.profile;
  await ensureTrusted(loaded, { interactive: () => isInteractive(o.silent), env: o.env, label: profile.file ? displayPath(profile.file, o.cwd) : 'default' });
  const { backend, notes } = resolveBackend(profile, o);
  for (const n of notes) warn(n);
  if (o.worktree === true || o.resume !== undefined || (profile.workspace.worktree && o.worktree !== false)) {
    throw new SandboxUnavailableError('worktree runs (--worktree, --resume, [workspace] worktree) are not built yet; nothing was run');
  }
  if (backend === 'docker') {
    const { runDocker } = await import('./docker/run.js');
    return runDocker({
      session: newSessionId(), profile, command: o.command, cwd: o.cwd, env: o.env, home: userHome(o.env), stashbaseHome: stashbaseHome(o.env),
      placeholders: makePlaceholders(profile.secrets, o.env), flags: o, dryRun: o.dryRun, json: o.json,
      interactive: isInteractive(o.silent), warn, announce: !o.silent,
    });
  }
  const ctx: NativeContext = {
    session: newSessionId(),
    profile,
    command: o.command,
    cwd: o.cwd,
    env: o.env,
    home: userHome(o.env),
    stashbaseHome: stashbaseHome(o.env),
    mechanism: selectMechanism(probeNative(o.env, process.platform, false)),
    placeholders: makePlaceholders(profile.secrets, o.env),
  };
  if (o.dryRun) {
    const plan = prepareNative(ctx).plan;
    process.stdout.write(o.json ? JSON.stringify(planToJson(plan), null, 2) + '\n' : formatPlan(plan));
    return 0;
  }
  for (const name of credentialLookingVariables(profile, o.env)) {
    warn(`${name} looks like a credential and is inherited by the agent (bind it under [secrets] to keep the real value out)`);
  }
  const { executeNative } = await import('./native/execute.js');
  return executeNative({ ctx, profile, warn, announce: !o.silent });
}
