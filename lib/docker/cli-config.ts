// The docker CLI's configuration for the commands of a remote run (and of the
// docker commands that manage a remote engine): your config.json travels with
// every command the CLI sends, and two of its settings would put your
// credentials on the engine (review, round 36). `proxies` is added by the CLI
// to the environment of every container it makes and to every build's
// arguments (your proxy's user and password among them, in `docker inspect` on
// the engine); for a build, the classic builder sends every registry login the
// file holds (`auths`, or its credential helpers'), in one header, whatever the
// Dockerfile pulls. So a remote engine's commands get a configuration folder
// of stashbase's own: of your config.json only what speaks to the engine
// (HttpHeaders) and finds the CLI's plugins (cliPluginsExtraDirs, aliases,
// features, plugins), and your contexts, plugins and buildx state by links.
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readBack } from '../readback/file.js';
import { goReadsAsWritten, isJsonObject, type JsonObject, parseJson } from '../readback/json.js';
import { dockerConfigDir } from './endpoint.js';

/** What of your config.json a remote engine's commands keep: how the CLI reaches the engine and finds its plugins. */
export const KEPT_SETTINGS = ['HttpHeaders', 'cliPluginsExtraDirs', 'aliases', 'features', 'plugins'] as const;

/** What of your configuration folder is linked into it: the contexts' store (with their TLS), the CLI's plugins, buildx's builders. */
const LINKED = ['contexts', 'cli-plugins', 'buildx'] as const;

/** Your config.json's kept settings; none when it cannot be read as the CLI would read it. */
export function keptSettings(text: string | null): JsonObject {
  const kept = Object.create(null) as JsonObject;
  if (text === null) return kept;
  const parsed = parseJson(text);
  if (parsed === null || !isJsonObject(parsed.value) || !goReadsAsWritten(parsed.value, [...KEPT_SETTINGS])) return kept;
  for (const k of KEPT_SETTINGS) if (Object.hasOwn(parsed.value, k)) kept[k] = parsed.value[k]!;
  return kept;
}

/**
 * Makes (again) the configuration folder of a remote engine's commands under stashbase's home, one per configuration
 * folder of yours, and returns it: config.json written whole and renamed into place, the links made where missing or
 * pointing elsewhere. It outlives the process: the watchdog's commands use it after stashbase has ended.
 */
export function remoteDockerConfig(env: NodeJS.ProcessEnv, home: string, stashbaseHome: string): string {
  const made = join(stashbaseHome, 'docker-config');
  const yours = dockerConfigDir(env, home);
  // Already this process's (a second command of it): as it is.
  if (yours.startsWith(`${made}/`)) return yours;
  const dir = join(made, `remote-${createHash('sha256').update(yours).digest('hex').slice(0, 16)}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const r = readBack(join(yours, 'config.json'), 1 << 20);
  const text = `${JSON.stringify(keptSettings(r.ok ? r.data.toString('utf8') : null))}\n`;
  const tmp = join(dir, `.config.json.${process.pid}`);
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, join(dir, 'config.json'));
  for (const name of LINKED) {
    const at = join(dir, name);
    const target = join(yours, name);
    let current: string | null = null;
    try {
      current = lstatSync(at).isSymbolicLink() ? readlinkSync(at) : '';
    } catch {
      current = null;
    }
    if (current === target) continue;
    if (current !== null) rmSync(at, { recursive: true, force: true });
    try {
      symlinkSync(target, at);
    } catch (e) {
      // Another process made it meanwhile: the same link.
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
  return dir;
}
