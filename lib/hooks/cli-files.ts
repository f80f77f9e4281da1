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
    // package.json too: its name is how this package is found, its version what --version says. No package of
    // node_modules: the bundle holds every one it uses (scripts/bundle.mjs; found in review: loaded from there, one
    // planted where Node looks first ran on the host).
    return [join(root, 'bin'), join(root, 'dist'), join(root, 'package.json')];
  } catch {
    return [];
  }
}
