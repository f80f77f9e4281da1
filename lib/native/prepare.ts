// Gathers the facts a native run needs (mechanism, protected paths, views,
// environment) and builds its Plan. Nothing here changes the disk: run.ts and
// execute.ts do that.
import { hasControllingTerminal } from './terminal-group.js';
import { accessSync, constants, lstatSync, statSync } from 'node:fs';
import { refuseAgentLinks, refuseLinkedSources } from '../paths/bind-sources.js';
import { interceptsTls } from '../proxy/intercepts.js';
import { dirname, join } from 'node:path';
import { findTool } from '../util/find-tool.js';
import { type BindMount, type BwrapInput, PROC_READ_ONLY } from '../../templates/bwrap.js';
import { BRIDGE_PORT, PRCTL_SYSCALL, SENDMSG_SYSCALL, SETNS_SYSCALL, SETSID_SYSCALL, type RelayInput } from '../../templates/bridge-relay.js';
import { agentGitConfigEnv } from '../git/agent-git-env.js';
import { buildNativePlan, caEnv, proxyEnv, type PlannedView, SANDBOX_MARKER_ENV } from '../../templates/native-plan.js';
import type { SystemdRunInput } from '../../templates/systemd-run.js';
import { SandboxUnavailableError } from '../errors.js';
import { childEnv } from '../exec.js';
import { removedVariables } from '../run/env-policy.js';
import { planProtection } from '../paths/protect.js';
import { auditFile } from '../run/audit.js';
import { hookVariables } from '../hooks/run-env.js';
import { thisCli } from '../hooks/cli-files.js';
import { sessionFile } from '../run/session.js';
import { findRepoRoot, gitConfigTargets, gitLinkProblem } from '../git/repo.js';
import { existingToolConfigs } from '../paths/tool-configs.js';
import { alwaysDenied } from './always-denied.js';
import { caDirOf, runDirOf, runStateDirOf } from '../run/run-dir.js';
import { seccompSupported } from '../../templates/seccomp.js';
import type { LandlockArch } from '../../templates/landlock.js';
import { inside, resolveRule, rulePaths } from '../paths/rules.js';
import { realPathOf } from '../util/real-path.js';
import { checkoutGit, plannedGitDir, planRunGitDir, repoFormat, type RunGitDirPlan, alternateStores, moduleGitDirs, untakenGitDirWarning, untakenGitState, untakenWarning } from '../git/run-git-dir.js';
import { claudeView, codexView, sessionStoreKey } from '../views/agent-views.js';
import { viewBinds } from '../views/binds.js';
import { allowWritePaths, keptRoots, privateTempDests, privateTemps, reexposed } from './write-areas.js';
import { prepareSeatbelt } from './prepare-seatbelt.js';
import { scratchCopies, scratchFolders } from './scratch.js';
import type { NativeContext, NativePrepared } from './context.js';

export type { NativeContext, NativePrepared } from './context.js';

/** An environment's set variables (undefined ones dropped). */
function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** stashbase's own package and node's installation (lib/hooks/cli-files.ts); none when they cannot be found. */
function ownFiles(): string[] {
  try {
    return thisCli().roots;
  } catch {
    return [];
  }
}

function tool(name: string, env: NodeJS.ProcessEnv, pkg: string): string {
  const found = findTool(name, env);
  if (!found) throw new SandboxUnavailableError(`${name} is required by the native sandbox but was not found on PATH (Debian/Ubuntu package: ${pkg}); nothing was run`);
  return found;
}

function usesUserNamespace(bwrapPath: string): boolean {
  if (process.getuid?.() === 0) return false;
  try {
    return (statSync(bwrapPath).mode & 0o4000) === 0; // a setuid bwrap makes none
  } catch {
    return true;
  }
}

