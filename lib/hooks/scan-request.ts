// What a sandbox may ask the host to scan, checked strictly: the hook's JSON
// body {"args": [...], "cwd": "...", "indexFile": "..."} is agent-controlled.
// Only --staged, --range <hex>..<hex> and --json; a working directory inside
// the run's working tree; an index file inside the run's git directories
// (review, round 34: one anywhere in the tree had git print a file's first bytes). Paths are sandbox paths:
// the confined scan sees the sandbox's layout (lib/hooks/host-scan.ts).
import { isAbsolute } from 'node:path';

export interface ScanRequest {
  args: string[];
  /** The directory the hook ran in (a sandbox path). */
  cwd: string;
  /** The index the commit uses (git commit -a and git commit <paths> write a temporary one). */
  indexFile?: string;
}

const HEX_RANGE = /^[0-9a-f]{4,64}\.\.[0-9a-f]{4,64}$/;
const MAX_PATH = 4096;

export const within = (p: string, dir: string) => p === dir || p.startsWith(dir === '/' ? '/' : dir + '/');

/** An absolute path spelled plainly (no ".", "..", empty segment or control character; one trailing slash dropped), or null. */
export function plainPath(p: string): string | null {
  if (p.length === 0 || p.length > MAX_PATH || !isAbsolute(p) || /[\u0000-\u001f\u007f]/.test(p)) return null;
  const segs = p.split('/').slice(1);
  if (segs.some((s, i) => s === '.' || s === '..' || (s === '' && i < segs.length - 1))) return null;
  return p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p;
}

export function checkScanArgs(args: unknown): string[] | string {
  if (!Array.isArray(args) || args.length === 0 || args.length > 3 || !args.every((a) => typeof a === 'string')) return 'args must be a list of one to three strings';
  const out: string[] = [];
  let source = 0;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--staged' || a === '--json') {
      if (out.includes(a)) return `${a} given twice`;
      if (a === '--staged') source++;
      out.push(a);
    } else if (a === '--range' && HEX_RANGE.test((args[i + 1] as string | undefined) ?? '')) {
      source++;
      out.push(a, args[++i] as string);
    } else return `${JSON.stringify(a.slice(0, 80))} is not allowed (only --staged, --range <hex>..<hex> and --json)`;
  }
  if (source !== 1) return 'exactly one of --staged and --range is needed';
  return out;
}

/**
 * The request, or why it is refused. `workTree`: the run's working tree as
 * the sandbox sees it; `gitDirs`: its git directories, where an index may be.
 */
export function parseScanRequest(body: unknown, workTree: string, gitDirs: string[]): ScanRequest | string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'the request is not a JSON object';
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) if (!['args', 'cwd', 'indexFile'].includes(k)) return `unknown field ${JSON.stringify(k.slice(0, 40))}`;
  const args = checkScanArgs(b.args);
  if (typeof args === 'string') return args;
  if (typeof b.cwd !== 'string') return 'cwd must be a string';
  const cwd = plainPath(b.cwd);
  if (cwd === null || !within(cwd, workTree)) return `cwd ${JSON.stringify(b.cwd.slice(0, 200))} is not inside the run's working tree`;
  const req: ScanRequest = { args, cwd };
  if (b.indexFile !== undefined) {
    if (typeof b.indexFile !== 'string') return 'indexFile must be a string';
    const index = plainPath(b.indexFile);
    if (index === null || !gitDirs.some((v) => within(index, v))) return `indexFile ${JSON.stringify(b.indexFile.slice(0, 200))} is not inside the run's git directories`;
    req.indexFile = index;
  }
  return req;
}
