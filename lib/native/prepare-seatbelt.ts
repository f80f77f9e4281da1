// The macOS side of prepareNative: Seatbelt matches its rules itself, so
// there is no expansion, no stand-ins and no views. Writes as an allow-list
// let through the working directory, the run's temp folder, allow_write and
// the known agents' state (their history, logs and logins by name, never
// their settings, commands or hooks); Claude Code's ~/.claude.json, written
// in place, has its executable entries reverted after the run.
import { lstatSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import { buildNativePlan } from '../../templates/native-plan.js';
import { buildSeatbeltCommand, buildSeatbeltProfile, type SeatbeltRule } from '../../templates/seatbelt.js';
import { auditFile } from '../run/audit.js';
import type { Protection } from '../paths/protect.js';
import { escapeRegex, GLOB_META } from '../paths/rules.js';
import { findRepoRoot, gitConfigTargets } from '../git/repo.js';
import { checkoutGit } from '../git/run-git-dir.js';
import { realOrSelf } from '../git/planted-repos.js';
import { existingToolConfigs } from '../paths/tool-configs.js';
import { sessionFile } from '../run/session.js';
import { runStateDirOf } from '../run/run-dir.js';
import { claudeView, codexView } from '../views/agent-views.js';
import type { ViewSpec } from '../views/spec.js';
import type { NativeContext, NativePrepared } from './context.js';
import { alwaysDenied } from './always-denied.js';
import { canonicalPath, realPathOnDisk, seatbeltInput } from './seatbelt-rules.js';
import { DARWIN_DENY_WRITE, darwinDenyRead, KEYCHAIN_FOLDER } from '../profile/credential-stores.js';

/**
 * A path stashbase adds to the rules itself, as a rule that names it whatever characters it holds (found in review: a
 * folder named "proj [v2]" made its .git's rule a glob that matched nothing, and the folder writable).
 */
function literalRule(p: string): string {
  return GLOB_META.test(p) ? `re:^${escapeRegex(p)}(/.*)?$` : p;
}

/** Where the helper writes the agent's exit status, and reads its environment from (the state folder: no sandbox reaches it). */
export const seatbeltStatusOf = (stateDir: string) => join(stateDir, 'exit-status');
export const seatbeltEnvOf = (stateDir: string) => join(stateDir, 'agent-env.json');

/** The run's temp folder on macOS (TMPDIR points there). */
export const seatbeltTmpOf = (runDir: string) => join(runDir, 'tmp');

/** The agents' state an allow-list lets the agent write: live folders, carried-back files and their atomic-write temporaries. */
function agentRules(spec: ViewSpec): SeatbeltRule[] {
  const at = spec.at;
  return [
    ...spec.adoptDirs.map((n): SeatbeltRule => ({ kind: 'path', path: join(at, n), dir: true })),
    ...Object.keys(spec.merge).map((n): SeatbeltRule => ({ kind: 'path', path: spec.hostPaths[n] ?? join(at, n), dir: false })),
    ...Object.keys(spec.merge).map((n): SeatbeltRule => ({ kind: 'regex', source: `^${escapeRegex(spec.hostPaths[n] ?? join(at, n))}\\.(tmp|lock|backup)[^/]*$` })),
  ];
}

/** Sockets of container engines and agents on a Mac that no profile opens (beside the Linux ones in always-denied.ts). */
export const DARWIN_DENIED_SOCKETS = ['~/.docker/run', '~/Library/Containers/com.docker.docker', '~/.colima', '~/.orbstack/run', '~/.rd', '~/.lima', 're:^/private/tmp/com\\.apple\\.launchd\\.[^/]+/Listeners$'];

export function prepareSeatbelt(
  ctx: NativeContext,
  o: { runDir: string; proxyUrl: string; interceptTls: boolean; isolate: boolean; agentEnv: { set: Record<string, string>; unset: string[] } },
): NativePrepared {
  const p = ctx.profile;
  const allowList = p.filesystem.writes === 'allow-list';
  const always = alwaysDenied(ctx);
  const real = ctx.realPath ?? realPathOnDisk;
  const port = !o.isolate ? null : ctx.proxyUrl ? Number(new URL(ctx.proxyUrl).port) : ('<port>' as const);
  // Claude Code's config stays at ~/.claude.json here (no view to hold a copy): CLAUDE_CONFIG_DIR is left alone.
  const agents = allowList ? [claudeView(ctx.home, ctx.env).spec, codexView(ctx.home, ctx.env).spec] : [];
  // Seatbelt matches canonical paths: $TMPDIR's /var/folders is /private/var/folders to it.
  const runDir = canonicalPath(o.runDir, real);
  const tmp = seatbeltTmpOf(runDir);
  // Seatbelt cannot show the run a git directory of its own at your .git's path (lib/git/run-git-dir.ts):
  // nothing of yours is shared live either, so your .git is read-only in the run.
  const repo = findRepoRoot(ctx.cwd);
  const located = repo ? checkoutGit(repo.root) : null;
  const gitDir = located !== null && 'gitDir' in located ? located.gitDir : null;
  const warnings = gitDir === null ? [] : [`Seatbelt gives the agent no git directory of its own: ${gitDir} is read-only in this run (its git cannot commit; the Docker backend gives it one)`];
  // No mounts here: the sessions cannot come from a store of stashbase's (agent_sessions = "sandbox", lib/views/agent-views.ts).
  if (allowList && p.sandbox.agentSessions === 'sandbox') warnings.push('Seatbelt cannot give the run sessions of its own: the agent writes the ones your own claude and codex resume (~/.claude/projects and file-history, ~/.codex/sessions), as with agent_sessions = "shared"; rewinding or resuming a session it wrote can have your agent write or delete files (use the Docker backend for runs whose sessions you will resume outside the sandbox)');
  // A run in a folder of the repository: no .git of the agent's making there, where your git in that folder would take it
  // for the repository while the run lasts (found in review: bubblewrap's stand-ins keep it out, Seatbelt let it in).
  // Nor in a folder between it and the top, which an allow_write folder or deny-list writes may reach (found in review).
  const ownDotGit: string[] = [];
  if (repo !== null) {
    const top = realOrSelf(repo.root);
    for (let d = realOrSelf(ctx.cwd); d !== top && d.startsWith(top + '/'); d = dirname(d)) {
      if (lstatSync(join(d, '.git'), { throwIfNoEntry: false }) === undefined) ownDotGit.push(join(d, '.git'));
    }
  }
  const services = p.sandbox.macosAllow;
  // The Mac's own credential stores, unless lifted by name; the Keychain's folder goes with the keychain opt-in.
  const darwinRead = darwinDenyRead().filter((s) => !p.filesystem.allowRead.includes(s) && !(services.includes('keychain') && s === KEYCHAIN_FOLDER));
  const built = seatbeltInput({
    writes: p.filesystem.writes,
    allowWrite: allowList ? [literalRule(ctx.cwd), literalRule(tmp), ...p.filesystem.allowWrite] : [],
    allowRules: agents.flatMap(agentRules),
    // Your own agents read all of it outside any run: no link there (a history.jsonl linked to ~/.bashrc).
    plainRules: agents.flatMap(agentRules),
    // Every run's folder in the temp folder, in both write modes; this run's readable, its temp writable.
    runFolders: { regex: `^${escapeRegex(canonicalPath(tmpdir(), real))}/stashbase-ags_`, own: runDir, tmp },
    unixSockets: p.sandbox.allowUnixSockets,
    deniedSockets: [...always.read, ...DARWIN_DENIED_SOCKETS],
    denyRead: [...new Set([...p.filesystem.denyRead, ...darwinRead])].filter((s) => !(services.includes('keychain') && s === KEYCHAIN_FOLDER)).concat(ctx.stashbaseHome, ...always.read),
    denyWrite: [...p.filesystem.denyWrite, ...DARWIN_DENY_WRITE, ...(ctx.runDenyWrite ?? []), ...[...(gitDir !== null ? [gitDir] : []), ...ownDotGit].map(literalRule), ...gitConfigTargets(ctx.cwd, ctx.home, ctx.env, p.filesystem.allowWrite).paths, ...existingToolConfigs(ctx.cwd, ctx.home, p.filesystem.allowWrite), ...always.write],
    writable: ctx.writable,
    home: ctx.home,
    cwd: ctx.cwd,
    proxyPort: port,
    services,
    real,
  });
  warnings.push(...built.warnings);
  // The run's temp folder for everything that writes temp files: zsh's heredocs, Claude Code's Bash tool.
  // xcrun keeps a cache of tool paths in the shared temp folder that your own xcrun trusts later: not kept at all.
  const temps: Record<string, string> = allowList ? { TMPDIR: tmp, TMPPREFIX: join(tmp, 'zsh'), CLAUDE_CODE_TMPDIR: tmp, xcrun_nocache: '1' } : { xcrun_nocache: '1' };
  const agentEnv = { unset: o.agentEnv.unset, set: { ...o.agentEnv.set, ...temps } };
  // Started by stashbase's helper (templates/seatbelt.ts), with the agent's environment from the state folder; on a terminal, on one script(1) relays.
  const stateDir = runStateDirOf(ctx.stashbaseHome, ctx.session);
  const launch = { node: process.execPath, statusFile: seatbeltStatusOf(stateDir), envFile: seatbeltEnvOf(stateDir), pty: ctx.interactive === true };
  const command = buildSeatbeltCommand(ctx.mechanism.path, buildSeatbeltProfile(built.input), ctx.command, ctx.cwd, launch);
  const none: Protection = { denyRead: [], denyWrite: [], placeholders: [], fileStandIns: [], parents: [], pinned: [], missingRead: [], warnings };
  const plan = buildNativePlan({
    session: ctx.session, profile: p.name, sessionFile: sessionFile(ctx.stashbaseHome, ctx.session), auditFile: auditFile(ctx.stashbaseHome, ctx.session),
    runDir, placeholders: [], fileStandIns: [], parents: [], warnings, proxyUrl: o.proxyUrl, interceptTls: o.interceptTls,
    writes: p.filesystem.writes, unixSockets: p.sandbox.allowUnixSockets, views: [], gitDir: null, sandbox: { kind: 'seatbelt', command },
  });
  return { plan, protection: none, runDir, stateDir, bwrap: null, relay: null, systemd: null, seatbelt: command, views: [], gitDir: null, temps: allowList ? [tmp] : [], scratch: [], scratchPatterns: [], agentEnv };
}
