// Gathers the facts a native run needs (mechanism, protected paths, environment)
// and builds its Plan. Nothing here changes the disk: run.ts does that.
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { findTool } from '../find-tool.js';
import type { BwrapInput } from '../../templates/bwrap.js';
import { BRIDGE_PORT, SETNS_SYSCALL, type RelayInput } from '../../templates/bridge-relay.js';
import { buildNativePlan, caEnv, proxyEnv } from '../../templates/native-plan.js';
import type { Plan } from '../../templates/plan.js';
import type { SystemdRunInput } from '../../templates/systemd-run.js';
import type { Command } from '../../templates/command.js';
import { buildSeatbeltCommand, buildSeatbeltProfile } from '../../templates/seatbelt.js';
import { seatbeltInput } from './seatbelt-rules.js';
import { SandboxUnavailableError } from '../errors.js';
import { removedVariables } from '../env-policy.js';
import { planProtection, type Protection } from '../paths/protect.js';
import type { Profile } from '../profile/types.js';
import { auditFile } from '../audit.js';
import { sessionFile } from '../session.js';
import { executableGitState, hooksPathTargets } from '../repo.js';
import { runDirOf } from '../run-dir.js';
import type { Mechanism } from './select.js';
import { seccompSupported } from '../../templates/seccomp.js';

export interface NativeContext {
  session: string;
  profile: Profile;
  command: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  home: string; // the user's home
  stashbaseHome: string;
  mechanism: Mechanism;
  /** Secret name -> placeholder value the agent sees. */
  placeholders: Record<string, string>;
  /** For host-network runs the port is known only once the proxy listens. */
  proxyUrl?: string;
  /** Existing directories under a deny_write entry that stay writable (a worktree run's parts of .git). */
  writable?: string[];
  /** bwrap takes `--perms` before `--tmpfs` (0.5.0 and later); otherwise denied directories are bound. */
  bwrapTmpfsPerms?: boolean;
}

export interface NativePrepared {
  plan: Plan;
  protection: Protection;
  runDir: string;
  bwrap: BwrapInput | null;
  relay: RelayInput | null;
  systemd: SystemdRunInput | null;
  seatbelt: Command | null;
  agentEnv: { set: Record<string, string>; unset: string[] };
}


function tool(name: string, env: NodeJS.ProcessEnv, pkg: string): string {
  const found = findTool(name, env);
  if (!found) throw new SandboxUnavailableError(`${name} is required by the native sandbox but was not found on PATH (Debian/Ubuntu package: ${pkg}); nothing was run`);
  return found;
}

/** Paths no profile can open up: control sockets and stashbase's own state (the CA key). */
export function alwaysDenied(ctx: NativeContext): { read: string[]; write: string[] } {
  const uid = process.getuid?.() ?? 0;
  const read = [
    '/var/run/docker.sock', '/run/docker.sock', '/run/containerd/containerd.sock', '/run/podman/podman.sock',
    '/run/dbus/system_bus_socket', '/var/run/dbus/system_bus_socket',
    // The user's runtime directory is where control channels live: the D-Bus
    // session bus, the systemd user manager, GnuPG, keyrings, Wayland, PulseAudio,
    // rootless Docker and Podman, ssh-agent. X11 and ICE sockets drive the desktop.
    `/run/user/${uid}`, '/tmp/.X11-unix', '/tmp/.ICE-unix',
  ];
  if (ctx.env.XDG_RUNTIME_DIR) read.push(resolve(ctx.env.XDG_RUNTIME_DIR));
  if (ctx.env.SSH_AUTH_SOCK) read.push(resolve(ctx.env.SSH_AUTH_SOCK));
  // The repository's executable git state, wherever in it the run starts.
  const write = executableGitState(ctx.cwd);
  return { read, write };
}

function usesUserNamespace(bwrapPath: string): boolean {
  if (process.getuid?.() === 0) return false;
  try {
    return (statSync(bwrapPath).mode & 0o4000) === 0; // a setuid bwrap makes none
  } catch {
    return true;
  }
}

