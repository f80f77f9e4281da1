// The macOS Seatbelt (SBPL) profile for the native backend, as text passed to
// `sandbox-exec -p`. Deny by default, as Codex's and sandbox-runtime's
// profiles are: processes, sysctls, Mach services and devices are allowed by
// name (templates/seatbelt-base.ts), reads everywhere but the denials, writes
// only where the allow-list says, the network only to the proxy's port. In
// SBPL the last matching rule wins. Seatbelt matches the path of the file
// itself (after links, "/private/var" for "/var"): lib/native/seatbelt-rules.ts
// hands this canonical paths, and every denial here is matched in both
// Unicode normal forms and with letters of either case, as APFS finds them.
import type { Command } from './command.js';
import { MACOS_SERVICE_MACH, type MacosService, SEATBELT_MACH_SERVICES, SEATBELT_SYSCTL_WRITES, SEATBELT_SYSCTLS } from './seatbelt-base.js';

export type SeatbeltRule =
  | { kind: 'path'; path: string; dir: boolean }
  | { kind: 'regex'; source: string };

export interface SeatbeltInput {
  /** allow-list: every write refused but `allowWrite`; deny-list: writes allowed but `denyWrite`. */
  writes: 'allow-list' | 'deny-list';
  /** allow-list: where writes are allowed (working directory, the run's temp folder, the agents' state, allow_write). */
  allowWrite: SeatbeltRule[];
  /** Other runs' folders (a regex over the temp folder), refused to read, and this run's own, allowed again. */
  otherRuns: { regex: string; own: string } | null;
  /** Connections to and listeners on Unix sockets by path (the profile's weaker choice); `deniedSockets` stay refused. */
  unixSockets: boolean;
  /** Sockets no profile opens (Docker's, ssh-agent's): refused to connect to even with unixSockets. */
  deniedSockets: SeatbeltRule[];
  denyRead: SeatbeltRule[];
  denyWrite: SeatbeltRule[];
  /** Directories writable again under a write-denied one; denials inside them are repeated after. */
  writable: string[];
  /** Ancestors of protected paths: they may not be renamed or removed (move-blocking). */
  pinned: string[];
  /** null: the host network (the weaker mode); else the only loopback port allowed out. */
  proxyPort: number | '<port>' | null;
  /** `[sandbox] macos_allow`: the opt-ins, each weaker (templates/seatbelt-base.ts says what each costs). */
  services: MacosService[];
}

