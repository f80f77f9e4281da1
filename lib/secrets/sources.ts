// Where a secret's real value comes from ([secrets.NAME] source):
//   "VAR"                         a variable of your environment (as before);
//   "file:PATH"                   a file only you can read (mode 0600 or
//                                 stricter, yours), its one line;
//   'command:["op", "read", …]'   a program's standard output, run once when
//                                 the run starts, without a shell, with your
//                                 terminal for its questions (op, gh, pass);
//   "keyring:SERVICE/ACCOUNT"     your keyring: the Secret Service through
//                                 secret-tool on Linux, the Keychain on macOS.
// Nothing but a variable is read when the profile loads: a file, a program
// or the keyring is asked only once the profile is trusted (lib/run,
// commands/agent-validate.ts), so an untrusted repository profile never runs
// a command of its own choosing. Values are held by stashbase alone: never
// set in any environment, never written.
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import { askCommand } from '../exec.js';
import { ENV_NAME } from '../env-names.js';
import { expandHome } from '../paths/rules.js';
import { MIN_SECRET_BYTES } from '../proxy/scrub.js';
import type { Profile, SecretBinding } from '../profile/types.js';

export type SecretSource =
  | { kind: 'env'; variable: string }
  | { kind: 'file'; path: string }
  | { kind: 'command'; argv: string[] }
  | { kind: 'keyring'; service: string; account: string };

/** The most a file or a program may give: a token, not a document. */
const MAX_VALUE_BYTES = 64 * 1024;
const COMMAND_TIMEOUT_MS = 60_000;

/** What a source string says, or why it says nothing. */
export function parseSource(raw: string): SecretSource | { problem: string } {
  // No control character anywhere: a carriage return or a tab in the text could make the trust prompt show another command than the one that runs.
  if (/[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/.test(raw)) return { problem: `${JSON.stringify(raw)} holds a control or invisible character` };
  if (raw.startsWith('file:')) {
    const path = raw.slice(5);
    if (path === '') return { problem: '"file:" names no file' };
    // Never relative: the working directory is the repository's, not yours.
    if (!path.startsWith('/') && !path.startsWith('~/')) return { problem: `${JSON.stringify(raw)}: after "file:" an absolute path or one in your home (~/…), never one relative to the working directory` };
    return { kind: 'file', path };
  }
  if (raw.startsWith('command:')) {
    let argv: unknown;
    try {
      argv = JSON.parse(raw.slice(8));
    } catch {
      argv = null;
    }
    if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === 'string' && a !== '' && !a.includes('\0'))) {
      return { problem: `${JSON.stringify(raw)}: after "command:" a JSON array of the program and its arguments, such as 'command:["gh", "auth", "token"]' (no shell runs it)` };
    }
    return { kind: 'command', argv: argv as string[] };
  }
  if (raw.startsWith('keyring:')) {
    const m = /^keyring:([^/\0]+)\/([^\0]+)$/.exec(raw);
    return m ? { kind: 'keyring', service: m[1] as string, account: m[2] as string } : { problem: `${JSON.stringify(raw)}: after "keyring:" a service and an account, SERVICE/ACCOUNT` };
  }
  return ENV_NAME.test(raw) ? { kind: 'env', variable: raw } : { problem: `${JSON.stringify(raw)} is not an environment variable name, nor file:, command: or keyring:` };
}

/** Why a value cannot be a secret, or null. */
export function valueProblem(value: string | undefined, what: string): string | null {
  if (value === undefined || value === '') return `${what} is empty`;
  if (/[\r\n\0]/.test(value)) return `${what} contains a carriage return, line feed or NUL character, which could split a request header`;
  const n = Buffer.byteLength(value);
  if (n < MIN_SECRET_BYTES) return `${what} is ${n} bytes; a secret under ${MIN_SECRET_BYTES} bytes cannot be bound: what comes back from its hosts could not be scrubbed of it reliably (its base64 forms are too short to look for)`;
  return null;
}

/** One line: a final line break (as editors and `echo` leave one) is not part of it. */
const oneLine = (text: string) => text.replace(/\r?\n$/, '');

function readOwnFile(path: string): string {
  // Followed if a link (a dotfile manager's), then checked as the file it is: yours, a regular file, no one else's to read.
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOCTTY | constants.O_NONBLOCK);
  } catch (e) {
    throw new Error(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error(`${path} is not a regular file`);
    if (process.getuid && st.uid !== process.getuid()) throw new Error(`${path} belongs to another user (uid ${st.uid})`);
    if ((st.mode & 0o077) !== 0) throw new Error(`${path} can be read or written by others (mode ${(st.mode & 0o777).toString(8)}); chmod 600 it`);
    const buf = Buffer.alloc(MAX_VALUE_BYTES + 1);
    let n = 0;
    for (let r; n < buf.length && (r = readSync(fd, buf, n, buf.length - n, null)) > 0; ) n += r;
    if (n > MAX_VALUE_BYTES) throw new Error(`${path} is larger than ${MAX_VALUE_BYTES} bytes: not a token`);
    return oneLine(buf.subarray(0, n).toString('utf8'));
  } finally {
    closeSync(fd);
  }
}

