// X.509 v3 certificates for the proxy's local CA and the leaves it mints per
// host: ECDSA P-256 with SHA-256, built with node:crypto and the DER encoder
// beside this file. A leaf takes well under a millisecond to sign, where the
// generic libraries took 20-30 ms (docs/benchmarks.md).
import { createHash, type KeyObject, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';
import { bits, bool, explicit, implicit, int, octets, oid, seq, set, time, tlv, uint, utf8 } from './der.js';

const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));
const CN = '2.5.4.3';
const O = '2.5.4.10';

function name(cn: string, org: string): Buffer {
  return seq(set(seq(oid(O), utf8(org))), set(seq(oid(CN), utf8(cn))));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? seq(oid(id), bool(true), octets(value)) : seq(oid(id), octets(value));
}

/** The SHA-1 of the subjectPublicKey bits, the usual key identifier (RFC 5280 4.2.1.2). */
function keyId(spki: Buffer): Buffer {
  // The BIT STRING is the last element of the SPKI SEQUENCE; for P-256 it is the last 66 bytes.
  return createHash('sha1').update(spki.subarray(spki.length - 65)).digest();
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  const halves = ip.split('::');
  const head = halves[0] ? (halves[0] as string).split(':') : [];
  const tail = halves.length > 1 && halves[1] ? (halves[1] as string).split(':') : [];
  const groups = [...head, ...Array(8 - head.length - tail.length).fill('0'), ...tail];
  return Buffer.concat(groups.map((g) => Buffer.from((g as string).padStart(4, '0'), 'hex')));
}

export interface CertOptions {
  subjectCN: string;
  issuerCN: string;
  /** Organisation of both subject and issuer. */
  org: string;
  publicKey: KeyObject;
  signingKey: KeyObject;
  /** The issuer's public key, for the authority key identifier (the own key when self-signed). */
  issuerPublicKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
  ca: boolean;
  /** Leaf only: the DNS name or IP address it is for. */
  host?: string;
  /** CA only: the names its leaves may be for (a name constraint; no address unless listed). */
  permitted?: { dns: string[]; ips: string[] };
}

/** nameConstraints' permittedSubtrees: each DNS name a subtree, each address a host (/32 or /128); with none, an address no one has, so that none is permitted. */
function nameConstraints(p: { dns: string[]; ips: string[] }): Buffer {
  const subtrees: Buffer[] = p.dns.map((d) => seq(implicit(2, Buffer.from(d, 'ascii'))));
  const ips = p.ips.length > 0 ? p.ips : ['0.0.0.0', '::'];
  for (const ip of ips) {
    const bytes = ipBytes(ip);
    subtrees.push(seq(implicit(7, Buffer.concat([bytes, Buffer.alloc(bytes.length, 0xff)]))));
  }
  return seq(tlv(0xa0, Buffer.concat(subtrees)));
}

// Exporting a key is most of the cost of a certificate: remember each one's DER.
const spkis = new WeakMap<KeyObject, Buffer>();
function spkiOf(key: KeyObject): Buffer {
  let der = spkis.get(key);
  if (!der) spkis.set(key, (der = key.export({ type: 'spki', format: 'der' })));
  return der;
}

export function buildCertificate(o: CertOptions): Buffer {
  const spki = spkiOf(o.publicKey);
  const issuerSpki = spkiOf(o.issuerPublicKey);
  const serial = randomBytes(16);
  serial[0] = (serial[0] as number) & 0x7f;
  const exts: Buffer[] = [];
  if (o.ca) {
    exts.push(extension('2.5.29.19', true, seq(bool(true), int(0)))); // basicConstraints: CA, pathLen 0
    exts.push(extension('2.5.29.15', true, bits(Buffer.from([0x06]), 1))); // keyUsage: keyCertSign, cRLSign
    if (o.permitted) exts.push(extension('2.5.29.30', true, nameConstraints(o.permitted))); // nameConstraints
  } else {
    if (!o.host) throw new Error('a leaf certificate needs its host');
    exts.push(extension('2.5.29.19', true, seq())); // basicConstraints: not a CA
    exts.push(extension('2.5.29.15', true, bits(Buffer.from([0x80]), 7))); // keyUsage: digitalSignature
    exts.push(extension('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.1')))); // extKeyUsage: serverAuth
    const san = isIP(o.host) ? implicit(7, ipBytes(o.host)) : implicit(2, Buffer.from(o.host, 'ascii'));
    exts.push(extension('2.5.29.17', false, seq(san)));
  }
  exts.push(extension('2.5.29.14', false, octets(keyId(spki))));
  exts.push(extension('2.5.29.35', false, seq(implicit(0, keyId(issuerSpki)))));
  const tbs = seq(
    explicit(0, int(2)),
    uint(serial),
    ECDSA_SHA256,
    name(o.issuerCN, o.org),
    seq(time(o.notBefore), time(o.notAfter)),
    name(o.subjectCN, o.org),
    spki,
    explicit(3, seq(...exts)),
  );
  const signature = sign('sha256', tbs, o.signingKey);
  return seq(tbs, ECDSA_SHA256, bits(signature));
}

export function toPem(der: Buffer, label = 'CERTIFICATE'): string {
  const b64 = der.toString('base64').replace(/.{1,64}/g, '$&\n');
  return `-----BEGIN ${label}-----\n${b64}-----END ${label}-----\n`;
}
