// Claude Code rewrites ~/.claude.json at every start: it mixes state a later
// run needs (the login's account, onboarding, per-project history) with
// entries that make a later claude run something or trust something (MCP
// servers, allowed tools, trust of a folder, API key and credential helpers).
// The run works on a copy; afterwards the changes it made are applied to the
// current file key by key, two levels deep (top-level keys, and each
// project's keys), except the executable kind, which is left behind and named.

/** Key names of the executable or trust-granting kind (a class: new keys named so are caught too). */
export const EXECUTABLE_KEY = /mcp|hook|command|helper|refresh|export|allowed|trust|approv|permission|bypass|api_?key|^env$|include|status_?line|plugin|marketplace|sandbox|executable|shell|script/i;

/** A value that configures something to launch or connect to (an MCP server's shape). */
function launches(v: unknown, depth = 0): boolean {
  if (v === null || typeof v !== 'object' || depth > 6) return false;
  if (Array.isArray(v)) return v.some((x) => launches(x, depth + 1));
  return Object.entries(v).some(([k, x]) => /^(command|args|url|transport)$/i.test(k) || launches(x, depth + 1));
}

const executable = (key: string, value: unknown) => EXECUTABLE_KEY.test(key) || launches(value);

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function parse(text: string | null): Obj | null | 'invalid' {
  if (text === null) return null;
  try {
    const v = JSON.parse(text) as unknown;
    return isObj(v) ? v : 'invalid';
  } catch {
    return 'invalid';
  }
}

/** Applies the changes from `start` to `agent` onto `current`; `text` is null when there is nothing to write. */
export function mergeClaudeConfig(start: string | null, agent: string | null, current: string | null): { text: string | null; left: string[] } {
  const s = parse(start) ?? {};
  const a = parse(agent);
  const c = parse(current) ?? {};
  if (a === 'invalid' || s === 'invalid' || c === 'invalid') return { text: null, left: ['the whole file (not valid JSON)'] };
  if (a === null) return { text: null, left: [] }; // the agent's copy is gone: nothing to carry
  const out: Obj = structuredClone(c);
  const left: string[] = [];
  const apply = (target: Obj, key: string, from: Obj, to: Obj, name: string) => {
    if (same(from[key], to[key])) return;
    if (executable(key, to[key]) || executable(key, from[key])) return void left.push(name);
    if (key in to) target[key] = structuredClone(to[key]);
    else delete target[key];
  };
  for (const key of new Set([...Object.keys(s), ...Object.keys(a)])) {
    if (key === 'projects' && (isObj(s[key]) || s[key] === undefined) && isObj(a[key])) {
      const sp = (s[key] ?? {}) as Obj;
      const ap = a[key] as Obj;
      if (!isObj(out[key])) out[key] = {};
      const op = out[key] as Obj;
      for (const p of new Set([...Object.keys(sp), ...Object.keys(ap)])) {
        const from = isObj(sp[p]) ? sp[p] : {};
        const to = isObj(ap[p]) ? ap[p] : {};
        if (same(from, to)) continue;
        if (!isObj(op[p])) op[p] = {};
        for (const k of new Set([...Object.keys(from), ...Object.keys(to)])) apply(op[p] as Obj, k, from, to, `projects[${JSON.stringify(p)}].${k}`);
      }
      continue;
    }
    apply(out, key, s, a, key);
  }
  return { text: same(out, c) ? null : JSON.stringify(out, null, 2), left };
}

/**
 * Where the file is written in place (macOS, no view to hold a copy): after
 * the run, the executable entries go back to what they were at the start and
 * the rest of the agent's changes stay. `text` is null when nothing needs writing.
 */
export function revertClaudeConfig(start: string | null, now: string | null): { text: string | null; left: string[] } {
  if (now === null) return { text: null, left: [] };
  return mergeClaudeConfig(start, now, start ?? '{}');
}
