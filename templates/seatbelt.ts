// The macOS Seatbelt (SBPL) profile for the native backend, as text passed to
// `sandbox-exec -p`. Matched by the kernel on every access, so glob and regex
// entries also cover files created during the run, and a rename on the host
// changes nothing. In SBPL the last matching rule wins: allow everything, then
// deny writes (all but the allow-list, or the deny-list), reads of denied
// paths and of other runs' folders, Unix sockets and other processes' info.
import type { Command } from './command.js';

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
  /** socket(AF_UNIX) connections allowed (the profile's weaker choice). */
  unixSockets: boolean;
  denyRead: SeatbeltRule[];
  denyWrite: SeatbeltRule[];
  /** Directories writable again under a write-denied one; denials inside them are repeated after. */
  writable: string[];
  /** Ancestors of protected paths: they may not be renamed or removed (move-blocking). */
  pinned: string[];
  /** null: the host network (the weaker mode); else the only loopback port allowed out. */
  proxyPort: number | '<port>' | null;
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

function filter(r: SeatbeltRule): string {
  if (r.kind === 'regex') return `(regex ${sbplRegex(r.source)})`;
  return r.dir ? `(subpath ${sbplString(r.path)})` : `(literal ${sbplString(r.path)})`;
}

function block(head: string, rules: string[]): string[] {
  if (rules.length === 0) return [];
  return [`(${head}`, ...rules.map((r) => `  ${r}`), ')'];
}

/** Devices a process writes to in an ordinary run: the null and zero devices, its terminal and descriptors. */
const DEVICES = ['(literal "/dev/null")', '(literal "/dev/zero")', '(literal "/dev/dtracehelper")', '(regex #"^/dev/(tty|ttys[0-9]+|ptmx|stdout|stderr)$")', '(regex #"^/dev/fd/")'];

export function buildSeatbeltProfile(input: SeatbeltInput): string {
  const read = input.denyRead.map(filter);
  const denied = [...input.denyWrite, ...input.denyRead];
  const within = (r: SeatbeltRule) => r.kind === 'regex' || input.writable.some((w) => r.path.startsWith(w + '/'));
  const allowList = input.writes === 'allow-list';
  const lines = [
    '(version 1)',
    '(allow default)',
    ...(input.otherRuns ? [`(deny file-read* (regex ${sbplRegex(input.otherRuns.regex)}))`, `(allow file-read* (subpath ${sbplString(input.otherRuns.own)}))`] : []),
    ...block('deny file-read*', read),
    ...(allowList ? ['(deny file-write*)', ...block('allow file-write*', [...input.allowWrite.map(filter), ...DEVICES])] : block('deny file-write*', denied.map(filter))),
    ...block('allow file-write*', input.writable.map((w) => `(subpath ${sbplString(w)})`)),
    // Denials again after what the allowances re-opened (all of them under an allow-list: any may lie inside an allowed path).
    ...(allowList ? block('deny file-write*', denied.map(filter)) : input.writable.length > 0 ? block('deny file-write*', denied.filter(within).map(filter)) : []),
    ...block('deny file-write-unlink', input.pinned.map((p) => `(literal ${sbplString(p)})`)),
    ...(input.unixSockets ? [] : ['(deny network-outbound (remote unix-socket))']),
    // Other processes of yours are not the agent's to inspect (their arguments, environment, open files).
    '(deny process-info*)',
    '(allow process-info* (target same-sandbox))',
  ];
  if (input.proxyPort !== null) {
    lines.push('(deny network-outbound (remote ip "*:*"))', `(allow network-outbound (remote ip "localhost:${input.proxyPort}"))`);
  }
  return lines.join('\n') + '\n';
}

export function buildSeatbeltCommand(sandboxExec: string, profile: string, command: string[], cwd: string, env: { set: Record<string, string>; unset: string[] }): Command {
  return { file: sandboxExec, args: ['-p', profile, ...command], cwd, env: env.set, unsetEnv: env.unset };
}

/** Structural check: balanced parentheses outside literals, every top-level form a list. */
export function sbplWellFormed(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '(') depth++;
    else if (ch === ')') {
      if (--depth < 0) return false;
    } else if (depth === 0 && ch !== '\n' && ch !== ' ') return false;
  }
  return depth === 0 && !inString;
}
