// The agents' login files carried back after a run (Claude Code's
// .credentials.json, Codex's auth.json): only the login itself, field by
// field, onto your current file; everything else the sandbox changed stays in
// the run and is named. Found in review (round 27c): carried back whole,
// .credentials.json brought an MCP server's OAuth entry whose
// discoveryState.authorizationServerUrl was the agent's, and your next
// claude, outside any sandbox, sent your refresh token there to refresh it.
// Parsed into prototype-free objects (lib/readback/json.ts), never trusted.
import { copyJson, isJsonObject, type Json, type JsonObject, parseJson } from '../readback/json.js';

/**
 * What of a login file may come back: top-level keys, each a value of a known kind or an object of such fields.
 * Review, round 27d: a refresh of the login that was there, never another one. An object comes back only where
 * one was there at the start, and only when its `same` fields are unchanged (Codex's account); the login's kind
 * (Codex's auth_mode and key, Claude Code's subscription type and scopes, which decide what your claude fetches
 * from its organisation) is not in the shape, so the run cannot change it.
 */
type Kind = 'string' | 'number';
type Fields = Record<string, Kind>;
type Shape = Record<string, Kind | { fields: Fields; same?: string[] }>;

export const LOGIN_SHAPES: Record<'claude' | 'codex', Shape> = {
  // Claude Code's own login; mcpOAuth (each MCP server's tokens, and where to refresh them) is not carried back.
  claude: { claudeAiOauth: { fields: { accessToken: 'string', refreshToken: 'string', expiresAt: 'number' } } },
  codex: { last_refresh: 'string', tokens: { fields: { id_token: 'string', access_token: 'string', refresh_token: 'string' }, same: ['account_id'] } },
};

const fits = (v: Json | undefined, kind: Kind) => typeof v === kind;

const same = (a: Json | undefined, b: Json | undefined) => JSON.stringify(a) === JSON.stringify(b);

function parse(text: string | null): JsonObject | null | 'invalid' {
  if (text === null) return null;
  const p = parseJson(text);
  return p !== null && isJsonObject(p.value) && p.refused.length === 0 ? p.value : 'invalid';
}

/**
 * Applies the login fields the agent changed (from `start` to `agent`) onto `current`; what else it changed is
 * named in `left`. `text` is null when nothing is to be written.
 */
export function mergeLogin(shape: Shape, start: string | null, agent: string | null, current: string | null): { text: string | null; left: string[] } {
  const s = parse(start);
  const a = parse(agent);
  const c = parse(current);
  if (a === 'invalid' || s === 'invalid' || c === 'invalid') return { text: null, left: ['the whole file (not a JSON object)'] };
  if (a === null) return { text: null, left: [] };
  const from = s ?? (Object.create(null) as JsonObject);
  const out = copyJson(c ?? (Object.create(null) as JsonObject)) as JsonObject;
  const left: string[] = [];
  for (const key of new Set([...Object.keys(from), ...Object.keys(a)])) {
    if (same(from[key], a[key])) continue;
    const want = Object.hasOwn(shape, key) ? shape[key] : undefined;
    if (want === undefined) {
      left.push(key);
      continue;
    }
    if (typeof want === 'string') {
      if (!Object.hasOwn(a, key)) delete out[key];
      else if (fits(a[key], want)) out[key] = copyJson(a[key] as Json);
      else left.push(key);
      continue;
    }
    // A login the run made, or one of another account: not carried back at all.
    const was = isJsonObject(from[key]) ? from[key] : null;
    const now = isJsonObject(a[key]) ? a[key] : null;
    if (now === null || was === null || (want.same ?? []).some((f) => !same(was[f], now[f]))) {
      left.push(was === null ? `${key} (a login made in the run: log in outside the sandbox)` : key);
      continue;
    }
    const target = isJsonObject(out[key]) ? (out[key] as JsonObject) : (out[key] = Object.create(null) as JsonObject);
    for (const f of new Set([...Object.keys(was), ...Object.keys(now)])) {
      if (same(was[f], now[f])) continue;
      const kind = Object.hasOwn(want.fields, f) ? want.fields[f] : undefined;
      if (kind === undefined || (Object.hasOwn(now, f) && !fits(now[f], kind))) left.push(`${key}.${f}`);
      else if (!Object.hasOwn(now, f)) delete target[f];
      else target[f] = copyJson(now[f] as Json);
    }
  }
  // Nothing to write where nothing was: a file of the run's own with nothing carried is not made on your side.
  const nothing = c === null ? Object.keys(out).length === 0 : same(out, c);
  return { text: nothing ? null : JSON.stringify(out), left };
}
