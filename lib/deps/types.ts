// The values the dependency check passes between its steps: what a command
// asks to install, what the registry and OSV said about it, and the verdict.

export type Ecosystem = 'npm' | 'pypi' | 'crates' | 'go';
export const ECOSYSTEMS: readonly Ecosystem[] = ['npm', 'pypi', 'crates', 'go'];

/** The package-URL type of each ecosystem (https://github.com/package-url/purl-spec): how OSV is asked. */
export const PURL_TYPE: Record<Ecosystem, string> = { npm: 'npm', pypi: 'pypi', crates: 'cargo', go: 'golang' };

/** One thing a command would install. */
export type Requested =
  | {
      kind: 'registry';
      ecosystem: Ecosystem;
      /** As the command spelled it (for messages). */
      spec: string;
      name: string;
      /** The version or range asked for; undefined = the registry's latest. */
      version?: string;
      /** A registry or index the command line itself names (--registry, -i, an inline variable). */
      registry?: string;
      /** Why a missing name must not be blocked outright (an extra index may hold it). */
      softMissing?: string;
      /** npx and the like: no install when the project has this binary in node_modules/.bin. */
      unlessLocalBin?: string;
    }
  /** A local path, URL, git spec or a name built at run time: said, not checked. */
  | { kind: 'unchecked'; ecosystem: Ecosystem; spec: string; why: string; remote: boolean };

/** What a registry said about a package. `exists: null` = it could not be told. */
export interface RegistryFacts {
  exists: boolean | null;
  /** When the package (not the version) was first published. */
  created?: Date;
  /** Go: the module the package path belongs to (what OSV knows it by). */
  module?: string;
  /** The exact version the install would take, when it could be resolved. */
  version?: string;
  /** npm: preinstall/install/postinstall scripts of that version. */
  installScripts?: string[];
  /** The registry itself marks it as taken down for security (npm's security holding package). */
  takenDown?: string;
  /** Why the facts are incomplete (unreachable, garbage, timeout). */
  problem?: string;
}

/** A malicious-package advisory (an OSV MAL- entry) and which versions it covers. */
export interface MaliciousAdvisory {
  id: string;
  summary?: string;
  /** Every version (introduced "0" and never fixed), or a layout this check cannot read. */
  allVersions: boolean;
  versions: string[];
}

export interface OsvFacts {
  advisories: MaliciousAdvisory[];
  problem?: string;
}

export type Verdict = 'block' | 'warn' | 'unchecked' | 'ok';

export interface Decision {
  ecosystem: Ecosystem;
  spec: string;
  name?: string;
  version?: string;
  verdict: Verdict;
  reasons: string[];
  /** A local path: reported, never a reason to ask or block. */
  local?: boolean;
}

/** A GET (or POST) with the check's deadline, proxy and CAs already applied. */
export type Fetch = (url: string, init?: { method?: 'GET' | 'POST'; body?: string; headers?: Record<string, string> }) => Promise<{ status: number; text: string }>;
