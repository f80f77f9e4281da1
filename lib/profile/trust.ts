// Repository profiles are code from whoever committed them: each one must be
// trusted before first use and again whenever its content changes. Trust is
// pinned by SHA-256 of the file in $STASHBASE_HOME/trust.json.
//
// So is every Dockerfile stashbase builds, whatever profile names it (a
// global profile's relative path builds whatever the current folder holds,
// and an agent of any run may have written it): a build runs its steps as
// root, so the digest of the Dockerfile and everything it copies
// (lib/docker/build-context.ts) is pinned by its real path, and a build of a
// digest not pinned asks in a terminal, showing the text, and fails closed
// without one.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError, TrustError } from '../errors.js';
import { homePaths, stashbaseHome } from '../home.js';
import { findProfileFile, type LoadedProfile } from './load.js';
import type { Profile } from './types.js';
import { sha256 } from '../util/sha256.js';
import { printable } from '../util/printable.js';
import { keepTrustedText, lineDiff, trustedText } from './trust-diff.js';
import { weakerSettings } from '../run/weaker.js';
import { ownDenials } from './credential-stores.js';
import { shellQuote } from '../../templates/shell-quote.js';

interface TrustFile {
  version: 1;
  profiles: Record<string, { sha256: string; trustedAt: string }>;
  /** By the Dockerfile's real path: the digest of it and its inputs. */
  dockerfiles?: Record<string, { digest: string; trustedAt: string }>;
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
  const sha = profileHash(text);
  // The text as trusted, for what a later change is shown against.
  keepTrustedText(sha, text, env);
  await updateTrust(env, (data) => {
    data.profiles[file] = { sha256: sha, trustedAt: new Date().toISOString() };
  });
}

/** Lines of what changed since the text last trusted for `file` (empty when there is none kept). */
export function changesSinceTrusted(file: string, text: string, env: NodeJS.ProcessEnv): string[] {
  const entry = readTrust(homePaths(stashbaseHome(env)).trust).profiles[file];
  if (!entry) return [];
  const before = trustedText(entry.sha256, env);
  if (before === null) return ['(What you trusted before is not kept: trusted by an older stashbase, or too long. Read the whole profile below.)'];
  const diff = lineDiff(before, text);
  return diff.length === 0 ? [] : ['Changed since you trusted it (! marks a line that changes what it allows; only comments and blank lines are not marked):', ...diff.map((l) => `  ${l}`)];
}

async function updateTrust(env: NodeJS.ProcessEnv, change: (data: TrustFile) => void): Promise<void> {
  const path = homePaths(stashbaseHome(env)).trust;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const { default: lockfile } = await import('proper-lockfile');
  const release = await lockfile.lock(dirname(path), { lockfilePath: `${path}.lock`, retries: { retries: 20, minTimeout: 20, maxTimeout: 200 } });
  try {
    const data = readTrust(path);
    change(data);
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(data, null, 2) + '\n', { mode: 0o600 });
    renameSync(tmp, path);
  } finally {
    await release();
  }
}

/** Whether the build of a Dockerfile at this digest is trusted. */
export function buildTrustState(path: string, digest: string, env: NodeJS.ProcessEnv): TrustState {
  const entry = readTrust(homePaths(stashbaseHome(env)).trust).dockerfiles?.[path];
  if (!entry) return 'untrusted';
  return entry.digest === digest ? 'trusted' : 'changed';
}

export async function recordBuildTrust(path: string, digest: string, env: NodeJS.ProcessEnv): Promise<void> {
  await updateTrust(env, (data) => {
    data.dockerfiles ??= {};
    data.dockerfiles[path] = { digest, trustedAt: new Date().toISOString() };
  });
}

/** The command that trusts a Dockerfile's build, for the profile that names it (null: the default). */
export function buildTrustCommand(path: string, profile: string | null): string {
  return `stashbase agent trust --dockerfile ${shellQuote(path)}${profile !== null ? ` --profile ${profile}` : ''}`;
}

export interface BuildTrustInput {
  path: string;
  digest: string;
  text: string;
  /** The inputs it copies, relative to its folder. */
  files: string[];
  profile: string | null;
  interactive: boolean;
  env: NodeJS.ProcessEnv;
}

