// `agent run` from parsed options to the agent's exit code: profile, trust,
// backend, plan; then either print the plan (--dry-run) or carry it out.
import { agentArgv } from './agent-argv.js';
import { availableParallelism } from 'node:os';
import { formatPlan, type Plan, planToJson } from '../../templates/plan.js';
import { resolveBackend, type BackendFlags } from './backend.js';
import { envDecision } from './env-policy.js';
import { SandboxUnavailableError, UsageError } from '../errors.js';
import { stashbaseHome, userHome } from '../home.js';
import { type NativeContext, prepareNative } from '../native/prepare.js';
import { probeNative } from '../native/probe.js';
import { selectMechanism } from '../native/select.js';
import { bindFdSupported, tmpfsPermsSupported } from '../native/bwrap-version.js';
import { cpusProblem, memoryProblem } from '../profile/docker-values.js';
import { directorySearchPath, displayPath, loadProfile, type SourceChoice } from '../profile/load.js';
import { existsSync } from 'node:fs';
import { findRepoRoot, gitConfigTargets } from '../git/repo.js';
import { dirname, join } from 'node:path';
import { ensureTrusted } from '../profile/trust.js';
import { isInteractive } from '../util/prompt.js';
import { makePlaceholders } from '../secrets/placeholder.js';
import { resolveSecrets, sourceFiles } from '../secrets/sources.js';
import { endSession, newSessionId, noteCheckSettings, noteProtectedLinks, removeSession } from './session.js';
import { randomToken } from '../util/random.js';
import { alert } from '../util/style.js';
import { writeStdout } from '../util/stdout.js';
import { nestedRepoGuard } from '../git/nested-repo-guard.js';
import { closeInheritedDescriptors } from './descriptors.js';
import { weakerSettings } from './weaker.js';
import { sameSiteWarnings } from '../proxy/same-site.js';
import { toolConfigPaths } from '../paths/tool-configs.js';
import { RUNTIME_NAME } from '../profile/validate.js';
import { ownExecutables } from '../hooks/cli-files.js';
import { rulePaths } from '../paths/rules.js';
import { realOrSelf } from '../git/planted-repos.js';
import { agentWritesAlso, findTool } from '../util/find-tool.js';
import { allowWritePaths, checkedWriteAreas } from '../native/write-areas.js';
import { claudeView, codexView } from '../views/agent-views.js';

export interface RunOptions extends BackendFlags {
  command: string[];
  profile?: string;
  profileSource: SourceChoice;
  worktree?: boolean;
  resume?: string;
  /** A remote run with uncommitted changes: run anyway, on the last commit. */
  allowDirty?: boolean;
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
  if (o.dockerNetwork !== undefined && o.dockerNetwork !== 'firewall' && o.dockerNetwork !== 'sealed') throw new UsageError(`--docker-network takes firewall or sealed, not ${JSON.stringify(o.dockerNetwork)}`);
  if (o.dockerRuntime !== undefined && !RUNTIME_NAME.test(o.dockerRuntime)) throw new UsageError(`--docker-runtime: ${JSON.stringify(o.dockerRuntime)} is not a runtime name (letters, digits, ".", "_" and "-", as the engine registers it)`);
}

