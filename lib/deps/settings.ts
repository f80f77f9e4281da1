// The thresholds of the dependency check: the profile's [hooks.dependency_check]
// table, passed to a check inside a run as one JSON variable (the check cannot
// read $STASHBASE_HOME there), else the defaults.
import { UsageError } from '../errors.js';
import { jsonOf } from '../readback/json.js';

export type OnUnchecked = 'ask' | 'deny' | 'allow';
export const ON_UNCHECKED: readonly OnUnchecked[] = ['ask', 'deny', 'allow'];

export interface DependencyCheckSettings {
  /** Warn on a package first published fewer days ago than this (0: never). */
  minAgeDays: number;
  /** Warn on a name this close to a much more popular one (0: never). */
  typosquatDistance: number;
  /** What a package that could not be checked gets. */
  onUnchecked: OnUnchecked;
}

export const DEFAULT_DEPENDENCY_CHECK: DependencyCheckSettings = { minAgeDays: 7, typosquatDistance: 2, onUnchecked: 'ask' };
export const MAX_TYPOSQUAT_DISTANCE = 3;
export const MAX_MIN_AGE_DAYS = 3650;

/** Set by a run for the check inside it: {"min_age_days":7,"typosquat_distance":2,"on_unchecked":"ask"}. */
export const SETTINGS_VAR = 'STASHBASE_DEPENDENCY_CHECK';

export function settingsToEnv(s: DependencyCheckSettings): string {
  return JSON.stringify({ min_age_days: s.minAgeDays, typosquat_distance: s.typosquatDistance, on_unchecked: s.onUnchecked });
}

/** The problem with one threshold value, or null; shared by the profile validator and the variable's reader. */
export function thresholdProblem(key: 'min_age_days' | 'typosquat_distance' | 'on_unchecked', value: unknown): string | null {
  if (key === 'on_unchecked') return ON_UNCHECKED.includes(value as OnUnchecked) ? null : `must be one of ${ON_UNCHECKED.map((v) => JSON.stringify(v)).join(', ')}`;
  const max = key === 'min_age_days' ? MAX_MIN_AGE_DAYS : MAX_TYPOSQUAT_DISTANCE;
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= max ? null : `must be a whole number from 0 to ${max}`;
}

export function settingsFromEnv(env: NodeJS.ProcessEnv): DependencyCheckSettings {
  const text = env[SETTINGS_VAR];
  if (text === undefined || text === '') return { ...DEFAULT_DEPENDENCY_CHECK };
  let v: unknown;
  try {
    v = jsonOf(text);
  } catch {
    throw new UsageError(`${SETTINGS_VAR} is not JSON`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new UsageError(`${SETTINGS_VAR} is not a JSON object`);
  const o = v as Record<string, unknown>;
  const out = { ...DEFAULT_DEPENDENCY_CHECK };
  for (const [k, val] of Object.entries(o)) {
    if (k !== 'min_age_days' && k !== 'typosquat_distance' && k !== 'on_unchecked') throw new UsageError(`${SETTINGS_VAR}: unknown key ${JSON.stringify(k)}`);
    const p = thresholdProblem(k, val);
    if (p) throw new UsageError(`${SETTINGS_VAR} ${k}: ${p}`);
    if (k === 'min_age_days') out.minAgeDays = val as number;
    else if (k === 'typosquat_distance') out.typosquatDistance = val as number;
    else out.onUnchecked = val as OnUnchecked;
  }
  return out;
}
