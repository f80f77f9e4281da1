// What a run killed hard (SIGKILL, a crash) leaves behind on the host: the
// stand-in directories at missing protected paths, its run directory and its
// session record. The next native run removes them; stand-ins only while empty.
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog } from '../audit.js';
import { removeSession, staleSessions } from '../session.js';
import { removePlaceholders } from './run.js';

export function reapStaleNativeRuns(home: string): string[] {
  const reaped: string[] = [];
  for (const rec of staleSessions(home)) {
    if (rec.backend !== 'native') continue;
    removePlaceholders(rec.placeholders ?? []);
    rmSync(join(tmpdir(), `stashbase-${rec.id}`), { recursive: true, force: true });
    new AuditLog(home, rec.id).write({ type: 'end', exitCode: null, reaped: true, by: process.pid });
    removeSession(home, rec.id);
    reaped.push(rec.id);
  }
  return reaped;
}
