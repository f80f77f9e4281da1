// A throwaway CA for test upstreams (HTTPS stubs on loopback): its leaves are
// what the proxy verifies when it dials the stub, through upstream_ca_file.
import { generateKeyPairSync } from 'node:crypto';
import { buildCertificate, toPem } from '../lib/tls/x509.js';

export function testCa() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const now = new Date();
  const certPem = toPem(buildCertificate({ subjectCN: 'upstream test CA', issuerCN: 'upstream test CA', org: 'test', publicKey, signingKey: privateKey, issuerPublicKey: publicKey, notBefore: new Date(+now - 3600e3), notAfter: new Date(+now + 864e5), ca: true }));
  return { name: { cn: 'upstream test CA', org: 'test' }, key: privateKey, publicKey, certPem, constrained: null, notAfter: new Date(+now + 864e5) };
}
