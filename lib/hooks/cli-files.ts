// Where this CLI's own files are, for a confined scan that runs it again: the
// node binary's installation and the package (bin/, dist/, its node_modules).
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface CliFiles {
  node: string;
  /** bin/stashbase.cjs of the package. */
  entry: string;
  /** Folders bound read-only for the scan to start: the package, and node's installation when it is not a system folder's. */
  roots: string[];
}

function packageRoot(from: string): string {
  for (let d = from; ; d = dirname(d)) {
    const pkg = join(d, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'stashbase') return d;
      } catch {
        // not ours
      }
    }
    if (dirname(d) === d) throw new Error(`cannot find the stashbase package above ${from}`);
  }
}

export function thisCli(): CliFiles {
  const node = realpathSync(process.execPath);
  const root = realpathSync(packageRoot(dirname(fileURLToPath(import.meta.url))));
  // node's prefix (…/bin/node → …): its own libraries when installed outside the system folders.
  const prefix = dirname(dirname(node));
  return { node, entry: join(root, 'bin', 'stashbase.cjs'), roots: [root, prefix === '/' ? dirname(node) : prefix] };
}

/**
 * What of stashbase's own package runs: bin/ and dist/ (the bundle on the host,
 * the relay in a sealed container). Kept read-only in every run, so that an
 * agent whose working tree holds stashbase's package (a project's
 * node_modules, this checkout) cannot change what the next run executes.
 */
export function ownExecutables(): string[] {
  try {
    const root = thisCli().roots[0] as string;
    // package.json too: the run-time packages are read from it (found in review: an agent that emptied its
    // dependencies had the next run leave them writable), and its name is how this package is found.
    return [join(root, 'bin'), join(root, 'dist'), join(root, 'package.json'), ...runtimePackages(root)];
  } catch {
    return [];
  }
}

/**
 * The folders of the packages stashbase loads at run time (its dependencies and
 * theirs), found as Node's require finds them from the package: beside it in a
 * project's node_modules when it is installed there, in its own otherwise.
 * Found in review: the bundle loads picocolors after the agent's container is
 * gone, and an agent whose tree held it had the host run its code.
 */
function runtimePackages(root: string): string[] {
  const found = new Set<string>();
  const visit = (from: string) => {
    let deps: Record<string, unknown> = {};
    try {
      const pkg = JSON.parse(readFileSync(join(from, 'package.json'), 'utf8')) as Record<string, Record<string, unknown> | undefined>;
      deps = { ...pkg.dependencies, ...pkg.optionalDependencies, ...pkg.peerDependencies };
    } catch {
      return;
    }
    for (const name of Object.keys(deps)) {
      const dir = packageDirOf(from, name);
      if (dir === null || found.has(dir)) continue;
      found.add(dir);
      visit(dir);
    }
  };
  visit(root);
  return [...found];
}

/** Where require from `from` finds the package `name` (its folder, a real path), or null. */
function packageDirOf(from: string, name: string): string | null {
  for (let d = from; ; d = dirname(d)) {
    const dir = join(d, 'node_modules', name);
    if (existsSync(join(dir, 'package.json'))) {
      try {
        return realpathSync(dir);
      } catch {
        return null;
      }
    }
    if (dirname(d) === d) return null;
  }
}
