import { TesseraError } from '@tessera/common';
import type { RouteReader } from '@tessera/routes';
import { openCaKey, sealCaKey } from '../domain/caKey';
import {
  checkedHostName,
  createCaCertificate,
  importCaSigningKey,
  importLeafPublicKey,
  issueLeafCertificate,
  routeHostMatches,
  type CryptoKey,
} from '../domain/hostCertificates';
import type { KeyRing } from '../domain/keyRing';
import type { CaKeyStore } from '../store/caKeyStore';

/**
 * The forward proxy's CA per merchant (ADR 0013, point 4), as use cases: its certificate for the
 * merchant to trust, and leaf certificates for the hosts of the merchant's outbound routes. The
 * private key is made here, sealed under the key ring and never answered.
 */
export interface MerchantCaOptions {
  store: CaKeyStore;
  keyRing: KeyRing;
  /** The merchants' route documents (tessera:routes:*), read-only. */
  routes: RouteReader;
  now?: () => Date;
  /**
   * How long a CA's opened signing key stays in memory after it was loaded: a gateway renewing the
   * leaves of one merchant's hosts needs no unwrap per leaf (an HSM round trip), and a CA rewrapped
   * or replaced in the store is read again soon. Default 5 minutes.
   */
  cacheMs?: number;
  /** Told when this vault made a merchant's CA (it won the first use): a key was created, operators log it. */
  onCreated?: (merchantId: string) => void;
}

interface OpenedCa {
  certificatePem: string;
  /** Not extractable: WebCrypto keeps the key, and nothing here can export it. */
  signingKey: CryptoKey;
}

const DEFAULT_CACHE_MS = 5 * 60 * 1000;
/** Merchant ids name a Redis key's hash tag and the CA's subject: no braces, no control characters. */
const MERCHANT_ID = /^[^\s{}\p{Cc}]{1,128}$/u;

export class MerchantCas {
  private readonly now: () => Date;
  private readonly cacheMs: number;
  private readonly opened = new Map<string, { until: number; ca: Promise<OpenedCa> }>();

  constructor(private readonly opts: MerchantCaOptions) {
    this.now = opts.now ?? (() => new Date());
    this.cacheMs = opts.cacheMs ?? DEFAULT_CACHE_MS;
  }

  /** The merchant's CA certificate (PEM), made on first use. */
  async caCertificate(merchantId: string): Promise<string> {
    return (await this.caOf(merchantId)).certificatePem;
  }

  /**
   * A leaf for `host`, which must be a DNS name that a host of one of the merchant's outbound
   * routes covers (either mode: the CONNECT comes before any key mode matters to the route), for a
   * P-256 public key the caller made; the chain (leaf, CA) and when the leaf expires.
   */
  async issueHostCertificate(merchantId: string, host: string, publicKeySpki: Uint8Array): Promise<{ chainPem: string; notAfter: Date }> {
    checkedMerchantId(merchantId);
    const name = checkedHostName(host);
    const publicKey = await importLeafPublicKey(publicKeySpki);
    const routes = await this.opts.routes.list(merchantId);
    const covered = routes.some(
      ({ route }) => route.kind === 'outbound' && (route.outbound?.hosts ?? []).some((pattern) => routeHostMatches(pattern, name)),
    );
    if (!covered) {
      throw new TesseraError('proxy_route_not_found', { param: 'host', message: 'The host is on none of the merchant’s outbound routes.' });
    }
    const ca = await this.caOf(merchantId);
    return issueLeafCertificate({
      caCertificatePem: ca.certificatePem,
      caSigningKey: ca.signingKey,
      host: name,
      publicKey,
      now: this.now(),
    });
  }

  /**
   * Drops the merchant's opened CA from this replica's memory (crypto-shredding deleted its record):
   * the next use reads the store again. Other replicas drop theirs within `cacheMs`.
   */
  forget(merchantId: string): void {
    this.opened.delete(merchantId);
  }

  /** The opened CA, from memory while fresh; a failed load is not remembered (the store may be back). */
  private caOf(merchantId: string): Promise<OpenedCa> {
    checkedMerchantId(merchantId);
    const at = Date.now();
    const cached = this.opened.get(merchantId);
    if (cached !== undefined && cached.until > at) return cached.ca;
    const ca = this.loadCa(merchantId).catch((err: unknown) => {
      if (this.opened.get(merchantId)?.ca === ca) this.opened.delete(merchantId);
      throw err;
    });
    this.opened.set(merchantId, { until: at + this.cacheMs, ca });
    this.forgetStale(at);
    return ca;
  }

  private forgetStale(at: number): void {
    for (const [merchant, entry] of this.opened) if (entry.until <= at) this.opened.delete(merchant);
  }

  /**
   * Read, or (first use) made, sealed and stored with SET NX: of two replicas racing, the loser
   * drops its own and opens the winner's. Either way the stored record is opened, so the one kept
   * is the one used.
   */
  private async loadCa(merchantId: string): Promise<OpenedCa> {
    let stored = await this.opts.store.get(merchantId);
    if (stored === null) {
      const made = await createCaCertificate(merchantId, this.now());
      try {
        const ours = sealCaKey(this.opts.keyRing, merchantId, made.certificatePem, made.privateKeyPkcs8);
        stored = await this.opts.store.createIfAbsent(merchantId, ours);
        if (stored === ours) this.opts.onCreated?.(merchantId);
      } finally {
        made.privateKeyPkcs8.fill(0);
      }
    }
    let opened: { certificatePem: string; privateKeyPkcs8: Buffer };
    try {
      opened = openCaKey(this.opts.keyRing, merchantId, stored);
    } catch (err) {
      if (err instanceof TesseraError) throw err;
      throw new TesseraError('internal_error', {
        message: "The merchant's forward-proxy CA cannot be opened with the configured keys.",
        cause: err,
      });
    }
    try {
      return { certificatePem: opened.certificatePem, signingKey: await importCaSigningKey(opened.privateKeyPkcs8) };
    } finally {
      opened.privateKeyPkcs8.fill(0);
    }
  }
}

function checkedMerchantId(merchantId: string): void {
  if (!MERCHANT_ID.test(merchantId))
    throw new TesseraError('parameter_invalid', { param: 'merchant_id', message: 'merchant_id is missing or malformed.' });
}
