// An MCP server's answers on their way to the agent, with the tools the
// profile does not allow taken out of every tools/list result: a JSON body
// whole (held to its end), an event stream event by event (each passed on as
// soon as its blank line arrives, so a stream keeps streaming), whichever the
// answer's first bytes say it is (a client may sniff what its type does not
// say). What cannot be read is not passed on: a JSON body that is not JSON (or
// too large) becomes a JSON-RPC error, an event whose data is not JSON is
// dropped, an event that never ends is dropped past 16 MiB. Keys a lenient
// reader would take for `result` or `tools` are dropped too.
// The listing is what the agent is shown; what it may call is decided on the
// way in (lib/mcp/request-filter.ts), whatever it was shown.
import type { MessageFilter } from '../proxy/message-filter.js';
import { type ToolPolicy, toolListed } from './tool-policy.js';
import { ambiguity, foldKey } from './jsonrpc.js';
import { HeldBytes } from '../util/held-bytes.js';

const EMPTY = Buffer.alloc(0);
/** A JSON answer is held whole up to this size, an event up to this size; larger is not passed on. */
export const MAX_JSON_ANSWER = 16 << 20;

/**
 * The run's room for MCP answers held at once (review, round 34: 32 answers of
 * 15 MiB, one per upstream connection, held 1.9 GB of stashbase's memory):
 * `take` charges bytes held (false past the room: nothing charged), `give`
 * returns them.
 */
export interface AnswerBudget {
  take(n: number): boolean;
  give(n: number): void;
  /** The room, in bytes (said in the refusal). */
  readonly max: number;
}

/** No room counted (a filter used alone). */
export const UNCOUNTED: AnswerBudget = { take: () => true, give: () => {}, max: Infinity };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const BOM = '\ufeff';

/** An object without the keys a lenient (case-insensitive) reader would take for `name` but that are not spelled so. */
function withoutLookalikes(o: Record<string, unknown>, name: string): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const k of Object.keys(o)) if (k === name || foldKey(k) !== name) out[k] = o[k];
  return out;
}

/** One JSON-RPC message with its tools/list result filtered (and no look-alike of result or tools left); null when there was nothing to change. */
function filterMessage(v: unknown, p: ToolPolicy): unknown | null {
  if (!isObject(v)) return null;
  const m = withoutLookalikes(v, 'result');
  const result = m.result;
  const lookalike = Object.keys(m).length !== Object.keys(v).length;
  if (!isObject(result)) return lookalike ? m : null;
  const r = withoutLookalikes(result, 'tools');
  if (!Array.isArray(r.tools)) return lookalike || Object.keys(r).length !== Object.keys(result).length ? { ...m, result: r } : null;
  const kept = (r.tools as unknown[]).filter((t) => isObject(t) && Object.hasOwn(t, 'name') && toolListed(p, t.name));
  return { ...m, result: { ...r, tools: kept } };
}

/** The JSON text with every tools/list result filtered; null when it is unchanged; 'refused' when it cannot be read (not JSON, too deep). */
export function filterJson(text: string, p: ToolPolicy): string | null | 'refused' {
  try {
    // An answer that could be read two ways (a key twice, in some spelling) is not passed on: a client might take the other.
    if (ambiguity(text) !== null) return 'refused';
    const v: unknown = JSON.parse(text.startsWith(BOM) ? text.slice(1) : text);
    if (Array.isArray(v)) {
      const out = v.map((m) => filterMessage(m, p));
      return out.every((m) => m === null) && !text.startsWith(BOM) ? null : JSON.stringify(v.map((m, i) => out[i] ?? m));
    }
    const one = filterMessage(v, p);
    return one === null ? (text.startsWith(BOM) ? JSON.stringify(v) : null) : JSON.stringify(one);
  } catch {
    return 'refused';
  }
}

const refusal = (why: string) => Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: `stashbase: the MCP server's answer ${why}, so it was not passed on` } }));

/** An answer's bytes held, each charged to the run's room, given back when they are taken or dropped. */
class HeldAnswer {
  private readonly bytes = new HeldBytes();
  constructor(private readonly budget: AnswerBudget) {}
  /** Holds `chunk`; or, past MAX_JSON_ANSWER or the room, holds nothing of it and says which. */
  add(chunk: Buffer): 'larger' | 'room' | null {
    if (this.bytes.size + chunk.length > MAX_JSON_ANSWER) return 'larger';
    if (!this.budget.take(chunk.length)) return 'room';
    this.bytes.push(chunk);
    return null;
  }
  take(): Buffer {
    const all = this.bytes.take();
    this.budget.give(all.length);
    return all;
  }
  clear(): void {
    this.budget.give(this.bytes.size);
    this.bytes.clear();
  }
  get size(): number {
    return this.bytes.size;
  }
}

