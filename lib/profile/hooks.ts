// The profile's [hooks] table: settings of the hooks allow_hooks turns on.
// [hooks.dependency_check] holds the dependency check's thresholds
// (lib/deps/settings.ts), each validated like every other key.
import { DEFAULT_DEPENDENCY_CHECK, type DependencyCheckSettings, type OnUnchecked, thresholdProblem } from '../deps/settings.js';
import { type KeyPath, Reader, tomlType } from './validators.js';

const HOOK_TABLES = ['dependency_check'] as const;
const DEPENDENCY_CHECK = ['min_age_days', 'typosquat_distance', 'on_unchecked'] as const;

export interface HookSettings {
  dependencyCheck: DependencyCheckSettings;
}

export const defaultHookSettings = (): HookSettings => ({ dependencyCheck: { ...DEFAULT_DEPENDENCY_CHECK } });

function whole(r: Reader, value: unknown, path: KeyPath, key: 'min_age_days' | 'typosquat_distance'): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' && typeof value !== 'bigint') {
    r.fail(path, `expected a whole number, got ${tomlType(value)}`);
    return undefined;
  }
  const n = Number(value);
  const p = thresholdProblem(key, n);
  if (p) {
    r.fail(path, `${String(value)} ${p.replace(/^must/, 'is not allowed: it must')}`);
    return undefined;
  }
  return n;
}

export function readHooks(r: Reader, value: unknown): HookSettings {
  const hooks = r.table(value, ['hooks'], HOOK_TABLES);
  const dc = r.table(hooks.dependency_check, ['hooks', 'dependency_check'], DEPENDENCY_CHECK);
  const at = (k: string): KeyPath => ['hooks', 'dependency_check', k];
  const d = DEFAULT_DEPENDENCY_CHECK;
  return {
    dependencyCheck: {
      minAgeDays: whole(r, dc.min_age_days, at('min_age_days'), 'min_age_days') ?? d.minAgeDays,
      typosquatDistance: whole(r, dc.typosquat_distance, at('typosquat_distance'), 'typosquat_distance') ?? d.typosquatDistance,
      onUnchecked: r.oneOf<OnUnchecked>(dc.on_unchecked, at('on_unchecked'), ['ask', 'deny', 'allow']) ?? d.onUnchecked,
    },
  };
}
