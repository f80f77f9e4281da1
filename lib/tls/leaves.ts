// Leaf certificates minted per CONNECT host on first use, kept in a bounded
// LRU so that a flood of unique names cannot grow memory without bound. All
// leaves share one per-run key: only the signature is per host.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { LocalCa } from './ca.js';
import { buildCertificate, toPem } from './x509.js';

export interface Leaf {
  certPem: string;
  keyPem: string;
}

export class LeafCache {
  private readonly leaves = new Map<string, Leaf>();
  private readonly key: KeyObject;
  private readonly publicKey: KeyObject;
  private readonly keyPem: string;

  constructor(private readonly ca: LocalCa, readonly capacity = 1000, private readonly now: () => Date = () => new Date()) {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.key = pair.privateKey;
    this.publicKey = pair.publicKey;
    this.keyPem = this.key.export({ type: 'pkcs8', format: 'pem' }) as string;
  }

  get size(): number {
    return this.leaves.size;
  }

  /** The leaf for a host (a normalised name or IP literal), minted on first use. */
  get(host: string): Leaf {
    const hit = this.leaves.get(host);
    if (hit) {
      this.leaves.delete(host); // most recently used goes last
      this.leaves.set(host, hit);
      return hit;
    }
    const t = this.now();
    const der = buildCertificate({
      subjectCN: host.length <= 64 ? host : host.slice(0, 64), issuerCN: this.ca.name.cn, org: this.ca.name.org,
      publicKey: this.publicKey, signingKey: this.ca.key, issuerPublicKey: this.ca.publicKey,
      notBefore: new Date(+t - 3600_000), notAfter: this.ca.notAfter, ca: false, host,
    });
    const leaf = { certPem: toPem(der), keyPem: this.keyPem };
    this.leaves.set(host, leaf);
    if (this.leaves.size > this.capacity) this.leaves.delete(this.leaves.keys().next().value as string);
    return leaf;
  }
}
