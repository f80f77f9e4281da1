// Upstream TLS failures, made visible. An intercepting proxy that cannot
// verify an upstream answers the agent 502, and agents retry that silently
// for minutes; the usual cause is an upstream signed by a CA of the user's own
// (a corporate TLS proxy, a local server) that the profile does not name in
// network.upstream_ca_file. So the error's code is classified here, the audit
// rule says what fixes it, and the run prints the first failure once.

/** The profile key that makes the proxy trust another CA upstream. */
export const UPSTREAM_CA_KEY = 'network.upstream_ca_file';

export interface TlsFailure {
  host: string;
  code: string;
  /** What to do about it, naming the profile key where one fixes it. */
  hint: string;
}

// OpenSSL's verify results as Node reports them: the chain ends at a CA the proxy does not trust.
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'CERT_UNTRUSTED', 'CERT_REJECTED', 'CERT_SIGNATURE_FAILURE',
]);
const DATES = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);

/** A TLS failure of the upstream connection to `host`, or null for any other error (refused, reset, timeout). */
export function classifyTls(host: string, code: string | undefined): TlsFailure | null {
  if (code === undefined) return null;
  if (UNTRUSTED.has(code)) {
    return { host, code, hint: `the proxy does not trust the CA that signed it; if that is a CA of yours (a TLS-inspecting proxy, a local server), name its PEM file in the profile's ${UPSTREAM_CA_KEY}` };
  }
  if (DATES.has(code)) return { host, code, hint: "the upstream's certificate is outside its validity dates (check the clock, or the server)" };
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH') {
    return { host, code, hint: `the upstream's certificate does not name ${host} (is network.hosts pointing it at the right server?)` };
  }
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code === 'EPROTO') {
    return { host, code, hint: `the TLS handshake failed; a TLS-inspecting proxy on the way needs its CA in the profile's ${UPSTREAM_CA_KEY}` };
  }
  return null;
}

/** The audit rule (and the 502's reason) of an upstream error: for a TLS failure, with what fixes it. */
export function upstreamErrorRule(host: string, e: { code?: string; message: string }, report?: (f: TlsFailure) => void): string {
  const f = classifyTls(host, e.code);
  if (f === null) return `upstream ${host}: ${e.code ?? e.message}`;
  report?.(f);
  return `upstream ${host}: TLS failure ${f.code}: ${f.hint}`;
}

/** A run's reporter: the first TLS failure only, as one line for its stderr. */
export function reportFirstTlsFailure(write: (line: string) => void): (f: TlsFailure) => void {
  let done = false;
  return (f) => {
    if (done) return;
    done = true;
    write(`the proxy's TLS connection to ${f.host} failed (${f.code}), so the agent's requests to it are answered 502: ${f.hint}. Later failures of this run are only in its audit log (stashbase agent audit).`);
  };
}
