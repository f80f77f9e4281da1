// Small typed readers over a parsed TOML value that collect problems (with key
// paths) instead of throwing at the first one.
import { domainToASCII } from 'node:url';
import { isIP } from '../util/ip.js';
import { UNPRINTABLE } from '../util/printable.js';

export type KeyPath = Array<string | number>;

export interface Problem {
  path: KeyPath;
  message: string;
}

export function formatPath(path: KeyPath): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += (out ? '.' : '') + (/^[A-Za-z0-9_-]+$/.test(part) ? part : JSON.stringify(part));
  }
  return out;
}

export function tomlType(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return 'a date';
  if (value === null || value === undefined) return 'nothing';
  if (typeof value === 'object') return 'a table';
  if (typeof value === 'number') return Number.isInteger(value) ? `an integer (${value})` : `a float (${value})`;
  if (typeof value === 'bigint') return `an integer (${value})`;
  if (typeof value === 'boolean') return `a boolean (${value})`;
  return `a string (${JSON.stringify(value)})`;
}

/** What no profile value but [config_env]'s may hold. */
const CONTROL = new RegExp(`[${UNPRINTABLE}\\n\\t]`, 'u');

export class Reader {
  readonly problems: Problem[] = [];

  fail(path: KeyPath, message: string): void {
    this.problems.push({ path, message });
  }

  isTable(value: unknown): value is Record<string, unknown> {
    return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
  }

  table(value: unknown, path: KeyPath, known: readonly string[] | null): Record<string, unknown> {
    if (value === undefined) return {};
    if (!this.isTable(value)) {
      this.fail(path, `expected a table, got ${tomlType(value)}`);
      return {};
    }
    if (known) {
      for (const key of Object.keys(value)) {
        if (!known.includes(key)) this.fail([...path, key], `unknown key (known here: ${known.join(', ')})`);
      }
    }
    return value;
  }

  string(value: unknown, path: KeyPath): string | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'string') {
      this.fail(path, `expected a string, got ${tomlType(value)}`);
      return undefined;
    }
    // Every value is shown to you before you trust it: none may move the cursor, hide text or start a line of its own
    // (a value of [config_env] is the agent's, passed as it is).
    if (path[0] !== 'config_env' && CONTROL.test(value)) {
      this.fail(path, `${JSON.stringify(value)} holds a line break, a tab, a control or an invisible character`);
      return undefined;
    }
    return value;
  }

  nonEmpty(value: unknown, path: KeyPath): string | undefined {
    const s = this.string(value, path);
    if (s !== undefined && s.trim() === '') {
      this.fail(path, 'must not be empty');
      return undefined;
    }
    return s;
  }

  bool(value: unknown, path: KeyPath): boolean | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'boolean') {
      this.fail(path, `expected true or false, got ${tomlType(value)}`);
      return undefined;
    }
    return value;
  }

  /** A whole number within [min, max]. */
  integer(value: unknown, path: KeyPath, min: number, max: number): number | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      this.fail(path, `expected a whole number, got ${tomlType(value)}`);
      return undefined;
    }
    if (value < min || value > max) {
      this.fail(path, `${value} is out of range (${min} to ${max})`);
      return undefined;
    }
    return value;
  }

  strings(value: unknown, path: KeyPath, check?: (s: string, p: KeyPath) => boolean): string[] {
    if (value === undefined) return [];
    if (!Array.isArray(value)) {
      this.fail(path, `expected an array of strings, got ${tomlType(value)}`);
      return [];
    }
    const out: string[] = [];
    value.forEach((item, i) => {
      const s = this.nonEmpty(item, [...path, i]);
      if (s !== undefined && (!check || check(s, [...path, i]))) out.push(s);
    });
    return out;
  }

  oneOf<T extends string>(value: unknown, path: KeyPath, allowed: readonly T[]): T | undefined {
    const s = this.string(value, path);
    if (s === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(s)) {
      this.fail(path, `${JSON.stringify(s)} is not one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`);
      return undefined;
    }
    return s as T;
  }

  hostPattern(s: string, path: KeyPath, wildcard: boolean): boolean {
    const bare = s.startsWith('[') && s.endsWith(']') ? s.slice(1, -1) : s;
    if (isIP(bare)) return true;
    const name = wildcard && s.startsWith('*.') ? s.slice(2) : s;
    const ascii = name.includes('*') ? '' : domainToASCII(name.replace(/\.$/, ''));
    if (!ascii || ascii.length > 253 || !/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(ascii) || ascii.split('.').some((l) => l.length > 63 || l.startsWith('-'))) {
      this.fail(path, `${JSON.stringify(s)} is not a host name${wildcard ? ' or *.wildcard' : ''}`);
      return false;
    }
    return true;
  }
}
