// The macOS Seatbelt (SBPL) profile for the native backend, as text passed to
// `sandbox-exec -p`. A deny-list like bwrap's, but matched by the kernel on every
// access, so glob and regex entries also cover files created during the run.
// In SBPL the last matching rule wins: allow everything, then deny.
import type { Command } from './command.js';

export type SeatbeltRule =
  | { kind: 'path'; path: string; dir: boolean }
  | { kind: 'regex'; source: string };

export interface SeatbeltInput {
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

export function buildSeatbeltProfile(input: SeatbeltInput): string {
  const read = input.denyRead.map(filter);
  const denied = [...input.denyWrite, ...input.denyRead];
  const within = (r: SeatbeltRule) => r.kind === 'regex' || input.writable.some((w) => r.path.startsWith(w + '/'));
  const lines = [
    '(version 1)',
    '(allow default)',
    ...block('deny file-read*', read),
    ...block('deny file-write*', denied.map(filter)),
    ...block('allow file-write*', input.writable.map((w) => `(subpath ${sbplString(w)})`)),
    ...(input.writable.length > 0 ? block('deny file-write*', denied.filter(within).map(filter)) : []),
    ...block('deny file-write-unlink', input.pinned.map((p) => `(literal ${sbplString(p)})`)),
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
