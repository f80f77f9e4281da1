// Profile lookup: --profile NAME in .stashbase/agents/ from the working directory
// up to the repository root (directory), in $STASHBASE_HOME/agents (global), or
// both in that order (auto). A named profile that is missing or invalid is an
// error; only the absence of --profile selects the built-in default.
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import toml from 'toml';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { ConfigError, UsageError } from '../errors.js';
import { homePaths, stashbaseHome, userHome } from '../home.js';
import { defaultProfile } from './default.js';
import { keyLines } from './toml-lines.js';
import type { Profile, ProfileSource } from './types.js';
import { validateProfile } from './validate.js';

export type SourceChoice = 'auto' | 'global' | 'directory';
export const SOURCE_CHOICES: readonly SourceChoice[] = ['auto', 'global', 'directory'];
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export interface LoadedProfile {
  profile: Profile;
  /** The file's text, for trust hashing; null for the built-in default. */
  text: string | null;
}

export interface LoadOptions {
  name?: string;
  source: SourceChoice;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** false: a secret's variable need not be set (agent validate --no-secrets). */
  checkValues?: boolean;
}

/** The directories searched for directory profiles, nearest first. */
export function directorySearchPath(cwd: string): string[] {
  const dirs: string[] = [];
  let dir = cwd;
  for (;;) {
    dirs.push(join(dir, '.stashbase', 'agents'));
    if (existsSync(join(dir, '.git'))) return dirs; // repository root reached
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  // Not inside a repository: only the working directory itself.
  return dirs.slice(0, 1);
}

export function findProfileFile(name: string, source: SourceChoice, cwd: string, env: NodeJS.ProcessEnv): { file: string; source: ProfileSource } | null {
  const candidates: Array<{ file: string; source: ProfileSource }> = [];
  if (source !== 'global') for (const d of directorySearchPath(cwd)) candidates.push({ file: join(d, `${name}.toml`), source: 'directory' });
  if (source !== 'directory') candidates.push({ file: join(homePaths(stashbaseHome(env)).agents, `${name}.toml`), source: 'global' });
  return candidates.find((c) => existsSync(c.file)) ?? null;
}

export function displayPath(file: string, cwd: string): string {
  const rel = relative(cwd, file);
  return rel && !rel.startsWith('..' + sep) && rel !== '..' ? rel : file;
}

export function loadProfile(opts: LoadOptions): LoadedProfile {
  if (opts.name === undefined) return { profile: defaultProfile(), text: null };
  // A path (with a "/" or ending in .toml) names the file itself: trusted like a repository's unless it is one of your global profiles.
  const byPath = opts.name.includes('/') || opts.name.endsWith('.toml') ? profileAtPath(opts.name, opts.cwd, opts.env) : null;
  if (byPath === null && !NAME.test(opts.name)) {
    throw new UsageError(`--profile ${JSON.stringify(opts.name)} is not a profile name (letters, digits, ".", "_" and "-") nor a path to a .toml file`);
  }
  const found = byPath ?? findProfileFile(opts.name, opts.source, opts.cwd, opts.env);
  if (byPath !== null) opts = { ...opts, name: basename(byPath.file, '.toml') };
  if (!found) {
    if (opts.name === 'default' && opts.source === 'auto') return { profile: defaultProfile(), text: null };
    const known = availableProfiles(opts);
    const near = known.filter((k) => editDistance(k.toLowerCase(), opts.name!.toLowerCase()) <= 2);
    throw new ConfigError(
      `profile ${JSON.stringify(opts.name)} not found${near.length ? ` (did you mean ${near.map((n) => JSON.stringify(n)).join(' or ')}?)` : ''}; ` +
        `the profiles here: ${known.map((k) => JSON.stringify(k)).join(', ')}; looked in:\n${searchedPlaces(opts).map((p) => `  ${p}`).join('\n')}`,
    );
  }
  const label = displayPath(found.file, opts.cwd);
  const chain = layers(found, label, opts);
  const first = chain[0] as Layer;
  const data = chain.length === 1 ? first.data : chain.reduceRight<Record<string, unknown>>((base, l) => merged(base, l.data), Object.create(null) as Record<string, unknown>);
  delete data.extends;
  const profile = validateProfile({ name: opts.name as string, source: found.source, file: found.file, label, data, lines: keyLines(first.text), env: opts.env, checkValues: opts.checkValues });
  // What trust pins: the file's text alone, or every file of its chain (a change in any asks again).
  // Each layer framed by its file and its length in bytes: no line can move from one file to the next unseen.
  const text = chain.length === 1 ? first.text : chain.map((l) => `# stashbase profile layer ${l.file ?? '(the built-in default)'} ${Buffer.byteLength(l.text)} bytes\n${l.text}`).join('\n');
  return { profile, text };
}

interface Layer {
  /** null: the built-in default at the top of a chain. */
  file: string | null;
  text: string;
  data: Record<string, unknown>;
}

const MAX_CHAIN = 8;

function readLayer(file: string, label: string): Layer {
  let text: string;
  try {
    if (!statSync(file).isFile()) throw new Error('not a regular file');
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`${label}: cannot read profile: ${(e as Error).message}`);
  }
  const data = parseToml(text, label);
  return { file, text, data: data as Record<string, unknown> };
}

