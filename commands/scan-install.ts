import { realpathSync } from 'node:fs';
import { flagBool, flagString, type FlagSpec, parseCommand } from '../lib/util/argv.js';
import { UsageError } from '../lib/errors.js';
import { HOOK_KINDS, type HookKind } from '../templates/git-hook.js';
import { PROFILE_FLAGS, profileSource } from './shared-flags.js';

export const usage = 'stashbase scan install [--pre-commit] [--pre-push] [--chain] [--profile <name>] | --uninstall';
export const summary = 'Install the secret scan as git hooks of this repository (pre-commit and pre-push by default).';
export const flags: FlagSpec[] = [
  { name: 'pre-commit', kind: 'bool', help: 'The pre-commit hook (scans what the commit adds)' },
  { name: 'pre-push', kind: 'bool', help: 'The pre-push hook (scans what each pushed commit adds)' },
  { name: 'chain', kind: 'bool', help: 'Keep a hook that is already there and run it before the scan (asked in a terminal)' },
  { name: 'uninstall', kind: 'bool', help: 'Remove our hooks and put back the hooks they chained' },
  ...PROFILE_FLAGS.map((f) => (f.name === 'profile' ? { ...f, help: "Outside a sandbox the hooks also look for this profile's bound secrets" } : f)),
];

const spec = {
  name: 'scan install',
  usage,
  summary,
  flags,
  notes: [
    'Hooks go where git runs them from (git rev-parse --git-path hooks, which follows core.hooksPath).',
    'They record this CLI\'s path (stashbase on PATH is the fallback). git commit --no-verify skips them:',
    'a safety net, not a boundary. See docs/hooks.md.',
  ].join('\n'),
};

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.positionals.length > 0 || p.rest !== null) throw new UsageError('scan install takes no arguments');
  const chosen = HOOK_KINDS.filter((k) => flagBool(p, k) === true);
  const kinds: readonly HookKind[] = chosen.length > 0 ? chosen : HOOK_KINDS;
  const uninstall = flagBool(p, 'uninstall') === true;
  const profile = flagString(p, 'profile');
  const source = flagString(p, 'profile-source');
  if (uninstall && (flagBool(p, 'chain') !== undefined || profile !== undefined || source !== undefined)) throw new UsageError('--uninstall takes only --pre-commit and --pre-push');
  if (source !== undefined && profile === undefined) throw new UsageError('--profile-source needs --profile');
  const cwd = process.cwd();
  const { hooksDir, installHook, uninstallHook } = await import('../lib/hooks/install.js');
  const dir = await hooksDir(cwd);
  if (uninstall) {
    for (const kind of kinds) {
      const r = uninstallHook(dir, kind);
      const say = { removed: 'removed', restored: 'removed; the hook it chained is back', 'not ours': "left alone: it is not stashbase's", absent: 'not installed' }[r];
      process.stderr.write(`${dir}/${kind}: ${say}\n`);
    }
    return 0;
  }
  if (profile !== undefined) {
    // Checked now, so a typo does not block every later commit.
    const { loadProfile } = await import('../lib/profile/load.js');
    loadProfile({ name: profile, source: profileSource(source), cwd, env: process.env });
  }
  const profileArgs = profile === undefined ? [] : ['--profile', profile, ...(source !== undefined ? ['--profile-source', source] : [])];
  const node = process.execPath;
  const cli = realpathSync(process.argv[1] as string);
  const chainFlag = flagBool(p, 'chain') === true;
  const { isInteractive, confirm } = await import('../lib/util/prompt.js');
  const chain = async (existing: string) => {
    if (chainFlag) return true;
    if (!isInteractive(false)) return false;
    return confirm(`${existing} is not stashbase's hook. Keep it and run it before the scan?`);
  };
  for (const kind of kinds) {
    const r = await installHook(dir, { kind, node, cli, profileArgs }, chain);
    const say = { installed: 'installed', updated: 'updated', chained: `installed; the hook that was there runs first (kept as ${kind}.stashbase-chained)` }[r];
    process.stderr.write(`${dir}/${kind}: ${say}\n`);
  }
  return 0;
}
