import { flagBool, flagString, type FlagSpec, parseCommand } from '../lib/util/argv.js';
import { resolveBackend } from '../lib/run/backend.js';
import { envDecision } from '../lib/run/env-policy.js';
import { asciiJson, printable } from '../lib/util/printable.js';
import { resolveSecrets } from '../lib/secrets/sources.js';
import { networkChecks } from '../lib/run/agent-hosts.js';
import { StashbaseError, UsageError } from '../lib/errors.js';
import { displayPath, loadProfile } from '../lib/profile/load.js';
import { trustCommand, trustState } from '../lib/profile/trust.js';
import { backendChecks, type Check } from '../lib/run/readiness.js';
import { userHome } from '../lib/home.js';
import { agentWritesAlso } from '../lib/util/find-tool.js';
import { allowWritePaths } from '../lib/native/write-areas.js';
import { weakerSettings } from '../lib/run/weaker.js';
import { unlistedServers } from '../lib/mcp/advisory.js';
import { DEFAULT_DENY_WRITE, defaultDenyRead, ownDenials } from '../lib/profile/credential-stores.js';
import type { Profile } from '../lib/profile/types.js';
import { JSON_FLAG, PROFILE_FLAGS, profileSource } from './shared-flags.js';

export const usage = 'stashbase agent validate [options]';
export const summary = 'Check a profile and whether the backend it selects can run here.';
export const flags: FlagSpec[] = [
  ...PROFILE_FLAGS,
  { name: 'docker-sandbox', kind: 'value', value: 'true|false', help: 'Check the Docker (true) or native (false) backend instead of the profile\'s' },
  { name: 'backend', kind: 'value', value: 'native|docker', help: 'The same as --docker-sandbox, by the backend\'s name' },
  { name: 'no-secrets', kind: 'bool', help: "Check the profile without the secrets' values (none need be set: a check in CI)" },
  JSON_FLAG,
];

