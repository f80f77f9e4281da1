// The variables between a run and the agent hooks inside it, named once.

// Where the run's proxy serves the hook endpoints, as seen from inside the
// sandbox, and their per-run bearer token: named in templates/git-hook.ts
// (the git hooks' text uses them).
export { HOOK_TOKEN_VAR, HOOK_URL_VAR } from '../../templates/git-hook.js';

/** Where the endpoints live on the run's proxy (origin-form requests, never forwarded). */
export const HOOK_PREFIX = '/__stashbase/hooks';
/** Set by the host side for the check it runs: the descriptor its audit events go to, one JSON object a line. */
export const REPORT_FD_VAR = 'STASHBASE_DEPENDENCY_REPORT_FD';

/** The endpoint that runs `stashbase agent hooks …` on the host (the Docker stand-in's). */
export const HOOK_PATH = '/agent-hooks';
/** The endpoint a check inside a native run reports its decisions to, for the run's audit log. */
export const REPORT_PATH = '/agent-hooks/report';