export async function runAgent(o: RunOptions): Promise<number> {
  if (o.command.length === 0) throw new UsageError('no agent command: put it after --, as in: stashbase agent run -- claude');
  checkDockerValues(o);
  // Before anything is spawned: only 0-2 and the descriptors stashbase opens itself reach a child.
  if (!o.dryRun) closeInheritedDescriptors(o.env);
  const warn = (msg: string) => {
    if (!o.silent) alert(msg);
  };
  const loaded = loadProfile({ name: o.profile, source: o.profileSource, cwd: o.cwd, env: o.env });
  const profile = loaded.profile;
  // Before any tool runs: none is taken from a folder the profile lets the agent write (lib/util/find-tool.ts).
  agentWritesAlso(allowWritePaths(profile.filesystem.allowWrite, userHome(o.env), o.cwd).paths);
  await ensureTrusted(loaded, { interactive: () => isInteractive(o.silent), env: o.env, label: profile.file ? displayPath(profile.file, o.cwd) : 'default' });
  // Trusted now: the secrets' files, programs and keyring entries are read (once, here).
  if (!o.dryRun) resolveSecrets(profile, o.env, userHome(o.env), o.cwd);
  // The files they come from are the agent's to read no more than the values are.
  profile.filesystem.denyRead.push(...sourceFiles(profile, userHome(o.env), o.cwd).filter((f) => !profile.filesystem.denyRead.includes(f)));
  // The repository's profiles are not the agent's to edit: a changed one would ask you to trust it again, in words it chose.
  // Where worktree runs make their worktrees is made now, in a repository, so that the run has it read-only with the rest of .stashbase (lib/worktree/lifecycle.ts).
  const repoRoot = o.dryRun ? null : findRepoRoot(o.cwd)?.root ?? null;
  if (repoRoot !== null) (await import('../worktree/lifecycle.js')).ensureWorktreesFolder(repoRoot);
  profile.filesystem.denyWrite.push(...directorySearchPath(o.cwd).map((d) => dirname(d)).filter((d) => existsSync(d) && !profile.filesystem.denyWrite.includes(d)));
  const { backend, notes } = resolveBackend(profile, o);
  for (const n of notes) warn(n);
  if (!o.dryRun) for (const w of sameSiteWarnings(profile)) warn(w);
  const session = newSessionId();
  const proxyToken = randomToken();
  const hookToken = randomToken();
  const note = (msg: string) => {
    if (!o.silent) process.stderr.write(`${msg}\n`);
  };
  // A known agent's own sandbox, which cannot nest in stashbase's, is turned off (lib/run/agent-argv.ts).
  const agent = agentArgv(o.command, Object.fromEntries(Object.entries(profile.mcp.servers).map(([n, s]) => [n, s.url])));
  if (agent.note) (agent.note.level === 'warn' ? warn : note)(agent.note.text);
  const command = agent.command;
  // A remote engine (--remote, the profile's, or DOCKER_HOST / the current context not this machine's): lib/remote/.
  // (lib/remote/target.ts engineOf points this process's docker commands at it.)
  const engine = backend === 'docker' ? await (await import('../remote/target.js')).engineFor(findTool('docker', o.env) ?? 'docker', o.env, o.remote ?? profile.sandbox.remote) : null;
  const remote = engine?.remote ?? null;
  let remotePlan: import('../remote/execute.js').RemotePlan | null = null;
  if (remote !== null) {
    if (o.worktree === false) throw new UsageError('a remote run is always a run on its own branch: --worktree=false cannot go with it');
    warn(`the Docker engine ${remote.host} (${remote.from}) is not this machine's: a remote run (docs/remote.md) — your commits go there, the agent's come back as a branch, the proxy and your secrets stay here`);
    // Before the engine is contacted: what this machine alone can refuse. Its branch is its worktree (no folder here).
    remotePlan = (await import('../remote/execute.js')).planRemote({ cwd: o.cwd, env: o.env, home: userHome(o.env), stashbaseHome: stashbaseHome(o.env), profile, resume: o.resume, allowDirty: o.allowDirty === true, warn });
  }
  const wantWorktree = remote === null && (o.worktree === true || o.resume !== undefined || (profile.workspace.worktree && o.worktree !== false));
  const wt = wantWorktree ? await (await import('../worktree/run.js')).prepareWorktreeRun({ cwd: o.cwd, env: o.env, session, profile, resume: o.resume, dryRun: o.dryRun, docker: backend === 'docker', warn, note }) : null;
  const cwd = wt?.cwd ?? o.cwd;
  // The working directory is the sandbox's to write: / would be all of this machine (a remote run's tree is on the engine).
  if (remote === null && cwd === '/') throw new SandboxUnavailableError('the sandbox makes the working directory writable, and / is this whole machine: run it from a project folder, not /; nothing was run');
  const print = (plan: Plan) => {
    const p = wt ? wt.wrapPlan(plan) : plan;
    writeStdout(o.json ? JSON.stringify(planToJson(p), null, 2) + '\n' : formatPlan(p));
  };
  // What the agent may leave for your own git to run (lib/git/nested-repo-guard.ts).
  // Docker cannot refuse a setuid bit (its agent owns the files it writes): the end of the run clears any.
  const keep = rulePaths(profile.filesystem.keepExecutables, userHome(o.env), cwd);
  // A remote run's tree is on the engine: nothing of it lands here.
  // Where the agent can write outside the tree (a nested repository's git directory may lie there): the native backend's
  // allow_write folders and the agents' state folders the views write or bring back (found in review: a repository planted
  // in ~/.claude/projects), as the kernel names them, or everything with deny-list writes; Docker mounts the tree alone.
  // With the sessions in stashbase's store (agent_sessions = "sandbox"; not on macOS, which has no mounts) no state folder of yours is written.
  const ownSessions = profile.sandbox.agentSessions === 'shared' || process.platform === 'darwin';
  const views = () => (ownSessions ? [claudeView(userHome(o.env), o.env).spec, codexView(userHome(o.env), o.env).spec].flatMap((s) => s.adoptDirs.map((d) => join(s.at, d))) : []);
  const writableOutside = () => (backend === 'docker' ? [] : profile.filesystem.writes === 'deny-list' ? ['/'] : checkedWriteAreas(profile.filesystem.allowWrite, userHome(o.env), cwd, views()).map(realOrSelf));
  // What your git config and hooks name in the tree (lib/git/repo.ts): the plan keeps it read-only, the check moves aside what the run made of it.
  const gitTargets = () => gitConfigTargets(cwd, userHome(o.env), o.env, profile.filesystem.allowWrite);
  const guard = o.dryRun || remote !== null ? null : nestedRepoGuard(cwd, o.env, session, [...toolConfigPaths(cwd, userHome(o.env), profile.filesystem.allowWrite), ...gitTargets().madeAside], backend === 'docker', keep, [...rulePaths(profile.filesystem.denyWrite, userHome(o.env), cwd), ...gitTargets().links], writableOutside, wt?.top ?? cwd);
  if (guard) {
    noteCheckSettings(session, () => guard.settings());
    noteProtectedLinks(session, guard.links);
  }
  let failed = false;
  try {
    if (backend === 'docker') {
      const { runDocker } = await import('../docker/run.js');
      return await runDocker({
        session, profile, command, cwd, env: o.env, home: userHome(o.env), stashbaseHome: stashbaseHome(o.env),
        placeholders: makePlaceholders(profile.secrets, o.env), proxyToken, hookToken, flags: o, dryRun: o.dryRun, print,
        interactive: isInteractive(o.silent), warn, announce: !o.silent, worktree: wt?.docker, profileCwd: o.cwd,
        ...(remote !== null && remotePlan !== null ? { remote: { target: remote, plan: remotePlan } } : {}),
        ...(engine?.local ? { endpoint: engine.local } : {}),
      });
    }
    const mechanism = selectMechanism(probeNative(o.env, process.platform, false));
    // What the next build of the profile's Dockerfile reads stays as it is (lib/docker/image.ts).
    const { nativeBuildReadOnly } = await import('../docker/image.js');
    const buildRo = nativeBuildReadOnly(profile, { cwd: o.cwd, env: o.env, home: userHome(o.env), stashbaseHome: stashbaseHome(o.env) }, cwd);
    const ctx: NativeContext = {
      session,
      profile,
      command,
      cwd,
      env: o.env,
      home: userHome(o.env),
      stashbaseHome: stashbaseHome(o.env),
      mechanism,
      placeholders: makePlaceholders(profile.secrets, o.env),
      proxyToken,
      hookToken,
      writable: wt?.writable,
      runDenyWrite: [...(wt?.denyWrite ?? []), ...buildRo, ...ownExecutables()],
      worktreeBranch: wt?.branch,
      worktreePath: wt?.docker.path,
      bwrapTmpfsPerms: mechanism.kind === 'bwrap' && tmpfsPermsSupported(mechanism.path, stashbaseHome(o.env)),
      bwrapBindFd: mechanism.kind === 'bwrap' && bindFdSupported(mechanism.path, stashbaseHome(o.env)),
      announce: !o.silent,
      // Any of the three on a terminal: the agent gets a relayed one of its own (macOS), never yours.
      interactive: process.stdin.isTTY === true || process.stdout.isTTY === true || process.stderr.isTTY === true,
    };
    if (o.dryRun) {
      print(prepareNative(ctx).plan);
      return 0;
    }
    for (const w of weakerSettings(profile, cwd, ctx.home)) warn(w);
    const env = envDecision(profile, o.env);
    if (env.droppedCredentials.length > 0) {
      warn(`not passed to the agent, as they look like credentials: ${env.droppedCredentials.join(', ')} (bind one under [secrets] to use it through the proxy, or name it in [environment] include to pass it as it is)`);
    }
    for (const name of env.inheritedCredentials) {
      warn(`${name} looks like a credential and is inherited by the agent, as [environment] include names it (weaker: bind it under [secrets] to keep the real value out)`);
    }
    const { executeNative } = await import('../native/execute.js');
    return await executeNative({ ctx, profile, warn, announce: !o.silent });
  } catch (e) {
    failed = true;
    throw e;
  } finally {
    // What the proxy refused, where you look (not with --silent): an agent rarely says why it could not connect.
    if (!o.silent && !o.dryRun) {
      try {
        const { readAudit } = await import('./audit-read.js');
        const { refusalBlock, refusals } = await import('./refusals.js');
        for (const line of refusalBlock(refusals(readAudit(stashbaseHome(o.env), session)), profile.file)) warn(line);
      } catch {
        // no log: the run never started
      }
    }
    // Said even with --silent: stashbase changed your repository, or could not check it.
    // The run's record stays until the check is made: stopped before its end, the next run makes it (lib/run/reap.ts).
    // A record that cannot be marked (a disk the agent filled) stops neither the check nor keeps it from being kept when
    // the check cannot finish (found in review: the check was skipped and the record removed).
    let checked = guard === null;
    try {
      if (guard) endSession(stashbaseHome(o.env), session);
    } catch (e) {
      alert(`the run's record could not be marked ended (${(e as Error).message}): the check is made now all the same`);
    }
    try {
      // One block: a heading, then each thing found and what was done about it.
      const found = guard?.check() ?? [];
      checked = true;
      if (found.length > 0) alert(`the run left ${found.length} thing(s) in ${cwd} that your own tools would run or be fooled by; each is named below with what was done about it:`);
      for (const w of found) alert(w);
    } catch (e) {
      alert(`could not check ${cwd} for what the agent left for your tools to run (${(e as Error).message}): its record is kept, and the next run checks it again; meanwhile look for nested repositories (find . -name .git), ignored test files and changed node_modules before you run git or your tools there`);
    }
    if (checked) removeSession(stashbaseHome(o.env), session);
    // A worktree that cannot be finished (UNSAFE) is said; the run's own failure, if it failed, stays its answer.
    try {
      await wt?.finish();
    } catch (e) {
      if (!failed) throw e;
      alert((e as Error).message);
    }
  }
}
