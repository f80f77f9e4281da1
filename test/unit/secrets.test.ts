// The proxy's secret rules, pure: two secrets in one profile, each bound to its
// own host. A placeholder is substituted only toward its own hosts and is inert
// elsewhere (passed on unchanged, named in `inert`); a real value headed to a
// host it is not bound to is refused, wherever in the request it is.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bodyNeedles, type BoundSecret, rewriteRequest } from '../../lib/proxy/secrets.js';

const A: BoundSecret = { name: 'ANTHROPIC_API_KEY', placeholder: 'sk-ant-api03-SBPHaaaaaaaaaaaaaaaaaaaaaaaa', real: 'sk-ant-api03-realAAAAAAAAAAAAAAAAAAAAAAA', hosts: ['api.anthropic.com'], inQuery: false, allowPlaintext: false };
const B: BoundSecret = { name: 'CODEX_API_KEY', placeholder: 'sk-proj-SBPHbbbbbbbbbbbbbbbbbbbbbbbbbbbb', real: 'sk-proj-realBBBBBBBBBBBBBBBBBBBBBBBBBBB', hosts: ['api.openai.com'], inQuery: true, allowPlaintext: false };
const both = [A, B];

test("a request to A's host carrying both placeholders: A's substituted, B's passed on as it is", () => {
  const r = rewriteRequest(['x-api-key', A.placeholder, 'X-Debug', `codex=${B.placeholder}`], `/v1/messages?k=${B.placeholder}`, 'api.anthropic.com', true, both);
  assert.deepEqual(r, { ok: true, rawHeaders: ['x-api-key', A.real, 'X-Debug', `codex=${B.placeholder}`], path: `/v1/messages?k=${B.placeholder}`, injected: ['ANTHROPIC_API_KEY'], inert: ['CODEX_API_KEY'] });
});

test("B's placeholder in the query is substituted at B's host only (in_query)", () => {
  const r = rewriteRequest(['Authorization', `Bearer ${B.placeholder}`], `/v1/responses?k=${B.placeholder}`, 'api.openai.com', true, both);
  assert.deepEqual(r, { ok: true, rawHeaders: ['Authorization', `Bearer ${B.real}`], path: `/v1/responses?k=${encodeURIComponent(B.real)}`, injected: ['CODEX_API_KEY'], inert: [] });
});

test('a real value headed to the other host is refused, in a header, Basic credentials or the URL', () => {
  const basic = `Basic ${Buffer.from(`u:${A.real}`).toString('base64')}`;
  assert.deepEqual(rewriteRequest(['X-Key', A.real], '/', 'api.openai.com', true, both), { ok: false, rule: 'the real value of ANTHROPIC_API_KEY headed to api.openai.com (X-Key), which it is not bound to', suspect: 'ANTHROPIC_API_KEY' });
  assert.equal(rewriteRequest(['Authorization', basic], '/', 'api.openai.com', true, both).ok, false);
  assert.deepEqual(rewriteRequest([], `/x?k=${A.real}`, 'api.openai.com', true, both), { ok: false, rule: 'the real value of ANTHROPIC_API_KEY in the URL headed to api.openai.com, which it is not bound to', suspect: 'ANTHROPIC_API_KEY' });
});

test('a placeholder toward its own host over plain HTTP (allow_plaintext off) is inert too: never substituted', () => {
  const r = rewriteRequest(['x-api-key', A.placeholder], '/', 'api.anthropic.com', false, both);
  assert.deepEqual(r, { ok: true, rawHeaders: ['x-api-key', A.placeholder], path: '/', injected: [], inert: ['ANTHROPIC_API_KEY'] });
});

test('bodies: only the real values of secrets not bound to the host are looked for', () => {
  assert.deepEqual(bodyNeedles('api.anthropic.com', true, both).map((n) => [n.needle.toString(), n.suspect]), [[B.real, 'CODEX_API_KEY']]);
  assert.deepEqual(bodyNeedles('example.test', true, both).map((n) => n.needle.toString()), [A.real, B.real]);
});