/**
 * The profile and those it extends, nearest first. A global profile's
 * parents are global ones only (a repository must not stand in for one of
 * yours); a repository's are looked up as --profile would be. `extends =
 * "default"` with no file of that name is the built-in default.
 */
function layers(found: { file: string; source: ProfileSource }, label: string, opts: LoadOptions): Layer[] {
  const chain: Layer[] = [readLayer(found.file, label)];
  const names = [label];
  for (;;) {
    const last = chain[chain.length - 1] as Layer;
    const parent = last.data.extends;
    if (parent === undefined) return chain;
    const where = `${names[names.length - 1]} extends`;
    if (typeof parent !== 'string' || !NAME.test(parent)) throw new ConfigError(`${where}: ${JSON.stringify(parent)} is not a profile name`);
    if (chain.length >= MAX_CHAIN) throw new ConfigError(`${where} ${JSON.stringify(parent)}: more than ${MAX_CHAIN} profiles in one chain`);
    const next = findProfileFile(parent, found.source === 'global' ? 'global' : opts.source, opts.cwd, opts.env);
    if (next === null) {
      if (parent !== 'default') throw new ConfigError(`${where} ${JSON.stringify(parent)}, which is not found${found.source === 'global' ? ` among your global profiles (${homePaths(stashbaseHome(opts.env)).agents})` : ''}`);
      const base = defaultProfile();
      chain.push({ file: null, text: '', data: { network: { egress_hosts: [...base.network.egressHosts] } } });
      return chain;
    }
    if (chain.some((l) => l.file === next.file)) throw new ConfigError(`${where} ${JSON.stringify(parent)}: a cycle (${[...names, displayPath(next.file, opts.cwd)].join(' -> ')})`);
    const nextLabel = displayPath(next.file, opts.cwd);
    chain.push(readLayer(next.file, nextLabel));
    names.push(nextLabel);
  }
}

const isTable = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);

/** `over` on top of `base`: tables merged key by key, lists joined (base first, once each), any other value `over`'s. Objects without a prototype: no key reaches one. */
function merged(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out = Object.create(null) as Record<string, unknown>;
  for (const k of Object.keys(base)) if (k !== 'extends') out[k] = base[k];
  for (const k of Object.keys(over)) {
    if (k === 'extends') continue;
    const a = out[k];
    const b = over[k];
    if (isTable(a) && isTable(b)) out[k] = merged(a, b);
    else if (Array.isArray(a) && Array.isArray(b)) out[k] = [...a, ...b.filter((x) => !a.some((y) => JSON.stringify(y) === JSON.stringify(x)))];
    else out[k] = b;
  }
  return out;
}

