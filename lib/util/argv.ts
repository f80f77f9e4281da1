// A strict flag parser. We parse argv ourselves rather than with cac: cac turns
// "1.50" into 1.5 and "0x1" into 1, accepts unknown flags on a default command,
// and reads a flag without its value as `true`. For a sandbox's flags every one
// of those is a silent change of what the user asked for.
import { UsageError } from '../errors.js';

export type FlagKind = 'bool' | 'value' | 'optional-bool';

export interface FlagSpec {
  name: string; // without the leading dashes
  kind: FlagKind;
  value?: string; // value placeholder shown in help
  /** A one-letter alias, e.g. "m" for -m (only where the spec names one). */
  short?: string;
  help: string;
}

export interface Parsed {
  flags: Map<string, string | boolean>;
  positionals: string[];
  /** What follows `--`, or null when there is no `--`. */
  rest: string[] | null;
  help: boolean;
}

export function parseArgv(argv: string[], specs: FlagSpec[], usageName: string): Parsed {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const byShort = new Map(specs.filter((s) => s.short).map((s) => [`-${s.short}`, s.name]));
  const flags = new Map<string, string | boolean>();
  const positionals: string[] = [];
  let help = false;
  const hint = `(see ${usageName} --help)`;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      return { flags, positionals, rest: argv.slice(i + 1), help };
    }
    if (arg === '-h' || arg === '--help') {
      help = true;
      continue;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const long = byShort.get(arg);
    if (!arg.startsWith('--') && long === undefined) throw new UsageError(`unknown option ${arg} ${hint}`);
    const eq = long !== undefined ? -1 : arg.indexOf('=');
    const name = long ?? arg.slice(2, eq === -1 ? undefined : eq);
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    const spec = byName.get(name);
    if (!spec) throw new UsageError(`unknown option --${name} ${hint}`);
    if (flags.has(name)) throw new UsageError(`--${name} given more than once`);
    if (spec.kind === 'value') {
      let value = inline;
      if (value === undefined) {
        const next = argv[i + 1];
        if (next === undefined || next === '--' || next.startsWith('--')) {
          throw new UsageError(`--${name} needs a value${spec.value ? ` (${spec.value})` : ''}`);
        }
        value = next;
        i++;
      }
      flags.set(name, value);
    } else {
      if (inline === undefined) flags.set(name, true);
      else if (inline === 'true') flags.set(name, true);
      else if (inline === 'false') flags.set(name, false);
      else throw new UsageError(`--${name} takes true or false, not ${JSON.stringify(inline)}`);
    }
  }
  return { flags, positionals, rest: null, help };
}

export function flagString(p: Parsed, name: string): string | undefined {
  const v = p.flags.get(name);
  return typeof v === 'string' ? v : undefined;
}

export function flagBool(p: Parsed, name: string): boolean | undefined {
  const v = p.flags.get(name);
  return typeof v === 'boolean' ? v : undefined;
}

export function formatHelp(usage: string, summary: string, specs: FlagSpec[], extra = ''): string {
  const rows = specs.map((s) => {
    const long =
      s.kind === 'value' ? `--${s.name} <${s.value ?? 'value'}>` : s.kind === 'optional-bool' ? `--${s.name}[=false]` : `--${s.name}`;
    const left = s.short ? `-${s.short}, ${long}` : long;
    return [left, s.help] as const;
  });
  rows.push(['-h, --help', 'Show this help']);
  const width = Math.max(...rows.map(([l]) => l.length));
  const lines = [`Usage: ${usage}`, '', summary, '', 'Options:', ...rows.map(([l, h]) => `  ${l.padEnd(width)}  ${h}`)];
  if (extra) lines.push('', extra);
  return lines.join('\n') + '\n';
}

export interface CommandSpec {
  /** As typed, e.g. "agent run". */
  name: string;
  usage: string;
  summary: string;
  flags: FlagSpec[];
  /** A closing paragraph of the help. */
  notes?: string;
}

/** Parses a command's argv; prints its help and returns null for --help. */
export function parseCommand(argv: string[], spec: CommandSpec): Parsed | null {
  const p = parseArgv(argv, spec.flags, `stashbase ${spec.name}`);
  if (!p.help) return p;
  process.stdout.write(formatHelp(spec.usage, spec.summary, spec.flags, spec.notes));
  return null;
}