class JsonAnswer implements MessageFilter {
  private readonly parts: HeldAnswer;
  private over: string | null = null;
  constructor(private readonly p: ToolPolicy, private readonly budget: AnswerBudget) {
    this.parts = new HeldAnswer(budget);
  }
  push(chunk: Buffer): Buffer {
    if (this.over !== null || chunk.length === 0) return EMPTY;
    const refused = this.parts.add(chunk);
    if (refused === 'larger') return this.drop(`is larger than ${MAX_JSON_ANSWER} bytes`);
    if (refused === 'room') return this.drop(`would have been held with the run's other MCP answers past ${this.budget.max >> 20} MiB at once (network.limits.mcp_bodies_mb)`);
    return EMPTY;
  }
  private drop(why: string): Buffer {
    this.over = why;
    this.parts.clear();
    return EMPTY;
  }
  release(): Buffer {
    return EMPTY;
  }
  end(): Buffer {
    if (this.over !== null) return refusal(this.over);
    const all = this.parts.take();
    const filtered = filterJson(all.toString('utf8'), this.p);
    return filtered === 'refused' ? refusal('is not JSON it could read') : filtered === null ? all : Buffer.from(filtered);
  }
  get held(): number {
    return this.parts.size;
  }
}

/**
 * What another reader takes for a line break where an event stream has none
 * (Python's splitlines: \v, \f, \x1c-\x1e, \x85, U+2028, U+2029), the other
 * control characters, and bytes that are not UTF-8.
 */
const ODD = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u0085\u2028\u2029\ufffd]/;
/** A line of an event stream's own: a field it defines (with a value or not), or a comment. */
const SSE_LINE = /^(?:$|:|(?:data|event|id|retry)(?::|$))/;

/**
 * One event, its data filtered when it holds a tools/list result; dropped when
 * its data is not JSON, or when any reader could take it otherwise: a byte
 * another reader splits lines at, or a line that is not one of the stream's
 * own fields (found in review: "event: message\vdata: {…}" passed unread, and
 * a Python client split it into a data line listing a denied tool).
 */
function filterEvent(raw: Buffer, p: ToolPolicy): Buffer {
  const text = raw.toString('utf8');
  if (ODD.test(text)) return EMPTY;
  const lines = text.split(/\r\n|\r|\n/);
  if (!lines.every((l) => SSE_LINE.test(l))) return EMPTY;
  const data = lines.filter((l) => l === 'data' || l.startsWith('data:')).map((l) => (l.startsWith('data: ') ? l.slice(6) : l.slice(5)));
  if (data.length === 0) return raw;
  const joined = data.join('\n');
  if (joined.trim() === '') return raw;
  const filtered = filterJson(joined, p);
  if (filtered === 'refused') return EMPTY;
  if (filtered === null) return raw;
  const others = lines.filter((l) => l !== '' && l !== 'data' && !l.startsWith('data:'));
  return Buffer.from([...others, `data: ${filtered}`, '', ''].join('\n'));
}

/** The end of the first complete event in `buf` from `from` (just past its blank line), or -1. */
function eventEnd(buf: Buffer, from: number): number {
  for (let i = from; i < buf.length; i++) {
    if (buf[i] !== 0x0a && buf[i] !== 0x0d) continue;
    // A line break followed by another: \n\n, \r\n\r\n, \r\r.
    const a = buf[i] === 0x0d && buf[i + 1] === 0x0a ? i + 2 : i + 1;
    if (buf[a] === 0x0a) return a + 1;
    if (buf[a] === 0x0d) return buf[a + 1] === 0x0a ? a + 2 : a < buf.length - 1 ? a + 1 : -1;
    i = a - 1;
  }
  return -1;
}

/** Where the blank line ending an event is, scanning `chunk` after `carry` (the last bytes seen before it): the index in `chunk` just past it, or -1. */
function endIn(carry: Buffer, chunk: Buffer): number {
  const joined = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
  const at = eventEnd(joined, 0);
  return at === -1 ? -1 : at - carry.length;
}

