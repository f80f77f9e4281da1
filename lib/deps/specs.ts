// One install argument of each ecosystem, read the way its package manager
// reads it: a registry name with an optional version, or something that is
// not a registry name (a local path, a URL, a git spec), which is said and
// not checked.
import { DYNAMIC } from './shell-words.js';
import type { Ecosystem, Requested } from './types.js';

type Extra = { registry?: string; softMissing?: string };

const unchecked = (ecosystem: Ecosystem, spec: string, why: string, remote: boolean): Requested => ({ kind: 'unchecked', ecosystem, spec, why, remote });
const dynamic = (ecosystem: Ecosystem, spec: string) => unchecked(ecosystem, spec, 'its name is only known when the shell runs it', true);

const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;
const GIT = /^(git\+[a-z]+:|git:|git@|ssh:\/\/)/i;
const ARCHIVE = /\.(tgz|tar|tar\.gz|tar\.bz2|tar\.xz|zip|whl|crate)$/i;
const LOCAL_START = /^(\.{1,2}(\/|$)|\/|~)/;

/** npm, pnpm, yarn and bun: `name`, `name@range`, `@scope/name@tag`, `alias@npm:name@1`. */
export function npmSpec(spec: string, extra: Extra = {}): Requested | null {
  if (spec.includes(DYNAMIC)) return dynamic('npm', spec);
  if (LOCAL_START.test(spec) || /^(file|link|workspace|portal|patch):/.test(spec) || (ARCHIVE.test(spec) && !URL_LIKE.test(spec))) {
    return unchecked('npm', spec, 'a local path', false);
  }
  if (GIT.test(spec) || /^(github|gitlab|bitbucket|gist):/.test(spec)) return unchecked('npm', spec, 'a git repository', true);
  if (URL_LIKE.test(spec)) return unchecked('npm', spec, 'a URL', true);
  const m = /^(@[^/@\s]+\/[^/@\s]+|[^/@\s]+)(?:@(.*))?$/.exec(spec);
  if (!m) {
    // user/repo is npm's GitHub shorthand.
    if (/^[^@/\s]+\/[^/\s]+$/.test(spec)) return unchecked('npm', spec, 'a GitHub repository (user/repo)', true);
    return null;
  }
  const name = m[1] as string;
  const version = m[2];
  if (version !== undefined && version.startsWith('npm:')) {
    const target = npmSpec(version.slice(4), extra);
    return target && target.kind === 'registry' ? { ...target, spec } : target;
  }
  if (version !== undefined && (GIT.test(version) || URL_LIKE.test(version) || /^(github|file):/.test(version))) {
    return unchecked('npm', spec, 'not from the registry', URL_LIKE.test(version) || GIT.test(version));
  }
  if (!/^(@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/i.test(name) || name.length > 214) return null;
  return { kind: 'registry', ecosystem: 'npm', spec, name, version: version === '' ? undefined : version, ...extra };
}

/** PEP 503: case and runs of `-`, `_`, `.` do not matter. */
export const normalizePypi = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

/** pip and uv: a PEP 508 requirement (`name[extra]>=1; marker`, `name @ url`), a path or a URL. */
export function pypiSpec(spec: string, extra: Extra = {}): Requested | null {
  if (spec.includes(DYNAMIC)) return dynamic('pypi', spec);
  const s = spec.trim();
  if (GIT.test(s)) return unchecked('pypi', spec, 'a version-control URL', true);
  if (URL_LIKE.test(s)) return unchecked('pypi', spec, 'a URL', true);
  if (/^[A-Za-z0-9._-]+\s*(\[[^\]]*\])?\s*@/.test(s)) return unchecked('pypi', spec, 'a direct URL', true);
  if (LOCAL_START.test(s) || ARCHIVE.test(s) || (s.includes('/') && !s.includes('@'))) return unchecked('pypi', spec, 'a local path', false);
  const m = /^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(\[[^\]]*\])?\s*(.*)$/s.exec(s);
  if (!m) return null;
  const name = m[1] as string;
  const rest = (m[3] as string).split(';')[0]?.trim() ?? '';
  if (rest !== '' && !/^(===?|!=|~=|<=?|>=?)/.test(rest)) return null;
  const exact = /^===?\s*([A-Za-z0-9.+!_-]+)$/.exec(rest)?.[1];
  return { kind: 'registry', ecosystem: 'pypi', spec, name: normalizePypi(name), version: exact ?? (rest === '' ? undefined : rest), ...extra };
}

/** cargo add / install: `name` or `name@version`. */
export function cratesSpec(spec: string, version?: string): Requested | null {
  if (spec.includes(DYNAMIC)) return dynamic('crates', spec);
  const m = /^([A-Za-z0-9_-]+)(?:@(.+))?$/.exec(spec);
  if (!m) return LOCAL_START.test(spec) ? unchecked('crates', spec, 'a local path', false) : null;
  const v = m[2] ?? version;
  return { kind: 'registry', ecosystem: 'crates', spec, name: (m[1] as string).toLowerCase(), version: v };
}

/** go get / install: `module/path@version`; a path without a dot in its first element is the standard library or local. */
export function goSpec(spec: string): Requested | null {
  if (spec.includes(DYNAMIC)) return dynamic('go', spec);
  const at = spec.lastIndexOf('@');
  const path = at === -1 ? spec : spec.slice(0, at);
  const version = at === -1 ? undefined : spec.slice(at + 1);
  if (LOCAL_START.test(path)) return unchecked('go', spec, 'a local package', false);
  if (version === 'none') return null; // removes a requirement
  if (path.includes('...')) return unchecked('go', spec, 'a package pattern', true);
  const first = path.split('/')[0] ?? '';
  if (!first.includes('.')) return null;
  if (!/^[A-Za-z0-9.~_/+-]+$/.test(path)) return null;
  return { kind: 'registry', ecosystem: 'go', spec, name: path, version: version === '' ? undefined : version };
}
