// Secret bindings at the proxy, pure: the agent holds placeholders; requests to
// a secret's bound hosts get the real value in their headers (Basic credentials
// decoded and re-encoded; query strings where the profile opts in); a
// placeholder or a real value headed anywhere else blocks the request; real
// values coming back are turned into their placeholders.
import { matchesHost } from './policy.js';

export interface BoundSecret {
  name: string;
  placeholder: string;
  real: string;
  hosts: string[];
  inQuery: boolean;
  allowPlaintext: boolean;
}

export type Rewrite =
  | { ok: true; rawHeaders: string[]; path: string; injected: string[] }
  | { ok: false; rule: string; suspect: string };

function bound(s: BoundSecret, host: string, tls: boolean): boolean {
  return (tls || s.allowPlaintext) && s.hosts.some((p) => matchesHost(p, host));
}

/** Replaces or refuses what one text carries; null when it must be refused. */
function rewriteText(text: string, host: string, tls: boolean, secrets: BoundSecret[], injected: Set<string>, where: string): { text: string } | { rule: string; suspect: string } {
  let out = text;
  for (const s of secrets) {
    if (out.includes(s.real) && !bound(s, host, tls)) {
      return { rule: `the real value of ${s.name} headed to ${host} (${where}), which it is not bound to`, suspect: s.name };
    }
    if (out.includes(s.placeholder)) {
      if (!bound(s, host, tls)) return { rule: `the placeholder of ${s.name} headed to ${host} (${where}), which it is not bound to`, suspect: s.name };
      out = out.split(s.placeholder).join(s.real);
      injected.add(s.name);
    }
  }
  return { text: out };
}

export function rewriteRequest(rawHeaders: string[], path: string, host: string, tls: boolean, secrets: BoundSecret[]): Rewrite {
  const injected = new Set<string>();
  const headers: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    let value = rawHeaders[i + 1] as string;
    const basic = /^(\s*basic\s+)([A-Za-z0-9+/=]+)\s*$/i.exec(value);
    if (basic && name.toLowerCase() === 'authorization' || basic && name.toLowerCase() === 'proxy-authorization') {
      const decoded = Buffer.from(basic![2] as string, 'base64').toString('utf8');
      const r = rewriteText(decoded, host, tls, secrets, injected, `${name}: Basic`);
      if ('rule' in r) return { ok: false, ...r };
      value = `${basic![1]}${Buffer.from(r.text, 'utf8').toString('base64')}`;
    } else {
      const r = rewriteText(value, host, tls, secrets, injected, name);
      if ('rule' in r) return { ok: false, ...r };
      value = r.text;
    }
    headers.push(name, value);
  }
  // The path and query: replaced only where the profile opted in, refused when unbound.
  const q = path.indexOf('?');
  const pathOnly = q === -1 ? path : path.slice(0, q);
  const query = q === -1 ? '' : path.slice(q);
  for (const s of secrets) {
    if ((path.includes(s.placeholder) || path.includes(s.real)) && !bound(s, host, tls)) {
      return { ok: false, rule: `a value of ${s.name} in the URL headed to ${host}, which it is not bound to`, suspect: s.name };
    }
  }
  let newQuery = query;
  for (const s of secrets) {
    if (s.inQuery && newQuery.includes(s.placeholder)) {
      newQuery = newQuery.split(s.placeholder).join(encodeURIComponent(s.real));
      injected.add(s.name);
    }
  }
  return { ok: true, rawHeaders: headers, path: pathOnly + newQuery, injected: [...injected] };
}

/** A value a request body may not carry, with the rule that names it and the secret it belongs to. */
export interface BodyNeedle {
  needle: Buffer;
  rule: string;
  suspect: string;
}

/** What a request body to `host` may not carry: every value of a secret not bound there. */
export function bodyNeedles(host: string, tls: boolean, secrets: BoundSecret[]): BodyNeedle[] {
  return secrets
    .filter((s) => !bound(s, host, tls))
    .flatMap((s) => [
      { needle: Buffer.from(s.real), rule: `the real value of ${s.name} headed to ${host} (request body), which it is not bound to`, suspect: s.name },
      { needle: Buffer.from(s.placeholder), rule: `the placeholder of ${s.name} headed to ${host} (request body), which it is not bound to`, suspect: s.name },
    ]);
}

/** Real values in response headers become their placeholders. */
export function scrubHeaders(headers: Record<string, string | string[] | undefined>, secrets: BoundSecret[]): Record<string, string | string[] | undefined> {
  const scrub = (v: string) => secrets.reduce((acc, s) => acc.split(s.real).join(s.placeholder), v);
  const out: Record<string, string | string[] | undefined> = {};
  for (const [k, v] of Object.entries(headers)) out[k] = Array.isArray(v) ? v.map(scrub) : v === undefined ? v : scrub(v);
  return out;
}
