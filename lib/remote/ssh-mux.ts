// A remote run over ssh:// shares one SSH connection among its docker
// commands (templates/remote-ssh.ts says how): started before the first of
// them, ended after the last. Anything that keeps it from starting leaves the
// docker CLI to connect as it always does (slower, nothing weaker).
import { mkdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { sshCheckCommand, sshDestination, sshDialCommand, sshExitCommand, sshMasterCommand, sshShimScript } from '../../templates/remote-ssh.js';
import { capture } from '../exec.js';
import { findTool } from '../util/find-tool.js';
import type { Command } from '../../templates/command.js';

export interface SshMux {
  /** Ends the run's connection (its docker commands are done); once. */
  stop(): Promise<void>;
  /** What ends it from elsewhere (the watchdog, after a killed run's teardown). */
  exit: Command;
  /** One connection to the engine's API over it (lib/docker/api.ts), as the docker CLI makes one; null when the address names a socket there. */
  dial: Command | null;
}

const MASTER_MS = 30_000;

/**
 * For an ssh:// engine: the master connection, and the shim first on `env`'s
 * PATH (this process's: every docker command of the run inherits it); null when
 * the engine is reached otherwise, or the master did not start.
 */
export async function startSshMux(host: string, runDir: string, env: NodeJS.ProcessEnv = process.env): Promise<SshMux | null> {
  const d = sshDestination(host);
  const ssh = findTool('ssh', env);
  if (d === null || ssh === null) return null;
  // Only in the run's own folder (denied to every sandbox), never a shared temporary one (found in review: whoever reaches
  // the socket runs commands on the engine's host), and short enough for the name ssh binds first (the path and a
  // 17-character suffix within a socket address's 108 bytes); % is ssh's own token. Otherwise no connection of the run's.
  const dir = join(runDir, 'ssh');
  const socket = join(dir, 'mux');
  if (Buffer.byteLength(socket) > 90 || socket.includes('%')) return null;
  const shims = join(runDir, 'ssh-bin');
  const done = () => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(shims, { recursive: true, force: true });
    // The run's folder, if nothing else was made in it (the run never got that far).
    try {
      rmdirSync(runDir);
    } catch {
      // Not empty, or gone: the run removes it.
    }
  };
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    mkdirSync(shims, { recursive: true, mode: 0o700 });
    writeFileSync(join(shims, 'ssh'), sshShimScript(ssh, socket, d), { mode: 0o700 });
    await capture(sshMasterCommand(ssh, d, socket), undefined, MASTER_MS);
    await capture(sshCheckCommand(ssh, d, socket), undefined, 10_000);
  } catch {
    await capture(sshExitCommand(ssh, d, socket), undefined, 10_000).catch(() => undefined);
    done();
    return null;
  }
  const before = env.PATH;
  let stopped = false;
  env.PATH = before === undefined || before === '' ? shims : `${shims}${delimiter}${before}`;
  // An address with a path (even "/") names the engine's socket there (the CLI passes it on as --host): left to the CLI.
  const path = new URL(host).pathname;
  return {
    exit: sshExitCommand(ssh, d, socket),
    dial: path === '' ? sshDialCommand(ssh, d, socket) : null,
    async stop() {
      if (stopped) return;
      stopped = true;
      env.PATH = before;
      await capture(sshExitCommand(ssh, d, socket), undefined, 10_000).catch(() => undefined);
      done();
    },
  };
}
