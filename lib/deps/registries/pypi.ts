// PyPI: the project's JSON document beside the configured simple index
// (INDEX/../pypi/NAME/json: its first upload and latest version), and where
// that is missing, the simple index page itself (PEP 691 JSON), so that an
// index without the JSON API does not make every name look missing.
import { isExact } from '../versions.js';
import type { Fetch, RegistryFacts } from '../types.js';
import { jsonOf } from '../../readback/json.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

const slash = (u: string) => (u.endsWith('/') ? u : `${u}/`);

/** INDEX/pypi/NAME/json for an index that ends in /simple, else null. */
export function jsonApiUrl(index: string, name: string): string | null {
  const m = /^(.*\/)simple\/?$/.exec(index);
  return m ? `${m[1]}pypi/${encodeURIComponent(name)}/json` : null;
}

const earliest = (times: string[]) => times.map((t) => new Date(t)).filter((d) => !Number.isNaN(d.getTime())).sort((a, b) => a.getTime() - b.getTime())[0];

export function pypiFactsFrom(text: string, asked: string | undefined): RegistryFacts {
  let doc: unknown;
  try {
    doc = jsonOf(text);
  } catch {
    return { exists: null, problem: 'the index answered something that is not JSON' };
  }
  if (!isObj(doc) || !isObj(doc.info) || !isObj(doc.releases)) return { exists: null, problem: 'the index answered a document of the wrong shape' };
  const times: string[] = [];
  for (const files of Object.values(doc.releases)) {
    if (!Array.isArray(files)) continue;
    for (const f of files) if (isObj(f) && typeof (f.upload_time_iso_8601 ?? f.upload_time) === 'string') times.push(String(f.upload_time_iso_8601 ?? f.upload_time));
  }
  const latest = typeof doc.info.version === 'string' ? doc.info.version : undefined;
  const version = asked === undefined ? latest : isExact(asked) || /^[\d.]+$/.test(asked) ? asked : undefined;
  return { exists: true, created: earliest(times), version };
}

/** PEP 691 JSON of a simple index page: files with upload-time (PEP 700), project-status (PEP 792). */
export function simpleFactsFrom(text: string): RegistryFacts {
  let doc: unknown;
  try {
    doc = jsonOf(text);
  } catch {
    // An HTML page (PEP 503): the project exists; nothing more is read from it.
    return /<a\s/i.test(text) ? { exists: true } : { exists: null, problem: 'the index answered a page that lists no files' };
  }
  if (!isObj(doc) || !Array.isArray(doc.files)) return { exists: null, problem: 'the index answered a document of the wrong shape' };
  const facts: RegistryFacts = { exists: true, created: earliest(doc.files.filter(isObj).map((f) => f['upload-time']).filter((t): t is string => typeof t === 'string')) };
  const status = isObj(doc['project-status']) ? doc['project-status'].status : undefined;
  if (status === 'quarantined') facts.takenDown = 'the index has quarantined it (suspected malware)';
  return facts;
}

export async function pypiFacts(index: string, name: string, asked: string | undefined, fetch: Fetch): Promise<RegistryFacts> {
  const api = jsonApiUrl(index, name);
  if (api !== null) {
    const r = await fetch(api);
    if (r.status === 200) return pypiFactsFrom(r.text, asked);
    if (r.status !== 404) return { exists: null, problem: `the index answered ${r.status}` };
  }
  const r = await fetch(`${slash(index)}${encodeURIComponent(name)}/`, { headers: { accept: 'application/vnd.pypi.simple.v1+json, text/html;q=0.1' } });
  if (r.status === 404) return { exists: false };
  if (r.status !== 200) return { exists: null, problem: `the index answered ${r.status}` };
  const facts = simpleFactsFrom(r.text);
  return asked !== undefined && isExact(asked) ? { ...facts, version: asked } : facts;
}
