import { existsSync, readFileSync } from 'node:fs';
import { asciiJson } from '../lib/util/printable.js';
import { flagBool, flagString, type FlagSpec, parseCommand } from '../lib/util/argv.js';
import { UsageError } from '../lib/errors.js';
import { ENV_NAME } from '../lib/env-names.js';
import { JSON_FLAG, PROFILE_FLAGS, profileSource } from './shared-flags.js';

export const usage = 'stashbase scan [PATH] | --staged | --range <A..B> [options]\n       stashbase scan install [options]';
export const summary = 'Look for secrets in files, in staged changes (pre-commit) or in a range of commits (pre-push).';
export const flags: FlagSpec[] = [
  { name: 'staged', kind: 'bool', help: 'Scan the lines the index adds (what a commit would add), not files' },
  { name: 'range', kind: 'value', value: 'A..B', help: 'Scan the lines each commit of A..B adds (A all zeros: a new branch, every commit not on a remote)' },
  { name: 'max-size', kind: 'value', value: 'bytes', help: 'Per file: larger files (or more added text) are not scanned past this (default 1048576)' },
  { name: 'secret-env', kind: 'value', value: 'NAME,…', help: 'Also look for the values of these environment variables (exact match)' },
  { name: 'secrets-stdin', kind: 'bool', help: 'Also look for the values standard input gives as one JSON object of NAME: value (how the confined scan of a run is handed its secrets: in no environment a child process could read)' },
  ...PROFILE_FLAGS.map((f) => (f.name === 'profile' ? { ...f, help: "Also look for the real values of the secrets this profile binds (from each binding's source variable)" } : f)),
  { ...JSON_FLAG, help: 'Print {findings, scanned, skipped} as JSON' },
];

const spec = {
  name: 'scan',
  usage,
  summary,
  flags,
  notes: [
    'Findings are printed as "file:line rule match" with the match masked. Exit codes: 0 nothing found,',
    '1 something found (or the scan could not run: a message on stderr says which), 2 a usage or profile error.',
    'Install it as git hooks with "stashbase scan install" (see "stashbase scan install --help").',
  ].join('\n'),
};

function maxSize(value: string | undefined): number {
  if (value === undefined) return 1024 * 1024;
  if (!/^[1-9][0-9]{0,11}$/.test(value)) throw new UsageError(`--max-size takes a number of bytes, not ${JSON.stringify(value)}`);
  return Number(value);
}

function secretEnv(value: string | undefined): string[] {
  if (value === undefined) return [];
  const names = value.split(',');
  for (const n of names) if (!ENV_NAME.test(n)) throw new UsageError(`--secret-env takes variable names separated by commas, not ${JSON.stringify(value)}`);
  return names;
}

function secretsFromStdin(): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(0, 'utf8'));
  } catch (e) {
    throw new UsageError(`--secrets-stdin: standard input is not one JSON object (${(e as Error).message})`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError('--secrets-stdin: standard input is not one JSON object of NAME: value');
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parsed)) {
    if (!ENV_NAME.test(k) || typeof v !== 'string') throw new UsageError(`--secrets-stdin: ${JSON.stringify(k)} is not NAME: "value"`);
    out[k] = v;
  }
  return out;
}

export async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'install') return (await import('./scan-install.js')).main(argv.slice(1));
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.rest !== null || p.positionals.length > 1) throw new UsageError('scan takes at most one PATH');
  const staged = flagBool(p, 'staged') === true;
  const rangeFlag = flagString(p, 'range');
  const path = p.positionals[0];
  if ([staged, rangeFlag !== undefined, path !== undefined].filter(Boolean).length > 1) throw new UsageError('scan takes one of PATH, --staged and --range');
  const cwd = process.cwd();
  if (path !== undefined && !existsSync(path)) throw new UsageError(`${path}: no such file or directory`);
  const { parseRange } = await import('../lib/scan/git-units.js');
  const source = staged ? { kind: 'staged' as const } : rangeFlag !== undefined ? { kind: 'range' as const, range: parseRange(rangeFlag) } : { kind: 'path' as const, path: path ?? '.' };
  const max = maxSize(flagString(p, 'max-size'));
  const names = secretEnv(flagString(p, 'secret-env'));
  // Read before anything is spawned; the values never enter an environment.
  const given = flagBool(p, 'secrets-stdin') === true ? secretsFromStdin() : {};
  const env = process.env;
  const name = flagString(p, 'profile');
  let profile = null;
  if (name !== undefined) {
    const { loadProfile, displayPath } = await import('../lib/profile/load.js');
    const { ensureTrusted } = await import('../lib/profile/trust.js');
    const loaded = loadProfile({ name, source: profileSource(flagString(p, 'profile-source')), cwd, env });
    await ensureTrusted(loaded, { interactive: () => false, env, label: loaded.profile.file ? displayPath(loaded.profile.file, cwd) : name });
    profile = loaded.profile;
    // Trusted: the values that come from files, programs or the keyring are read too.
    const { resolveSecrets } = await import('../lib/secrets/sources.js');
    const { userHome } = await import('../lib/home.js');
    resolveSecrets(profile, env, userHome(env), cwd);
  }
  const json = flagBool(p, 'json') === true;
  const { boundSecrets } = await import('../lib/scan/bound.js');
  const bound = boundSecrets(profile, names, { ...env, ...given }, (msg) => process.stderr.write(`stashbase scan: ${msg}\n`), Object.keys(given));
  const { runScan } = await import('../lib/scan/scan.js');
  const { formatFinding, visible } = await import('../lib/scan/findings.js');
  const result = await runScan({ source, cwd, maxBytes: max, bound });
  if (json) {
    process.stdout.write(asciiJson(result) + '\n');
  } else {
    process.stdout.write(result.findings.map((f) => formatFinding(f) + '\n').join(''));
    const shown = result.skipped.slice(0, 5).map((s) => `${visible(s.file)} (${s.why})`);
    if (result.skipped.length > shown.length) shown.push(`${result.skipped.length - shown.length} more (--json lists them)`);
    const skipped = shown.length > 0 ? `; not scanned: ${shown.join(', ')}` : '';
    const what = `${result.scanned} ${source.kind === 'path' ? 'file' : 'changed file'}${result.scanned === 1 ? '' : 's'} scanned`;
    process.stderr.write(result.findings.length > 0
      ? `stashbase scan: ${result.findings.length} possible secret${result.findings.length === 1 ? '' : 's'} found (${what}${skipped})\n`
      : `stashbase scan: no secrets found (${what}${skipped})\n`);
  }
  return result.findings.length > 0 ? 1 : 0;
}
