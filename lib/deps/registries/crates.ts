// Cargo's default registry (or its replacement): the sparse index's config.json names the
// registry's web API, whose crate document has `created_at` and the newest
// version; without an API, the index file alone tells whether the crate exists.
import { isExact } from '../versions.js';
import type { Fetch, RegistryFacts } from '../types.js';
import { jsonOf } from '../../readback/json.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The sparse index's path of a crate (1/a, 2/ab, 3/a/abc, ab/cd/abcd…). */
export function indexPath(name: string): string {
  const n = name.toLowerCase();
  if (n.length <= 2) return `${n.length}/${n}`;
  if (n.length === 3) return `3/${n[0]}/${n}`;
  return `${n.slice(0, 2)}/${n.slice(2, 4)}/${n}`;
}

export async function cratesFacts(index: string, name: string, asked: string | undefined, fetch: Fetch): Promise<RegistryFacts> {
  const base = index.endsWith('/') ? index : `${index}/`;
  const c = await fetch(`${base}config.json`);
  let api: string | undefined;
  if (c.status === 200) {
    try {
      const cfg = jsonOf(c.text) as unknown;
      if (isObj(cfg) && typeof cfg.api === 'string') api = cfg.api.replace(/\/+$/, '');
    } catch {
      return { exists: null, problem: "the index's config.json is not JSON" };
    }
  } else return { exists: null, problem: `the index answered ${c.status} for its config.json` };
  if (api === undefined) {
    const r = await fetch(`${base}${indexPath(name)}`);
    if (r.status === 404 || r.status === 410) return { exists: false };
    if (r.status !== 200) return { exists: null, problem: `the index answered ${r.status}` };
    return { exists: true, version: asked !== undefined && isExact(asked) ? asked : undefined };
  }
  const r = await fetch(`${api}/api/v1/crates/${encodeURIComponent(name)}`);
  if (r.status === 404) return { exists: false };
  if (r.status !== 200) return { exists: null, problem: `the registry answered ${r.status}` };
  let doc: unknown;
  try {
    doc = jsonOf(r.text);
  } catch {
    return { exists: null, problem: 'the registry answered something that is not JSON' };
  }
  const crate = isObj(doc) && isObj(doc.crate) ? doc.crate : null;
  if (crate === null) return { exists: null, problem: 'the registry answered a document of the wrong shape' };
  const created = typeof crate.created_at === 'string' ? new Date(crate.created_at) : undefined;
  const newest = [crate.max_stable_version, crate.newest_version, crate.max_version].find((v): v is string => typeof v === 'string');
  return {
    exists: true,
    created: created && !Number.isNaN(created.getTime()) ? created : undefined,
    version: asked === undefined ? newest : isExact(asked) ? asked : undefined,
  };
}
