// Go: the module proxy protocol (GOPROXY). A package path may sit below its
// module's path, so the path and its parents are asked at once, the longest
// known one winning; a module none of them knows (404/410) does not exist,
// and the one found is what OSV is asked about. The first publication
// is the oldest release's .info Time (or @latest's, for a module with only
// pseudo-versions).
import { compareVersions, isExact } from '../versions.js';
import type { Fetch, RegistryFacts } from '../types.js';
import { jsonOf } from '../../readback/json.js';

/** The proxy's case encoding: each capital letter becomes ! and the lower-case letter. */
export const escapePath = (p: string) => p.replace(/[A-Z]/g, (c) => `!${c.toLowerCase()}`);

function infoTime(text: string): { time?: Date; version?: string } {
  try {
    const v = jsonOf(text) as { Time?: unknown; Version?: unknown };
    const time = typeof v.Time === 'string' ? new Date(v.Time) : undefined;
    return { time: time && !Number.isNaN(time.getTime()) ? time : undefined, version: typeof v.Version === 'string' ? v.Version : undefined };
  } catch {
    return {};
  }
}

export async function goFacts(proxy: string, path: string, asked: string | undefined, fetch: Fetch): Promise<RegistryFacts> {
  const base = proxy.endsWith('/') ? proxy : `${proxy}/`;
  const parts = path.split('/');
  // Every candidate module path at once (longest first wins), up to 8 of them.
  const mods: string[] = [];
  for (let n = parts.length; n >= 2 && mods.length < 8; n--) mods.push(escapePath(parts.slice(0, n).join('/')));
  const lists = await Promise.all(mods.map((m) => fetch(`${base}${m}/@v/list`)));
  const at = lists.findIndex((l) => l.status !== 404 && l.status !== 410);
  if (at === -1) return { exists: false };
  const list = lists[at] as { status: number; text: string };
  const mod = mods[at] as string;
  if (list.status !== 200) return { exists: null, problem: `the module proxy answered ${list.status}` };
  const versions = list.text.split('\n').map((l) => l.trim()).filter((l) => /^v\d/.test(l)).sort(compareVersions);
  const oldest = versions[0];
  const r = await fetch(oldest === undefined ? `${base}${mod}/@latest` : `${base}${mod}/@v/${oldest}.info`);
  const info = r.status === 200 ? infoTime(r.text) : {};
  const latest = versions.at(-1) ?? info.version;
  return { exists: true, module: parts.slice(0, parts.length - at).join('/'), created: info.time, version: asked === undefined || asked === 'latest' ? latest : isExact(asked) ? asked : undefined };
}
