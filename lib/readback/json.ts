// JSON that someone else wrote (what an agent left, a request from the
// sandbox, a registry's answer), parsed into a known shape: every object has
// no prototype (so no key, however named, reaches Object.prototype when code
// indexes it), and the keys that would (`__proto__`, `constructor`,
// `prototype`) are dropped and named. Deep nesting is refused, not recursed.

/** A parsed JSON object: no prototype, own keys only. */
export type JsonObject = { [key: string]: Json };
export type Json = null | boolean | number | string | Json[] | JsonObject;

/** Keys that reach a prototype when code indexes an ordinary object with them. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

export interface ParsedJson {
  value: Json;
  /** Where dropped keys were, as `a.b["__proto__"]`. */
  refused: string[];
}

const MAX_DEPTH = 100;

const step = (path: string, key: string) => (/^[A-Za-z_$][\w$]*$/.test(key) ? (path === '' ? key : `${path}.${key}`) : `${path}[${JSON.stringify(key)}]`);

/** The text as JSON in that shape, or null when it is not JSON (or nests deeper than 100). */
export function parseJson(text: string): ParsedJson | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  const refused: string[] = [];
  const shape = (v: unknown, path: string, depth: number): Json | undefined => {
    if (v === null || typeof v !== 'object') return v as Json;
    if (depth > MAX_DEPTH) return undefined;
    if (Array.isArray(v)) {
      const out: Json[] = [];
      for (const [i, x] of v.entries()) {
        const y = shape(x, `${path}[${i}]`, depth + 1);
        if (y === undefined) return undefined;
        out.push(y);
      }
      return out;
    }
    const out = Object.create(null) as JsonObject;
    for (const key of Object.keys(v)) {
      if (FORBIDDEN_KEYS.has(key)) {
        refused.push(step(path, key));
        continue;
      }
      const y = shape((v as Record<string, unknown>)[key], step(path, key), depth + 1);
      if (y === undefined) return undefined;
      out[key] = y;
    }
    return out;
  };
  const value = shape(raw, '', 0);
  return value === undefined ? null : { value, refused };
}

export const isJsonObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A deep copy in the same shape (no prototype anywhere). */
export function copyJson(v: Json): Json {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(copyJson);
  const out = Object.create(null) as JsonObject;
  for (const key of Object.keys(v)) out[key] = copyJson(v[key] as Json);
  return out;
}

/** A drop-in for JSON.parse on text someone else wrote: the same shape rules; throws a SyntaxError when it is not JSON. */
export function jsonOf(text: string): Json {
  const p = parseJson(text);
  if (p === null) throw new SyntaxError('not JSON (or nested deeper than 100)');
  return p.value;
}

/**
 * Whether Go's encoding/json would read `names` from `obj` as strict JSON does:
 * Go matches a field's name in any case, by Unicode's simple folding ("ſ" is
 * an "s", "K" (Kelvin) a "k"), the last match winning. So: no key in another
 * spelling of a name, and no key outside ASCII (it may fold onto one).
 */
export function goReadsAsWritten(obj: JsonObject, names: readonly string[]): boolean {
  const lower = new Set(names.map((n) => n.toLowerCase()));
  return Object.keys(obj).every((k) => /^[\x20-\x7e]*$/.test(k) && (!lower.has(k.toLowerCase()) || names.includes(k)));
}
