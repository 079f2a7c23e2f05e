import { generateKeyPairSync } from 'node:crypto';
import type { CallContext, ForwardProxyVault } from './ports';

/** A leaf for one host: its private key (PEM, made here, never sent anywhere) and the chain the vault signed. */
export interface HostCertificate {
  keyPem: string;
  chainPem: string;
  notAfter: Date;
}

export interface HostCertificateOptions<T> {
  /** Turns a fresh certificate into what the caller serves with (a TLS secure context). */
  prepare: (certificate: HostCertificate) => T;
  /** A leaf is replaced this long before its not_after (default one hour), so no client meets an expired one. */
  renewBeforeMs?: number;
  /** Entries kept; past it the oldest go (default 10,000). */
  maxEntries?: number;
  now?: () => Date;
}

interface Entry<T> {
  prepared: Promise<{ value: T; renewAt: number }>;
}

/**
 * The forward proxy's leaf certificates, per merchant and host, kept in memory only. The key pair
 * is made here (ECDSA P-256), the vault signs its public key with the merchant's CA (whose key
 * never leaves the vault) for a host on one of the merchant's outbound routes. Tunnels to the same
 * host share one leaf until shortly before it expires; concurrent first uses share one issue.
 */
export class HostCertificates<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly renewBeforeMs: number;
  private readonly maxEntries: number;
  private readonly now: () => Date;

  constructor(
    private readonly vault: Pick<ForwardProxyVault, 'issueHostCertificate'>,
    private readonly options: HostCertificateOptions<T>,
  ) {
    this.renewBeforeMs = options.renewBeforeMs ?? 3_600_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.now = options.now ?? (() => new Date());
  }

  async get(merchantId: string, host: string, ctx: CallContext): Promise<T> {
    const id = `${merchantId}\n${host}`;
    const cached = this.entries.get(id);
    if (cached !== undefined) {
      const { value, renewAt } = await cached.prepared;
      if (this.now().getTime() < renewAt && this.entries.get(id) === cached) return value;
      if (this.entries.get(id) === cached) this.entries.delete(id);
      else return this.get(merchantId, host, ctx);
    }
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    const entry: Entry<T> = { prepared: this.issue(merchantId, host, ctx) };
    this.entries.set(id, entry);
    // A refusal or outage is not cached: the next CONNECT asks again.
    entry.prepared.catch(() => {
      if (this.entries.get(id) === entry) this.entries.delete(id);
    });
    return (await entry.prepared).value;
  }

  private async issue(merchantId: string, host: string, ctx: CallContext): Promise<{ value: T; renewAt: number }> {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const issued = await this.vault.issueHostCertificate(
      { merchantId, host, publicKeySpki: publicKey.export({ type: 'spki', format: 'der' }) },
      ctx,
    );
    const certificate: HostCertificate = {
      keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
      chainPem: issued.certificateChainPem,
      notAfter: issued.notAfter,
    };
    return { value: this.options.prepare(certificate), renewAt: issued.notAfter.getTime() - this.renewBeforeMs };
  }
}
