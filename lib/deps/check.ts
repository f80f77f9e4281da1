// The dependency check of a set of requested packages: where each
// ecosystem's registry is, then every package's registry document and OSV
// advisories at once, within one deadline; then a verdict per package.
import { request, failure } from './http.js';
import { decide, notChecked } from './decide.js';
import { osvBase, osvFacts } from './osv.js';
import { cratesFacts } from './registries/crates.js';
import { goFacts } from './registries/go.js';
import { npmFacts } from './registries/npm.js';
import { pypiFacts } from './registries/pypi.js';
import { cratesIndex, goProxy, type Located, npmRegistries, pypiIndex } from './registry-config.js';
import { hasLocalBin, npmRepoPackages } from './repo-deps.js';
import type { DependencyCheckSettings } from './settings.js';
import { nearPopular, popularList } from './typosquat.js';
import type { Decision, Ecosystem, Fetch, OsvFacts, RegistryFacts, Requested } from './types.js';

/** The network part of a check ends by then; what has not answered is unchecked. */
export const BUDGET_MS = 6000;
/** More registry packages than this in one command: the rest are unchecked (each costs two look-ups). */
export const MAX_PACKAGES = 32;

export interface CheckInput {
  requests: Requested[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  settings: DependencyCheckSettings;
  now?: Date;
}

type Registry = Extract<Requested, { kind: 'registry' }>;

interface Location {
  at: (r: Registry) => Located<string>;
  /** Why a name missing there is not final (pip also looks in other indexes). */
  soft?: string;
}

async function locate(eco: Ecosystem, reqs: Registry[], cwd: string, env: NodeJS.ProcessEnv): Promise<Location> {
  const own = (found: Located<string>) => (r: Registry): Located<string> => (r.registry !== undefined ? { ok: r.registry } : found);
  if (reqs.every((r) => r.registry !== undefined)) return { at: own({ problem: 'unreachable' }) };
  if (eco === 'npm') {
    const scopes = [...new Set(reqs.map((r) => r.name.split('/')[0] as string).filter((s) => s.startsWith('@')))];
    const found = await npmRegistries(cwd, env, scopes);
    if ('problem' in found) return { at: own(found) };
    return { at: (r) => own({ ok: found.ok.scoped[r.name.split('/')[0] as string] ?? found.ok.base })(r) };
  }
  if (eco === 'pypi') {
    const found = await pypiIndex(cwd, env);
    if ('problem' in found) return { at: own(found) };
    return { at: own({ ok: found.ok.index }), soft: found.ok.extra ? "pip's configuration names another index or link folder" : undefined };
  }
  return { at: own(eco === 'crates' ? await cratesIndex(cwd, env) : await goProxy(cwd, env)) };
}

async function registryFacts(r: Registry, url: string, fetch: Fetch): Promise<RegistryFacts> {
  const facts = { npm: npmFacts, pypi: pypiFacts, crates: cratesFacts, go: goFacts }[r.ecosystem];
  return facts(url, r.name, r.version, fetch);
}

async function guarded<T extends { problem?: string }>(what: () => Promise<T>, fallback: (problem: string) => T): Promise<T> {
  try {
    return await what();
  } catch (e) {
    return fallback(failure(e));
  }
}

export async function checkPackages(input: CheckInput): Promise<Decision[]> {
  const now = input.now ?? new Date();
  const signal = AbortSignal.timeout(BUDGET_MS);
  const fetch: Fetch = (url, init) => request(url, { ...init, signal }, { env: input.env });
  const wanted = input.requests.filter((r) => !(r.kind === 'registry' && r.unlessLocalBin !== undefined && hasLocalBin(input.cwd, r.unlessLocalBin)));
  const requests = wanted.map((r, i): Requested =>
    r.kind === 'registry' && wanted.slice(0, i).filter((x) => x.kind === 'registry').length >= MAX_PACKAGES
      ? { kind: 'unchecked', ecosystem: r.ecosystem, spec: r.spec, why: `more than ${MAX_PACKAGES} packages in one command`, remote: true }
      : r,
  );
  const registry = requests.filter((r): r is Registry => r.kind === 'registry');
  const ecosystems = [...new Set(registry.map((r) => r.ecosystem))];
  const where = new Map<Ecosystem, Location>();
  const lists = new Map<Ecosystem, Awaited<ReturnType<typeof popularList>>>();
  await Promise.all(ecosystems.flatMap((eco) => [
    locate(eco, registry.filter((r) => r.ecosystem === eco), input.cwd, input.env).then((l) => void where.set(eco, l), (e) => void where.set(eco, { at: () => ({ problem: failure(e) }) })),
    popularList(eco).then((l) => void lists.set(eco, l)),
  ]));
  const inRepo = registry.some((r) => r.ecosystem === 'npm') ? npmRepoPackages(input.cwd) : null;
  const osv = osvBase(input.env);
  const osvOf = (eco: Ecosystem, name: string) => guarded<OsvFacts>(() => osvFacts(osv, eco, name, fetch), (problem) => ({ advisories: [], problem }));

  return Promise.all(
    requests.map(async (r): Promise<Decision> => {
      if (r.kind === 'unchecked') return notChecked(r);
      const place = where.get(r.ecosystem) as Location;
      const loc = place.at(r);
      // A name the command sends to its own index is not softened by pip's configured extras.
      const req = place.soft !== undefined && r.registry === undefined && r.softMissing === undefined ? { ...r, softMissing: place.soft } : r;
      const url = 'ok' in loc ? loc.ok : null;
      const regP = url === null
        ? Promise.resolve<RegistryFacts>({ exists: null, problem: (loc as { problem: string }).problem })
        : guarded<RegistryFacts>(() => registryFacts(req, url, fetch), (problem) => ({ exists: null, problem }));
      // Go's OSV entries are by module, which the proxy tells; the others run side by side.
      const [reg, adv] = r.ecosystem === 'go'
        ? await regP.then(async (f) => [f, await osvOf('go', f.module ?? r.name)] as const)
        : await Promise.all([regP, osvOf(r.ecosystem, r.name)]);
      const near = nearPopular(r.ecosystem, r.name, lists.get(r.ecosystem) ?? null, input.settings.typosquatDistance);
      return decide({
        request: req, registryUrl: url, registry: reg, osv: adv, settings: input.settings, now, near,
        inRepo: r.ecosystem === 'npm' ? (inRepo?.has(r.name) ?? false) : null,
      });
    }),
  );
}
