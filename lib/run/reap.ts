// What a run killed hard (SIGKILL, a crash) leaves behind on the host: the
// stand-in directories at missing protected paths, its run directory and its
// session record. The next run removes them; stand-ins only while empty. It
// also does what the killed run could not: the import of its git work
// (lib/git/import.ts), the views' carry-back and the check for what it left
// in the repository (lib/git/nested-repo-guard.ts). Docker containers and
// networks are `agent docker cleanup`'s to remove; while a killed Docker
// run's agent container is still there, nothing of that run is touched.
import { AuditLog } from './audit.js';
import { InterruptedError } from '../errors.js';
import { checkNestedRepos } from '../git/nested-repo-guard.js';
import { movesWithin } from '../git/planted-repos.js';
import { findRepoRoot, gitConfigTargets } from '../git/repo.js';
import { removePlaceholders, removeRunDir, runDirOf, runStateDirOf } from './run-dir.js';
import { settleGitDir } from '../git/settle.js';
import { probe } from '../exec.js';
import { findTool } from '../util/find-tool.js';
import { recordedLinks, removeSession, type SessionRecord, staleSessions } from './session.js';
import { restoreLinks } from '../paths/protected-links.js';
import { settleViews } from '../views/lifecycle.js';
import { settleFromSnapshot, snapshotFile } from '../views/claude-config-watch.js';
import { quarantineToolConfigs, toolConfigPaths } from '../paths/tool-configs.js';
import { userHome } from '../home.js';

/** File times are coarser than the clock the start was recorded with. */
const CLOCK_SLACK_MS = 50;

/** What a run's git targets would move aside, or none where they cannot be asked: the tools' configs are checked all the same (found in review). */
function madeAsideOf(cwd: string, env: NodeJS.ProcessEnv): string[] {
  try {
    return gitConfigTargets(cwd, userHome(env), env).madeAside;
  } catch {
    return [];
  }
}

/** `alert` is said even with --silent: it reports a change stashbase made to your repository. */
export async function reapStaleRuns(home: string, env: NodeJS.ProcessEnv, alert: (msg: string, more?: string[]) => void): Promise<string[]> {
  const reaped: string[] = [];
  for (const rec of staleSessions(home)) {
    try {
      if (await reapOne(rec, home, env, alert)) reaped.push(rec.id);
    } catch (e) {
      if (e instanceof InterruptedError) throw e;
      // One run's leftovers never stop the next run: said, and left for a later one.
      alert(`could not settle what the killed run ${rec.id} left (${(e as Error).message}); its record stays in ${home}/sessions`);
    }
  }
  return reaped;
}

