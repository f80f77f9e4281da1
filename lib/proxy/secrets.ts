// Secret bindings at the proxy, pure: the agent holds placeholders; requests to
// a secret's bound hosts get the real value in their headers (Basic credentials
// decoded and re-encoded when they carry one; query strings where the profile
// opts in); a real value headed anywhere else blocks the request. A placeholder
// headed to a host its secret is not bound to is inert: passed on unchanged,
// never substituted, and named in the audit. It carries nothing of the secret
// (random per run, the value's public prefix and length), and the agent, which
// holds it, could send it anywhere encoded; refusing it only broke
// conversations whose history holds another secret's placeholder (a tool's
// `env` output sent to the model's host). Real values coming back are
// lib/proxy/scrub.ts's.
import { type FormSearch, searchFor } from '../secrets/form-search.js';
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
  /** `inert`: secrets whose placeholder went on unchanged to a host they are not bound to. */
  | { ok: true; rawHeaders: string[]; path: string; injected: string[]; inert: string[] }
  | { ok: false; rule: string; suspect: string };

function bound(s: BoundSecret, host: string, tls: boolean): boolean {
  return (tls || s.allowPlaintext) && s.hosts.some((p) => matchesHost(p, host));
}

interface Found {
  injected: Set<string>;
  inert: Set<string>;
}

/**
 * Which of a run's secrets are bound to `host` over this scheme, by index:
 * the same for every request of a tunnel, so worked out once per host
 * (at most 1,024 hosts remembered per run's secrets).
 */
function boundFlags(secrets: BoundSecret[], host: string, tls: boolean): boolean[] {
  let byHost = boundOf.get(secrets);
  if (!byHost) {
    byHost = new Map();
    boundOf.set(secrets, byHost);
  }
  const key = `${tls ? 's' : 'p'}${host}`;
  let flags = byHost.get(key);
  if (!flags) {
    flags = secrets.map((s) => bound(s, host, tls));
    if (byHost.size >= 1024) byHost.clear();
    byHost.set(key, flags);
  }
  return flags;
}

const boundOf = new WeakMap<BoundSecret[], Map<string, boolean[]>>();

/**
 * Where in a field a placeholder is replaced: the field's whole value (any header); in `Authorization`, also after a
 * scheme other than Basic (`Bearer PH`, `token PH`); in `Cookie`, a pair's whole value (`name=PH`); in decoded Basic
 * credentials, the whole user or the whole password; in `Sec-WebSocket-Protocol`, a whole element of its list (clients
 * that cannot set headers offer their key as a subprotocol: `token, PH`).
 */
type Shape = 'value' | 'credentials' | 'cookie' | 'userpass' | 'list';

/** An HTTP token (RFC 9110), as an auth scheme is spelled. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Whether every occurrence of the placeholder in the field stands where a credential does, judged on the agent's own
 * text: the agent writes every other byte of the field, and a bound service that decodes the field would decode them
 * together with the value's and give the agent back a form of it no scrubber knows (review, round 36: `q=%4PH` came
 * back as `J3f9…` from a search's echo; a second review found `=PH` in an RFC 2047 encoded word, a charset named
 * elsewhere in the field (`=?cp500?q?:PH:?=`), a base64 run across a space, `Basic` followed by a byte JavaScript
 * does not count as white space). What decides is the shape of the agent's own text; the value's bytes decide nothing.
 */
function standsAsCredential(text: string, placeholder: string, shape: Shape): boolean {
  if (text === placeholder) return true;
  // Every part of the field that holds the placeholder judged by `whole`.
  const parts = (list: string[], whole: (part: string) => boolean) => list.every((part) => !part.includes(placeholder) || whole(part));
  switch (shape) {
    case 'credentials': {
      const sp = text.indexOf(' ');
      const scheme = text.slice(0, sp);
      return sp > 0 && text.slice(sp + 1) === placeholder && TOKEN.test(scheme) && scheme.toLowerCase() !== 'basic';
    }
    case 'cookie':
      return parts(text.split(';'), (pair) => {
        const eq = pair.indexOf('=');
        const value = pair.slice(eq + 1);
        return eq !== -1 && !pair.slice(0, eq).includes(placeholder) && (value === placeholder || value === `"${placeholder}"`);
      });
    case 'list':
      // Only spaces and tabs around it (JavaScript's trim also takes \xA0, \v and \f, which a decoder reads with the
      // value: the third review).
      return parts(text.split(','), (item) => /^[ \t]*$/.test(item.replace(placeholder, '')));
    case 'userpass': {
      const colon = text.indexOf(':');
      return colon !== -1 && parts([text.slice(0, colon), text.slice(colon + 1)], (field) => field === placeholder);
    }
    default:
      return false;
  }
}

