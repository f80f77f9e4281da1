// What a run killed hard (SIGKILL, a crash) leaves behind on the host: the
// stand-in directories at missing protected paths, its run directory and its
// session record. The next run removes them; stand-ins only while empty. It
// also does the check the killed run could not (lib/git/nested-repo-guard.ts).
// Docker containers and networks are `agent docker cleanup`'s to remove.
import { AuditLog } from './audit.js';
import { checkNestedRepos } from '../git/nested-repo-guard.js';
import { removePlaceholders, removeRunDir, runDirOf } from './run-dir.js';
import { removeSession, staleSessions } from './session.js';
import { settleViews } from '../views/lifecycle.js';
import { quarantineToolConfigs, toolConfigPaths } from '../paths/tool-configs.js';
import { userHome } from '../home.js';

/** File times are coarser than the clock the start was recorded with. */
const CLOCK_SLACK_MS = 50;

/** `alert` is said even with --silent: it reports a change stashbase made to your repository. */
export function reapStaleRuns(home: string, env: NodeJS.ProcessEnv, alert: (msg: string) => void): string[] {
  const reaped: string[] = [];
  for (const rec of staleSessions(home)) {
    removePlaceholders(rec.placeholders ?? []);
    for (const n of settleViews(rec.views ?? [])) alert(`${n} (left by the killed run ${rec.id})`);
    removeRunDir(runDirOf(rec.id));
    new AuditLog(home, rec.id).write({ type: 'end', exitCode: null, reaped: true, by: process.pid });
    removeSession(home, rec.id);
    reaped.push(rec.id);
    const started = Date.parse(rec.startedAt);
    if (rec.cwd && Number.isFinite(started)) {
      try {
        const left = [...checkNestedRepos(rec.cwd, env, started - CLOCK_SLACK_MS), ...quarantineToolConfigs(toolConfigPaths(rec.cwd, userHome(env), []), started - CLOCK_SLACK_MS)];
        for (const w of left) alert(`${w} (left by the killed run ${rec.id})`);
      } catch (e) {
        alert(`could not check ${rec.cwd} for nested repositories the killed run ${rec.id} registered (${(e as Error).message}); run git ls-files -s | grep ^160000 there before you run git`);
      }
    }
  }
  return reaped;
}
