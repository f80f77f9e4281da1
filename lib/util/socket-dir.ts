// Folders for a run's Unix sockets: this user's alone, and short enough that a
// socket's path fits the 108 bytes a socket address holds (Node would cut a
// longer one short, outside the folder).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxUnavailableError } from '../errors.js';

// In bytes (review, round 34: measured in UTF-16 units, a home of 40 CJK characters passed, and the socket was made cut
// short, in /tmp itself, where it stayed and blocked the next run).
const fits = (dir: string) => Buffer.byteLength(join(dir, 'proxy.sock')) <= 100;

/** A new private folder in the temp folder, or in /tmp when the temp folder's path is too long. */
export function shortPrivateDir(prefix: string): string {
  for (const base of [tmpdir(), '/tmp']) {
    const dir = mkdtempSync(join(base, prefix));
    if (fits(dir)) return dir;
    rmSync(dir, { recursive: true, force: true });
  }
  throw new SandboxUnavailableError('no temp folder with a path short enough for a Unix socket; nothing was run');
}

/**
 * `preferred` (a folder under the run's own, which no sandbox sees and which
 * is reaped with a killed run), made private; a private temp folder where its
 * path is too long.
 */
export function socketDir(preferred: string, prefix: string): string {
  if (!fits(preferred)) return shortPrivateDir(prefix);
  mkdirSync(preferred, { recursive: true, mode: 0o700 });
  return preferred;
}