/** The folder exists, or its parent lets this user make it. */
function canHold(dir: string): boolean {
  if (lstatSync(dir, { throwIfNoEntry: false })) return true;
  try {
    accessSync(dirname(dir), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

export function prepareNative(ctx: NativeContext): NativePrepared {
  const p = ctx.profile;
  // bwrap binds what the sandbox needs of the run directory, which then lives out of every sandbox's reach.
  const bwrapLike = ctx.mechanism.kind === 'bwrap';
  const runDir = runDirOf(ctx.stashbaseHome, ctx.session, bwrapLike);
  const stateDir = runStateDirOf(ctx.stashbaseHome, ctx.session);
  // Where the sandbox finds the CA certificates: bound read-only from the run directory under bwrap.
  const caSeen = bwrapLike ? `/tmp/stashbase-ca-${ctx.session}` : caDirOf(runDir);
  const isolate = p.sandbox.nativeNetwork === 'proxy-only';
  // Only bwrap gets its own network namespace with the proxy bridged in at a
  // fixed port; otherwise the proxy listens on the host's loopback.
  const bridged = isolate && ctx.mechanism.kind === 'bwrap';
  const proxyUrl = bridged ? `http://127.0.0.1:${BRIDGE_PORT}` : (ctx.proxyUrl ?? 'http://127.0.0.1:<port>');
  // TLS is intercepted for bound secrets and for MCP servers' tools (lib/mcp/).
  const interceptTls = interceptsTls(p);
  const allowList = p.filesystem.writes === 'allow-list';
  const baseEnv = {
    unset: removedVariables(p, ctx.env),
    set: { ...SANDBOX_MARKER_ENV, ...p.configEnv, ...ctx.placeholders, ...proxyEnv(proxyUrl, ctx.proxyToken), ...(interceptTls ? caEnv(caSeen) : {}), ...hookVariables(p, proxyUrl, ctx.hookToken) },
  };
  if (ctx.mechanism.kind === 'seatbelt') return prepareSeatbelt(ctx, { runDir, proxyUrl, interceptTls, isolate, agentEnv: baseEnv });

  const carveOuts = ctx.writable ?? [];
  // The repository's git directory: one of the run's own at its path (lib/git/run-git-dir.ts), imported after the run.
  const linked = gitLinkProblem(ctx.cwd);
  if (linked !== null) throw new SandboxUnavailableError(linked);
  const repo = findRepoRoot(ctx.cwd);
  const located = repo ? checkoutGit(repo.root) : null;
  const pointer = located?.pointer ?? null;
  const usable = located !== null && 'gitDir' in located ? located : null;
  // An agent's state folder that is missing is made for the run, where the home lets it (else no view: it stays read-only).
  // The sessions from stashbase's store unless the profile shares yours (lib/views/agent-views.ts SessionStore).
  const top = repo?.root ?? ctx.cwd;
  const sessions = p.sandbox.agentSessions === 'sandbox' ? { stashbaseHome: ctx.stashbaseHome, key: sessionStoreKey(p, realPathOf(top) ?? top) } : null;
  const agents = bwrapLike && allowList ? [claudeView(ctx.home, ctx.env, sessions), codexView(ctx.home, ctx.env, sessions)].filter((a) => canHold(a.spec.at)) : [];
  const denyRead = p.filesystem.denyRead;
  // Write denials inside the git directory are what the run's own one already does (and a stand-in there would land in your .git).
  const gitAts = usable ? [usable.gitDir] : [];
  const outsideGit = (e: string) => {
    const r = resolveRule(e, ctx.home, ctx.cwd);
    return r.kind === 'pattern' || !gitAts.some((g) => inside(r.path, g));
  };
  const gitTargets = gitConfigTargets(ctx.cwd, ctx.home, ctx.env, p.filesystem.allowWrite);
  const profileDenyWrite = [...p.filesystem.denyWrite, ...gitTargets.paths, ...existingToolConfigs(ctx.cwd, ctx.home, p.filesystem.allowWrite)].filter(outsideGit);
  const denyWrite = [...profileDenyWrite, ...(ctx.runDenyWrite ?? []).filter(outsideGit)];
  const denied = rulePaths([...denyRead, ...denyWrite], ctx.home, ctx.cwd);
  const deniedByProfile = rulePaths([...denyRead, ...profileDenyWrite], ctx.home, ctx.cwd);
  const gitWarnings: string[] = [];
  // Inside a path the profile denies, nothing is made: the denial wins (a read-only repository stays so).
  let gitDir: RunGitDirPlan | null = null;
  if (usable && !deniedByProfile.some((d) => inside(usable.gitDir, d))) {
    if (repoFormat(usable.gitDir).reftable) gitWarnings.push(untakenGitDirWarning(usable.gitDir));
    // systemd-run cannot show the run a folder of its own at your .git's path: nothing of yours is shared live either.
    else if (!bwrapLike) gitWarnings.push(`the systemd-run fallback gives the agent no git directory of its own: ${usable.gitDir} is read-only in this run (its git cannot commit; with bubblewrap it can)`);
    else gitDir = planRunGitDir({ gitDir: usable.gitDir, admin: usable.admin, stateDir, hideOthers: false, own: ctx.worktreeBranch, workTree: repo!.root });
  }
  // No git directory of the run's own for the checkout's (not taken, reftable, systemd-run): what git would use of it,
  // and where its links lead, read-only, not folders of the tree (lib/git/run-git-dir.ts untakenGitState).
  const untaken = repo !== null && gitDir === null ? untakenGitState(repo.root) : [];
  const untakenSaid = repo !== null && usable === null ? untakenWarning(repo.root) : null;
  if (untakenSaid !== null) gitWarnings.push(untakenSaid);
  // The stores your objects/info/alternates names, read as your own objects, wherever they lie (the tree among them).
  const alternates = usable !== null ? [usable.gitDir, ...moduleGitDirs(usable.gitDir)].flatMap(alternateStores) : [];
  const trees = [...new Set([ctx.cwd, top].flatMap((t) => [t, realPathOf(t) ?? t]))];
  const views = agents.map((a) => a.spec).filter((spec) => !denied.some((d) => inside(spec.at, d) || (spec.linkedAs !== undefined && inside(spec.linkedAs, d)))).map((spec) => ({
    spec: { ...spec, trees },
    dir: join(stateDir, 'views', spec.id),
  }));
  const allowWrite = allowList ? allowWritePaths(p.filesystem.allowWrite, ctx.home, ctx.cwd) : { paths: [], missing: [] };
  // A missing allow_write path inside the working directory needs nothing (it is writable there already, as a file or a folder).
  const ownRoots = allowWrite.paths.filter((w) => !(allowWrite.missing.includes(w) && inside(w, ctx.cwd)));
  const roots = allowList ? keptRoots([ctx.cwd, ...ownRoots], denied, carveOuts) : [];
  // An allow_write path outside the tree, bound by its name: never through a link a run's agent could have left.
  const outsideReal = refuseAgentLinks(roots.filter((r) => !inside(r, ctx.cwd) && !(ctx.worktreePath !== undefined && inside(r, ctx.worktreePath))));
  const privateDests = allowList && bwrapLike ? privateTempDests() : [];
  // Where the sandbox can write besides its private temp folders.
  const areas = [...roots, ...carveOuts, ...(gitDir ? [gitDir.gitDir] : []), ...views.map((v) => v.spec.at)];
  const always = alwaysDenied(ctx);
  const protection = planProtection({
    denyRead,
    fileStandInsAt: gitTargets.files,
    // Any folder core.hooksPath sends your git to for hooks, as if the profile
    // named it (a missing one gets a stand-in, so hooks cannot be planted there).
    denyWrite,
    alwaysDenyRead: always.read,
    stateDir: ctx.stashbaseHome,
    // bwrap's views keep git's executable state; systemd-run protects its files.
    alwaysDenyWrite: [...(bwrapLike ? [] : always.write), ...(pointer ? [pointer] : []), ...(usable && !gitDir ? [usable.gitDir] : []), ...untaken, ...alternates, runDir],
    home: ctx.home,
    cwd: ctx.cwd,
    writableAreas: allowList ? areas : undefined,
    privateDirs: privateDests,
    shown: [ctx.home, ...areas],
  });
  protection.parents.push(...allowWrite.missing.filter((m) => roots.includes(m)));
  protection.warnings.push(...gitWarnings);
  // Shim folders the agent's shells rehash: a private copy each, discarded (lib/native/scratch.ts).
  const shims = allowList && bwrapLike ? scratchFolders(ctx.home, ctx.env, { writable: areas, denied: [...denied, ...always.read, ctx.stashbaseHome] }) : { folders: [], warnings: [] };
  protection.warnings.push(...shims.warnings);
  const scratch = scratchCopies(runDir, shims.folders);
  // Without a private /tmp, the CA's mount point is made in yours for the run (and removed after it, empty).
  if (interceptTls && bwrapLike && privateDests.length === 0) protection.placeholders.push(caSeen);
  const agentEnv = {
    unset: baseEnv.unset,
    set: { ...baseEnv.set, ...(allowList && bwrapLike ? { TMPDIR: '/tmp' } : {}), ...Object.assign({}, ...agents.filter((a) => views.some((v) => v.spec.id === a.spec.id)).map((a) => a.env)) },
  };
  // The agent's git in the run's own git directory: its modes shared with no one (lib/git/agent-git-env.ts).
  if (gitDir !== null) Object.assign(agentEnv.set, agentGitConfigEnv({ ...Object.fromEntries(Object.entries(ctx.env).filter(([k]) => !agentEnv.unset.includes(k))), ...agentEnv.set }));
  const viewMounts: BindMount[] = views.flatMap((v) => viewBinds(v.spec, v.dir));
  // One outside the tree is bound from the real path it was judged at (held by descriptor below, where bwrap takes one).
  const binds: BindMount[] = [...roots.map((r) => ({ src: outsideReal.get(r) ?? r, dest: r, ro: false })), ...(gitDir?.mounts ?? []), ...viewMounts];
  // bwrap resolves a bind's source on this machine: none in the tree the agent writes through a link it may have made.
  refuseLinkedSources(binds.map((b) => b.src), ctx.cwd);
  if (ctx.worktreePath !== undefined) refuseLinkedSources([...binds.map((b) => b.src), ...carveOuts], ctx.worktreePath);
  binds.push(...reexposed(privateDests, [ctx.home, ...ownFiles()], binds));
  if (interceptTls && bwrapLike) binds.push({ src: caDirOf(runDir), dest: caSeen, ro: true });

  // Denied paths where the agent cannot write, for the Landlock step (templates/landlock.ts): files, whose bind
  // a rename on your side would detach; folders, which your side may replace; and missing ones, which your
  // side may create during the run (nothing is mounted there). Never granted, whatever inode comes to be there.
  // Only under an allow-list: with deny-list writes a partly granted folder would hide the agent's own new files.
  const outsideAreas = (p: string) => ![...areas, ...privateDests].some((w) => inside(p, w));
  const landlockFiles = !allowList ? [] : [...protection.denyRead.map((d) => d.path), ...protection.missingRead].filter(outsideAreas);
  // The agents' live state folders: no link or special file made there (templates/landlock.ts); where they are your own
  // (agent_sessions = "shared"), your own agents follow what is there. Not one inside a folder the run writes (a home in
  // /tmp, a CODEX_HOME in the tree): Landlock could refuse them there only by refusing links in every folder made in
  // that one during the run (npm's .bin). Said where they are yours; the store (the default) is read by sandboxed runs alone.
  const livePlain: string[] = [];
  for (const [live, yours] of views.flatMap((v) => v.spec.live.map((n) => [join(v.spec.at, n), v.spec.liveFrom === undefined] as const))) {
    // Where it really is (a ~/.claude linked into a folder of dotfiles): Landlock walks up from there.
    const real = realPathOf(live) ?? live;
    const open = [...roots, ...carveOuts, ...privateDests].find((w) => ![live, real].includes(w) && (inside(live, w) || inside(real, w)));
    if (open === undefined) livePlain.push(live);
    // The store's: not said (one per profile and tree: what is left there reaches this profile's runs here alone).
    else if (yours) protection.warnings.push(`${live} (agent state your own agents read) lies in ${open}, which the run may write: links and FIFOs the agent makes there are not refused, and your agents outside the sandbox may follow them`);
  }
  let bwrap: BwrapInput | null = null;
  let relay: RelayInput | null = null;
  if (ctx.mechanism.kind === 'bwrap') {
    if (!seccompSupported(process.arch)) {
      throw new SandboxUnavailableError(`the native sandbox has no seccomp filter for ${process.arch}; use the Docker backend`);
    }
    // One lookup for the gate, the Landlock step and the relay.
    const perl = tool('perl', ctx.env, 'perl-base');
    // A terminal of the run's own where stashbase has one (templates/pty-relay.ts): the agent's group takes that one's
    // foreground, never yours; without one there is no terminal to take.
    const pty = hasControllingTerminal() ? { perl, setsid: SETSID_SYSCALL[process.arch as keyof typeof SETSID_SYSCALL], prctl: PRCTL_SYSCALL[process.arch as keyof typeof PRCTL_SYSCALL] } : null;
    bwrap = {
      bwrap: ctx.mechanism.path,
      envTool: tool('env', ctx.env, 'coreutils'),
      perl,
      foreground: pty !== null,
      pty,
      command: ctx.command,
      cwd: ctx.cwd,
      writes: p.filesystem.writes,
      procReadOnly: PROC_READ_ONLY.filter((x) => lstatSync(x, { throwIfNoEntry: false }) !== undefined),
      privateTmp: privateTemps(runDir, privateDests),
      scratch,
      binds,
      denyRead: protection.denyRead,
      denyWrite: protection.denyWrite,
      writable: carveOuts,
      pinned: protection.pinned,
      deniedFile: join(runDir, 'denied'),
      emptyDir: join(runDir, 'empty'),
      tmpfsPerms: ctx.bwrapTmpfsPerms === true,
      // A worktree run's whole worktree (its working directory may be a folder of it).
      heldRoots: ctx.bwrapBindFd === true ? [ctx.worktreePath ?? ctx.cwd, ...outsideReal.values()] : [],
      isolateNetwork: isolate,
      seccompFile: join(runDir, 'seccomp.bpf'),
      landlock: allowList ? { perl, arch: process.arch as LandlockArch, files: landlockFiles, plain: livePlain, warn: ctx.announce === true } : null,
      env: definedOnly(childEnv({ file: '', args: [], env: agentEnv.set, unsetEnv: agentEnv.unset }, ctx.env)),
      userns: usesUserNamespace(ctx.mechanism.path),
    };
    relay = bridged
      ? {
          perl,
          setns: SETNS_SYSCALL[process.arch as keyof typeof SETNS_SYSCALL],
          setsid: SETSID_SYSCALL[process.arch as keyof typeof SETSID_SYSCALL],
          sendmsg: SENDMSG_SYSCALL[process.arch as keyof typeof SENDMSG_SYSCALL],
          prctl: PRCTL_SYSCALL[process.arch as keyof typeof PRCTL_SYSCALL],
          userns: bwrap.userns,
        }
      : null;
  }
  const plannedViews: PlannedView[] = views.map((v) => ({ ...v.spec, dir: v.dir }));
  const common = {
    session: ctx.session,
    profile: p.name,
    sessionFile: sessionFile(ctx.stashbaseHome, ctx.session),
    auditFile: auditFile(ctx.stashbaseHome, ctx.session),
    runDir,
    placeholders: protection.placeholders,
    fileStandIns: protection.fileStandIns,
    parents: protection.parents,
    warnings: protection.warnings,
    proxyUrl,
    interceptTls,
    writes: p.filesystem.writes,
    unixSockets: p.sandbox.allowUnixSockets,
    views: plannedViews,
    gitDir: gitDir === null ? null : plannedGitDir(gitDir),
  };
  const systemd: SystemdRunInput | null =
    bwrap === null
      ? {
          systemdRun: ctx.mechanism.path,
          command: ctx.command,
          cwd: ctx.cwd,
          writes: p.filesystem.writes,
          writableRoots: roots,
          denyRead: protection.denyRead.map((d) => d.path),
          denyWrite: protection.denyWrite.map((d) => d.path),
          writable: carveOuts,
          isolateNetwork: isolate,
          unixSockets: p.sandbox.allowUnixSockets,
          envFile: join(runDir, 'env'),
          interactive: process.stdin.isTTY === true,
        }
      : null;
  const plan = buildNativePlan({
    ...common,
    sandbox: bwrap ? { kind: 'bwrap', input: bwrap, relay } : { kind: 'systemd-run', input: systemd as SystemdRunInput },
  });
  // Review, round 27b: with the working directory your home, ~/.claude.json is in the tree (the view holds a copy).
  const claudeJson = views.find((v) => v.spec.id === 'claude')?.spec.hostPaths['.claude.json'];
  const claudeConfigExposed = claudeJson !== undefined && roots.some((w) => inside(claudeJson, w) || inside(realPathOf(claudeJson) ?? claudeJson, w));
  return { plan, protection, runDir, stateDir, bwrap, relay, systemd, seatbelt: null, views, gitDir, temps: bwrap?.privateTmp.map((t) => t.src) ?? [], scratch, scratchPatterns: [...denyRead, ...denyWrite].map((e) => resolveRule(e, ctx.home, ctx.cwd)).flatMap((r) => (r.kind === 'pattern' ? [r.regex] : [])), agentEnv, claudeConfigExposed };
}