test('allowed names that share a site with a secret\'s host but are not bound to it are warned about (not the vendors\' own pairs)', async () => {
  const { sameSiteWarnings, siteOf } = await import('../../lib/proxy/same-site.js');
  const { defaultProfile } = await import('../../lib/profile/default.js');
  assert.deepEqual(['api.github.com', '*.githubusercontent.com', 'a.b.example.co.uk', 'localhost', '10.0.0.1', 'example.com.'].map(siteOf), ['github.com', 'githubusercontent.com', 'example.co.uk', 'localhost', null, 'example.com']);
  const base = defaultProfile();
  const p = {
    ...base,
    network: { ...base.network, egressHosts: [...base.network.egressHosts, 'api.github.com', 'raw.github.com', 'uploads.github.com', 'gitlab.com'], hosts: { 'mirror.github.com': '127.0.0.1:1' } },
    secrets: { GH: { source: 'GH', from: { kind: 'env' as const, variable: 'GH' }, hosts: ['api.github.com', 'uploads.github.com'], inQuery: false, allowPlaintext: false }, AK: { source: 'AK', from: { kind: 'env' as const, variable: 'AK' }, hosts: ['api.anthropic.com'], inQuery: false, allowPlaintext: false } },
  };
  assert.deepEqual(sameSiteWarnings(p), [
    'egress to raw.github.com is allowed and shares its site (github.com) with api.github.com, which GH is bound to: a service there could serve back what api.github.com stores; stashbase scrubs it from every answer, but bind GH to raw.github.com as well, or narrow egress_hosts, if it is not one of yours',
    'egress to mirror.github.com is allowed and shares its site (github.com) with api.github.com, which GH is bound to: a service there could serve back what api.github.com stores; stashbase scrubs it from every answer, but bind GH to mirror.github.com as well, or narrow egress_hosts, if it is not one of yours',
  ]);
});

