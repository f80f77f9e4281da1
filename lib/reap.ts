// What a run killed hard (SIGKILL, a crash) leaves behind on the host: the
// stand-in directories at missing protected paths, its run directory and its
// session record. The next run removes them; stand-ins only while empty.
// Docker containers and networks are `agent docker cleanup`'s to remove.
import { AuditLog } from './audit.js';
import { removePlaceholders, removeRunDir, runDirOf } from './run-dir.js';
import { removeSession, staleSessions } from './session.js';

export function reapStaleRuns(home: string): string[] {
  const reaped: string[] = [];
  for (const rec of staleSessions(home)) {
    removePlaceholders(rec.placeholders ?? []);
    removeRunDir(runDirOf(rec.id));
    new AuditLog(home, rec.id).write({ type: 'end', exitCode: null, reaped: true, by: process.pid });
    removeSession(home, rec.id);
    reaped.push(rec.id);
  }
  return reaped;
}
