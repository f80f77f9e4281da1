// Where each ecosystem's registry is, asked of the package manager itself at
// run time (its configuration, its variables, its built-in default), never
// written here. A package manager that is not installed and has no setting
// in the environment leaves its ecosystem unchecked.
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { cargoIndexCommand, goProxyCommand, npmRegistryCommand, pipIndexCommand, PROBE_MANIFEST } from '../../templates/deps-commands.js';
import { collect } from '../exec.js';
import { findTool } from '../util/find-tool.js';
import { isJsonObject, jsonOf } from '../readback/json.js';
import { readBackText } from '../readback/file.js';
import toml from 'toml';

const TIMEOUT_MS = 3000;
export type Located<T> = { ok: T } | { problem: string };

const url = (s: string | undefined): string | undefined => {
  if (s === undefined) return undefined;
  try {
    const u = new URL(s.trim());
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : undefined;
  } catch {
    return undefined;
  }
};

/** npm's registry and the registries of the given scopes (npm config get). */
export async function npmRegistries(cwd: string, env: NodeJS.ProcessEnv, scopes: string[]): Promise<Located<{ base: string; scoped: Record<string, string> }>> {
  const npm = findTool('npm', env);
  const fromEnv = url(env.npm_config_registry ?? env.NPM_CONFIG_REGISTRY);
  if (npm === null) return fromEnv ? { ok: { base: fromEnv, scoped: {} } } : { problem: 'npm is not installed, so its registry is not known' };
  const r = await collect(npmRegistryCommand(npm, cwd, scopes), { timeoutMs: TIMEOUT_MS });
  if (r.code !== 0) return { problem: `npm config get failed: ${r.stderr.trim().split('\n').at(-1) ?? ''}` };
  const lines = r.stdout.trim().split('\n');
  const values: Record<string, string> = Object.create(null);
  if (scopes.length === 0) values.registry = lines[0] ?? '';
  else for (const l of lines) {
    const eq = l.indexOf('=');
    if (eq > 0) values[l.slice(0, eq)] = l.slice(eq + 1);
  }
  const base = url(values.registry);
  if (base === undefined) return { problem: `npm reports no usable registry (${JSON.stringify(values.registry ?? '')})` };
  const scoped: Record<string, string> = {};
  for (const s of scopes) {
    const u = url(values[`${s}:registry`]);
    if (u !== undefined) scoped[s] = u;
  }
  return { ok: { base, scoped } };
}

/** pip's index: PIP_INDEX_URL or its configuration, else the default pip itself defines; `extra` when it also looks elsewhere. */
export async function pypiIndex(cwd: string, env: NodeJS.ProcessEnv): Promise<Located<{ index: string; extra: boolean }>> {
  const python = findTool('python3', env) ?? findTool('python', env);
  const fromEnv = url(env.PIP_INDEX_URL);
  const extraEnv = Boolean(env.PIP_EXTRA_INDEX_URL || env.PIP_FIND_LINKS);
  if (python === null) return fromEnv ? { ok: { index: fromEnv, extra: extraEnv } } : { problem: 'python is not installed, so the index pip would use is not known' };
  const r = await collect(pipIndexCommand(python), { timeoutMs: TIMEOUT_MS });
  let v: Record<string, unknown>;
  try {
    v = jsonOf(r.stdout) as Record<string, unknown>;
  } catch {
    return fromEnv ? { ok: { index: fromEnv, extra: extraEnv } } : { problem: 'pip is not installed, so its index is not known' };
  }
  const get = (k: string) => (typeof v[k] === 'string' ? (v[k] as string) : undefined);
  const index = fromEnv ?? url(get(':env:.index-url') ?? get('install.index-url') ?? get('global.index-url') ?? get('default'));
  if (index === undefined) return { problem: 'pip reports no usable index' };
  const extra = extraEnv || Object.keys(v).some((k) => k !== 'default' && !k.endsWith('.index-url'));
  return { ok: { index, extra } };
}