const notWhole = (s: BoundSecret, host: string, where: string) => ({
  rule: `the placeholder of ${s.name} headed to ${host} (${where}) is not where a credential stands: it is replaced only as a header's whole value, after an Authorization scheme other than Basic (Bearer, token …), as a cookie's or a query parameter's whole value, a whole subprotocol offered, or the whole user or password of Basic credentials, so that nothing the agent writes beside it can be decoded with the real value`,
  suspect: s.name,
});

/**
 * Replaces what one text carries (`put`: the secrets whose values went in), or names the rule that refuses it.
 * `isBound[i]`: secrets[i] is bound to the host.
 */
function rewriteText(text: string, host: string, isBound: boolean[], secrets: BoundSecret[], found: Found, where: string, shape: Shape): { text: string; put: string[] } | { rule: string; suspect: string } {
  // Every placeholder judged on the agent's own text first, then replaced (review, round 36, third pass: judged on text
  // that already held an earlier secret's value, Basic's user:password split at a colon of that value, and whether
  // the request was refused told whether the value holds one).
  const replacing: BoundSecret[] = [];
  for (let i = 0; i < secrets.length; i++) {
    const s = secrets[i]!;
    if (!isBound[i] && realSearch(s).has(text)) {
      return { rule: `the real value of ${s.name} headed to ${host} (${where}), which it is not bound to`, suspect: s.name };
    }
    if (!text.includes(s.placeholder)) continue;
    if (!isBound[i]) {
      found.inert.add(s.name);
      continue;
    }
    if (!standsAsCredential(text, s.placeholder, shape)) return notWhole(s, host, where);
    replacing.push(s);
  }
  let out = text;
  for (const s of replacing) {
    out = out.split(s.placeholder).join(s.real);
    found.injected.add(s.name);
  }
  return { text: out, put: replacing.map((s) => s.name) };
}

/**
 * A header that carries no credential, whose value the service transforms and sends back: RFC 6455's accept key is a
 * hash of the key (an offline check of guesses). Not Sec-WebSocket-Protocol: clients that cannot set headers carry
 * their token there (Kubernetes' `base64url.bearer.authorization.k8s.io.`…).
 */
const NEVER_REPLACED = /^sec-websocket-key$/i;

/** The secrets with their values spelled as the Latin-1 text of their UTF-8 bytes, for text decoded byte for byte. */
function asBytes(secrets: BoundSecret[]): BoundSecret[] {
  let spelled = bytesOf.get(secrets);
  if (!spelled) {
    spelled = secrets.map((s) => ({ ...s, real: Buffer.from(s.real).toString('latin1'), placeholder: Buffer.from(s.placeholder).toString('latin1') }));
    bytesOf.set(secrets, spelled);
  }
  return spelled;
}

/** asBytes of a run's secrets, made once (every request needs it). */
const bytesOf = new WeakMap<BoundSecret[], BoundSecret[]>();

/**
 * A real value (spelled as asBytes spells it) looked for in a header or a URL at a cost its bytes do not change
 * (lib/secrets/form-search.ts; found in review: a string search's time told where the value's characters are).
 */
function realSearch(s: BoundSecret): FormSearch {
  return searchFor(s, () => [{ window: s.real.length, forms: [Buffer.from(s.real, 'latin1')] }]);
}

/** A secret is bound to this host (over any scheme): what comes back from it is scrubbed whole. */
export function hostCarriesSecret(secrets: BoundSecret[], host: string): boolean {
  return secrets.some((s) => s.hosts.some((p) => matchesHost(p, host)));
}