class EventAnswer implements MessageFilter {
  /** The event being held (taken whole when it ends). */
  private readonly parts: HeldAnswer;
  /** Up to the last 3 bytes held: a blank line may straddle two chunks. */
  private carry: Buffer = EMPTY;
  /** An event over the limit: its bytes are dropped until its end. */
  private skipping = false;
  constructor(private readonly p: ToolPolicy, budget: AnswerBudget) {
    this.parts = new HeldAnswer(budget);
  }
  push(chunk: Buffer): Buffer {
    const out: Buffer[] = [];
    while (chunk.length > 0) {
      const at = endIn(this.carry, chunk);
      if (at === -1) {
        if (!this.skipping) {
          // An event that never ends is not held without end, nor past the run's room: dropped, and what follows until its end too.
          if (this.parts.add(chunk) !== null) {
            this.skipping = true;
            this.parts.clear();
          }
        }
        this.carry = Buffer.from((this.carry.length + chunk.length > 3 ? Buffer.concat([this.carry, chunk]).subarray(-3) : Buffer.concat([this.carry, chunk])));
        break;
      }
      // The event ends inside this chunk (or exactly where the held bytes end: a line break left waiting for the next byte).
      const cut = Math.max(0, at);
      if (!this.skipping && this.parts.size + cut <= MAX_JSON_ANSWER) out.push(filterEvent(this.parts.size > 0 ? Buffer.concat([this.parts.take(), chunk.subarray(0, cut)]) : chunk.subarray(0, cut), this.p));
      this.skipping = false;
      this.parts.clear();
      this.carry = EMPTY;
      chunk = chunk.subarray(cut);
    }
    return out.length === 0 ? EMPTY : out.length === 1 ? out[0]! : Buffer.concat(out);
  }
  release(): Buffer {
    return EMPTY;
  }
  end(): Buffer {
    const rest = this.parts.take();
    return rest.length && !this.skipping ? filterEvent(rest, this.p) : EMPTY;
  }
  get held(): number {
    return this.parts.size;
  }
}

/**
 * The filter of an MCP server's answer, whatever type it says it is (a client
 * may sniff): one that begins, after white space and a byte order mark, with
 * "{" or "[" is read as JSON, whole; anything else as an event stream.
 */
class SniffedAnswer implements MessageFilter {
  private inner: MessageFilter | null = null;
  private readonly head = new HeldBytes();
  /** Where the answer's own bytes begin (past a byte order mark), once its first three bytes said. */
  private bom: number | null = null;
  /** How far the head is white space. Each byte is looked at once (review, round 38: the head read again at every piece took 46 s for 63 KiB in one-byte pieces). */
  private white = 0;
  constructor(private readonly p: ToolPolicy, private readonly budget: AnswerBudget) {}
  push(chunk: Buffer): Buffer {
    if (this.inner) return this.inner.push(chunk);
    if (chunk.length === 0) return EMPTY;
    const offset = this.head.size;
    this.head.push(chunk);
    // The bytes to look at and where they begin: the whole head (at most two bytes before this piece) until the byte
    // order mark is decided, this piece after.
    let from = chunk;
    let base = offset;
    if (this.bom === null) {
      from = this.head.take();
      this.head.push(from);
      base = 0;
      // A byte order mark, however it is split across reads, is waited for whole and dropped (clients drop it).
      if (from.length < 3 && [...from].every((b, i) => b === BOM_BYTES[i])) return EMPTY;
      this.bom = from[0] === 0xef && from[1] === 0xbb && from[2] === 0xbf ? 3 : 0;
      this.white = this.bom;
    }
    let i = Math.max(this.white, base);
    while (i < base + from.length && isWhite(from[i - base] as number)) i++;
    this.white = i;
    if (i === this.head.size && this.head.size <= HEAD_LIMIT) return EMPTY;
    const first = i < base + from.length ? from[i - base] : undefined;
    // "{" or "[": JSON; a field name or a comment: an event stream; anything else (UTF-16, endless white space) is read as JSON and refused.
    const field = first !== undefined && ((first >= 0x41 && first <= 0x5a) || (first >= 0x61 && first <= 0x7a) || first === 0x3a);
    this.inner = first === 0x7b || first === 0x5b || !field ? new JsonAnswer(this.p, this.budget) : new EventAnswer(this.p, this.budget);
    return this.inner.push(this.head.take().subarray(this.bom));
  }
  release(): Buffer {
    return this.inner?.release() ?? EMPTY;
  }
  end(): Buffer {
    if (this.inner) return this.inner.end();
    // Nothing but white space (or nothing): passed as it came.
    return this.head.take();
  }
  get held(): number {
    return this.inner?.held ?? this.head.size;
  }
}