/** An SBPL string literal: JSON's escaping for quote and backslash; no control characters. */
export function sbplString(s: string): string {
  if (/[\u0000-\u001f\u007f]/.test(s)) throw new Error(`a path with control characters cannot be written into a Seatbelt profile: ${JSON.stringify(s)}`);
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * An SBPL regex literal from a JavaScript regex source: "\/" (which
 * RegExp#source writes for "/") becomes "/", non-capturing groups plain groups.
 */
export function sbplRegex(source: string): string {
  if (/[\u0000-\u001f\u007f]/.test(source)) throw new Error(`a pattern with control characters cannot be written into a Seatbelt profile: ${JSON.stringify(source)}`);
  let out = '';
  for (let i = 0; i < source.length; i++) {
    const ch = source[i] as string;
    if (ch === '\\' && i + 1 < source.length) {
      const next = source[++i] as string;
      out += next === '/' ? '/' : ch + next;
    } else if (ch === '(' && source.startsWith('?:', i + 1)) {
      out += '(';
      i += 2;
    } else out += ch === '"' ? '\\"' : ch;
  }
  return `#"${out}"`;
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The other case of a letter, or null (Seatbelt rejects "(?i)": case is folded letter by letter). */
function otherCase(ch: string): string | null {
  const lo = ch.toLowerCase();
  const up = ch.toUpperCase();
  const other = ch === lo ? up : lo;
  return other !== ch && [...other].length === 1 ? other : null;
}

/**
 * A regex source that matches its letters in either case: "a" becomes
 * "[aA]" (a non-ASCII one "(é|É)": Seatbelt's classes hold bytes), and a
 * class gains the other case of its letters and letter ranges.
 */
export function foldCase(source: string): string {
  let out = '';
  for (let i = 0; i < source.length; i++) {
    const ch = source[i] as string;
    if (ch === '\\') {
      out += source.slice(i, i + 2);
      i++;
    } else if (ch === '[') {
      let j = i + 1;
      if (source[j] === '^') j++;
      if (source[j] === ']') j++;
      while (j < source.length && source[j] !== ']') j += source[j] === '\\' ? 2 : 1;
      const body = source.slice(i + 1, j);
      let extra = '';
      for (let k = body.startsWith('^') ? 1 : 0; k < body.length; k++) {
        const c = body[k] as string;
        if (c === '\\') {
          k++;
          continue;
        }
        if (body[k + 1] === '-' && k + 2 < body.length && /[A-Za-z]/.test(c) && /[A-Za-z]/.test(body[k + 2] as string)) {
          extra += `${otherCase(c) ?? c}-${otherCase(body[k + 2] as string) ?? body[k + 2]}`;
          k += 2;
        } else if (/[A-Za-z]/.test(c)) extra += otherCase(c) ?? '';
      }
      out += `[${body}${extra}]`;
      i = j;
    } else {
      const other = otherCase(ch);
      if (other === null) out += ch;
      else if (ch.charCodeAt(0) < 128) out += `[${ch}${other}]`;
      else out += `(${ch}|${other})`;
    }
  }
  return out;
}

/** The string in both Unicode normal forms (APFS keeps names as written and finds them in either). */
const forms = (s: string): string[] => [...new Set([s, s.normalize('NFC'), s.normalize('NFD')])];

/** A denial: a regex over the path (and, for a folder, below it), in either case and both normal forms. */
function denyFilters(r: SeatbeltRule): string[] {
  if (r.kind === 'regex') return forms(r.source).map((s) => `(regex ${sbplRegex(foldCase(s))})`);
  return forms(r.path).map((p) => `(regex ${sbplRegex(foldCase(`^${escapeRegex(p)}${r.dir ? '(/.*)?' : ''}$`))})`);
}

/** An allowance: matched as written (a case or form variant the agent types is refused, never the other way round). */
function allowFilter(r: SeatbeltRule): string {
  if (r.kind === 'regex') return `(regex ${sbplRegex(r.source)})`;
  return r.dir ? `(subpath ${sbplString(r.path)})` : `(literal ${sbplString(r.path)})`;
}

function block(head: string, rules: string[]): string[] {
  if (rules.length === 0) return [];
  return [`(${head}`, ...rules.map((r) => `  ${r}`), ')'];
}

const named = (kind: 'sysctl-name' | 'global-name', a: { name: string; prefix?: true }) => `(${kind}${a.prefix ? '-prefix' : ''} ${sbplString(a.name)})`;

/** Devices an ordinary process reads and writes: null, zero, random, its descriptors (Codex, sandbox-runtime). */
const DEVICES = ['(literal "/dev/null")', '(literal "/dev/zero")', '(literal "/dev/random")', '(literal "/dev/urandom")', '(literal "/dev/dtracehelper")', '(regex #"^/dev/fd/")', '(literal "/dev/stdin")', '(literal "/dev/stdout")', '(literal "/dev/stderr")'];
/** Terminals (Codex): new pseudo-terminals, the run's own terminal. An interactive agent runs on a terminal stashbase owns and relays (TIOCSTI queues input for the agent alone). */
const TERMINALS = ['(literal "/dev/ptmx")', '(literal "/dev/tty")', '(regex #"^/dev/ttys[0-9]+$")'];

export function buildSeatbeltProfile(input: SeatbeltInput): string {
  const allowList = input.writes === 'allow-list';
  const readDenied = input.denyRead.flatMap(denyFilters);
  const allDenied = [...input.denyWrite, ...input.denyRead].flatMap(denyFilters);
  const within = (r: SeatbeltRule) => r.kind === 'regex' || input.writable.some((w) => r.path.startsWith(w + '/'));
  const has = (s: MacosService) => input.services.includes(s);
  const mach = [...SEATBELT_MACH_SERVICES.map((m) => named('global-name', m)), ...(['keychain', 'pasteboard', 'trustd'] as const).filter(has).flatMap((s) => MACOS_SERVICE_MACH[s].map((name) => named('global-name', { name })))];
  const lines = [
    '(version 1)',
    '; Refused unless allowed below (Codex, sandbox-runtime): among the rest lsopen, Apple Events, launchd jobs, preference writes, the pasteboard and the Keychain.',
    '(deny default)',
    '; Processes: run and fork; signals, process info and task ports only within this sandbox (Codex; task ports: sandbox-runtime).',
    '(allow process-exec)',
    '(allow process-fork)',
    '(allow signal (target same-sandbox))',
    '(allow process-info* (target same-sandbox))',
    '(allow mach-priv-task-port (target same-sandbox))',
    '; Preferences are read, never written: cfprefsd would write them for the agent (Codex, sandbox-runtime).',
    '(allow user-preference-read)',
    "; The host's CPU facts, for libuv's os.cpus() (Codex).",
    '(allow mach-host*)',
    '; sysctls by name (Codex, sandbox-runtime): never kern.procargs2 (every command line) or kern.proc.all.',
    ...block('allow sysctl-read', SEATBELT_SYSCTLS.map((a) => named('sysctl-name', a))),
    ...block('allow sysctl-write', SEATBELT_SYSCTL_WRITES.map((a) => named('sysctl-name', a))),
    '; Mach services by name (Codex, sandbox-runtime; the opt-ins of [sandbox] macos_allow).',
    ...block('allow mach-lookup', mach),
    "; POSIX semaphores (Python's multiprocessing: Codex) and shared memory (sandbox-runtime).",
    '(allow ipc-posix-sem)',
    '(allow ipc-posix-shm)',
    "; IOKit: the power manager's root domain (Codex).",
    '(allow iokit-open (iokit-registry-entry-class "RootDomainUserClient"))',
    '; Sockets may be made (interface queries: sandbox-runtime; socketpair for child processes\' pipes); whom they reach is decided below.',
    '(allow system-socket (require-all (socket-domain AF_SYSTEM) (socket-protocol 2)))',
    '(allow system-socket (socket-domain AF_INET) (socket-domain AF_INET6) (socket-domain AF_UNIX))',
    '; Terminals and devices (Codex, sandbox-runtime).',
    '(allow pseudo-tty)',
    ...block('allow file-read* file-write* file-ioctl', TERMINALS),
    ...block('allow file-read* file-write-data file-ioctl', DEVICES),
    '; Reads everywhere (Codex, sandbox-runtime), then the denials: other runs\' folders, the profile\'s and the built-in ones.',
    '(allow file-read*)',
    ...(input.otherRuns ? [`(deny file-read* (regex ${sbplRegex(foldCase(input.otherRuns.regex))}))`, `(allow file-read* (subpath ${sbplString(input.otherRuns.own)}))`] : []),
    ...block('deny file-read*', readDenied),
    '; Writes and hard links.',
    ...(allowList
      ? [...block('allow file-write* file-link', [...input.allowWrite.map(allowFilter), ...DEVICES]), ...block('allow file-write* file-link', input.writable.map((w) => `(subpath ${sbplString(w)})`))]
      : ['(allow file-write* file-link)']),
    // Denials again after what the allowances re-opened (all of them under an allow-list: any may lie inside an allowed path).
    ...(allowList ? block('deny file-write*', allDenied) : [...block('deny file-write*', allDenied), ...block('allow file-write*', input.writable.map((w) => `(subpath ${sbplString(w)})`)), ...block('deny file-write*', [...input.denyWrite, ...input.denyRead].filter(within).flatMap(denyFilters))]),
    "; No hard link of a denied file: Seatbelt matches a link's own path, not the file it shares.",
    ...block('deny file-link', allDenied),
    ...block('deny file-write-unlink', input.pinned.map((p) => `(literal ${sbplString(p)})`)),
    ...networkRules(input),
  ];
  return lines.join('\n') + '\n';
}

function networkRules(input: SeatbeltInput): string[] {
  const out = ['; Network.'];
  if (input.proxyPort === null) {
    out.push('; native_network = "host" (weaker): any address.', '(allow network-outbound (remote ip "*:*"))', '(allow network-bind (local ip "*:*"))', '(allow network-inbound (local ip "*:*"))');
  } else {
    out.push(`(allow network-outbound (remote ip "localhost:${input.proxyPort}"))`);
    if (input.services.includes('localhost')) out.push('; macos_allow "localhost" (weaker): every port on the loopback.', '(allow network-outbound (remote ip "localhost:*"))');
    out.push('; Listeners on the loopback only: nothing on the network reaches them.', '(allow network-bind (local ip "localhost:*"))', '(allow network-inbound (local ip "localhost:*"))');
  }
  if (input.unixSockets) {
    out.push('; allow_unix_sockets = true (weaker): sockets by path, but for the ones no profile opens.', '(allow network-outbound (remote unix-socket (path-regex #"^/")))', '(allow network-bind (local unix-socket (path-regex #"^/")))');
    const denied = input.deniedSockets.flatMap(denyFilters).map((f) => f.replace(/^\(regex /, '(path-regex '));
    if (denied.length > 0) out.push(...block('deny network-outbound', denied.map((f) => `(remote unix-socket ${f})`)));
  }
  return out;
}

/**
 * An interactive agent runs on a pseudo-terminal of its own that script(1),
 * outside the sandbox, owns and relays: TIOCSTI (which a Seatbelt profile
 * cannot refuse by name on every macOS) then queues input for the agent
 * alone, never for your shell after it exits. The agent's exit status is
 * written by the shell between the two, whatever script's own is.
 */
export interface SeatbeltPty {
  script: string;
  statusFile: string;
}

export const PTY_STATUS_SCRIPT = 'st=$1; shift; "$@"; echo $? > "$st"';

export function buildSeatbeltCommand(sandboxExec: string, profile: string, command: string[], cwd: string, env: { set: Record<string, string>; unset: string[] }, pty: SeatbeltPty | null = null): Command {
  const inner = [sandboxExec, '-p', profile, ...command];
  if (pty === null) return { file: sandboxExec, args: inner.slice(1), cwd, env: env.set, unsetEnv: env.unset };
  return { file: pty.script, args: ['-q', '/dev/null', '/bin/sh', '-c', PTY_STATUS_SCRIPT, 'sh', pty.statusFile, ...inner], cwd, env: env.set, unsetEnv: env.unset };
}