/** Lets a build through only when its digest is trusted; asks in a terminal (showing the Dockerfile), fails closed without one. */
export async function ensureBuildTrusted(o: BuildTrustInput): Promise<void> {
  const state = buildTrustState(o.path, o.digest, o.env);
  if (state === 'trusted') return;
  const why = state === 'changed' ? 'or what it copies has changed since you trusted it' : 'has not been trusted yet';
  if (o.interactive) {
    const lines = o.text.split('\n');
    const shown = lines.slice(0, 80).map((l) => `  | ${printable(l, true)}`);
    if (lines.length > 80) shown.push(`  | … ${lines.length - 80} more lines`);
    const files = o.files.length === 0 ? '  (nothing)' : [...o.files.slice(0, 20).map((f) => `  ${printable(f, true)}`), ...(o.files.length > 20 ? [`  … and ${o.files.length - 20} more`] : [])].join('\n');
    process.stderr.write(`The Dockerfile ${printable(o.path, true)} ${why}. Building it runs its steps as root:\n${shown.join('\n')}\nIt copies from its folder:\n${files}\n`);
    const { confirm } = await import('../util/prompt.js');
    if (await confirm('Trust it and build?')) {
      await recordBuildTrust(o.path, o.digest, o.env);
      return;
    }
    throw new TrustError(`the Dockerfile ${o.path} was not trusted; nothing was built or run`);
  }
  throw new TrustError(`the Dockerfile ${o.path} ${why} (a build runs its steps as root); nothing was built or run. Review it and what it copies, then trust it with: ${buildTrustCommand(o.path, o.profile)}`);
}

/** Where a secret's value comes from, in words: what of it runs or is read on your machine. */
function sourceWords(s: Profile['secrets'][string]): string {
  const f = s.from;
  if (f.kind === 'env') return `your variable $${f.variable}`;
  if (f.kind === 'file') return `the file ${JSON.stringify(f.path)}`;
  if (f.kind === 'keyring') return `your keyring's ${JSON.stringify(f.service)} / ${JSON.stringify(f.account)}`;
  return `what this program prints, run on your machine, outside the sandbox, at every run's start:\n${f.argv.map((a, i) => `        ${i === 0 ? 'program' : `arg ${i}  `} ${JSON.stringify(a)}`).join('\n')}`;
}

/** What a profile allows, shown before the user trusts it: every character shown as itself (no control character moves the cursor). */
export function describeProfile(p: Profile): string {
  return printable(describeRaw(p));
}