const spec = { name: 'agent validate', usage, summary, flags, notes: 'Exits 0 when everything is ready, 1 when something is not (with what to install or do), 2 when the profile itself is invalid (with --json, its error is printed as JSON too).' };

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.positionals.length > 0 || p.rest !== null) throw new UsageError('agent validate takes no arguments');
  const cwd = process.cwd();
  const env = process.env;
  const withValues = !flagBool(p, 'no-secrets');
  let loaded: ReturnType<typeof loadProfile>;
  try {
    loaded = loadProfile({ name: flagString(p, 'profile'), source: profileSource(flagString(p, 'profile-source')), cwd, env, checkValues: withValues });
  } catch (e) {
    // A script reading --json gets JSON whatever happened; the exit status says the profile is invalid.
    if (flagBool(p, 'json') && e instanceof StashbaseError) process.stdout.write(asciiJson({ ready: false, error: e.message, exitCode: e.exitCode }) + '\n');
    throw e;
  }
  const { profile, text } = loaded;
  // As a run would: no tool from a folder the profile lets the agent write (lib/util/find-tool.ts).
  agentWritesAlso(allowWritePaths(profile.filesystem.allowWrite, userHome(env), cwd).paths);
  const { backend } = resolveBackend(profile, { dockerSandbox: flagString(p, 'docker-sandbox'), backend: flagString(p, 'backend') });
  const checks: Check[] = [{ name: 'profile', ok: true, detail: profile.file ? `${displayPath(profile.file, cwd)} is valid` : 'built-in default profile' }];
  let trust: string = 'not needed';
  if (profile.source === 'directory' && profile.file && text !== null) {
    trust = trustState(profile.file, text, env);
    checks.push({
      name: 'trust',
      ok: trust === 'trusted',
      detail: trust === 'trusted' ? 'repository profile trusted at its current content' : `repository profile ${trust === 'changed' ? 'changed since it was trusted' : 'not trusted yet'}: ${trustCommand(profile)}`,
    });
  }
  const names = Object.keys(profile.secrets);
  if (withValues && names.length > 0) {
    // Files, programs and the keyring are read only for a profile that is trusted (a repository's may name any).
    if (trust !== 'trusted' && trust !== 'not needed') checks.push({ name: 'secrets', ok: false, detail: 'not read until the profile is trusted' });
    else {
      try {
        resolveSecrets(profile, env, userHome(env), cwd);
        checks.push({ name: 'secrets', ok: true, detail: `${names.length === 1 ? 'the value' : `the ${names.length} values`} read (${names.join(', ')})` });
      } catch (e) {
        checks.push({ name: 'secrets', ok: false, detail: (e as Error).message });
      }
    }
  }
  checks.push(...networkChecks(profile));
  checks.push(...backendChecks(backend, env));
  // Docker: the image a run would use is there (a Dockerfile's is built at the first run).
  if (backend === 'docker' && checks.every((c) => c.ok) && profile.sandbox.dockerfile === undefined) {
    const { findDocker, inspectImage } = await import('../lib/docker/engine.js');
    const { defaultImageRef } = await import('../lib/docker/image.js');
    const ref = profile.sandbox.image ?? defaultImageRef(env);
    const present = (await inspectImage(findDocker(env), ref)) !== null;
    checks.push(present
      ? { name: 'image', ok: true, detail: `${ref} is here` }
      : { name: 'image', ok: false, detail: profile.sandbox.image === undefined ? `${ref} is not built: stashbase agent docker build (--agents-from npm where the vendors' installers cannot be reached)` : `${ref} is not here: docker pull ${ref}, or build it` });
  }
  const envd = backend === 'native' ? envDecision(profile, env) : null;
  const credentials = envd?.inheritedCredentials ?? [];
  const weaker = backend === 'native' ? weakerSettings(profile, cwd, userHome(env)) : [];
  const advisory = unlistedServers(cwd, profile.mcp.servers);
  const ready = checks.every((c) => c.ok);
  if (flagBool(p, 'json')) {
    const fs = profile.filesystem;
    const out = { profile: { name: profile.name, source: profile.source, file: profile.file, trust }, backend, ready, checks, weaker, mcpAdvisory: advisory, credentialVariables: credentials, droppedVariables: envd?.droppedCredentials ?? [], environment: profile.environment, filesystem: { denyRead: fs.denyRead, allowRead: fs.allowRead, denyWrite: fs.denyWrite } };
    process.stdout.write(asciiJson(out) + '\n');
  } else {
    const lines = [`Profile: ${profile.name} (${profile.source}${profile.file ? `, ${displayPath(profile.file, cwd)}` : ''})`, `Backend: ${backend}`];
    for (const c of checks) lines.push(`  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`);
    lines.push(...effectiveLists(profile));
    for (const w of weaker) lines.push(`  weaker: ${w}`);
    for (const [name, srv] of Object.entries(profile.mcp.servers)) lines.push(`  mcp: [mcp.servers.${name}] ${srv.url}: allow_tools ${srv.allowTools === null ? 'every tool' : JSON.stringify(srv.allowTools)}, deny_tools ${JSON.stringify(srv.denyTools)} (enforced at the proxy)`);
    for (const a of advisory) lines.push(`  advisory: ${a}`);
    lines.push(`  environment: inherit = ${JSON.stringify(profile.environment.inherit)}${profile.environment.include.length ? `, include ${profile.environment.include.join(', ')}` : ''}${profile.environment.exclude.length ? `, exclude ${profile.environment.exclude.join(', ')}` : ''}`);
    if (envd?.droppedCredentials.length) lines.push(`Credential-looking variables not passed to the native agent: ${envd.droppedCredentials.join(', ')}`);
    if (credentials.length) lines.push(`Credential-looking variables the native agent inherits (include names them): ${credentials.join(', ')}`);
    lines.push(ready ? 'Ready.' : 'Not ready.');
    process.stdout.write(printable(lines.join('\n')) + '\n');
  }
  return ready ? 0 : 1;
}

/** The read and write denials in effect: the built-in ones, what allow_read lifts, the profile's own. */
function effectiveLists(profile: Profile): string[] {
  const fs = profile.filesystem;
  const builtinRead = defaultDenyRead();
  const { read: ownRead, write: ownWrite } = ownDenials(fs);
  const kept = builtinRead.length - fs.allowRead.length;
  return [
    `  deny_read:  ${kept} built-in credential stores and histories${fs.allowRead.length ? ` (of ${builtinRead.length}; allow_read lifts ${fs.allowRead.join(', ')})` : ''}${ownRead.length ? `, and the profile's ${ownRead.join(', ')}` : ''}`,
    `  deny_write: ${DEFAULT_DENY_WRITE.length} built-in shell start-up files and git settings${ownWrite.length ? `, and the profile's ${ownWrite.join(', ')}` : ''}`,
  ];
}
