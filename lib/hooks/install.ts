// Installing and removing the secret scan's git hooks. The hooks folder is the
// one git itself uses (`git rev-parse --git-path hooks`, which follows
// core.hooksPath). A hook that is not ours is never overwritten: it is chained
// (kept as NAME.stashbase-chained and run first by ours) only when asked.
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { StashbaseError, UsageError } from '../errors.js';
import { capture } from '../exec.js';
import { findTool } from '../util/find-tool.js';
import { git } from '../../templates/git.js';
import { CHAINED_SUFFIX, HOOK_MARKER, type HookInput, type HookKind, renderHook } from '../../templates/git-hook.js';

export async function hooksDir(cwd: string): Promise<string> {
  const gitPath = findTool('git');
  if (!gitPath) throw new UsageError('git is not installed');
  let out: string;
  try {
    out = await capture(git(gitPath, cwd, ['rev-parse', '--git-path', 'hooks'], false));
  } catch {
    throw new UsageError(`${cwd} is not in a git repository`);
  }
  const dir = out.replace(/\n$/, '');
  return isAbsolute(dir) ? dir : resolve(cwd, dir);
}

export function isOurHook(path: string): boolean {
  try {
    const st = lstatSync(path);
    if (!st.isFile() || st.size > 1 << 20) return false;
    return readFileSync(path, 'utf8').split('\n', 3).includes(HOOK_MARKER + ` (${path.slice(path.lastIndexOf('/') + 1)})`);
  } catch {
    return false;
  }
}

export type InstallOutcome = 'installed' | 'updated' | 'chained';

/**
 * Writes our hook of `kind`. A foreign hook there is chained when `chain()`
 * says so (a flag, or a y/N answer); otherwise nothing changes and the error
 * names the flag that chains.
 */
export async function installHook(dir: string, h: HookInput, chain: (existing: string) => Promise<boolean>): Promise<InstallOutcome> {
  const path = join(dir, h.kind);
  const chained = path + CHAINED_SUFFIX;
  mkdirSync(dir, { recursive: true });
  let outcome: InstallOutcome = 'installed';
  if (isOurHook(path)) outcome = 'updated';
  else if (lstatSync(path, { throwIfNoEntry: false })) {
    if (existsSync(chained) || lstatSync(chained, { throwIfNoEntry: false })) {
      throw new StashbaseError(`${path} is not stashbase's hook, and ${chained} exists already; nothing was changed (move one of them away first)`, 1);
    }
    if (!(await chain(path))) {
      throw new StashbaseError(`${path} exists and is not stashbase's hook; nothing was changed. Run again with --chain to keep it (as ${h.kind}${CHAINED_SUFFIX}, run before the scan), or remove it first`, 1);
    }
    renameSync(path, chained);
    outcome = 'chained';
  }
  // Written beside and renamed over: git never runs a half-written hook.
  const tmp = `${path}.stashbase-tmp-${process.pid}`;
  writeFileSync(tmp, renderHook(h), { mode: 0o755 });
  chmodSync(tmp, 0o755);
  renameSync(tmp, path);
  return outcome;
}

export type UninstallOutcome = 'removed' | 'restored' | 'not ours' | 'absent';

/** Removes our hook of `kind` and puts back the hook it chained; a foreign hook is left alone. */
export function uninstallHook(dir: string, kind: HookKind): UninstallOutcome {
  const path = join(dir, kind);
  const chained = path + CHAINED_SUFFIX;
  if (!lstatSync(path, { throwIfNoEntry: false })) return 'absent';
  if (!isOurHook(path)) return 'not ours';
  unlinkSync(path);
  if (lstatSync(chained, { throwIfNoEntry: false })) {
    renameSync(chained, path);
    return 'restored';
  }
  return 'removed';
}