export function prepareNative(ctx: NativeContext): NativePrepared {
  const p = ctx.profile;
  const runDir = runDirOf(ctx.session);
  const isolate = p.sandbox.nativeNetwork === 'proxy-only';
  // Only bwrap gets its own network namespace with the proxy bridged in at a
  // fixed port; otherwise the proxy listens on the host's loopback.
  const bridged = isolate && ctx.mechanism.kind === 'bwrap';
  const proxyUrl = bridged ? `http://127.0.0.1:${BRIDGE_PORT}` : (ctx.proxyUrl ?? 'http://127.0.0.1:<port>');
  const interceptTls = Object.keys(p.secrets).length > 0;
  const agentEnv = {
    unset: removedVariables(p, ctx.env),
    set: { ...p.configEnv, ...ctx.placeholders, ...proxyEnv(proxyUrl), ...(interceptTls ? caEnv(runDir) : {}) },
  };
  if (ctx.mechanism.kind === 'seatbelt') {
    // Seatbelt matches its rules itself: no expansion, stand-ins or run directory.
    const always = alwaysDenied(ctx);
    const port = !isolate ? null : ctx.proxyUrl ? Number(new URL(ctx.proxyUrl).port) : ('<port>' as const);
    const input = seatbeltInput({
      denyRead: [...p.filesystem.denyRead, ctx.stashbaseHome, ...always.read],
      denyWrite: [...p.filesystem.denyWrite, ...hooksPathTargets(ctx.cwd, ctx.home, ctx.env), ...always.write],
      writable: ctx.writable,
      home: ctx.home,
      cwd: ctx.cwd,
      proxyPort: port,
    });
    const command = buildSeatbeltCommand(ctx.mechanism.path, buildSeatbeltProfile(input), ctx.command, ctx.cwd, agentEnv);
    const none: Protection = { denyRead: [], denyWrite: [], placeholders: [], fileStandIns: [], parents: [], pinned: [], warnings: [] };
    const plan = buildNativePlan({
      session: ctx.session, profile: p.name, sessionFile: sessionFile(ctx.stashbaseHome, ctx.session), auditFile: auditFile(ctx.stashbaseHome, ctx.session),
      runDir, placeholders: [], fileStandIns: [], parents: [], warnings: [], proxyUrl, interceptTls, sandbox: { kind: 'seatbelt', command },
    });
    return { plan, protection: none, runDir, bwrap: null, relay: null, systemd: null, seatbelt: command, agentEnv };
  }
  const always = alwaysDenied(ctx);
  const protection = planProtection({
    denyRead: p.filesystem.denyRead,
    // Any folder core.hooksPath sends your git to for hooks, as if the profile
    // named it (a missing one gets a stand-in, so hooks cannot be planted there).
    denyWrite: [...p.filesystem.denyWrite, ...hooksPathTargets(ctx.cwd, ctx.home, ctx.env)],
    alwaysDenyRead: always.read,
    stateDir: ctx.stashbaseHome,
    alwaysDenyWrite: [...always.write, runDir],
    home: ctx.home,
    cwd: ctx.cwd,
  });
  let bwrap: BwrapInput | null = null;
  let relay: RelayInput | null = null;
  if (ctx.mechanism.kind === 'bwrap') {
    if (!seccompSupported(process.arch)) {
      throw new SandboxUnavailableError(`the native sandbox has no terminal-injection filter for ${process.arch}; use the Docker backend`);
    }
    bwrap = {
      bwrap: ctx.mechanism.path,
      envTool: tool('env', ctx.env, 'coreutils'),
      command: ctx.command,
      cwd: ctx.cwd,
      denyRead: protection.denyRead,
      denyWrite: protection.denyWrite,
      writable: ctx.writable ?? [],
      pinned: protection.pinned,
      deniedFile: join(runDir, 'denied'),
      emptyDir: join(runDir, 'empty'),
      tmpfsPerms: ctx.bwrapTmpfsPerms === true,
      isolateNetwork: isolate,
      seccompFile: join(runDir, 'seccomp.bpf'),
      env: agentEnv,
      userns: usesUserNamespace(ctx.mechanism.path),
    };
    relay = bridged
      ? { perl: tool('perl', ctx.env, 'perl-base'), setns: SETNS_SYSCALL[process.arch as keyof typeof SETNS_SYSCALL], userns: bwrap.userns, socket: join(runDir, 'proxy.sock') }
      : null;
  }
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
  };
  const systemd: SystemdRunInput | null =
    bwrap === null
      ? {
          systemdRun: ctx.mechanism.path,
          command: ctx.command,
          cwd: ctx.cwd,
          denyRead: protection.denyRead.map((d) => d.path),
          denyWrite: protection.denyWrite.map((d) => d.path),
          writable: ctx.writable ?? [],
          isolateNetwork: isolate,
          envFile: join(runDir, 'env'),
          interactive: process.stdin.isTTY === true,
        }
      : null;
  const plan = buildNativePlan({
    ...common,
    sandbox: bwrap ? { kind: 'bwrap', input: bwrap, relay } : { kind: 'systemd-run', input: systemd as SystemdRunInput },
  });
  return { plan, protection, runDir, bwrap, relay, systemd, seatbelt: null, agentEnv };
}
