// The local CA the proxy intercepts TLS with: generated once per install in
// $STASHBASE_HOME/ca/ (the key mode 0600, the directory 0700, never visible
// inside any sandbox), EC P-256, basic constraints CA with path length 0.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, X509Certificate } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import { homePaths } from '../home.js';
import { buildCertificate, toPem } from './x509.js';

export const CA_NAME = 'stashbase local CA';
export const ORG = 'stashbase';

export interface LocalCa {
  /** The CA's subject, which its leaves name as their issuer. */
  name: { cn: string; org: string };
  key: KeyObject;
  publicKey: KeyObject;
  certPem: string;
  certFile: string;
}

export function caFiles(home: string): { dir: string; key: string; cert: string } {
  const dir = homePaths(home).ca;
  return { dir, key: join(dir, 'ca-key.pem'), cert: join(dir, 'ca-cert.pem') };
}

function load(files: ReturnType<typeof caFiles>): LocalCa {
  const mode = statSync(files.key).mode & 0o777;
  if (mode & 0o077) throw new ConfigError(`${files.key} is readable by others (mode ${mode.toString(8)}); fix it with chmod 600, or remove ${files.dir} to make a new CA`);
  const key = createPrivateKey(readFileSync(files.key, 'utf8'));
  const certPem = readFileSync(files.cert, 'utf8');
  const cert = new X509Certificate(certPem);
  if (!cert.ca || !cert.checkPrivateKey(key)) throw new ConfigError(`${files.cert} is not the certificate of ${files.key}; remove ${files.dir} to make a new CA`);
  return { name: { cn: CA_NAME, org: ORG }, key, publicKey: createPublicKey(key), certPem, certFile: files.cert };
}

function create(files: ReturnType<typeof caFiles>, now: Date): LocalCa {
  mkdirSync(files.dir, { recursive: true, mode: 0o700 });
  chmodSync(files.dir, 0o700);
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const der = buildCertificate({
    subjectCN: CA_NAME, issuerCN: CA_NAME, org: ORG, publicKey, signingKey: privateKey, issuerPublicKey: publicKey,
    notBefore: new Date(+now - 3600_000), notAfter: new Date(+now + 10 * 365 * 86_400_000), ca: true,
  });
  const certPem = toPem(der);
  // Key first, each written to a private temporary name and renamed into place.
  const tmpKey = `${files.key}.${process.pid}.tmp`;
  writeFileSync(tmpKey, privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, { mode: 0o600 });
  renameSync(tmpKey, files.key);
  const tmpCert = `${files.cert}.${process.pid}.tmp`;
  writeFileSync(tmpCert, certPem, { mode: 0o644 });
  renameSync(tmpCert, files.cert);
  return { name: { cn: CA_NAME, org: ORG }, key: privateKey, publicKey, certPem, certFile: files.cert };
}

/** The install's CA, made on first use; concurrent first runs agree on one under a lock. */
export async function loadOrCreateCa(home: string, now = new Date()): Promise<LocalCa> {
  const files = caFiles(home);
  try {
    return load(files);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  mkdirSync(files.dir, { recursive: true, mode: 0o700 });
  const { default: lockfile } = await import('proper-lockfile');
  const release = await lockfile.lock(files.dir, { lockfilePath: join(files.dir, '.lock'), retries: { retries: 50, minTimeout: 10, maxTimeout: 100 } });
  try {
    try {
      return load(files);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      return create(files, now);
    }
  } finally {
    await release();
  }
}
