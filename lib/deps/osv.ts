// OSV (https://osv.dev): the malicious-package advisories (MAL- entries,
// from the OpenSSF malicious-packages feed) recorded for a package, asked by
// its package URL. The query names no version, so it runs beside the registry's; which versions
// an advisory covers is read from the entry itself. STASHBASE_OSV_URL points
// the check at another OSV instance (tests use a local one).
import { PURL_TYPE, type Ecosystem, type Fetch, type MaliciousAdvisory, type OsvFacts } from './types.js';
import { jsonOf } from '../readback/json.js';

export const OSV_URL_VAR = 'STASHBASE_OSV_URL';
export const DEFAULT_OSV_URL = 'https://api.osv.dev';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

export function osvBase(env: NodeJS.ProcessEnv): string {
  return (env[OSV_URL_VAR] || DEFAULT_OSV_URL).replace(/\/+$/, '');
}

/** What one OSV entry says, when it is a malicious-package advisory; null otherwise. */
export function maliciousEntry(v: unknown): MaliciousAdvisory | null {
  if (!isObj(v) || typeof v.id !== 'string') return null;
  const ids = [v.id, ...(Array.isArray(v.aliases) ? v.aliases.filter((a): a is string => typeof a === 'string') : [])];
  const mal = ids.find((i) => i.startsWith('MAL-'));
  if (mal === undefined) return null;
  const versions: string[] = [];
  let allVersions = false;
  const affected = Array.isArray(v.affected) ? v.affected.filter(isObj) : [];
  for (const a of affected) {
    if (Array.isArray(a.versions)) versions.push(...a.versions.filter((x): x is string => typeof x === 'string'));
    for (const r of Array.isArray(a.ranges) ? a.ranges.filter(isObj) : []) {
      const events = Array.isArray(r.events) ? r.events.filter(isObj) : [];
      const open = events.some((e) => e.introduced === '0') && !events.some((e) => 'fixed' in e || 'last_affected' in e || 'limit' in e);
      if (open) allVersions = true;
    }
  }
  // No versions and no readable range: take it as covering every version.
  if (versions.length === 0) allVersions = true;
  return { id: mal === v.id ? v.id : `${mal} (${v.id})`, summary: typeof v.summary === 'string' ? v.summary : undefined, allVersions, versions };
}

/** The advisories that cover `version` (every one when the version is not known). */
export function coveringVersion(advisories: MaliciousAdvisory[], version: string | undefined): MaliciousAdvisory[] {
  return advisories.filter((a) => a.allVersions || version === undefined || a.versions.includes(version));
}

/**
 * The package URL OSV is asked with: pkg:npm/%40scope/name, pkg:pypi/name,
 * pkg:cargo/name, pkg:golang/module/path (a purl needs no ecosystem label).
 */
export function purl(ecosystem: Ecosystem, name: string): string {
  const path = name.split('/').map(encodeURIComponent).join('/');
  return `pkg:${PURL_TYPE[ecosystem]}/${path}`;
}

export async function osvFacts(base: string, ecosystem: Ecosystem, name: string, fetch: Fetch): Promise<OsvFacts> {
  const advisories: MaliciousAdvisory[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < 5; page++) {
    const body = JSON.stringify({ package: { purl: purl(ecosystem, name) }, ...(pageToken ? { page_token: pageToken } : {}) });
    const r = await fetch(`${base}/v1/query`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    if (r.status !== 200) return { advisories, problem: `OSV answered ${r.status}` };
    let doc: unknown;
    try {
      doc = jsonOf(r.text);
    } catch {
      return { advisories, problem: 'OSV answered something that is not JSON' };
    }
    if (!isObj(doc) || (doc.vulns !== undefined && !Array.isArray(doc.vulns))) return { advisories, problem: 'OSV answered a document of the wrong shape' };
    for (const v of (doc.vulns as unknown[] | undefined) ?? []) {
      const m = maliciousEntry(v);
      if (m) advisories.push(m);
    }
    pageToken = typeof doc.next_page_token === 'string' && doc.next_page_token !== '' ? doc.next_page_token : undefined;
    if (pageToken === undefined) return { advisories };
  }
  return { advisories, problem: 'OSV has more pages of advisories than this check reads' };
}