/** The index cargo would use here for its default registry (its source replacement included). */
export async function cratesIndex(cwd: string, env: NodeJS.ProcessEnv): Promise<Located<string>> {
  const cargo = findTool('cargo', env);
  if (cargo === null) return { problem: 'cargo is not installed, so its registry is not known' };
  const dir = mkdtempSync(join(tmpdir(), 'stashbase-cargo-probe-'));
  try {
    writeFileSync(join(dir, 'Cargo.toml'), PROBE_MANIFEST);
    writeFileSync(join(dir, 'lib.rs'), '');
    // Never the project's files themselves: only where they say crates come from (review, round 34).
    const configs = cargoConfigs(cwd);
    const sources = join(dir, 'sources.toml');
    if (configs.length > 0) writeFileSync(sources, cargoSourcesConfig(configs));
    const r = await collect(cargoIndexCommand(cargo, configs.length > 0 ? [sources] : [], join(dir, 'Cargo.toml')), { timeoutMs: TIMEOUT_MS });
    const m = /failed to download from `(https?:\/\/[^`\s]+?)config\.json`/.exec(r.stderr);
    const index = url(m?.[1]);
    if (index === undefined) return { problem: `cargo did not say where its index is (${r.stderr.trim().split('\n')[0] ?? 'no output'})` };
    return { ok: index };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A configuration file of the tree's is read up to this size; a larger one is passed by. */
const MAX_CARGO_CONFIG = 256 * 1024;

/**
 * What the probe gives cargo of the tree's configuration files (nearest
 * last, later values winning, as cargo merges them): where crates come from
 * (`source.<name>.replace-with` and `.registry`, `registries.<name>.index`),
 * parsed, written by stashbase; nothing else. Found in review (round 34): the
 * agent's own `.cargo/config.toml`, handed to cargo whole, set `http.proxy`
 * (the dead proxy passed by, the host's network used) and a registry's
 * `credential-provider`, a command cargo ran on the host. An index by HTTP
 * alone. A file that is a link, too large or not TOML is passed by.
 */
export function cargoSourcesConfig(files: string[]): string {
  const tables = { source: new Map<string, Map<string, string>>(), registries: new Map<string, Map<string, string>>() };
  const fields = { source: ['replace-with', 'registry'], registries: ['index'] } as const;
  for (const file of files) {
    const text = readBackText(file, MAX_CARGO_CONFIG);
    if (text === null) continue;
    let data: unknown;
    try {
      data = toml.parse(text);
    } catch {
      continue;
    }
    for (const table of ['source', 'registries'] as const) {
      const t = isJsonObject(data) && Object.hasOwn(data, table) ? data[table] : undefined;
      if (!isJsonObject(t)) continue;
      for (const name of Object.keys(t)) {
        const entry = t[name];
        if (!isJsonObject(entry)) continue;
        for (const field of fields[table]) {
          const value = Object.hasOwn(entry, field) ? entry[field] : undefined;
          if (typeof value !== 'string') continue;
          // An index by HTTP alone, which goes through the dead proxy (review, round 34, of this: a `git://` or
          // `ssh://` one had cargo's libgit2 connect straight to any address, with the host's network).
          if (field !== 'replace-with' && !/^(?:sparse\+)?https?:\/\//i.test(value)) continue;
          const kept = tables[table].get(name) ?? new Map<string, string>();
          kept.set(field, value);
          tables[table].set(name, kept);
        }
      }
    }
  }
  const lines: string[] = [];
  for (const table of ['source', 'registries'] as const) {
    for (const [name, kept] of tables[table]) {
      lines.push(`[${table}.${JSON.stringify(name)}]`, ...[...kept].map(([k, v]) => `${k} = ${JSON.stringify(v)}`));
    }
  }
  return lines.join('\n') + '\n';
}

/** The cargo configuration files cargo itself would read from `dir` upward (.cargo/config.toml, else .cargo/config), the nearest last. */
export function cargoConfigs(dir: string): string[] {
  const found: string[] = [];
  for (let d = resolve(dir); ; d = dirname(d)) {
    const file = ['config.toml', 'config'].map((n) => join(d, '.cargo', n)).find((f) => statSync(f, { throwIfNoEntry: false })?.isFile());
    if (file) found.unshift(file);
    if (dirname(d) === d) break;
  }
  return found;
}

/** The first module proxy of GOPROXY (the variable, else go env); direct or off leave Go unchecked. */
export async function goProxy(cwd: string, env: NodeJS.ProcessEnv): Promise<Located<string>> {
  let value = env.GOPROXY;
  if (value === undefined || value === '') {
    const go = findTool('go', env);
    if (go === null) return { problem: 'go is not installed and GOPROXY is not set, so the module proxy is not known' };
    const r = await collect(goProxyCommand(go), { timeoutMs: TIMEOUT_MS });
    if (r.code !== 0) return { problem: `go env GOPROXY failed: ${r.stderr.trim()}` };
    value = r.stdout.trim();
  }
  const first = value.split(/[,|]/)[0]?.trim() ?? '';
  const u = url(first);
  if (u === undefined) return { problem: `GOPROXY starts with ${JSON.stringify(first)}: modules come straight from their own hosts, which this check does not ask` };
  return { ok: u };
}