test('(review, round 36) a placeholder is replaced only where a credential stands: a header\'s whole value, after an Authorization scheme, a cookie\'s or a query parameter\'s whole value, the whole user or password of Basic credentials', () => {
  const ok = (headers: string[], path = '/') => rewriteRequest(headers, path, 'api.openai.com', true, both);
  // The ways real clients send a key.
  for (const [h, v, out] of [
    ['Authorization', `Bearer ${B.placeholder}`, `Bearer ${B.real}`],
    ['Authorization', `token ${B.placeholder}`, `token ${B.real}`],
    ['x-api-key', B.placeholder, B.real],
    ['Cookie', `a=1; token=${B.placeholder}; b="${B.placeholder}"`, `a=1; token=${B.real}; b="${B.real}"`],
    ['Sec-WebSocket-Protocol', `token, ${B.placeholder}`, `token, ${B.real}`],
  ] as const) assert.deepEqual(ok([h, v]), { ok: true, rawHeaders: [h, out], path: '/', injected: ['CODEX_API_KEY'], inert: [] }, v);
  for (const creds of [`x-access-token:${B.placeholder}`, `${B.placeholder}:x-oauth-basic`, `${B.placeholder}:${B.placeholder}`]) {
    const r = ok(['Authorization', `Basic ${Buffer.from(creds).toString('base64')}`]);
    assert.deepEqual(r, { ok: true, rawHeaders: ['Authorization', `Basic ${Buffer.from(creds.replaceAll(B.placeholder, B.real)).toString('base64')}`], path: '/', injected: ['CODEX_API_KEY'], inert: [] });
  }
  assert.deepEqual(ok([], `/s?a=1&key=${B.placeholder}&b=2`), { ok: true, rawHeaders: [], path: `/s?a=1&key=${encodeURIComponent(B.real)}&b=2`, injected: ['CODEX_API_KEY'], inert: [] });
  // Spliced: an escape, an entity, a base64 or hex run, a percent sign before it; a letter after it; an RFC 2047
  // encoded word (`=` before it, or a charset named elsewhere in the field: the second review), an RFC 5987 value, a
  // base64 run across a space or a comma; in Authorization, a scheme with two spaces, a tab, or Basic followed by a
  // byte JavaScript does not count as white space.
  const refusal = (where: string) => ({ ok: false, rule: `the placeholder of CODEX_API_KEY headed to api.openai.com (${where}) is not where a credential stands: it is replaced only as a header's whole value, after an Authorization scheme other than Basic (Bearer, token …), as a cookie's or a query parameter's whole value, a whole subprotocol offered, or the whole user or password of Basic credentials, so that nothing the agent writes beside it can be decoded with the real value`, suspect: 'CODEX_API_KEY' });
  for (const v of [`%4${B.placeholder}`, `\\u00${B.placeholder}`, `&#x4${B.placeholder}`, `QUJD${B.placeholder}`, `q=ab${B.placeholder}`, `${B.placeholder}x`, `${B.placeholder}%41`, `Bearer ${B.placeholder}`, `"${B.placeholder}",${B.placeholder}`,
    `=?iso-8859-1?q?=${B.placeholder} ?=`, `=?cp500?q?:${B.placeholder}:?=`, `attachment; filename*=cp500''${B.placeholder}`, `QUJ ${B.placeholder}`, `QUJ,${B.placeholder}`, ` ${B.placeholder}`]) {
    assert.deepEqual(ok(['X-Q', v]), refusal('X-Q'), v);
  }
  for (const v of [`Bearer  ${B.placeholder}`, `Bearer\t${B.placeholder}`, `Bearer ${B.placeholder} x`, `B\x85 ${B.placeholder}`]) assert.deepEqual(ok(['Authorization', v]), refusal('Authorization'), v);
  assert.deepEqual(ok(['Cookie', `a=%4${B.placeholder}`]), refusal('Cookie'));
  assert.deepEqual(ok(['Sec-WebSocket-Protocol', `token, x${B.placeholder}`]), refusal('Sec-WebSocket-Protocol'));
  assert.deepEqual(ok(['Authorization', `Basic ${Buffer.from(`u:%4${B.placeholder}`).toString('base64')}`]), refusal('Authorization: Basic'));
  for (const q of [`?q=%4${B.placeholder}`, `?q=${B.placeholder}x`, `?${B.placeholder}`, `?${B.placeholder}=1`, `?q=a+${B.placeholder}`]) {
    assert.deepEqual(ok([], `/s${q}`), refusal('the query'), q);
  }
});

test('(review, round 36) never replaced: a raw placeholder after Basic (only base64 credentials are), and the WebSocket key', () => {
  const ghp: BoundSecret = { ...B, name: 'GH', placeholder: 'ghp_SBPHcccccccccccccccccccccccccccc', real: 'ghp_realCCCCCCCCCCCCCCCCCCCCCCCCCCC', hosts: ['api.github.com'] };
  const r = (h: string, v: string) => rewriteRequest([h, v], '/', 'api.github.com', true, [ghp]);
  assert.deepEqual(r('Authorization', `Basic ${ghp.placeholder}`), { ok: false, rule: 'the placeholder of GH headed to api.github.com (Authorization) is never replaced there: Basic credentials carry it base64-encoded, as user:password', suspect: 'GH' });
  assert.deepEqual(r('Proxy-Authorization', `basic ${ghp.placeholder}_`), { ok: false, rule: 'the placeholder of GH headed to api.github.com (Proxy-Authorization) is never replaced there: Basic credentials carry it base64-encoded, as user:password', suspect: 'GH' });
  // (Second review) Basic followed by a byte JavaScript's \s does not take for white space (Python's split does).
  assert.deepEqual(r('Authorization', `Basic\x85 ${ghp.placeholder} Ojo=`), { ok: false, rule: 'the placeholder of GH headed to api.github.com (Authorization) is never replaced there: Basic credentials carry it base64-encoded, as user:password', suspect: 'GH' });
  assert.deepEqual(r('Sec-WebSocket-Key', ghp.placeholder), { ok: false, rule: 'the placeholder of GH headed to api.github.com (Sec-WebSocket-Key) is never replaced there', suspect: 'GH' });
  // Control: the same placeholder as a bearer token is replaced.
  assert.deepEqual(r('Authorization', `Bearer ${ghp.placeholder}`), { ok: true, rawHeaders: ['Authorization', `Bearer ${ghp.real}`], path: '/', injected: ['GH'], inert: [] });
});

