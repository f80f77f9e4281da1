// What the intercepting proxy writes itself on an HTTP/1.1 connection: heads
// (latin1, as Node writes them), chunked framing, and its own short answers.
import { STATUS_CODES } from 'node:http';

/** A head: the start line, each raw name/value pair, the blank line. */
export function headBytes(start: string, headers: string[]): Buffer {
  let text = `${start}\r\n`;
  for (let i = 0; i < headers.length; i += 2) text += `${headers[i]}: ${headers[i + 1]}\r\n`;
  return Buffer.from(`${text}\r\n`, 'latin1');
}

/**
 * A status line's reason phrase: the standard one for the status, never the
 * upstream's (clients ignore it, and it is one more place a value could hide:
 * scrubbed and then cleaned of a control byte, a value split by one would
 * come back whole).
 */
export function reason(status: number): string {
  return STATUS_CODES[status] ?? 'Unknown';
}

const CRLF = Buffer.from('\r\n');
export const LAST_CHUNK = Buffer.from('0\r\n\r\n');
/** No bytes (shared: never written into). */
export const EMPTY = Buffer.alloc(0);

/** Appends `parts` (`size` bytes in all) to `into` as one chunk of a chunked body; nothing when empty (that would end the body). */
export function pushChunk(into: Buffer[], parts: Buffer[], size: number): void {
  if (size === 0) return;
  into.push(Buffer.from(`${size.toString(16)}\r\n`, 'latin1'));
  for (const b of parts) into.push(b);
  into.push(CRLF);
}

/** The proxy's own refusal, the connection's last words: status, the rule in X-Stashbase-Denied, a text body. */
export function refusal(status: number, rule: string, body: string): Buffer {
  return Buffer.concat([
    headBytes(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`, [
      'Content-Type', 'text/plain; charset=utf-8',
      'X-Stashbase-Denied', rule.replace(/[^\x20-\x7e]/g, '?'),
      'Content-Length', String(Buffer.byteLength(body)),
      'Connection', 'close',
    ]),
    Buffer.from(body),
  ]);
}

/** The answer to a head the parser refused or that came too slowly (what Node's server sends). */
export function parseFailure(code: string): string {
  const status = code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request';
  return `HTTP/1.1 ${status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`;
}

/** The first value of a header in raw pairs (lowercase name), or undefined. */
export function rawValue(headers: string[], name: string): string | undefined {
  for (let i = 0; i < headers.length; i += 2) if (headers[i]!.length === name.length && headers[i]!.toLowerCase() === name) return headers[i + 1];
  return undefined;
}

/** Every value of a header in raw pairs (lowercase name), joined with ", " as Node joins them; undefined when none. */
export function rawJoined(headers: string[], name: string): string | undefined {
  let all: string | undefined;
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i]!.length === name.length && headers[i]!.toLowerCase() === name) all = all === undefined ? headers[i + 1]! : `${all}, ${headers[i + 1]!}`;
  }
  return all;
}

/** How many times a header appears in raw pairs (lowercase name). */
export function rawCount(headers: string[], name: string): number {
  let n = 0;
  for (let i = 0; i < headers.length; i += 2) if (headers[i]!.length === name.length && headers[i]!.toLowerCase() === name) n++;
  return n;
}

/** Raw pairs as one value per lowercase name, repeated ones joined with ", " (as Node's req.headers). */
export function headerMap(headers: string[]): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = Object.create(null);
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!.toLowerCase();
    const prev = out[name];
    out[name] = prev === undefined ? headers[i + 1]! : `${prev}, ${headers[i + 1]!}`;
  }
  return out;
}
