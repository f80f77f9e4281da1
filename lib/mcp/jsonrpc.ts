// MCP's JSON-RPC messages as the agent sends them in a POST body: one
// message, or a batch (an array of them). Parsed into a known shape, never
// trusted as an object: JSON.parse makes own properties only (a "__proto__"
// key is a key), each field is read only when it is the object's own, and
// nothing else of the message is looked at. A body that is not JSON-RPC is
// not MCP: the caller refuses it.

export type Id = string | number | null;

export interface Message {
  /** The request's id (absent: a notification, or no request at all). */
  id?: Id;
  /** A request's or notification's method. */
  method?: string;
  /** For tools/call: the tool's name as sent (any JSON value) and the size of its arguments, in bytes of JSON. */
  tool?: unknown;
  argBytes?: number;
}

export type Parsed = { batch: boolean; messages: Message[] } | { problem: string };

const own = (o: object, k: string): unknown => (Object.hasOwn(o, k) ? (o as Record<string, unknown>)[k] : undefined);

/** The members the proxy decides on, in a message and in a tools/call's params. */
const MESSAGE_KEYS = ['jsonrpc', 'id', 'method', 'params', 'result', 'error'];
const PARAMS_KEYS = ['name', 'arguments'];

/** A key spelled otherwise than a member the proxy reads, but read as it by a lenient (case-insensitive) reader: `Method`, `ſ`-spellings. */
function lookalike(o: object, members: string[]): string | null {
  for (const k of Object.keys(o)) {
    const f = foldKey(k);
    if (!members.includes(k) && members.includes(f)) return k;
  }
  return null;
}

function message(v: unknown): Message | string {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'a batch entry that is not an object';
  const odd = lookalike(v, MESSAGE_KEYS);
  if (odd !== null) return `the key ${JSON.stringify(odd.slice(0, 128))} is read as ${JSON.stringify(foldKey(odd))} by some servers`;
  if (own(v, 'jsonrpc') !== '2.0') return 'a message without "jsonrpc": "2.0"';
  const out: Message = {};
  if (Object.hasOwn(v, 'id')) {
    const id = own(v, 'id');
    if (typeof id !== 'string' && typeof id !== 'number' && id !== null) return 'an id that is not a string, a number or null';
    out.id = id;
  }
  const method = own(v, 'method');
  if (Object.hasOwn(v, 'method')) {
    if (typeof method !== 'string') return 'a method that is not a string';
    // A method a loose server might take for tools/call is refused unless it is that exactly.
    if (method !== 'tools/call' && method.normalize('NFKC').toLowerCase().replace(/[^a-z/]/g, '').includes('tools/call')) return `the method ${JSON.stringify(method.slice(0, 64))} is not tools/call but could be read as it`;
    out.method = method;
    if (method === 'tools/call') {
      const params = own(v, 'params');
      if (typeof params !== 'object' || params === null || Array.isArray(params)) return 'a tools/call without params';
      const oddParam = lookalike(params, PARAMS_KEYS);
      if (oddParam !== null) return `the key ${JSON.stringify(oddParam.slice(0, 128))} is read as ${JSON.stringify(foldKey(oddParam))} by some servers`;
      out.tool = own(params, 'name');
      out.argBytes = Object.hasOwn(params, 'arguments') ? Buffer.byteLength(JSON.stringify(own(params, 'arguments')) ?? '') : 0;
    }
  } else if (!Object.hasOwn(v, 'result') && !Object.hasOwn(v, 'error')) return 'a message that is neither a request, a notification nor a response';
  return out;
}

/** A key as a lenient reader may match it: its compatibility form in lower case ("Name", "ſ" and the Kelvin sign fold too). */
export const foldKey = (key: string): string => key.normalize('NFKC').toLowerCase();

/** How deep a request may nest (a tool's arguments included): deeper is refused, never recursed into. */
export const MAX_DEPTH = 128;

/**
 * Why the JSON text could be read two ways, or null: a key that appears twice
 * in one object, in any escape, case or compatibility form (parsers disagree
 * on which of two values counts, and some match keys without regard to case:
 * Go's encoding/json, C#'s), or nesting deeper than MAX_DEPTH. A body that
 * could mean two things is refused rather than read one way.
 */
export function ambiguity(text: string): string | null {
  const stack: Array<Set<string> | null> = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const top = stack[stack.length - 1];
      if (expectKey && top) {
        let key: string;
        try {
          key = JSON.parse(text.slice(i, j + 1)) as string;
        } catch {
          return null; // not JSON: JSON.parse says so
        }
        const folded = foldKey(key);
        if (top.has(folded)) return `the key ${JSON.stringify(key.length > 128 ? `${key.slice(0, 128)}…` : key)} appears twice in one object, in some spelling (servers read such a body differently)`;
        top.add(folded);
      }
      expectKey = false;
      i = j;
    } else if (ch === '{' || ch === '[') {
      if (stack.length >= MAX_DEPTH) return `it nests deeper than ${MAX_DEPTH} levels`;
      stack.push(ch === '{' ? new Set() : null);
      expectKey = ch === '{';
    } else if (ch === '}' || ch === ']') stack.pop();
    else if (ch === ',') expectKey = stack.length > 0 && stack[stack.length - 1] !== null;
  }
  return null;
}

/** Bodies larger than this are not MCP the proxy reads (the agent gets a refusal). */
export const MAX_REQUEST_BODY = 4 << 20;

/** A batch of more than this many messages is refused (the SDKs' servers refuse them too). */
export const MAX_BATCH = 100;

export function parseMessages(body: Buffer): Parsed {
  // Only UTF-8 (the caller refuses any other charset): bytes that are not are not read as something else.
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body);
  } catch {
    return { problem: 'the body is not UTF-8' };
  }
  if (text.charCodeAt(0) === 0xfeff) return { problem: 'the body begins with a byte order mark' };
  const why = ambiguity(text);
  if (why !== null) return { problem: why };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { problem: 'the body is not JSON' };
  }
  const batch = Array.isArray(v);
  const items = batch ? (v as unknown[]) : [v];
  if (items.length === 0) return { problem: 'an empty batch' };
  if (items.length > MAX_BATCH) return { problem: `a batch of more than ${MAX_BATCH} messages` };
  const messages: Message[] = [];
  for (const item of items) {
    const m = message(item);
    if (typeof m === 'string') return { problem: m };
    messages.push(m);
  }
  return { batch, messages };
}

/**
 * A number in the JSON text that a JavaScript reader cannot hold exactly (an
 * integer past 2^53, a value past the double range), or null: the local
 * bridge re-writes what it forwards, and would change it.
 */
export function inexactNumber(text: string): string | null {
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === '"') {
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      continue;
    }
    if (ch !== '-' && (ch < '0' || ch > '9')) continue;
    const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) continue;
    const tok = m[0];
    const n = Number(tok);
    if (!Number.isFinite(n) || (m[1] === undefined && m[2] === undefined && !Number.isSafeInteger(n)) || (n === 0 && /[1-9]/.test(tok.split(/[eE]/)[0]!))) return tok.slice(0, 40);
    i += tok.length - 1;
  }
  return null;
}
