// Which upstream errors are TLS failures, what each one's audit rule says
// fixes it, and that a run reports only its first.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyTls, reportFirstTlsFailure, upstreamErrorRule } from '../../lib/proxy/tls-failure.js';

test('an unknown CA names network.upstream_ca_file; other TLS failures say what else to look at; other errors are not TLS', () => {
  for (const code of ['UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE']) {
    assert.match(classifyTls('api.test', code)?.hint ?? '', /network\.upstream_ca_file/, code);
  }
  assert.match(classifyTls('api.test', 'ERR_SSL_WRONG_VERSION_NUMBER')?.hint ?? '', /handshake failed.*network\.upstream_ca_file/);
  assert.match(classifyTls('api.test', 'ERR_TLS_CERT_ALTNAME_INVALID')?.hint ?? '', /does not name api\.test.*network\.hosts/);
  assert.match(classifyTls('api.test', 'CERT_HAS_EXPIRED')?.hint ?? '', /validity dates/);
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', undefined]) assert.equal(classifyTls('api.test', code), null, String(code));
});

test('the rule: the plain code for other errors, the code and the fix for TLS, reported', () => {
  const seen: string[] = [];
  assert.equal(upstreamErrorRule('api.test', { code: 'ECONNREFUSED', message: 'x' }, (f) => seen.push(f.code)), 'upstream api.test: ECONNREFUSED');
  assert.equal(upstreamErrorRule('api.test', { message: 'socket hang up' }), 'upstream api.test: socket hang up');
  assert.match(upstreamErrorRule('api.test', { code: 'SELF_SIGNED_CERT_IN_CHAIN', message: 'x' }, (f) => seen.push(f.code)), /^upstream api\.test: TLS failure SELF_SIGNED_CERT_IN_CHAIN: .*network\.upstream_ca_file$/);
  assert.deepEqual(seen, ['SELF_SIGNED_CERT_IN_CHAIN']);
});

test('a run prints its first TLS failure once, naming the host and the key', () => {
  const lines: string[] = [];
  const report = reportFirstTlsFailure((l) => lines.push(l));
  report(classifyTls('api.one.test', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY')!);
  report(classifyTls('api.two.test', 'CERT_HAS_EXPIRED')!);
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /^the proxy's TLS connection to api\.one\.test failed \(UNABLE_TO_GET_ISSUER_CERT_LOCALLY\), so the agent's requests to it are answered 502: .*network\.upstream_ca_file.*stashbase agent audit/);
});