/** A profile named by its path: the file as it resolves, global when it is in $STASHBASE_HOME/agents, else a repository's (trust needed). */
function profileAtPath(given: string, cwd: string, env: NodeJS.ProcessEnv): { file: string; source: ProfileSource } {
  const path = resolve(cwd, given.startsWith('~/') ? join(userHome(env), given.slice(2)) : given);
  if (!path.endsWith('.toml')) throw new UsageError(`--profile ${JSON.stringify(given)}: a profile file's name ends in .toml`);
  let file: string;
  try {
    file = realpathSync(path);
  } catch {
    throw new ConfigError(`profile file ${path} not found`);
  }
  if (!NAME.test(basename(file, '.toml'))) throw new UsageError(`--profile ${JSON.stringify(given)}: ${basename(file)} is not a profile's file name (letters, digits, ".", "_" and "-", then .toml)`);
  // Global only when named in your agents folder and found there too: a repository's link into it is a repository's profile (asked for).
  const agents = homePaths(stashbaseHome(env)).agents;
  let realAgents = agents;
  try {
    realAgents = realpathSync(agents);
  } catch {
    // no global profiles yet
  }
  const global = (dirname(path) === agents || dirname(path) === realAgents) && dirname(file) === realAgents;
  return { file, source: global ? 'global' : 'directory' };
}

/** The names --profile finds from here (with the source chosen), and the built-in default. */
export function availableProfiles(opts: Pick<LoadOptions, 'source' | 'cwd' | 'env'>): string[] {
  const dirs: string[] = [];
  if (opts.source !== 'global') dirs.push(...directorySearchPath(opts.cwd));
  if (opts.source !== 'directory') dirs.push(homePaths(stashbaseHome(opts.env)).agents);
  const names = new Set<string>(['default']);
  for (const d of dirs) {
    let entries: string[] = [];
    try {
      entries = readdirSync(d);
    } catch {
      continue;
    }
    for (const e of entries) if (e.endsWith('.toml') && NAME.test(e.slice(0, -5))) names.add(e.slice(0, -5));
  }
  return [...names].sort();
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

function searchedPlaces(opts: LoadOptions): string[] {
  const places: string[] = [];
  if (opts.source !== 'global') places.push(...directorySearchPath(opts.cwd).map((d) => join(d, `${opts.name}.toml`)));
  if (opts.source !== 'directory') places.push(join(homePaths(stashbaseHome(opts.env)).agents, `${opts.name}.toml`));
  return places;
}

interface TomlSyntaxError extends Error {
  location?: { start?: { line?: number; column?: number } };
}

function parseToml(text: string, label: string): unknown {
  let data: unknown;
  try {
    data = toml.parse(text);
  } catch (e) {
    const err = e as TomlSyntaxError;
    const start = err.location?.start;
    const where = start?.line ? `${label}:${start.line}:${start.column ?? 1}` : label;
    throw new ConfigError(`${where}: invalid TOML: ${err.message}`);
  }
  // A key named __proto__, however spelled (quoted, escaped, dotted), is a key of the parsed table, but any plain
  // object it is copied into takes it as its prototype: its content silently gone. Refused, wherever it stands.
  if (hasKey(data, '__proto__')) {
    const line = text.split('\n').findIndex((l) => /__proto__|\\u005[fF]|\\U0000005[fF]/.test(/^\s*(\[[^\]]*\]|[^=#]*=)/.exec(l)?.[1] ?? ''));
    throw new ConfigError(`${label}${line >= 0 ? `:${line + 1}` : ''}: "__proto__" cannot be a key or a table's name`);
  }
  return data;
}

/** Whether a parsed value holds, at any depth, a table with an own key named `key`. */
function hasKey(v: unknown, key: string): boolean {
  if (v === null || typeof v !== 'object' || v instanceof Date) return false;
  if (Array.isArray(v)) return v.some((x) => hasKey(x, key));
  return Object.hasOwn(v, key) || Object.values(v).some((x) => hasKey(x, key));
}
