import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import tls from 'node:tls';
import { createRunCa } from '../../lib/tls/ca.js';
import { LeafCache } from '../../lib/tls/leaves.js';
import { tempHome, writeFile } from '../helpers.js';

const t = tempHome();
after(() => t.cleanup());

test("a run's CA: EC P-256, CA with path length 0, a week valid, name-constrained to the run's names (a wildcard as its domain, no address unless named); nothing written", () => {
  const now = new Date('2026-12-05T10:00:00Z');
  const ca = createRunCa(['api.github.com', '*.githubusercontent.com', 'API.Example.test.', 'api.internal.test'], 'ags_aaaaaaaaaaaaaaaa', now);
  assert.equal(ca.key.asymmetricKeyDetails?.namedCurve, 'prime256v1');
  const cert = new X509Certificate(ca.certPem);
  assert.equal(cert.ca, true);
  assert.equal(cert.subject, 'O=stashbase\nCN=stashbase run ags_aaaaaaaaaaaaaaaa');
  assert.equal(new Date(cert.validTo).getTime(), +now + 7 * 86_400_000);
  assert.deepEqual(ca.constrained, { dns: ['api.example.test', 'api.github.com', 'api.internal.test', 'githubusercontent.com'], ips: [] });
  const text = spawnSync('openssl', ['x509', '-noout', '-text'], { input: ca.certPem, encoding: 'utf8' }).stdout;
  assert.match(text, /Signature Algorithm: ecdsa-with-SHA256/);
  assert.match(text, /X509v3 Basic Constraints: critical\n\s+CA:TRUE, pathlen:0/);
  assert.match(text, /X509v3 Key Usage: critical\n\s+Certificate Sign, CRL Sign/);
  assert.match(text, /X509v3 Name Constraints: critical\n\s+Permitted:\n\s+DNS:api\.example\.test\n\s+DNS:api\.github\.com\n\s+DNS:api\.internal\.test\n\s+DNS:githubusercontent\.com\n\s+IP:0\.0\.0\.0\/255\.255\.255\.255\n\s+IP:0:0:0:0:0:0:0:0\/FFFF:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF\n/);
  // An address named in egress_hosts is permitted; an entry no constraint can say leaves the CA unconstrained.
  assert.deepEqual(createRunCa(['127.0.0.1', 'a.test'], 'x').constrained, { dns: ['a.test'], ips: ['127.0.0.1'] });
  // Every name the profile's check takes is expressed, an IDN by its A-labels (unnamed: a label ending in a hyphen).
  assert.deepEqual(createRunCa(['*.Bücher.test', 'a-.test', 'x_y.test'], 'x').constrained, { dns: ['a-.test', 'x_y.test', 'xn--bcher-kva.test'], ips: [] });
  assert.equal(createRunCa(['api.*.test'], 'x').constrained, null);
  assert.doesNotMatch(spawnSync('openssl', ['x509', '-noout', '-text'], { input: createRunCa(['api.*.test'], 'x').certPem, encoding: 'utf8' }).stdout, /Name Constraints/);
  // Nothing of it on disk: the home has no ca folder.
  assert.equal(readdirSync(t.home).includes('.stashbase') && readdirSync(t.sbHome).includes('ca'), false);
});

test("a leaf for a name outside the run's constraint does not verify, though the CA signed it (the control: one inside does)", () => {
  const ca = createRunCa(['api.github.com', '*.githubusercontent.com'], 'x');
  const file = writeFile(join(t.dir, 'run-ca.pem'), ca.certPem);
  const leaves = new LeafCache(ca);
  const verify = (host: string) => spawnSync('openssl', ['verify', '-CAfile', file], { input: leaves.get(host).certPem, encoding: 'utf8' });
  assert.equal(verify('api.github.com').stdout, 'stdin: OK\n');
  assert.equal(verify('raw.githubusercontent.com').stdout, 'stdin: OK\n');
  for (const host of ['evil.example', 'github.com.evil.example', '127.0.0.1']) {
    const r = verify(host);
    assert.notEqual(r.status, 0, host);
    assert.match(r.stdout + r.stderr, /permitted subtree violation|name constraint/i, host);
  }
});

test('leaves: issued by the CA for exactly their host, DNS names and IP literals', () => {
  const ca = createRunCa(['api.example.test', '127.0.0.1', '2001:db8::1'], 'x');
  const caFile = writeFile(join(t.dir, 'leaves-ca.pem'), ca.certPem);
  const leaves = new LeafCache(ca);
  const caCert = new X509Certificate(ca.certPem);
  const dns = new X509Certificate(leaves.get('api.example.test').certPem);
  assert.equal(dns.checkIssued(caCert), true);
  assert.equal(dns.verify(caCert.publicKey), true);
  assert.equal(dns.ca, false);
  assert.equal(dns.subjectAltName, 'DNS:api.example.test');
  assert.equal(dns.checkHost('api.example.test'), 'api.example.test');
  assert.equal(dns.checkHost('other.example.test'), undefined);
  assert.equal(new X509Certificate(leaves.get('127.0.0.1').certPem).subjectAltName, 'IP Address:127.0.0.1');
  assert.equal(new X509Certificate(leaves.get('2001:db8::1').certPem).subjectAltName, 'IP Address:2001:DB8:0:0:0:0:0:1');
  const text = spawnSync('openssl', ['verify', '-CAfile', caFile], { input: leaves.get('api.example.test').certPem, encoding: 'utf8' });
  assert.equal(text.stdout, 'stdin: OK\n');
});

test('a real TLS handshake trusts a minted leaf through the CA alone', async () => {
  const ca = createRunCa(['api.example.test'], 'x');
  const leaf = new LeafCache(ca).get('api.example.test');
  const server = tls.createServer({ key: leaf.keyPem, cert: leaf.certPem }, (s) => s.end('hello'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const got = await new Promise<string>((resolve, reject) => {
    const sock = tls.connect({ port, host: '127.0.0.1', servername: 'api.example.test', ca: ca.certPem }, () => {
      sock.setEncoding('utf8');
      let data = '';
      sock.on('data', (d: string) => (data += d));
      sock.on('end', () => resolve(`${sock.authorized}:${data}`));
    });
    sock.on('error', reject);
  });
  server.close();
  assert.equal(got, 'true:hello');
});

test('the leaf cache is bounded (LRU)', async () => {
  const leaves = new LeafCache(createRunCa(['*.test'], 'x'), 3);
  const first = leaves.get('a.test').certPem;
  const b = leaves.get('b.test').certPem;
  leaves.get('c.test');
  assert.equal(leaves.get('a.test').certPem, first); // a is now the most recent
  leaves.get('d.test');
  leaves.get('e.test');
  assert.equal(leaves.size, 3);
  assert.equal(leaves.get('a.test').certPem, first);
  assert.notEqual(leaves.get('b.test').certPem, b); // evicted, minted anew
});
