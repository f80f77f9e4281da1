// npm: the package document ("packument") of the configured registry. A 404
// is a name that does not exist; `time.created` is its first publication;
// the version the install would take is resolved from the request (an exact
// version, a dist-tag, else the newest of the range's major, else latest),
// and its preinstall/install/postinstall scripts are read. A package the
// registry replaced with its "security holding package" was taken down.
import { compareVersions, isExact, isRelease, parseVersion } from '../versions.js';
import type { Fetch, RegistryFacts } from '../types.js';
import { jsonOf } from '../../readback/json.js';

const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

export function packumentUrl(registry: string, name: string): string {
  const base = registry.endsWith('/') ? registry : `${registry}/`;
  return base + (name.startsWith('@') ? `@${encodeURIComponent(name.slice(1))}` : encodeURIComponent(name));
}

/** The version an install of `asked` would take, or undefined when it cannot be told. */
export function resolveNpmVersion(asked: string | undefined, versions: string[], distTags: Record<string, unknown>): string | undefined {
  const latest = typeof distTags.latest === 'string' ? distTags.latest : undefined;
  if (asked === undefined || asked === '' || asked === '*') return latest;
  if (isExact(asked)) return versions.includes(asked) ? asked : undefined;
  if (typeof distTags[asked] === 'string') return distTags[asked] as string;
  const m = /^[\^~=v]*(\d+)(?:[.\dx*]*)$/.exec(asked.trim());
  if (!m) return latest;
  const major = Number(m[1]);
  const same = versions.filter((v) => parseVersion(v)?.nums[0] === major && isRelease(v)).sort(compareVersions);
  return same.at(-1) ?? latest;
}

/** The facts from a packument's text (exported for tests). */
export function npmFactsFrom(text: string, asked: string | undefined): RegistryFacts {
  let doc: unknown;
  try {
    doc = jsonOf(text);
  } catch {
    return { exists: null, problem: 'the registry answered something that is not JSON' };
  }
  if (!isObj(doc)) return { exists: null, problem: 'the registry answered a document of the wrong shape' };
  const time = isObj(doc.time) ? doc.time : {};
  const versions = isObj(doc.versions) ? doc.versions : null;
  if (versions === null || Object.keys(versions).length === 0) {
    if (typeof time.unpublished === 'string' || isObj(time.unpublished)) return { exists: false, problem: 'it was unpublished' };
    return { exists: null, problem: 'the registry answered a document without versions' };
  }
  const created = typeof time.created === 'string' ? new Date(time.created) : undefined;
  const distTags = isObj(doc['dist-tags']) ? doc['dist-tags'] : {};
  const version = resolveNpmVersion(asked, Object.keys(versions), distTags);
  const manifest = version !== undefined && isObj(versions[version]) ? (versions[version] as Obj) : undefined;
  const scripts = manifest && isObj(manifest.scripts) ? manifest.scripts : {};
  const facts: RegistryFacts = {
    exists: true,
    created: created && !Number.isNaN(created.getTime()) ? created : undefined,
    version,
    installScripts: manifest ? INSTALL_SCRIPTS.filter((s) => typeof scripts[s] === 'string') : undefined,
  };
  const description = String(manifest?.description ?? doc.description ?? '');
  if (typeof distTags.latest === 'string' && /-security$/.test(distTags.latest) && /security holding package/i.test(description)) {
    facts.takenDown = 'the registry replaced it with a security holding package (it was removed for malicious code)';
  }
  if (version === undefined && asked !== undefined) facts.problem = `no version matches ${JSON.stringify(asked)}`;
  return facts;
}

export async function npmFacts(registry: string, name: string, asked: string | undefined, fetch: Fetch): Promise<RegistryFacts> {
  const r = await fetch(packumentUrl(registry, name));
  if (r.status === 404) return { exists: false };
  if (r.status !== 200) return { exists: null, problem: `the registry answered ${r.status}` };
  return npmFactsFrom(r.text, asked);
}
