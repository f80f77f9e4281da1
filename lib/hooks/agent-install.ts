// Installing the dependency check into an agent's own hook configuration:
// Claude Code's settings.json (~/.claude, or $CLAUDE_CONFIG_DIR) and Codex's
// hooks.json (~/.codex, or $CODEX_HOME), on the host or in the Docker
// backend's home volume. The file is merged, never replaced (hook-config.ts).
import { chmodSync, mkdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { formatCommand } from '../../templates/command.js';
import { homeFileReadCommand, homeFileWriteCommand, MISSING_EXIT, type HomeFileInput } from '../../templates/docker-home-file.js';
import { AGENT_HOME } from '../../templates/docker-run.js';
import { STAND_IN_PATH } from '../../templates/stand-in.js';
import { ConfigError, SandboxUnavailableError } from '../errors.js';
import { collect } from '../exec.js';
import { findTool } from '../util/find-tool.js';
import { userHome } from '../home.js';
import type { HookAgent } from './hook-answer.js';
import { hookCommandLine, withHook, withoutHook } from './hook-config.js';

export interface InstallResult {
  /** Where the configuration is (a host path, or volume:path). */
  where: string;
  changed: boolean;
  command: string | null;
}

/** The agent's hook file on the host. */
export function hostConfigFile(agent: HookAgent, env: NodeJS.ProcessEnv): string {
  const dir = agent === 'claude' ? env.CLAUDE_CONFIG_DIR : env.CODEX_HOME;
  const base = dir && isAbsolute(dir) ? dir : join(userHome(env), agent === 'claude' ? '.claude' : '.codex');
  return join(base, agent === 'claude' ? 'settings.json' : 'hooks.json');
}

/** The agent's hook file in the home volume (the agents there use their default places). */
export const volumeConfigFile = (agent: HookAgent) => `${AGENT_HOME}/${agent === 'claude' ? '.claude/settings.json' : '.codex/hooks.json'}`;

/**
 * How the hook starts stashbase on the host: plain `stashbase` when that is
 * on PATH and is this very CLI, else this node and this CLI script by their
 * absolute paths (which a native sandbox can read).
 */
export function hostStashbase(env: NodeJS.ProcessEnv): string[] {
  const script = realpathSync(process.argv[1] as string);
  const onPath = findTool('stashbase', env);
  try {
    if (onPath !== null && realpathSync(onPath) === script) return ['stashbase'];
  } catch {
    // a dangling link on PATH
  }
  return [process.execPath, script];
}

function readIfThere(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ConfigError(`cannot read ${file}: ${(e as Error).message}`);
  }
}

/** Writes beside the file, then renames it into place, keeping its mode. */
function replaceFile(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  let mode = 0o600;
  try {
    mode = statSync(file).mode & 0o777;
  } catch {
    // new file
  }
  const tmp = `${file}.stashbase-new`;
  writeFileSync(tmp, text, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, file);
}

export function installOnHost(agent: HookAgent, env: NodeJS.ProcessEnv, uninstall: boolean): InstallResult {
  const file = hostConfigFile(agent, env);
  const before = readIfThere(file);
  const command = uninstall ? null : hookCommandLine(hostStashbase(env), agent);
  const r = command === null ? withoutHook(before, file) : withHook(before, command, file);
  if (r.changed) replaceFile(file, r.text);
  return { where: file, changed: r.changed, command };
}

export interface DockerTarget {
  docker: string;
  image: string;
  volume: string;
  user: string | null;
}

export async function installInVolume(agent: HookAgent, t: DockerTarget, uninstall: boolean): Promise<InstallResult> {
  const path = volumeConfigFile(agent);
  const io: HomeFileInput = { docker: t.docker, image: t.image, volume: t.volume, home: AGENT_HOME, user: t.user, path };
  const label = `${t.volume}:${path}`;
  const read = homeFileReadCommand(io);
  // The agents' home volume is the agents' to write: its settings file is read up to 1 MiB (a link to /dev/zero, say, ends there).
  const got = await collect(read, { timeoutMs: 60_000, maxBytes: 1 << 20 });
  if (got.code !== 0 && got.code !== MISSING_EXIT) throw new SandboxUnavailableError(`could not read ${label}: ${formatCommand(read)} failed: ${got.stderr.trim()}`);
  const before = got.code === MISSING_EXIT ? null : got.stdout;
  // The sandbox's stashbase is the stand-in the run mounts.
  const command = uninstall ? null : hookCommandLine([STAND_IN_PATH], agent);
  const r = command === null ? withoutHook(before, label) : withHook(before, command, label);
  if (r.changed) {
    const write = homeFileWriteCommand(io);
    const put = await collect(write, { input: r.text, timeoutMs: 60_000 });
    if (put.code !== 0) throw new SandboxUnavailableError(`could not write ${label}: ${formatCommand(write)} failed: ${put.stderr.trim()}`);
  }
  return { where: label, changed: r.changed, command };
}