const BOM_BYTES = [0xef, 0xbb, 0xbf];
const isWhite = (b: number) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;

/** White space an answer may begin with before its first byte says what it is. */
const HEAD_LIMIT = 64 << 10;

/** An answer in a charset other than UTF-8: nothing of it passed on (found in review: a client decodes the charset its type names, UTF-16 or UTF-7, into a listing the filter never read). */
class OtherCharset implements MessageFilter {
  constructor(private readonly charset: string) {}
  push(): Buffer {
    return EMPTY;
  }
  release(): Buffer {
    return EMPTY;
  }
  end(): Buffer {
    return refusal(`says ${charsetNamed(this.charset)} of its charset, not plainly UTF-8`);
  }
  get held(): number {
    return 0;
  }
}

/**
 * What a Content-Type says of its charset that is not plainly UTF-8, or null:
 * its parameters read as a client's parser reads them (quoted strings, RFC
 * 2231's `charset*` and `charset*0` names), and anything but none or one
 * `charset=utf-8` refused, as is a value holding two types (found in review:
 * `charset*=utf-8''utf-7`, a `charset=utf-8` inside another parameter's
 * quotes, and `charset*0=utf-; charset*1=7` each read as UTF-7 by Python's
 * parser, and as no charset by the first reading of this one).
 */
export function charsetProblem(contentType: string | undefined): string | null {
  if (contentType === undefined) return null;
  const ct = contentType;
  let i = ct.indexOf(';');
  if ((i === -1 ? ct : ct.slice(0, i)).includes(',')) return 'two types';
  const charsets: string[] = [];
  while (i !== -1 && i < ct.length) {
    i++;
    let name = '';
    while (i < ct.length && ct[i] !== '=' && ct[i] !== ';') name += ct[i++];
    let value = '';
    if (ct[i] === '=') {
      i++;
      while (i < ct.length && (ct[i] === ' ' || ct[i] === '\t')) i++;
      if (ct[i] === '"') {
        i++;
        while (i < ct.length && ct[i] !== '"') {
          if (ct[i] === '\\') i++;
          value += ct[i++] ?? '';
        }
        if (ct[i] !== '"') return 'an unended quoted value';
        i++;
        while (i < ct.length && ct[i] !== ';') if (ct[i++] !== ' ' && ct[i - 1] !== '\t') return 'text after a quoted value';
      } else {
        while (i < ct.length && ct[i] !== ';') value += ct[i++];
        if (value.includes(',')) return 'two types';
      }
    }
    const n = name.trim().toLowerCase();
    if (n.startsWith('charset')) charsets.push(`${n}=${value.trim().toLowerCase()}`);
  }
  if (charsets.length === 0 || (charsets.length === 1 && (charsets[0] === 'charset=utf-8' || charsets[0] === 'charset=utf8'))) return null;
  return charsets.join('; ');
}

/** Charsets a refusal may name: the proxy's words never repeat an upstream's own text (a bound server could send a secret there). */
const KNOWN_CHARSETS = new Set(['utf-7', 'utf-16', 'utf-16le', 'utf-16be', 'utf-32', 'us-ascii', 'ascii', 'iso-8859-1', 'latin1', 'windows-1252', 'cp1252', 'shift_jis', 'euc-jp', 'gbk', 'gb2312', 'big5', 'koi8-r', "utf-8''utf-7", 'utf-', '7']);

/** charsetProblem's own words (anything else it returns holds the upstream's text). */
const FIXED_PROBLEMS = new Set(['two types', 'an unended quoted value', 'text after a quoted value']);

/** What charsetProblem found, as a refusal may say it (review, round 35: the upstream's charset text itself, lowercased, carried a bound secret to the agent). */
function charsetNamed(problem: string): string {
  const parts = problem.split('; ').map((p) => {
    const m = /^(charset(?:\*\d*)?)=(.*)$/.exec(p);
    return m !== null && KNOWN_CHARSETS.has(m[2] as string) ? p : FIXED_PROBLEMS.has(p) ? p : 'a charset the proxy does not name';
  });
  return JSON.stringify(parts.join('; '));
}

/** The filter of an answer whose Content-Type is `contentType`. */
export const answerFilter = (p: ToolPolicy, contentType?: string, budget: AnswerBudget = UNCOUNTED): MessageFilter => {
  const problem = charsetProblem(contentType);
  return problem === null ? new SniffedAnswer(p, budget) : new OtherCharset(problem);
};
