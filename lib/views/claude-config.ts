// Claude Code rewrites ~/.claude.json at every start: it mixes state a later
// run needs (the login's account, onboarding, per-project history) with
// entries that make a later claude run something or trust something (MCP
// servers, allowed tools, trust of a folder, API key and credential helpers).
// The run works on a copy; afterwards the changes it made are applied to the
// current file key by key, two levels deep (top-level keys, and each
// project's keys), except the executable kind, which is left behind and named.
// Every file is parsed into prototype-free objects (lib/readback/json.ts): a
// `__proto__` key is dropped and named, never indexed into a live object.
import { copyJson, isJsonObject, type Json, type JsonObject, parseJson } from '../readback/json.js';
import { promptEntryOk, recallsSafely } from './recall.js';

/** Key names of the executable or trust-granting kind (a class: new keys named so are caught too). */
export const EXECUTABLE_KEY = /mcp|hook|command|helper|refresh|export|allowed|trust|approv|permission|bypass|api_?key|^env$|include|status_?line|plugin|marketplace|sandbox|executable|shell|script(?!ion)|backup|in_?progress|path|remote|bridge|upload|chrome|browser|daemon|worker|spawn|connect|endpoint|proxy|url/i;

/**
 * The IDE integration's keys, by their camel-case word (autoConnectIde, ideHintShownCount): review, round 27c found
 * settings that reach past the sandbox (Claude in Chrome's native hosts, remote control at start, session upload)
 * under names the list above did not have; it has their words now, and this one is matched as a word alone.
 */
const IDE_KEY = /^ide(?=[A-Z_]|$)|Ide(?=[A-Z_]|$)|IDE/;

/**
 * A value that names a file or folder: Claude acts on what such a key names (found in review: `appleTerminalBackupPath`
 * with `appleTerminalSetupInProgress`, which the next interactive claude imports into Terminal's preferences on macOS,
 * where a profile's command runs), whatever the key is called.
 */
const namesFile = (v: string) => /^(?:[\/\\~$%]|\.\.?(?:[\/\\]|$)|[A-Za-z]:|file:|[a-z][a-z0-9+.-]*:\/\/)/i.test(v.replace(/^[\p{Cf}\p{Z}\s]+/u, ''));

/**
 * Whether a value holds, anywhere in it, a string your claude could act on: one that names a file or folder, or a
 * prompt it would run when recalled (lib/views/recall.ts), and object keys that name a file. Review, round 33: a
 * project's `history` came back with a `!` command for Up and Enter (Claude Code 1.x recalls it), and `exampleFiles`
 * with `../../.ssh/id_rsa`, past a check that looked at plain strings alone.
 */
function actsOn(v: Json | undefined, depth = 0): boolean {
  if (typeof v === 'string') return namesFile(v) || !recallsSafely(v);
  if (v === null || v === undefined || typeof v !== 'object') return false;
  if (depth > 16) return true;
  if (Array.isArray(v)) return v.some((x) => actsOn(x, depth + 1));
  return Object.keys(v).some((k) => namesFile(k) || actsOn(v[k], depth + 1));
}

/** A value that configures something to launch or connect to (an MCP server's shape). */
function launches(v: Json | undefined, depth = 0): boolean {
  if (v === null || v === undefined || typeof v !== 'object' || depth > 6) return false;
  if (Array.isArray(v)) return v.some((x) => launches(x, depth + 1));
  return Object.keys(v).some((k) => /^(command|args|url|transport)$/i.test(k) || launches(v[k], depth + 1));
}

const executable = (key: string, value: Json | undefined) => EXECUTABLE_KEY.test(key) || IDE_KEY.test(key) || launches(value) || actsOn(value);

/**
 * What Claude Code keeps of its vendor's word (feature flags and experiments,
 * cachedGrowthBookFeatures, read at start before it asks again): written in the
 * run, it would be the agent's word in your next claude, taken as Anthropic's.
 * Left behind without a note: every start fetches it afresh and rewrites it.
 */
export const SERVER_CACHE_KEY = /cache|growth_?book|statsig|experiment|feature_?flag|dynamic_?config/i;

/**
 * Review, round 27d: the account, the updater and its install method, migrations, model choices and consents
 * (fableOverageConsentV2 spends usage credits) — your own claude's to set; what a run changed there is left behind
 * without a note (every start rewrites some of them).
 */
export const OWN_KEY = /update|install|migration|consent|overage|billing|account|model/i;

