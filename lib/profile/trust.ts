// Repository profiles are code from whoever committed them: each one must be
// trusted before first use and again whenever its content changes. Trust is
// pinned by SHA-256 of the file in $STASHBASE_HOME/trust.json.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError, TrustError } from '../errors.js';
import { homePaths, stashbaseHome } from '../home.js';
import type { LoadedProfile } from './load.js';
import type { Profile } from './types.js';
import { sha256 } from '../util/sha256.js';

interface TrustFile {
  version: 1;
  profiles: Record<string, { sha256: string; trustedAt: string }>;
}

export function profileHash(text: string): string {
  return sha256(text);
}

function readTrust(path: string): TrustFile {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, profiles: {} };
    throw new ConfigError(`${path}: cannot read: ${(e as Error).message}`);
  }
  try {
    const data = JSON.parse(raw) as TrustFile;
    if (data.version !== 1 || typeof data.profiles !== 'object' || data.profiles === null) throw new Error('unexpected shape');
    return data;
  } catch (e) {
    throw new ConfigError(`${path}: not a stashbase trust file (${(e as Error).message}); remove it to start over`);
  }
}

export type TrustState = 'trusted' | 'untrusted' | 'changed';

export function trustState(file: string, text: string, env: NodeJS.ProcessEnv): TrustState {
  const entry = readTrust(homePaths(stashbaseHome(env)).trust).profiles[file];
  if (!entry) return 'untrusted';
  return entry.sha256 === profileHash(text) ? 'trusted' : 'changed';
}

export async function recordTrust(file: string, text: string, env: NodeJS.ProcessEnv): Promise<void> {
  const path = homePaths(stashbaseHome(env)).trust;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const { default: lockfile } = await import('proper-lockfile');
  const release = await lockfile.lock(dirname(path), { lockfilePath: `${path}.lock`, retries: { retries: 20, minTimeout: 20, maxTimeout: 200 } });
  try {
    const data = readTrust(path);
    data.profiles[file] = { sha256: profileHash(text), trustedAt: new Date().toISOString() };
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(data, null, 2) + '\n', { mode: 0o600 });
    renameSync(tmp, path);
  } finally {
    await release();
  }
}

/** What a profile allows, shown before the user trusts it. */
export function describeProfile(p: Profile): string {
  const list = (xs: string[]) => (xs.length ? xs.join(', ') : '(none)');
  const secrets = Object.entries(p.secrets).map(([name, s]) => `    ${name} = $${s.source} -> ${s.hosts.join(', ')}`);
  return [
    `  backend:      ${p.sandbox.backend}${p.sandbox.image ? ` (image ${p.sandbox.image})` : ''}${p.sandbox.dockerfile ? ` (dockerfile ${p.sandbox.dockerfile}, built ${p.sandbox.buildNetwork ? 'with the network' : 'without a network'})` : ''}`,
    `  egress:       ${list(p.network.egressHosts)}`,
    `  denied hosts: ${list(p.network.denyHosts)}`,
    `  secrets:      ${secrets.length ? '\n' + secrets.join('\n') : '(none)'}`,
    `  deny_read:    ${list(p.filesystem.denyRead)}`,
    `  deny_write:   ${list(p.filesystem.denyWrite)}`,
    ...(Object.keys(p.network.hosts).length ? [`  host mapping: ${Object.entries(p.network.hosts).map(([h, a]) => `${h} -> ${a}`).join(', ')}`] : []),
    ...(Object.keys(p.configEnv).length ? [`  config_env:   ${Object.keys(p.configEnv).join(', ')}`] : []),
  ].join('\n');
}

export function trustCommand(p: Profile): string {
  return `stashbase agent trust --profile ${p.name} --profile-source directory`;
}

/**
 * Lets a directory profile through only when trusted; otherwise asks in a
 * terminal and fails closed without one.
 */
export async function ensureTrusted(loaded: LoadedProfile, opts: { interactive: () => boolean; env: NodeJS.ProcessEnv; label: string }): Promise<void> {
  const { profile, text } = loaded;
  if (profile.source !== 'directory' || profile.file === null || text === null) return;
  const state = trustState(profile.file, text, opts.env);
  if (state === 'trusted') return;
  const why = state === 'changed' ? 'has changed since you trusted it' : 'has not been trusted yet';
  if (opts.interactive()) {
    process.stderr.write(`Repository profile ${opts.label} ${why}. It allows:\n${describeProfile(profile)}\n`);
    const { confirm } = await import('../util/prompt.js');
    if (await confirm('Trust this profile and run?')) {
      await recordTrust(profile.file, text, opts.env);
      return;
    }
    throw new TrustError(`profile ${opts.label} was not trusted; nothing was run`);
  }
  throw new TrustError(`repository profile ${opts.label} ${why}; review it, then trust it with: ${trustCommand(profile)}`);
}