test('(review, round 36, third pass) a subprotocol with a byte JavaScript trims beside it, and a header given twice (a service joins them), are refused; placeholders are judged on the agent\'s text alone, so a colon in one secret\'s value decides nothing for another', () => {
  const r = (headers: string[]) => rewriteRequest(headers, '/', 'api.openai.com', true, both);
  assert.equal(r(['Sec-WebSocket-Protocol', `chat,\xa0${B.placeholder}`]).ok, false);
  assert.equal(r(['Sec-WebSocket-Protocol', `chat, ${B.placeholder}\t`]).ok, true);
  for (const h of [['Authorization', 'Basic QUJD', 'Authorization', `Bearer ${B.placeholder}`], ['X_Api_Key', 'QUJ', 'X-Api-Key', B.placeholder], ['Cookie', 'a=QUJ', 'Cookie', `b=${B.placeholder}`]]) {
    assert.deepEqual(r(h), { ok: false, rule: `the placeholder of CODEX_API_KEY headed to api.openai.com is in ${h[2]}, which the request gives more than once: a service would join them`, suspect: 'CODEX_API_KEY' }, h.join(' '));
  }
  // Control: the same headers once each are replaced; a header given twice without a placeholder passes.
  assert.equal(r(['X-Api-Key', B.placeholder, 'Accept', 'a', 'Accept', 'b']).ok, true);
  // Two secrets bound to one host, the first's value with a colon in it or not: the decision is the same.
  for (const real of ['sk-proj-realBB:BBBBBBBBBBBBBBBBBBBBBBBBB', 'sk-proj-realBBBBBBBBBBBBBBBBBBBBBBBBBBB']) {
    const first: BoundSecret = { ...B, name: 'FIRST', placeholder: 'sk-proj-SBPHffffffffffffffffffffffffffff', real, hosts: ['api.openai.com'] };
    const creds = Buffer.from(`${first.placeholder}:${B.placeholder}`).toString('base64');
    const out = rewriteRequest(['Authorization', `Basic ${creds}`], '/', 'api.openai.com', true, [first, B]);
    assert.deepEqual(out, { ok: true, rawHeaders: ['Authorization', `Basic ${Buffer.from(`${real}:${B.real}`).toString('base64')}`], path: '/', injected: ['FIRST', 'CODEX_API_KEY'], inert: [] }, real);
  }
});

test('(review, round 36, fourth pass) a header given twice is refused wherever the value would be put, inside Basic credentials too, and by its name as gateways read it (`.` as `-`)', () => {
  const b64 = (t: string) => Buffer.from(t).toString('base64');
  const r = (headers: string[]) => rewriteRequest(headers, '/', 'api.openai.com', true, both);
  for (const h of [['Authorization', 'Basic QUJD', 'Authorization', `Basic ${b64(`${B.placeholder}:`)}`], ['Authorization', 'Basic QUJDREVGR0g=', 'authorization', `Basic ${b64(`u:${B.placeholder}`)}`], ['X.Api.Key', 'QUJ', 'X-Api-Key', B.placeholder]]) {
    assert.deepEqual(r(h), { ok: false, rule: `the placeholder of CODEX_API_KEY headed to api.openai.com is in ${h[2]}, which the request gives more than once: a service would join them`, suspect: 'CODEX_API_KEY' }, h.join(' '));
  }
  // Control: once, the same Basic credentials are replaced.
  assert.equal(r(['Authorization', `Basic ${b64(`u:${B.placeholder}`)}`]).ok, true);
});
