// `stashbase profile list|show`: the profiles --profile finds from here, and
// what one allows, in a page you can read (or as JSON). Nothing is run or
// read of a secret: showing a profile needs no value and no trust.
import { flagBool, flagString, type FlagSpec, parseCommand } from '../lib/util/argv.js';
import { UsageError } from '../lib/errors.js';
import { availableProfiles, displayPath, findProfileFile, loadProfile } from '../lib/profile/load.js';
import { describeProfile, recordTrust, trustState } from '../lib/profile/trust.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { asciiJson, printable } from '../lib/util/printable.js';
import { JSON_FLAG, PROFILE_FLAGS, profileSource } from './shared-flags.js';
import { alignedRows } from '../lib/util/table.js';

type Main = (argv: string[]) => Promise<number>;

const listSpec = {
  name: 'profile list',
  usage: 'stashbase profile list [--profile-source auto|global|directory] [--json]',
  summary: 'List the profiles --profile finds from here: name, where, trust, description.',
  flags: [PROFILE_FLAGS[1] as FlagSpec, JSON_FLAG],
};

const showSpec = {
  name: 'profile show',
  usage: 'stashbase profile show [NAME] [--profile-source auto|global|directory] [--json]',
  summary: 'Show what a profile allows (the built-in default without NAME), with the built-in denials it keeps.',
  flags: [PROFILE_FLAGS[1] as FlagSpec, JSON_FLAG],
};

async function list(argv: string[]): Promise<number> {
  const p = parseCommand(argv, listSpec);
  if (p === null) return 0;
  if (p.positionals.length > 0 || p.rest !== null) throw new UsageError('profile list takes no arguments');
  const cwd = process.cwd();
  const env = process.env;
  const source = profileSource(flagString(p, 'profile-source'));
  const rows = availableProfiles({ source, cwd, env }).map((name) => {
    const found = findProfileFile(name, source, cwd, env);
    if (found === null) return { name, source: 'builtin', file: null as string | null, trust: 'not needed', description: 'Built-in default' };
    let description = '';
    let trust = 'not needed';
    try {
      const loaded = loadProfile({ name, source, cwd, env, checkValues: false });
      description = loaded.profile.description ?? '';
      if (found.source === 'directory' && loaded.text !== null) trust = trustState(found.file, loaded.text, env);
    } catch (e) {
      description = `invalid: ${(e as Error).message.split('\n')[0]}`;
    }
    return { name, source: found.source, file: found.file, trust, description };
  });
  if (flagBool(p, 'json')) {
    process.stdout.write(asciiJson(rows) + '\n');
    return 0;
  }
  const cells = rows.map((r) => [r.name, r.source, r.file ? displayPath(r.file, cwd) : '-', r.trust, r.description]);
  const head = ['NAME', 'SOURCE', 'FILE', 'TRUST', 'DESCRIPTION'];
  process.stdout.write(printable(alignedRows([head, ...cells]).join('\n')) + '\n');
  return 0;
}

const initSpec = {
  name: 'profile init',
  usage: 'stashbase profile init claude|codex [--name NAME] [--repo]',
  summary: "Write a starting profile for Claude Code or Codex (docs/agents.md's recipe), global by default.",
  flags: [
    { name: 'name', kind: 'value', value: 'name', help: 'Its name (default: the agent\'s)' },
    { name: 'repo', kind: 'bool', help: "Write it in the repository's .stashbase/agents (trusted as written) instead of $STASHBASE_HOME/agents" },
  ] as FlagSpec[],
  notes: 'An existing profile of that name is never overwritten.',
};

async function init(argv: string[]): Promise<number> {
  const p = parseCommand(argv, initSpec);
  if (p === null) return 0;
  const { STARTERS, STARTER_HEAD } = await import('../templates/profile-init.js');
  const agent = p.positionals[0];
  if (p.positionals.length !== 1 || p.rest !== null || agent === undefined || !Object.hasOwn(STARTERS, agent)) throw new UsageError(`profile init takes one agent: ${Object.keys(STARTERS).join(' or ')}`);
  const name = flagString(p, 'name') ?? agent;
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name) || name.endsWith('.toml')) throw new UsageError(`--name ${JSON.stringify(name)} is not a profile name (up to 64 letters, digits, ".", "_" and "-", without .toml)`);
  const cwd = process.cwd();
  const { homePaths, stashbaseHome } = await import('../lib/home.js');
  const { findRepoRoot } = await import('../lib/git/repo.js');
  let dir = homePaths(stashbaseHome(process.env)).agents;
  if (flagBool(p, 'repo')) {
    const root = findRepoRoot(cwd)?.root;
    if (root === undefined) throw new UsageError('--repo: the working directory is not in a git repository');
    dir = join(root, '.stashbase', 'agents');
  }
  const text = STARTER_HEAD + (STARTERS[agent] as string);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (flagBool(p, 'repo')) {
    // Where it really is: inside the repository, and not your own folder of profiles (a linked .stashbase could send it anywhere).
    const { realpathSync } = await import('node:fs');
    const root = realpathSync(findRepoRoot(cwd)!.root);
    const real = realpathSync(dir);
    let mine = '';
    try {
      mine = realpathSync(homePaths(stashbaseHome(process.env)).agents);
    } catch {
      // none yet
    }
    if (!real.startsWith(`${root}/`) || real === mine) throw new UsageError(`${dir} leads to ${real}, outside the repository ${root} (or into your global profiles); nothing was written`);
    dir = real;
  }
  const file = join(dir, `${name}.toml`);
  try {
    writeFileSync(file, text, { flag: 'wx', mode: 0o644 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new UsageError(`${file} exists; it is left as it is (choose another --name)`);
    throw e;
  }
  // Written by stashbase, as shown: a repository's copy is trusted at this text.
  if (flagBool(p, 'repo')) await recordTrust(file, text, process.env);
  process.stdout.write(`Wrote ${displayPath(file, cwd)}. Run with: stashbase agent run --profile ${name} -- ${agent}\n`);
  return 0;
}

async function show(argv: string[]): Promise<number> {
  const p = parseCommand(argv, showSpec);
  if (p === null) return 0;
  if (p.positionals.length > 1 || p.rest !== null) throw new UsageError('profile show takes at most one profile name');
  const cwd = process.cwd();
  const { profile } = loadProfile({ name: p.positionals[0], source: profileSource(flagString(p, 'profile-source')), cwd, env: process.env, checkValues: false });
  if (flagBool(p, 'json')) {
    process.stdout.write(asciiJson(profile) + '\n');
    return 0;
  }
  const fs = profile.filesystem;
  process.stdout.write(printable([
    `Profile: ${profile.name} (${profile.source}${profile.file ? `, ${displayPath(profile.file, cwd)}` : ''})`,
    ...(profile.description ? [`  ${profile.description}`] : []),
    describeProfile(profile),
    '',
    'Reads denied (built-in and the profile\'s):',
    ...fs.denyRead.map((e) => `  ${e}`),
    'Writes denied:',
    ...fs.denyWrite.map((e) => `  ${e}`),
    `Writes: ${fs.writes === 'allow-list' ? 'only the working directory, the run\'s own /tmp, its git directory, the agents\' state' : 'everything your user can write but the denials (weaker)'}${fs.allowWrite.length ? `, and ${fs.allowWrite.join(', ')}` : ''}`,
  ].join('\n')) + '\n');
  return 0;
}

export const mains: Record<string, Main> = { list, show, init };
export const flagsOf: Record<string, FlagSpec[]> = { list: listSpec.flags, show: showSpec.flags, init: initSpec.flags };