export function rewriteRequest(rawHeaders: string[], path: string, host: string, tls: boolean, secrets: BoundSecret[]): Rewrite {
  const found: Found = { injected: new Set(), inert: new Set() };
  const headers: string[] = [];
  // Header values arrive as Latin-1 text of their bytes, and are written back the same way.
  const bytes = asBytes(secrets);
  const isBound = boundFlags(secrets, host, tls);
  // A header a value is put in, given twice (by its name as gateways read it: letters and digits alone, `_`, `-`, `.`
  // alike): a service that joins them (`Basic QUJD,Bearer PH`) decodes the agent's field with the value (the third
  // review; the fourth: inside Basic credentials too, so judged on what the rewriting put in, not on the raw text).
  const nameKey = (n: string) => n.toLowerCase().replace(/[^a-z0-9]/g, '');
  const named = new Map<string, number>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const key = nameKey(rawHeaders[i] as string);
    named.set(key, (named.get(key) ?? 0) + 1);
  }
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    let value = rawHeaders[i + 1] as string;
    const lname = name.toLowerCase();
    const credentials = lname === 'authorization' || lname === 'proxy-authorization';
    const basic = credentials ? /^(\s*basic\s+)([A-Za-z0-9+/=]+)\s*$/i.exec(value) : null;
    if (NEVER_REPLACED.test(name) || (credentials && basic === null && /^\s*basic(?![!#$%&'*+.^_`|~0-9A-Za-z-])/i.test(value))) {
      // No placeholder is replaced here: Basic credentials only as base64 (a raw placeholder after `Basic` went out
      // as the real value, which the service decoded as base64 and named in its answer: review, round 36).
      for (let j = 0; j < secrets.length; j++) {
        const s = secrets[j]!;
        if (isBound[j] && value.includes(s.placeholder)) return { ok: false, rule: `the placeholder of ${s.name} headed to ${host} (${name}) is never replaced there${credentials ? ': Basic credentials carry it base64-encoded, as user:password' : ''}`, suspect: s.name };
      }
    }
    let put: string[];
    if (basic) {
      // Byte for byte: credentials that carry no value of a secret pass exactly as sent.
      const decoded = Buffer.from(basic[2] as string, 'base64').toString('latin1');
      const r = rewriteText(decoded, host, isBound, bytes, found, `${name}: Basic`, 'userpass');
      if ('rule' in r) return { ok: false, ...r };
      if (r.text !== decoded) value = `${basic[1]}${Buffer.from(r.text, 'latin1').toString('base64')}`;
      put = r.put;
    } else {
      const r = rewriteText(value, host, isBound, bytes, found, name, credentials ? 'credentials' : lname === 'cookie' ? 'cookie' : lname === 'sec-websocket-protocol' ? 'list' : 'value');
      if ('rule' in r) return { ok: false, ...r };
      value = r.text;
      put = r.put;
    }
    if (put.length > 0 && (named.get(nameKey(name)) ?? 0) > 1) {
      return { ok: false, rule: `the placeholder of ${put[0]} headed to ${host} is in ${name}, which the request gives more than once: a service would join them`, suspect: put[0]! };
    }
    headers.push(name, value);
  }
  // The path and query: replaced only where the profile opted in and the secret is bound.
  const q = path.indexOf('?');
  const pathOnly = q === -1 ? path : path.slice(0, q);
  const query = q === -1 ? '' : path.slice(q);
  for (const [i, s] of secrets.entries()) {
    if (isBound[i]) continue;
    if (realSearch(bytes[i] as BoundSecret).has(path)) return { ok: false, rule: `the real value of ${s.name} in the URL headed to ${host}, which it is not bound to`, suspect: s.name };
    if (path.includes(s.placeholder)) found.inert.add(s.name);
  }
  let newQuery = query;
  for (const [i, s] of secrets.entries()) {
    if (s.inQuery && isBound[i] && newQuery.includes(s.placeholder)) {
      // Only a parameter's whole value (`name=PH`): around it, the agent's bytes would be percent-decoded with the
      // value's (standsAsCredential).
      const parts = newQuery.slice(1).split('&');
      for (let p = 0; p < parts.length; p++) {
        const part = parts[p]!;
        if (!part.includes(s.placeholder)) continue;
        const eq = part.indexOf('=');
        if (eq === -1 || part.slice(eq + 1) !== s.placeholder || part.slice(0, eq).includes(s.placeholder)) return { ok: false, ...notWhole(s, host, 'the query') };
        parts[p] = `${part.slice(0, eq)}=${encodeURIComponent(s.real)}`;
      }
      newQuery = `?${parts.join('&')}`;
      found.injected.add(s.name);
    }
  }
  return { ok: true, rawHeaders: headers, path: pathOnly + newQuery, injected: [...found.injected], inert: [...found.inert] };
}

/** The audit's fields for what a request carried: secrets substituted, and placeholders passed inert (only when there were any). */
export function secretFields(r: { injected: string[]; inert: string[] }): { injected: string[]; inert?: string[] } {
  return r.inert.length > 0 ? { injected: r.injected, inert: r.inert } : { injected: r.injected };
}

/** A value a request body may not carry, with the rule that names it and the secret it belongs to. */
export interface BodyNeedle {
  needle: Buffer;
  rule: string;
  suspect: string;
}

/** What a request body to `host` may not carry: the real value of every secret not bound there (placeholders are inert). */
export function bodyNeedles(host: string, tls: boolean, secrets: BoundSecret[]): BodyNeedle[] {
  return secrets
    .filter((s) => !bound(s, host, tls))
    .map((s) => ({ needle: Buffer.from(s.real), rule: `the real value of ${s.name} headed to ${host} (request body), which it is not bound to`, suspect: s.name }));
}