const same = (a: Json | undefined, b: Json | undefined) => JSON.stringify(a) === JSON.stringify(b);

const has = (o: JsonObject, key: string) => Object.hasOwn(o, key);

type Parsed = { obj: JsonObject; refused: string[] } | null | 'invalid';

/** The file as a prototype-free object (dropped `__proto__`-like keys named), null when there is none, or 'invalid'. */
function parse(text: string | null): Parsed {
  if (text === null) return null;
  const p = parseJson(text);
  return p !== null && isJsonObject(p.value) ? { obj: p.value, refused: p.refused } : 'invalid';
}

/** Applies the changes from `start` to `agent` onto `current`; `text` is null when there is nothing to write. */
export function mergeClaudeConfig(start: string | null, agent: string | null, current: string | null, trees?: readonly string[]): { text: string | null; left: string[] } {
  const sp = parse(start);
  const ap = parse(agent);
  const cp = parse(current);
  if (ap === 'invalid' || sp === 'invalid' || cp === 'invalid') return { text: null, left: ['the whole file (not valid JSON)'] };
  if (ap === null) return { text: null, left: [] }; // the agent's copy is gone: nothing to carry
  const s = sp?.obj ?? (Object.create(null) as JsonObject);
  const a = ap.obj;
  const c = cp?.obj ?? (Object.create(null) as JsonObject);
  const out = copyJson(c) as JsonObject;
  const left: string[] = ap.refused.map((path) => `${path} (a key that would reach the object prototype)`);
  const apply = (target: JsonObject, key: string, from: JsonObject, to: JsonObject, name: string, inProject = false) => {
    if (same(from[key], to[key]) || SERVER_CACHE_KEY.test(key) || OWN_KEY.test(key)) return;
    // A project's prompt history (Claude Code 1.x recalls it on Up): entry by entry, as history.jsonl's lines are
    // (review, round 33: judged whole, one prompt holding a URL or a `/clear` dropped the session's every prompt).
    if (inProject && key === 'history' && Array.isArray(to[key])) {
      const all = to[key] as Json[];
      // (Yours, there as the run started, stay as they were.)
      const yours = new Set(Array.isArray(from[key]) ? (from[key] as Json[]).map((e) => JSON.stringify(e)) : []);
      const kept = all.filter((e) => promptEntryOk(e) || yours.has(JSON.stringify(e)));
      target[key] = copyJson(kept);
      if (kept.length < all.length) left.push(`${name}: ${all.length - kept.length} prompt(s) your claude would run as a command or that hide what they say`);
      return;
    }
    // A new entry's empty default (a folder's first session writes allowedTools: [], mcpServers: {}): left quietly.
    const empty = (v: Json | undefined) => v === null || v === false || v === 0 || v === '' || (Array.isArray(v) && v.length === 0) || (isJsonObject(v) && Object.keys(v).length === 0);
    if (executable(key, to[key]) || executable(key, from[key])) return void (from[key] === undefined && empty(to[key]) ? undefined : left.push(name));
    if (has(to, key)) target[key] = copyJson(to[key] as Json);
    else delete target[key];
  };
  for (const key of new Set([...Object.keys(s), ...Object.keys(a)])) {
    if (key === 'projects' && (isJsonObject(s[key]) || !has(s, key)) && isJsonObject(a[key])) {
      const sprojects = (has(s, key) ? s[key] : Object.create(null)) as JsonObject;
      const aprojects = a[key] as JsonObject;
      if (!isJsonObject(out[key])) out[key] = Object.create(null) as JsonObject;
      const op = out[key] as JsonObject;
      for (const p of new Set([...Object.keys(sprojects), ...Object.keys(aprojects)])) {
        const from = isJsonObject(sprojects[p]) ? sprojects[p] : (Object.create(null) as JsonObject);
        const to = isJsonObject(aprojects[p]) ? aprojects[p] : (Object.create(null) as JsonObject);
        if (same(from, to)) continue;
        // Another folder's entry (review, round 27d: its exampleFiles became your prompts' suggestions there): the run's own alone.
        if (trees !== undefined && !trees.includes(p)) {
          left.push(`projects[${JSON.stringify(p)}] (another folder's)`);
          continue;
        }
        if (!isJsonObject(op[p])) op[p] = Object.create(null) as JsonObject;
        for (const k of new Set([...Object.keys(from), ...Object.keys(to)])) apply(op[p] as JsonObject, k, from, to, `projects[${JSON.stringify(p)}].${k}`, true);
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
