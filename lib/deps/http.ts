// HTTP(S) requests for the dependency check that go where the environment
// says: through HTTPS_PROXY / HTTP_PROXY (a CONNECT tunnel for https, the
// absolute form for http, credentials from the proxy URL), straight for
// NO_PROXY names, trusting NODE_EXTRA_CA_CERTS and SSL_CERT_FILE besides
// Node's own roots (inside a run the proxy intercepts TLS with a local CA).
// Node's fetch honours none of these by itself; node:http and node:tls do the
// job without a dependency.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { rootCertificates, connect as tlsConnect } from 'node:tls';
import type { Duplex } from 'node:stream';

export interface HttpResponse {
  status: number;
  text: string;
}

export interface RequestOptions {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  signal: AbortSignal;
  /** Larger answers are cut off and reported as an error. */
  maxBytes?: number;
}

export interface NetEnv {
  env: NodeJS.ProcessEnv;
}

const first = (env: NodeJS.ProcessEnv, ...names: string[]) => names.map((n) => env[n]).find((v) => v !== undefined && v !== '');

/** Whether NO_PROXY exempts this host (names, .suffixes, *, optional ports). */
export function noProxy(env: NodeJS.ProcessEnv, host: string, port: string): boolean {
  const list = first(env, 'NO_PROXY', 'no_proxy');
  if (!list) return false;
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return list.split(/[\s,]+/).filter(Boolean).some((raw) => {
    if (raw === '*') return true;
    const m = /^(.*?)(?::(\d+))?$/.exec(raw.toLowerCase()) as RegExpExecArray;
    const entry = (m[1] as string).replace(/^\[|\]$/g, '').replace(/^\*?\./, '.');
    if (m[2] !== undefined && m[2] !== port) return false;
    return entry.startsWith('.') ? h.endsWith(entry) || h === entry.slice(1) : h === entry || h.endsWith(`.${entry}`);
  });
}

/** The proxy for a URL, or null for a direct connection. */
export function proxyFor(env: NodeJS.ProcessEnv, url: URL): URL | null {
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  if (noProxy(env, url.hostname, port)) return null;
  const raw = url.protocol === 'https:' ? first(env, 'HTTPS_PROXY', 'https_proxy', 'ALL_PROXY', 'all_proxy') : first(env, 'HTTP_PROXY', 'http_proxy', 'ALL_PROXY', 'all_proxy');
  if (!raw) return null;
  const p = new URL(raw.includes('://') ? raw : `http://${raw}`);
  if (p.protocol !== 'http:') throw new Error(`proxy ${p.protocol}// is not supported (only http:// proxies)`);
  return p;
}

/** Node's roots plus the extra CA files the environment names. */
export function trustedCas(env: NodeJS.ProcessEnv): string[] {
  const cas = [...rootCertificates];
  for (const file of [env.NODE_EXTRA_CA_CERTS, env.SSL_CERT_FILE]) {
    if (!file) continue;
    try {
      cas.push(readFileSync(file, 'utf8'));
    } catch {
      // unreadable: the request fails on the certificate instead
    }
  }
  return cas;
}

function proxyAuth(p: URL): Record<string, string> {
  if (!p.username) return {};
  const user = decodeURIComponent(p.username);
  const pass = decodeURIComponent(p.password);
  return { 'proxy-authorization': `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` };
}

/** A socket tunnelled through the proxy to host:port (HTTP CONNECT). */
function tunnel(p: URL, host: string, port: string, signal: AbortSignal): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const authority = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    const req = http.request({ host: p.hostname, port: p.port || 80, method: 'CONNECT', path: authority, headers: { host: authority, ...proxyAuth(p) }, signal, agent: false });
    req.once('connect', (res, socket) => {
      if (res.statusCode === 200) return resolve(socket);
      socket.destroy();
      const denied = res.headers['x-stashbase-denied'];
      reject(new Error(`the proxy refused ${authority} (${res.statusCode}${denied ? `: ${String(denied)}` : ''})`));
    });
    req.once('error', reject);
    req.end();
  });
}

export async function request(target: string, o: RequestOptions, net: NetEnv): Promise<HttpResponse> {
  const url = new URL(target);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`${url.protocol}// URLs are not supported`);
  const proxy = proxyFor(net.env, url);
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const headers: Record<string, string> = { 'user-agent': 'stashbase-dependency-check', accept: 'application/json', ...o.headers };
  if (o.body !== undefined) headers['content-length'] = String(Buffer.byteLength(o.body));
  let req: http.ClientRequest;
  if (url.protocol === 'https:') {
    const socket = proxy ? await tunnel(proxy, url.hostname, port, o.signal) : undefined;
    const ca = trustedCas(net.env);
    const servername = url.hostname.replace(/^\[|\]$/g, '');
    // No agent with a tunnel: Node uses createConnection only when there is none.
    req = https.request(url, {
      method: o.method ?? 'GET', headers, signal: o.signal, ca,
      ...(socket ? { createConnection: () => tlsConnect({ socket, servername, ca }) } : { agent: false }),
    });
  } else if (proxy) {
    req = http.request({ host: proxy.hostname, port: proxy.port || 80, path: url.href, method: o.method ?? 'GET', headers: { ...headers, host: url.host, ...proxyAuth(proxy) }, signal: o.signal, agent: false });
  } else req = http.request(url, { method: o.method ?? 'GET', headers, signal: o.signal, agent: false });
  return new Promise((resolve, reject) => {
    req.once('error', reject);
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const max = o.maxBytes ?? 64 * 1024 * 1024;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > max) {
          res.destroy();
          reject(new Error(`the answer from ${url.host} is larger than ${max} bytes`));
        } else chunks.push(c);
      });
      res.once('error', reject);
      res.once('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.end(o.body);
  });
}

/** A short description of why a request failed, for the reasons shown to the agent. */
export function failure(e: unknown): string {
  const err = e as NodeJS.ErrnoException & { cause?: unknown };
  if (err?.name === 'AbortError' || err?.name === 'TimeoutError') return 'no answer in time';
  return err?.code ? `${err.code}${err.message && !err.message.startsWith(err.code) ? ` (${err.message})` : ''}` : String(err?.message ?? e);
}
