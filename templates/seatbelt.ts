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
  /**
   * What your own agents read outside any run (the agents' state an
   * allow-list lets the agent write): no link, FIFO or socket may be made
   * there (a transcript linked to ~/.bashrc would have your next
   * `claude --continue` append there).
   */
  plain: SeatbeltRule[];
  /** Every run's folder (a regex over the temp folder), refused to read and write; this run's own readable again, its temp folder writable. */
  runFolders: { regex: string; own: string; tmp: string };
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
  /** The same for the folders a deny pattern's fixed parts name (regex sources, each a whole path). */
  pinnedPatterns: string[];
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
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i] as string;
    if (ch === '\\' && i + 1 < source.length) {
      const next = source[++i] as string;
      out += next === '/' ? '/' : ch + next;
    } else if (!inClass && ch === '(' && source.startsWith('?:', i + 1)) {
      out += '(';
      i += 2;
    } else {
      if (ch === '[' && !inClass) inClass = true;
      else if (ch === ']' && inClass) inClass = false;
      out += ch === '"' ? '\\"' : ch;
    }
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

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const PRINTABLE = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i));

/**
 * A class that matches a character when the written class matches it in
 * either case: a letter's other case is added to a class, and a negated
 * class excludes a letter only when it excludes both of its cases (a denial
 * never narrows). Classes with other than ASCII are left as written.
 */
function foldClass(body: string): string {
  const neg = body.startsWith('^');
  const inner = neg ? body.slice(1) : body;
  let re: RegExp;
  try {
    if (/[^\x20-\x7e]/.test(inner)) throw new Error('not ASCII');
    re = new RegExp(`[${inner}]`);
  } catch {
    return `[${body}]`;
  }
  const other = (c: string) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());
  if (!neg) {
    const extra = [...LETTERS].filter((c) => !re.test(c) && re.test(other(c))).join('');
    return `[${extra}${inner}]`;
  }
  const excluded = PRINTABLE.filter((c) => re.test(c) && (!LETTERS.includes(c) || re.test(other(c))));
  // Written without escapes (a backslash in a class means itself to POSIX's regexes): "-" last, "^" not first.
  if (excluded.some((c) => c === ']' || c === '\\')) return `[${body}]`;
  const list = excluded.filter((c) => c !== '-' && c !== '^');
  if (excluded.includes('^')) list.push('^');
  if (excluded.includes('-')) list.push('-');
  if (list.length === 0) return '.';
  if (list[0] === '^') list.push(list.shift() as string);
  return `[^${list.join('')}]`;
}

/**
 * A regex source that matches its letters in either case: "a" becomes
 * "[aA]" (a non-ASCII one "(é|É)": Seatbelt's classes hold bytes), and a
 * class is folded by foldClass.
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
      out += foldClass(source.slice(i + 1, j));
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

/**
 * A path as a regex that matches it however APFS lets it be spelled: each
 * letter in either case, each character in either Unicode normal form, so a
 * name mixing composed and decomposed characters is matched too.
 */
export function pathPattern(path: string): string {
  let out = '';
  for (const ch of path.normalize('NFC')) {
    if (ch.charCodeAt(0) < 128) {
      const other = otherCase(ch);
      out += other === null ? escapeRegex(ch) : `[${ch}${other}]`;
      continue;
    }
    const alts = new Set<string>();
    for (const c of [ch, ch.toUpperCase(), ch.toLowerCase()]) if ([...c].length === 1) for (const f of [c.normalize('NFC'), c.normalize('NFD')]) alts.add(f);
    out += alts.size === 1 ? escapeRegex(ch) : `(${[...alts].map(escapeRegex).join('|')})`;
  }
  return out;
}

/** The string in both Unicode normal forms (APFS keeps names as written and finds them in either). */
const forms = (s: string): string[] => [...new Set([s, s.normalize('NFC'), s.normalize('NFD')])];

/** A denial: a regex over the path (and, for a folder, below it), in either case and every normal form. */
function denyFilters(r: SeatbeltRule): string[] {
  if (r.kind === 'regex') return forms(r.source).map((s) => `(regex ${sbplRegex(foldCase(s))})`);
  return [`(regex ${sbplRegex(`^${pathPattern(r.path)}${r.dir ? '(/.*)?' : ''}$`)})`];
}

