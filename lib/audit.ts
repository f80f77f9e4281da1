// The audit log: one JSON object per line in $STASHBASE_HOME/audit/<session>.jsonl,
// from the run's start to its end, with every proxy decision in between.
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { homePaths } from './home.js';

export function auditFile(home: string, session: string): string {
  return join(homePaths(home).audit, `${session}.jsonl`);
}

export class AuditLog {
  readonly file: string;
  constructor(home: string, readonly session: string) {
    mkdirSync(homePaths(home).audit, { recursive: true, mode: 0o700 });
    this.file = auditFile(home, session);
  }

  write(event: Record<string, unknown>): void {
    appendFileSync(this.file, JSON.stringify({ time: new Date().toISOString(), session: this.session, ...event }) + '\n', { mode: 0o600 });
  }
}