function describeRaw(p: Profile): string {
  const list = (xs: string[]) => (xs.length ? xs.join(', ') : '(none)');
  const secrets = Object.entries(p.secrets).map(([name, s]) => `    ${name} -> ${s.hosts.join(', ')}, from ${sourceWords(s)}`);
  const { read: ownRead, write: ownWrite } = ownDenials(p.filesystem);
  const env = p.environment;
  // '\0' as cwd and home: the profile's own weaker settings, not where it runs.
  const weaker = weakerSettings(p, '\0cwd', '\0home');
  return [
    `  backend:      ${p.sandbox.backend}${p.sandbox.image ? ` (image ${p.sandbox.image})` : ''}${p.sandbox.dockerfile ? ` (dockerfile ${p.sandbox.dockerfile}, built ${p.sandbox.buildNetwork ? 'with the network' : 'without a network'})` : ''}`,
    `  egress:       ${list(p.network.egressHosts)}`,
    `  denied hosts: ${list(p.network.denyHosts)}`,
    `  secrets:      ${secrets.length ? '\n' + secrets.join('\n') : '(none)'}`,
    `  deny_read:    the built-in credential stores and histories${ownRead.length ? `, and ${ownRead.join(', ')}` : ''}`,
    ...(p.filesystem.allowRead.length ? [`  allow_read:   ${p.filesystem.allowRead.join(', ')} (the sandbox reads these credential stores)`] : []),
    `  deny_write:   the built-in shell start-up files and git settings${ownWrite.length ? `, and ${ownWrite.join(', ')}` : ''}`,
    ...(p.filesystem.allowWrite.length ? [`  allow_write:  ${p.filesystem.allowWrite.join(', ')}`] : []),
    `  environment:  ${env.inherit === 'all' ? 'yours, but what looks like a credential' : env.inherit === 'core' ? "a shell's own variables" : 'none of yours'}${env.include.length ? `; passed whatever it is: ${env.include.join(', ')}` : ''}${env.exclude.length ? `; never: ${env.exclude.join(', ')}` : ''}`,
    ...weaker.map((w) => `  weaker:       ${w}`),
    ...(Object.keys(p.network.hosts).length ? [`  host mapping: ${Object.entries(p.network.hosts).map(([h, a]) => `${h} -> ${a}`).join(', ')}`] : []),
    ...(p.network.upstreamCaFile !== undefined ? [`  upstream CA:  ${p.network.upstreamCaFile} (the proxy trusts the upstreams it signs: a CA of this file's can read what goes to them)`] : []),
    ...(p.network.allowUpgrades.length ? [`  upgrades:     ${p.network.allowUpgrades.join(', ')} (besides WebSocket)`] : []),
    ...(p.allowHooks.length ? [`  hooks:        ${p.allowHooks.join(', ')}`] : []),
    ...(p.filesystem.keepExecutables.length ? [`  keeps:        ${p.filesystem.keepExecutables.join(', ')} (what the run leaves there that your tools execute stays)`] : []),
    ...(p.sandbox.isolatedPaths.length ? [`  isolated:     ${p.sandbox.isolatedPaths.join(', ')}`] : []),
    ...(p.sandbox.dockerNetwork !== undefined ? [`  docker net:   ${p.sandbox.dockerNetwork}`] : []),
    ...(p.sandbox.dockerRuntime !== undefined ? [`  runtime:      ${p.sandbox.dockerRuntime} (Docker: the agent's container runs under it)`] : []),
    ...(Object.keys(p.configEnv).length ? [`  config_env:   ${Object.keys(p.configEnv).join(', ')}`] : []),
    ...Object.entries(p.mcp.servers).flatMap(([n, s]) => [
      `  mcp server:   ${n} at ${s.url} (its host given to MCP alone): tools ${s.allowTools === null ? 'all' : s.allowTools.join(', ')}${s.denyTools.length ? `, never ${s.denyTools.join(', ')}` : ''}`,
      // A local one runs on your machine: what it runs, reads, holds and reaches, all of it.
      ...(s.local === null ? [] : [
        `    runs:       ${JSON.stringify(s.local.command)} (on your machine, confined; the working tree ${s.local.workdir === 'read' ? 'read-only' : s.local.workdir === 'write' ? 'writable, less what the agent may not write' : 'hidden'})`,
        ...(s.local.read.length ? [`    reads:      ${s.local.read.join(', ')}`] : []),
        ...Object.entries(s.local.env).map(([k, v]) => `    env:        ${k} = ${'value' in v ? JSON.stringify(v.value) : `the secret from ${sourceWords({ source: v.source, from: v.from, hosts: [], inQuery: false, allowPlaintext: false })}`}`),
        `    network:    ${s.local.hosts.length ? s.local.hosts.join(', ') : 'none'}`,
      ]),
    ]),
  ].join('\n');
}

export function trustCommand(p: Profile): string {
  // A profile named by its path outside a repository's .stashbase/agents is trusted by that path.
  if (p.file !== null && findProfileFile(p.name, 'directory', process.cwd(), process.env)?.file !== p.file) return `stashbase agent trust --profile ${shellQuote(p.file)}`;
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
  const changes = state === 'changed' ? changesSinceTrusted(profile.file, text, opts.env) : [];
  if (opts.interactive()) {
    process.stderr.write(`Repository profile ${printable(opts.label, true)} ${why}.\n${changes.map((l) => `${l}\n`).join('')}It allows:\n${describeProfile(profile)}\n`);
    const { confirm } = await import('../util/prompt.js');
    if (await confirm('Trust this profile and run?')) {
      await recordTrust(profile.file, text, opts.env);
      return;
    }
    throw new TrustError(`profile ${opts.label} was not trusted; nothing was run`);
  }
  throw new TrustError(`repository profile ${opts.label} ${why}; review it, then trust it with: ${trustCommand(profile)}${changes.length ? `\n${changes.join('\n')}` : ''}`);
}