function runCommand(argv: string[], env: NodeJS.ProcessEnv, home: string): string {
  // In your home, not the working directory: a repository's files must not choose what a program loads (python -m, npx, uv run).
  const r = askCommand({ file: argv[0] as string, args: argv.slice(1), cwd: home }, env, COMMAND_TIMEOUT_MS, MAX_VALUE_BYTES);
  const shown = JSON.stringify(argv);
  if (r.error === 'ENOENT') throw new Error(`${shown}: ${argv[0]} is not installed (not found on PATH)`);
  if (r.error === 'ETIMEDOUT') throw new Error(`${shown} did not finish within ${COMMAND_TIMEOUT_MS / 1000} s`);
  if (r.error === 'ENOBUFS') throw new Error(`${shown} printed more than ${MAX_VALUE_BYTES} bytes: not a token`);
  if (r.error !== undefined) throw new Error(`${shown}: ${r.error}`);
  if (r.code !== 0) throw new Error(`${shown} exited ${r.code ?? `on ${r.signal}`}`);
  return oneLine(r.stdout);
}

function readKeyring(service: string, account: string, env: NodeJS.ProcessEnv, home: string): string {
  // "--": a service or account that begins with "-" is a value, never an option.
  const argv = process.platform === 'darwin' ? ['security', 'find-generic-password', '-s', service, '-a', account, '-w'] : ['secret-tool', 'lookup', '--', 'service', service, 'account', account];
  try {
    return runCommand(argv, env, home);
  } catch (e) {
    throw new Error(`the keyring has no ${service}/${account} that ${argv[0]} could read (${(e as Error).message})`);
  }
}

/** The real value of one binding, from wherever it comes; throws with why not. */
export function readSource(s: SecretBinding, env: NodeJS.ProcessEnv, home: string, cwd: string): string {
  const from = s.from;
  switch (from.kind) {
    case 'env':
      return env[from.variable] ?? '';
    case 'file':
      return readOwnFile(expandHome(from.path, home, cwd));
    case 'command':
      return runCommand(from.argv, env, home);
    case 'keyring':
      return readKeyring(from.service, from.account, env, home);
  }
}

/** The files the secrets are read from, as named and as they resolve: the run denies reading them (the agent would read the value there). */
export function sourceFiles(profile: Profile, home: string, cwd: string): string[] {
  const out: string[] = [];
  // The bindings' sources and the local MCP servers' (lib/mcp/local-server.ts).
  const froms = [...Object.values(profile.secrets).map((s) => s.from), ...Object.values(profile.mcp.servers).flatMap((m) => Object.values(m.local?.env ?? {}).flatMap((v) => ('from' in v ? [v.from] : [])))];
  for (const from of froms) {
    if (from.kind !== 'file') continue;
    const path = expandHome(from.path, home, cwd);
    out.push(path);
    try {
      const real = realpathSync(path);
      if (real !== path) out.push(real);
    } catch {
      // missing: resolveSecrets says so
    }
  }
  return out;
}

const VALUES = new WeakMap<SecretBinding, string>();

/**
 * Reads every binding's value once (a trusted profile only: this runs
 * programs and reads files the profile names) and keeps it beside the
 * binding, in no field of it: a profile printed or serialised holds none.
 */
export function resolveSecrets(profile: Profile, env: NodeJS.ProcessEnv, home: string, cwd: string): void {
  const problems: string[] = [];
  for (const [name, s] of Object.entries(profile.secrets)) {
    let value: string;
    try {
      value = readSource(s, env, home, cwd);
    } catch (e) {
      problems.push(`secrets.${name}.source: ${(e as Error).message}`);
      continue;
    }
    const problem = valueProblem(value, s.from.kind === 'env' ? `the variable ${s.from.variable}` : `the value from ${s.source}`);
    if (problem) problems.push(`secrets.${name}.source: ${problem}`);
    else VALUES.set(s, value);
  }
  if (problems.length > 0) throw new ConfigError(`${profile.file ?? profile.name}: ${problems.join('; ')}`);
}

/** A binding's real value: its variable's, or what resolveSecrets read (empty when it was not read). */
export function secretValue(s: SecretBinding, env: NodeJS.ProcessEnv): string {
  return s.from.kind === 'env' ? env[s.from.variable] ?? '' : VALUES.get(s) ?? '';
}