/** One path exactly (a pinned folder), however spelled. */
const exactly = (path: string) => `(regex ${sbplRegex(`^${pathPattern(path)}$`)})`;

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
/** Where the run's own terminal stands in the profile until the helper that starts sandbox-exec names it (templates/seatbelt-run.ts). */
export const OWN_TTY = '/dev/stashbase-own-tty';

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
    '; Devices (Codex, sandbox-runtime); terminals below.',
    '(allow pseudo-tty)',
    ...block('allow file-read* file-write* file-ioctl', ['(literal "/dev/ptmx")', '(literal "/dev/tty")']),
    ...block('allow file-read* file-write-data file-ioctl', DEVICES),
    '; Reads everywhere (Codex, sandbox-runtime), then the denials: other runs\' folders, the profile\'s and the built-in ones.',
    '(allow file-read*)',
    `(deny file-read* (regex ${sbplRegex(foldCase(input.runFolders.regex))}))`,
    `(allow file-read* (subpath ${sbplString(input.runFolders.own)}))`,
    ...block('deny file-read*', readDenied),
    '; Writes and hard links.',
    ...(allowList
      // No hard link at all: whether Seatbelt judges a link by the file or by the new name, a link in the working directory to a
      // file outside the allow-list would make that file writable by a path the profile allows (bwrap's binds refuse it too: EXDEV).
      ? [...block('allow file-write*', [...input.allowWrite.map(allowFilter), ...DEVICES]), ...block('allow file-write*', input.writable.map((w) => `(subpath ${sbplString(w)})`))]
      : ['(allow file-write* file-link)']),
    // Denials again after what the allowances re-opened (all of them under an allow-list: any may lie inside an allowed path).
    ...(allowList ? block('deny file-write*', allDenied) : [...block('deny file-write*', allDenied), ...block('allow file-write*', input.writable.map((w) => `(subpath ${sbplString(w)})`)), ...block('deny file-write*', [...input.denyWrite, ...input.denyRead].filter(within).flatMap(denyFilters))]),
    ...(input.plain.length === 0 ? [] : [
      "; The agents' live state, read by your own agents outside any run: no link, FIFO or socket made there.",
      '(deny file-write-create',
      '  (require-all',
      ...block('require-any', input.plain.flatMap(denyFilters)).map((l) => `    ${l}`),
      '    (require-any (vnode-type SYMLINK) (vnode-type FIFO) (vnode-type SOCKET) (vnode-type CHARACTER-DEVICE))))',
    ]),
    "; No hard link of a denied file: Seatbelt matches a link's own path, not the file it shares.",
    ...block('deny file-link', allDenied),
    '; The folders above protected paths (and a deny pattern\'s fixed parts) stay where they are: a rename would take the path from under its rule.',
    ...block('deny file-write-unlink', [...input.pinned.map(exactly), ...input.pinnedPatterns.map((r) => `(regex ${sbplRegex(foldCase(r))})`)]),
    "; Every run's folder is stashbase's but this run's temp folder.",
    `(deny file-write* file-link (regex ${sbplRegex(foldCase(input.runFolders.regex))}))`,
    `(allow file-write* (subpath ${sbplString(input.runFolders.tmp)}))`,
    "; Terminals: the run's own (one stashbase relays: TIOCSTI reaches the agent alone) and the ones the agent makes (Codex); never another of yours.",
    '(deny file-read* file-write* file-ioctl (regex #"^/dev/ttys[0-9]+$"))',
    `(allow file-read* file-write* file-ioctl (literal ${sbplString(OWN_TTY)}))`,
    '(allow file-read* file-write* file-ioctl (require-all (regex #"^/dev/ttys[0-9]+$") (extension "com.apple.sandbox.pty")))',
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
 * How sandbox-exec is started, by a small node helper of stashbase's own
 * (SEATBELT_HELPER), never by a shell and never with the agent's environment
 * (a profile's [config_env] can set what a shell or node runs at start:
 * SHELLOPTS and PS4, NODE_OPTIONS). The helper reads the agent's environment
 * from a file in the run's state folder, names the run's own terminal in the
 * profile, starts sandbox-exec with that environment, writes its exit status
 * to the state folder (never through a link), and then kills what the agent
 * left in its process group. On a terminal, script(1) gives the agent one of
 * its own and relays it: TIOCSTI queues input for the agent alone, never for
 * your shell after it exits.
 */
export interface SeatbeltLaunch {
  node: string;
  /** Where the helper writes the agent's exit status (state folder). */
  statusFile: string;
  /** The agent's environment, as JSON (state folder, mode 0600). */
  envFile: string;
  pty: boolean;
}

/** All that the helper and script(1) get of an environment. */
export const LAUNCH_ENV: Record<string, string> = { PATH: '/usr/bin:/bin:/usr/sbin:/sbin' };

export const SEATBELT_HELPER = [
  "'use strict';",
  "const [mode, st, envf, file, ...args] = process.argv.slice(1);",
  "const fs = require('fs'), cp = require('child_process'), os = require('os');",
  "const env = JSON.parse(fs.readFileSync(envf, 'utf8'));",
  "if (mode === 'pty') { try { const t = cp.execFileSync('/usr/bin/tty', { stdio: ['inherit', 'pipe', 'ignore'], encoding: 'utf8', env: {} }).trim(); if (/^\\/dev\\/ttys[0-9]+$/.test(t)) args[1] = args[1].split(" + JSON.stringify(JSON.stringify(OWN_TTY)) + ").join(JSON.stringify(t)); } catch {} }",
  "const child = cp.spawn(file, args, { stdio: 'inherit', env, detached: mode !== 'pty' });",
  "for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']) process.on(s, () => { try { child.kill(s); } catch {} });",
  "child.on('error', () => process.exit(127));",
  "child.on('exit', (code, sig) => {",
  "  const status = code !== null ? code : 128 + (os.constants.signals[sig] || 1);",
  "  try { fs.writeFileSync(st, String(status), { flag: 'wx', mode: 0o600 }); } catch {}",
  "  try { process.kill(mode === 'pty' ? -process.pid : -child.pid, 'SIGKILL'); } catch {}",
  "  process.exit(status);",
  "});",
].join('\n');

export function buildSeatbeltCommand(sandboxExec: string, profile: string, command: string[], cwd: string, launch: SeatbeltLaunch): Command {
  const helper = [launch.node, '-e', SEATBELT_HELPER, launch.pty ? 'pty' : 'plain', launch.statusFile, launch.envFile, sandboxExec, '-p', profile, ...command];
  if (launch.pty) return { file: '/usr/bin/script', args: ['-q', '/dev/null', ...helper], cwd, env: LAUNCH_ENV, onlyEnv: true };
  return { file: launch.node, args: helper.slice(1), cwd, env: LAUNCH_ENV, onlyEnv: true };
}
