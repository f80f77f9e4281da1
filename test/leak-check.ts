// Whether bytes an agent read carry a real value, in any form a client could
// decode: raw, percent-encoded (either case), escaped as JSON, JavaScript or
// HTML write characters (each its own way), or inside any base64 run at any
// alignment, in either alphabet. Written apart from lib/proxy/scrub.ts and
// lib/secrets/spellings.ts, so a mistake there does not hide here.

function percentDecoded(text: string): string {
  return text.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", plus: '+', sol: '/', equals: '=', num: '#', percnt: '%' };

/** Backslash escapes and character references decoded, as a client of each would (one pass each, JSON's then HTML's). */
function unescaped(text: string): string {
  const json = text.replace(/\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|([^ux]))/g, (_, u?: string, x?: string, c?: string) => (u || x ? String.fromCharCode(parseInt((u ?? x)!, 16)) : c!));
  return json.replace(/&(?:#[xX]([0-9a-fA-F]+)|#([0-9]+)|([a-zA-Z]+));?/g, (all, hex?: string, dec?: string, name?: string) =>
    hex ? String.fromCodePoint(parseInt(hex, 16)) : dec ? String.fromCodePoint(parseInt(dec, 10)) : (NAMED[name!] ?? all),
  );
}

function base64Runs(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/[A-Za-z0-9+/_-]{8,}/g)) {
    const run = m[0].replace(/-/g, '+').replace(/_/g, '/');
    for (let skip = 0; skip < 4; skip++) out.push(Buffer.from(run.slice(skip), 'base64').toString('latin1'));
  }
  return out;
}

/** The forms in which `real` appears in `bytes`; empty when none. */
export function leaks(bytes: Buffer | string, real: string): string[] {
  const text = typeof bytes === 'string' ? bytes : bytes.toString('latin1');
  const realBytes = Buffer.from(real).toString('latin1');
  const found: string[] = [];
  if (text.includes(realBytes)) found.push('raw');
  if (percentDecoded(text).includes(realBytes) && !text.includes(realBytes)) found.push('percent-encoded');
  if (base64Runs(text).some((d) => d.includes(realBytes))) found.push('base64');
  if (base64Runs(percentDecoded(text)).some((d) => d.includes(realBytes))) found.push('base64, percent-encoded');
  if (unescaped(text).includes(realBytes) && !text.includes(realBytes)) found.push('escaped');
  return [...new Set(found)];
}
