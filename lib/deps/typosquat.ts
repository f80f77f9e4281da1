// Is a name a near miss of a much more popular one? The popular names are
// bundled per ecosystem (lib/deps/popular-*.ts, made by
// scripts/popular-names.mjs, which records where from and when). A name that
// is itself on the list is popular in its own right and never warned about;
// Cargo and Go have no list, so nothing is warned about there.
import { editDistance } from './edit-distance.js';
import { normalizePypi } from './specs.js';
import type { Ecosystem } from './types.js';

/** Shorter names are within one or two edits of too many others to say anything. */
export const MIN_LENGTH = 4;
export const MIN_LENGTH_FOR_TWO = 7;

export interface PopularList {
  /** Names, most popular first. */
  names: readonly string[];
  source: string;
}

const normalize = (ecosystem: Ecosystem, name: string) => (ecosystem === 'pypi' ? normalizePypi(name) : name.toLowerCase());

/** The closest listed name within `distance` edits of `name` (the most popular on a tie; never `name` itself), or null. */
export function nearPopular(ecosystem: Ecosystem, name: string, list: PopularList | null, distance: number): { name: string; rank: number; distance: number } | null {
  if (list === null || distance <= 0) return null;
  const n = normalize(ecosystem, name);
  if (n.length < MIN_LENGTH) return null;
  const names = list.names.map((p) => normalize(ecosystem, p));
  if (names.includes(n)) return null;
  const max = n.length < MIN_LENGTH_FOR_TWO ? Math.min(1, distance) : distance;
  // The closest, then the most popular of those.
  let best: { name: string; rank: number; distance: number } | null = null;
  for (let rank = 0; rank < names.length; rank++) {
    const d = editDistance(n, names[rank] as string, best ? best.distance - 1 : max);
    if (d <= max && (best === null || d < best.distance)) best = { name: list.names[rank] as string, rank: rank + 1, distance: d };
    if (best?.distance === 1) break;
  }
  return best;
}

/** The bundled list of an ecosystem, loaded only when a check needs it. */
export async function popularList(ecosystem: Ecosystem): Promise<PopularList | null> {
  if (ecosystem === 'npm') {
    const m = await import('./popular-npm.js');
    return { names: m.POPULAR_NPM.split(/\s+/).filter(Boolean), source: m.SOURCE };
  }
  if (ecosystem === 'pypi') {
    const m = await import('./popular-pypi.js');
    return { names: m.POPULAR_PYPI.split(/\s+/).filter(Boolean), source: m.SOURCE };
  }
  return null;
}
