import { shellQuote } from './shell-quote.js';

/** A file the runner opens read-only as a numbered descriptor of the child. */
export interface FdFile {
  fd: number;
  path: string;
  /**
   * Held, not read: the runner opens the path itself (O_PATH, no read needed)
   * and gives it only if it is still that real path (lib/paths/bind-sources.ts
   * holdSources), so the child binds what was checked, whatever the path
   * names later.
   */
  held?: boolean;
}

/** The one value that flows through everything that shells out. */
export interface Command {
  file: string;
  args: string[];
  /** Variables set on top of the inherited environment. */
  env?: Record<string, string>;
  /** Inherited variables removed before the child starts. */
  unsetEnv?: string[];
  /** The child gets `env` and nothing else (no inherited variable). */
  onlyEnv?: boolean;
  cwd?: string;
  /** Extra descriptors opened from files (rendered as `N<file`). */
  fds?: FdFile[];
  /** Descriptors the runner wires to in-process pipes; a pasted copy gets /dev/null. */
  pipes?: Array<{ fd: number; direction: 'to-child' | 'from-child' | 'both' }>;
}

/**
 * Renders a command the way a user can paste it into `sh`: `cd` for the working
 * directory, `env -u` for removed variables, `K=V` for set ones, the argv, then
 * redirections for extra descriptors.
 */
export function formatCommand(cmd: Command): string {
  const parts: string[] = [];
  const unset = cmd.unsetEnv ?? [];
  const env = Object.entries(cmd.env ?? {});
  if (cmd.onlyEnv) parts.push('env', '-i');
  else if (unset.length > 0) {
    parts.push('env');
    for (const name of unset) parts.push('-u', shellQuote(name));
  }
  for (const [k, v] of env) parts.push(`${k}=${shellQuote(v)}`);
  parts.push(shellQuote(cmd.file), ...cmd.args.map(shellQuote));
  for (const f of cmd.fds ?? []) parts.push(`${f.fd}<${shellQuote(f.path)}`);
  for (const p of cmd.pipes ?? []) parts.push(p.direction === 'to-child' ? `${p.fd}</dev/null` : p.direction === 'from-child' ? `${p.fd}>/dev/null` : `${p.fd}<>/dev/null`);
  const line = parts.join(' ');
  return cmd.cwd === undefined ? line : `cd ${shellQuote(cmd.cwd)} && ${line}`;
}
