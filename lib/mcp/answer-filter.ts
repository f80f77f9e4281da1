// An MCP server's answers on their way to the agent, with the tools the
// profile does not allow taken out of every tools/list result: a JSON body
// whole (held to its end), an event stream event by event (each passed on as
// soon as its blank line arrives, so a stream keeps streaming). Only results
// that carry a `tools` array are rewritten; everything else passes as it came.
// The listing is what the agent is shown; what it may call is decided on the
// way in (lib/mcp/request-filter.ts), whatever it was shown.
import type { MessageFilter } from '../proxy/message-filter.js';
import { type ToolPolicy, toolListed } from './tool-policy.js';

const EMPTY = Buffer.alloc(0);
/** A JSON answer is held whole up to this size; a larger one passes unfiltered (calls are still decided). */
export const MAX_JSON_ANSWER = 16 << 20;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One JSON-RPC response with a tools/list result, filtered; null when there was nothing to take out. */
function filterMessage(v: unknown, p: ToolPolicy): unknown | null {
  if (!isObject(v) || !Object.hasOwn(v, 'result')) return null;
  const result = v.result;
  if (!isObject(result) || !Object.hasOwn(result, 'tools') || !Array.isArray(result.tools)) return null;
  const tools = result.tools as unknown[];
  const kept = tools.filter((t) => isObject(t) && Object.hasOwn(t, 'name') && toolListed(p, t.name));
  return { ...v, result: { ...result, tools: kept } };
}

/** The JSON text with every tools/list result filtered, or null when it is unchanged (or not JSON). */
export function filterJson(text: string, p: ToolPolicy): string | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (Array.isArray(v)) {
    const out = v.map((m) => filterMessage(m, p));
    return out.every((m) => m === null) ? null : JSON.stringify(v.map((m, i) => out[i] ?? m));
  }
  const one = filterMessage(v, p);
  return one === null ? null : JSON.stringify(one);
}

class JsonAnswer implements MessageFilter {
  private parts: Buffer[] = [];
  private size = 0;
  private passing = false;
  constructor(private readonly p: ToolPolicy) {}
  push(chunk: Buffer): Buffer {
    if (this.passing) return chunk;
    this.parts.push(chunk);
    this.size += chunk.length;
    if (this.size <= MAX_JSON_ANSWER) return EMPTY;
    this.passing = true;
    const all = Buffer.concat(this.parts);
    this.parts = [];
    return all;
  }
  release(): Buffer {
    return EMPTY;
  }
  end(): Buffer {
    if (this.passing) return EMPTY;
    const all = Buffer.concat(this.parts);
    this.parts = [];
    const filtered = filterJson(all.toString('utf8'), this.p);
    return filtered === null ? all : Buffer.from(filtered);
  }
  get held(): number {
    return this.passing ? 0 : this.size;
  }
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

/** One event, its data filtered when it holds a tools/list result. */
function filterEvent(raw: Buffer, p: ToolPolicy): Buffer {
  const text = raw.toString('utf8');
  const lines = text.split(/\r\n|\r|\n/);
  const data = lines.filter((l) => l === 'data' || l.startsWith('data:')).map((l) => (l.startsWith('data: ') ? l.slice(6) : l.slice(5)));
  if (data.length === 0) return raw;
  const filtered = filterJson(data.join('\n'), p);
  if (filtered === null) return raw;
  const others = lines.filter((l) => l !== '' && l !== 'data' && !l.startsWith('data:'));
  return Buffer.from([...others, `data: ${filtered}`, '', ''].join('\n'));
}

class EventAnswer implements MessageFilter {
  private pending: Buffer = EMPTY;
  constructor(private readonly p: ToolPolicy) {}
  push(chunk: Buffer): Buffer {
    let buf = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const out: Buffer[] = [];
    for (let end = eventEnd(buf, 0); end !== -1; end = eventEnd(buf, 0)) {
      out.push(filterEvent(buf.subarray(0, end), this.p));
      buf = buf.subarray(end);
    }
    this.pending = Buffer.from(buf);
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  }
  release(): Buffer {
    return EMPTY;
  }
  end(): Buffer {
    const rest = this.pending;
    this.pending = EMPTY;
    return rest.length ? filterEvent(rest, this.p) : EMPTY;
  }
  get held(): number {
    return this.pending.length;
  }
}

/** The filter for an answer of this content type, or null (passes as it is). */
export function answerFilter(contentType: string | undefined, p: ToolPolicy): MessageFilter | null {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'text/event-stream') return new EventAnswer(p);
  if (type === 'application/json' || type.endsWith('+json')) return new JsonAnswer(p);
  return null;
}
