// A minimal DER encoder: exactly the types an X.509 v3 certificate needs.

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function tlv(tag: number, value: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), length(value.length), value]);
}

export const seq = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
export const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
export const bool = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0x00]));
export const octets = (b: Buffer) => tlv(0x04, b);
export const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));
/** Context-specific, constructed ([n] EXPLICIT). */
export const explicit = (n: number, inner: Buffer) => tlv(0xa0 | n, inner);
/** Context-specific, primitive ([n] IMPLICIT over a primitive value). */
export const implicit = (n: number, value: Buffer) => tlv(0x80 | n, value);

/** A non-negative INTEGER from big-endian bytes. */
export function uint(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const trimmed = bytes.subarray(i);
  return tlv(0x02, (trimmed[0] as number) & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

export function int(n: number): Buffer {
  const hex = n.toString(16);
  return uint(Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex'));
}

/** BIT STRING with `unused` trailing bits in the last byte. */
export const bits = (b: Buffer, unused = 0) => tlv(0x03, Buffer.concat([Buffer.from([unused]), b]));

export function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out: number[] = [40 * (parts[0] as number) + (parts[1] as number)];
  for (const p of parts.slice(2)) {
    const chunk: number[] = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime before 2050, GeneralizedTime after (RFC 5280 4.1.2.5). */
export function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').replace(/\.\d+Z$/, 'Z');
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2), 'ascii')) : tlv(0x18, Buffer.from(iso, 'ascii'));
}
