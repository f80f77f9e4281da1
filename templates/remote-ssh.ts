// One SSH connection for a remote run's every docker command (lib/remote/ssh-mux.ts):
// the docker CLI reaches an ssh:// engine by running `ssh … docker system
// dial-stdio` once per command, a whole SSH handshake each (~250 ms here,
// more across the Internet). The run starts a master connection of its own
// with its control socket in the run's private folder, and puts first on the
// docker CLI's PATH an `ssh` that runs yours with that socket: each command
// then opens a channel on the run's connection. Your ssh configuration
// (hosts, keys, ProxyJump) applies to the master as to any ssh of yours.
import type { Command } from './command.js';
import { shellQuote } from './shell-quote.js';

/** An ssh:// engine address, as the docker CLI reads it: who, where, which port. */
export interface SshDestination {
  user: string | null;
  host: string;
  port: string | null;
}

/** The destination of an ssh:// address, or null when it is not one this can name safely (the CLI then connects as it does). */
export function sshDestination(address: string): SshDestination | null {
  let u: URL;
  try {
    u = new URL(address);
  } catch {
    return null;
  }
  if (u.protocol !== 'ssh:' || u.hostname === '' || u.password !== '' || u.search !== '' || u.hash !== '') return null;
  const host = u.hostname.replace(/^\[|\]$/g, '');
  let user: string;
  try {
    user = decodeURIComponent(u.username);
  } catch {
    return null;
  }
  // Nothing ssh would read as an option, nor a name with room for one.
  if (!/^[A-Za-z0-9._:%-]+$/.test(host) || host.startsWith('-') || (user !== '' && !/^[A-Za-z0-9._][A-Za-z0-9._-]*$/.test(user))) return null;
  return { user: user === '' ? null : user, host, port: u.port === '' ? null : u.port };
}

const target = (d: SshDestination) => [...(d.user !== null ? ['-l', d.user] : []), ...(d.port !== null ? ['-p', d.port] : []), '--', d.host];

/**
 * The master: authenticates, runs `true` there (its first session, over at
 * once), then stays in the background holding the connection while channels
 * use it, and ends 30 s after the last one closes: a killed run leaves it no
 * longer than that (found in testing: with -f -N instead, no first session
 * ever ends, and a master whose socket was gone lived on).
 */
export function sshMasterCommand(ssh: string, d: SshDestination, socket: string): Command {
  return { file: ssh, args: ['-T', '-o', 'ControlMaster=yes', '-o', `ControlPath=${socket}`, '-o', 'ControlPersist=30', '-o', 'BatchMode=yes', ...target(d), 'true'] };
}

/** Asks the master to end (the run's last docker command is done). */
export function sshExitCommand(ssh: string, d: SshDestination, socket: string): Command {
  return { file: ssh, args: ['-o', `ControlPath=${socket}`, '-O', 'exit', ...target(d)] };
}

/** Whether the master holds its connection. */
export function sshCheckCommand(ssh: string, d: SshDestination, socket: string): Command {
  return { file: ssh, args: ['-o', `ControlPath=${socket}`, '-O', 'check', ...target(d)] };
}

/**
 * The `ssh` the docker CLI finds first on its PATH: yours, told to use the
 * run's connection (options on the command line come before any the CLI or
 * your configuration give) only when it is asked for the engine itself, as
 * the docker CLI asks (`[-l user] [-p port] -- host …`, the user and port
 * the master's); any other ssh runs as yours would (found in review: the
 * master runs a command on its own host whatever host a client names). With
 * the master gone it connects as it would.
 */
export function sshShimScript(ssh: string, socket: string, d: SshDestination): string {
  const q = shellQuote;
  return [
    '#!/bin/sh',
    'user= port= host= prev=',
    'for a in "$@"; do',
    '  case "$prev" in -l) user=$a ;; -p) port=$a ;; --) host=$a; break ;; esac',
    '  prev=$a',
    'done',
    `if [ "$host" = ${q(d.host)} ] && [ "$user" = ${q(d.user ?? '')} ] && [ "$port" = ${q(d.port ?? '')} ]; then`,
    `  exec ${q(ssh)} -o ${q(`ControlPath=${socket}`)} -o ControlMaster=no "$@"`,
    'fi',
    `exec ${q(ssh)} "$@"`,
    '',
  ].join('\n');
}

/**
 * One connection to the engine's API over the run's SSH connection: what the
 * docker CLI runs for each of its own (`ssh -o ConnectTimeout=30 -T [-l user]
 * [-p port] -- host docker system dial-stdio`), with the run's socket.
 */
export function sshDialCommand(ssh: string, d: SshDestination, socket: string): Command {
  return { file: ssh, args: ['-o', `ControlPath=${socket}`, '-o', 'ControlMaster=no', '-o', 'ConnectTimeout=30', '-T', ...target(d), 'docker', 'system', 'dial-stdio'] };
}