/** Settles one killed run; false when it must wait (its Docker agent container is still there). */
async function reapOne(rec: SessionRecord, home: string, env: NodeJS.ProcessEnv, alert: (msg: string, more?: string[]) => void): Promise<boolean> {
  // The links its check would have put back (deny_write's, those on the way to what your git runs), as noted when it
  // started (review, round 33: a link swapped in a run killed before its check stayed the agent's).
  const putBack = () => {
    for (const m of restoreLinks(recordedLinks(rec))) alert(`${m} (left by the killed run ${rec.id})`);
  };
  // Its own teardown was done; the check of its tree was stopped (Ctrl+C, a kill): made now, with the run's settings.
  if (rec.ended !== undefined) {
    checkLeft(rec, env, alert, rec.ended);
    putBack();
    removeSession(home, rec.id);
    return true;
  }
  if (rec.docker && agentContainerLeft(rec.docker.agent, env)) {
    alert(`the killed run ${rec.id} still has its agent container ${rec.docker.agent}: nothing of that run is settled while it exists (stashbase agent docker cleanup removes it)`);
    return false;
  }
  removePlaceholders(rec.placeholders ?? []);
  for (const n of settleViews(rec.views ?? [])) alert(`${n} (left by the killed run ${rec.id})`);
  // Only a snapshot in the killed run's own state folder, as stashbase named it.
  if (typeof rec.claudeConfig === 'string' && rec.claudeConfig === snapshotFile(runStateDirOf(home, rec.id))) {
    for (const n of settleFromSnapshot(rec.claudeConfig, rec.id)) alert(`${n} (left by the killed run ${rec.id})`);
  }
  const said = (m: string, more: string[] = []) => alert(`from the killed run ${rec.id}: ${m}`, more);
  for (const g of rec.gitDirs ?? []) {
    // Stopped by you: the rest of this run is settled by a later one; the new run does not start.
    if ((await settleGitDir(g, env, rec.id, { alert: said, note: said })) === 'interrupted') throw new InterruptedError(`stopped while importing the git work of the killed run ${rec.id}; nothing was run`);
  }
  for (const m of removeRunDir(rec.runDir ?? runDirOf(home, rec.id, false), runStateDirOf(home, rec.id))) said(m);
  new AuditLog(home, rec.id).write({ type: 'end', exitCode: null, reaped: true, by: process.pid });
  removeSession(home, rec.id);
  // (Every one of its keep_executables: the killed run's are not on record; nor where it could write, so a change anywhere
  // counts as its, the tree named / (found in review: links into its allow_write folders were passed by). Its renames stay
  // held to the repository: writableOutside stays empty.)
  checkLeft(rec, env, alert, { keep: [], writableOutside: [], newRepo: false, tree: '/' });
  // After the check: a link put back is new, and the check moves aside what a killed run made new among tools' configs.
  putBack();
  return true;
}

/** The end-of-run check of a killed run's tree, as the run's own end would have made it. */
function checkLeft(rec: SessionRecord, env: NodeJS.ProcessEnv, alert: (msg: string) => void, o: { keep: string[]; writableOutside: string[]; newRepo: boolean; tree?: string; root?: string }): void {
  const started = Date.parse(rec.startedAt);
  if (!rec.cwd || !Number.isFinite(started)) return;
  const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  try {
    // A Docker agent owns the files it writes, so it can set a setuid bit (the native sandbox refuses it): cleared here as
    // the run's own end would have.
    const outside = list(o.writableOutside);
    // Where it wrote in the repository: a killed run's is not on record, so all of it (what changed there counts as the run's).
    // (The repository's top as the run started, where its record says: a .git the agent made is not the top.)
    const root = typeof o.root === 'string' ? o.root : findRepoRoot(rec.cwd)?.root ?? rec.cwd;
    const tree = typeof o.tree === 'string' ? o.tree : root;
    // Nothing it moves aside leaves the tree (found in review: a config path through a link to your own home's).
    const left = movesWithin([rec.cwd, root, ...outside], () => [...checkNestedRepos(rec.cwd, env, started - CLOCK_SLACK_MS, { newRepo: o.newRepo === true, setId: rec.docker !== undefined, keep: list(o.keep), writableOutside: outside, tree, ...(typeof o.root === 'string' ? { root: o.root } : {}) }), ...quarantineToolConfigs([...toolConfigPaths(rec.cwd, userHome(env), []), ...madeAsideOf(rec.cwd, env)], started - CLOCK_SLACK_MS)]);
    for (const w of left) alert(`${w} (left by the killed run ${rec.id})`);
  } catch (e) {
    alert(`could not check ${rec.cwd} for nested repositories the killed run ${rec.id} registered (${(e as Error).message}); run git ls-files -s | grep ^160000 there before you run git`);
  }
}

/** Whether the container still exists (as far as the engine says; no docker CLI: none can). */
function agentContainerLeft(name: string, env: NodeJS.ProcessEnv): boolean {
  const docker = findTool('docker', env);
  if (!docker) return false;
  const r = probe({ file: docker, args: ['container', 'inspect', '--format', '{{.Id}}', name] }, 15_000);
  return r.code === 0 || !/no such (container|object)/i.test(r.stderr);
}
