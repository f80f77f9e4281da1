// Our PreToolUse entry in an agent's hook configuration, merged into what is
// there, pure: Claude Code's settings.json and Codex's hooks.json share the
// layout {"hooks": {"PreToolUse": [{"matcher", "hooks": [{"type", "command"}]}]}}.
// Every other key, event, matcher and hook is kept as it was; ours is found
// by its command (MARKER), replaced in place when present (so installing
// twice changes nothing), and removed by uninstall along with the groups and
// lists that held nothing else.
import { shellQuote } from '../../templates/shell-quote.js';
import { ConfigError } from '../errors.js';
import { jsonOf } from '../readback/json.js';

export const MARKER = 'agent hooks deps check';
/** Seconds the agent waits for the hook: the check's network budget is 6 s, the registry look-ups a few more. */
export const HOOK_TIMEOUT_S = 30;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The hook's command line. A check that cannot run at all (stashbase gone
 * from PATH, a crash) exits 2 with a message, which both agents treat as a
 * block: the hook fails closed rather than letting installs through unseen.
 */
export function hookCommandLine(stashbase: string[], agent: 'claude' | 'codex'): string {
  const check = [...stashbase.map(shellQuote), 'agent', 'hooks', 'deps', 'check', ...(agent === 'codex' ? ['--agent', 'codex'] : [])].join(' ');
  return `${check} || { echo 'stashbase dependency check could not run (see above); the command was not run. Remove the hook with: stashbase agent hooks deps install ${agent} --uninstall' >&2; exit 2; }`;
}

const ours = (h: unknown) => isObj(h) && typeof h.command === 'string' && h.command.includes(MARKER);

function parse(text: string | null, label: string): Obj {
  if (text === null || text.trim() === '') return {};
  let v: unknown;
  try {
    v = jsonOf(text);
  } catch (e) {
    throw new ConfigError(`${label} is not valid JSON (${(e as Error).message}); fix it first, nothing was changed`);
  }
  if (!isObj(v)) throw new ConfigError(`${label} is not a JSON object; nothing was changed`);
  if (v.hooks !== undefined && !isObj(v.hooks)) throw new ConfigError(`${label}: "hooks" is not an object; nothing was changed`);
  const pre = isObj(v.hooks) ? v.hooks.PreToolUse : undefined;
  if (pre !== undefined && !Array.isArray(pre)) throw new ConfigError(`${label}: "hooks.PreToolUse" is not a list; nothing was changed`);
  return v;
}

const render = (v: Obj) => JSON.stringify(v, null, 2) + '\n';

/** The file's text with our hook in it, and whether that changed anything. */
export function withHook(text: string | null, command: string, label: string): { text: string; changed: boolean } {
  const v = parse(text, label);
  const hooks = (isObj(v.hooks) ? v.hooks : (v.hooks = {})) as Obj;
  const pre = (Array.isArray(hooks.PreToolUse) ? hooks.PreToolUse : (hooks.PreToolUse = [])) as unknown[];
  const entry = { type: 'command', command, timeout: HOOK_TIMEOUT_S };
  let placed = false;
  for (const group of pre) {
    if (!isObj(group) || !Array.isArray(group.hooks)) continue;
    group.hooks = group.hooks.flatMap((h) => {
      if (!ours(h)) return [h];
      if (placed || group.matcher !== 'Bash') return [];
      placed = true;
      return [entry];
    });
  }
  if (!placed) pre.push({ matcher: 'Bash', hooks: [entry] });
  hooks.PreToolUse = pre.filter((g) => !isObj(g) || !Array.isArray(g.hooks) || g.hooks.length > 0);
  const out = render(v);
  return { text: out, changed: text === null || render(parse(text, label)) !== out };
}

/** The file's text without our hook, and whether it held one. */
export function withoutHook(text: string | null, label: string): { text: string; changed: boolean } {
  const v = parse(text, label);
  if (!isObj(v.hooks) || !Array.isArray(v.hooks.PreToolUse)) return { text: text ?? '', changed: false };
  let removed = false;
  const pre = (v.hooks.PreToolUse as unknown[]).filter((g) => {
    if (!isObj(g) || !Array.isArray(g.hooks)) return true;
    const kept = g.hooks.filter((h) => !ours(h));
    if (kept.length === g.hooks.length) return true;
    removed = true;
    g.hooks = kept;
    return kept.length > 0;
  });
  if (!removed) return { text: text ?? '', changed: false };
  if (pre.length > 0) v.hooks.PreToolUse = pre;
  else delete v.hooks.PreToolUse;
  if (Object.keys(v.hooks).length === 0) delete v.hooks;
  return { text: render(v), changed: true };
}
