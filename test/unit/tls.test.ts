import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmodSync, readFileSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import tls from 'node:tls';
import { caFiles, loadOrCreateCa } from '../../lib/tls/ca.js';
import { LeafCache } from '../../lib/tls/leaves.js';
import { tempHome } from '../helpers.js';

const t = tempHome();
after(() => t.cleanup());

test('the CA: made once, EC P-256, CA with path length 0, key 0600 in a 0700 directory', async () => {
  const ca = await loadOrCreateCa(t.sbHome);
  const files = caFiles(t.sbHome);
  assert.equal(statSync(files.dir).mode & 0o777, 0o700);
  assert.equal(statSync(files.key).mode & 0o777, 0o600);
  assert.equal(ca.key.asymmetricKeyDetails?.namedCurve, 'prime256v1');
  const cert = new X509Certificate(ca.certPem);
  assert.equal(cert.ca, true);
  assert.equal(cert.subject, 'O=stashbase\nCN=stashbase local CA');
  const text = spawnSync('openssl', ['x509', '-noout', '-text'], { input: ca.certPem, encoding: 'utf8' }).stdout;
  assert.match(text, /Signature Algorithm: ecdsa-with-SHA256/);
  assert.match(text, /X509v3 Basic Constraints: critical\n\s+CA:TRUE, pathlen:0/);
  assert.match(text, /X509v3 Key Usage: critical\n\s+Certificate Sign, CRL Sign/);
  const again = await loadOrCreateCa(t.sbHome);
  assert.equal(again.certPem, ca.certPem);
});

test('concurrent first runs agree on one CA', async () => {
  const home = `${t.dir}/concurrent`;
  const [a, b, c] = await Promise.all([loadOrCreateCa(home), loadOrCreateCa(home), loadOrCreateCa(home)]);
  assert.equal(a.certPem, b.certPem);
  assert.equal(b.certPem, c.certPem);
});

test('a CA key others can read is refused', async () => {
  const home = `${t.dir}/loose`;
  await loadOrCreateCa(home);
  chmodSync(caFiles(home).key, 0o644);
  await assert.rejects(loadOrCreateCa(home), {
    name: 'ConfigError',
    message: `${caFiles(home).key} is readable by others (mode 644); fix it with chmod 600, or remove ${caFiles(home).dir} to make a new CA`,
  });
});

test('leaves: issued by the CA for exactly their host, DNS names and IP literals', async () => {
  const ca = await loadOrCreateCa(t.sbHome);
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
  const text = spawnSync('openssl', ['verify', '-CAfile', caFiles(t.sbHome).cert], { input: leaves.get('api.example.test').certPem, encoding: 'utf8' });
  assert.equal(text.stdout, 'stdin: OK\n');
});

test('a real TLS handshake trusts a minted leaf through the CA alone', async () => {
  const ca = await loadOrCreateCa(t.sbHome);
  const leaf = new LeafCache(ca).get('api.example.test');
  const server = tls.createServer({ key: leaf.keyPem, cert: leaf.certPem }, (s) => s.end('hello'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const got = await new Promise<string>((resolve, reject) => {
    const sock = tls.connect({ port, host: '127.0.0.1', servername: 'api.example.test', ca: readFileSync(caFiles(t.sbHome).cert, 'utf8') }, () => {
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
  const leaves = new LeafCache(await loadOrCreateCa(t.sbHome), 3);
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
