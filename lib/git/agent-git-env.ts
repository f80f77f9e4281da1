// What the agent's git is told beyond your config, where the run gives it a
// git directory of its own (lib/git/run-git-dir.ts), as git's own
// GIT_CONFIG_COUNT entries (command scope: over every config file, includes
// and config.worktree among them), after any the agent's environment already
// has:
// - core.sharedRepository=umask. With your repository shared (`git init
//   --shared=group`, core.sharedRepository = group or a mode), git sets the
//   setgid bit on every folder it makes under objects/. The native sandbox's
//   seccomp filter refuses every setgid mode (templates/seccomp.ts), so the
//   agent's `git add` failed ("unable to create temporary file"); on Docker the
//   folders came back setgid, and the import's clean-up warned of each. The run's
//   git directory is the run's alone, so its modes share nothing; what comes
//   into yours is written by your own git, under your config.

/** The entries, in order. */
export const AGENT_GIT_CONFIG: ReadonlyArray<readonly [key: string, value: string]> = [['core.sharedRepository', 'umask']];

/** The largest count git takes (INT_MAX). */
const MAX_COUNT = 2 ** 31 - 1;

/**
 * The entries an environment's GIT_CONFIG_COUNT gives, as git reads it (strtoul
 * of the whole value: blanks and a plus sign before the digits, nothing after
 * them), or 0: none, empty, or a count git refuses ("bogus count"), with which
 * git would fail whatever was added.
 */
function gitCount(value: string | undefined): number {
  const m = /^[ \t\n\v\f\r]*\+?(\d+)$/.exec(value ?? '');
  return m !== null && Number(m[1]) <= MAX_COUNT ? Number(m[1]) : 0;
}

/**
 * The variables that add AGENT_GIT_CONFIG to an environment (`env`: what the
 * agent would get without them), numbered after the entries it already has
 * (up to 1,000, each whole; else in their place).
 */
export function agentGitConfigEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  let n = gitCount(env.GIT_CONFIG_COUNT);
  // An entry the agent lacks a part of (a value that looked like a credential, dropped from its environment: found in
  // review, an http.extraHeader's "Authorization: Bearer …") would fail every git it runs: the run's entries stand alone.
  for (let i = 0; i < n && i < 1000; i++) if (env[`GIT_CONFIG_KEY_${i}`] === undefined || env[`GIT_CONFIG_VALUE_${i}`] === undefined) n = 0;
  if (n > 1000) n = 0;
  const out: Record<string, string> = { GIT_CONFIG_COUNT: String(n + AGENT_GIT_CONFIG.length) };
  AGENT_GIT_CONFIG.forEach(([key, value], i) => {
    out[`GIT_CONFIG_KEY_${n + i}`] = key;
    out[`GIT_CONFIG_VALUE_${n + i}`] = value;
  });
  return out;
}
