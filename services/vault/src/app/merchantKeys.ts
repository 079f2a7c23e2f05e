import { TesseraError, type KeyMode } from '@tessera/common';
import { EnvelopeOpenError } from '../domain/envelope';
import type { KeyRing } from '../domain/keyRing';
import {
  isMerchantKekId,
  merchantKeyRing,
  newMerchantKek,
  openMerchantKek,
  type MerchantKek,
  type MerchantKeyState,
} from '../domain/merchantKeys';

/** Where merchant KEKs live (RedisCardStore implements it; keys in store/records.ts). */
export interface MerchantKekStore {
  /** The stored KEK (null: none yet, or shredded) and the destroyed KEK ids with when ('-': shredded while none was live). */
  getMerchantKek(merchantId: string, mode: string): Promise<{ stored: string | null; shredded: Record<string, string> }>;
  /** Stores `stored` unless a KEK is there already (another replica was first); answers the one kept. Acknowledged. */
  createMerchantKek(merchantId: string, mode: string, stored: string): Promise<string>;
  /** Compare-and-set for rewrap (a new root key); false when it changed meanwhile. */
  replaceMerchantKek(merchantId: string, mode: string, expected: string, next: string): Promise<boolean>;
  /** One SCAN step over the stored KEKs: cursor '0' starts, a returned '0' means done. */
  scanMerchantKeks(cursor: string, count: number): Promise<{ cursor: string; owners: Array<{ merchantId: string; mode: string }> }>;
  /** Deletes the live KEK and remembers its id as destroyed, atomically; answers the id ('-' when none was live). */
  shredMerchantKek(merchantId: string, mode: string, at: string): Promise<string>;
}

/**
 * How long a replica keeps a merchant's KEK (and its shredded state) in memory before reading it
 * again: the bound on how long a shredded KEK can still open records in another vault replica
 * (docs/SECURITY.md, "Per-merchant keys and crypto-shredding"). The replica that shreds forgets it at once.
 */
export const MERCHANT_KEK_CACHE_MS = 5_000;

/**
 * When the store cannot be read (the Redis Cluster master of the merchant's slot is down), a
 * replica keeps using what it last read for at most this long, so a merchant's tokens whose own
 * slots are alive keep working through a failover; after that its calls answer 503. This is the
 * bound on a shred while the merchant's slot cannot be read by a replica (a shred writes that slot).
 */
export const MERCHANT_KEK_MAX_STALE_MS = 60_000;

interface Cached {
  state: MerchantKeyState;
  /** When the entry is due to be read again (the cache), and when the store last confirmed it. */
  loadedAt: number;
  confirmedAt: number;
}

export interface MerchantKeyRingsOptions {
  root: KeyRing;
  store: MerchantKekStore;
  cacheMs?: number;
  maxStaleMs?: number;
  now?: () => Date;
  /** A monotonic clock for the cache (tests pass their own). */
  clock?: () => number;
}

/**
 * Merchant KEKs for the vault's use cases: loaded from the store on demand, generated on the first
 * record sealed for a merchant and mode, cached for MERCHANT_KEK_CACHE_MS. Reads never create a KEK.
 */
export class MerchantKeyRings {
  private readonly cache = new Map<string, Cached>();
  private readonly loading = new Map<string, Promise<Cached>>();
  private readonly cacheMs: number;
  private readonly clock: () => number;
  private readonly now: () => Date;

  constructor(private readonly opts: MerchantKeyRingsOptions) {
    this.cacheMs = opts.cacheMs ?? MERCHANT_KEK_CACHE_MS;
    this.clock = opts.clock ?? (() => performance.now());
    this.now = opts.now ?? (() => new Date());
  }

  get root(): KeyRing {
    return this.opts.root;
  }

  /**
   * The ring to open a merchant's records with. `keyId` (the record's) makes a stale cache entry be
   * read again when the record names a merchant KEK it does not know: another replica may have
   * made it since.
   */
  async forReading(merchantId: string, mode: KeyMode, keyId?: string): Promise<KeyRing> {
    let cached = await this.load(merchantId, mode, false);
    if (keyId !== undefined && isMerchantKekId(keyId) && cached.state.kek?.kekId !== keyId && !cached.state.shredded.has(keyId)) {
      cached = await this.load(merchantId, mode, true);
    }
    return merchantKeyRing(this.opts.root, cached.state);
  }

  /** The ring to seal a merchant's records with: its KEK, made (and stored) on first use. */
  async forSealing(merchantId: string, mode: KeyMode): Promise<KeyRing> {
    let cached = await this.load(merchantId, mode, false);
    if (cached.state.kek === undefined) {
      cached = await this.load(merchantId, mode, true);
      if (cached.state.kek === undefined) cached = await this.create(merchantId, mode);
    }
    return merchantKeyRing(this.opts.root, cached.state);
  }

  /** Drops what this replica knows of the merchant and mode (after it shredded them). */
  forget(merchantId: string, mode: KeyMode): void {
    this.cache.delete(cacheKey(merchantId, mode));
  }

  private async load(merchantId: string, mode: KeyMode, fresh: boolean): Promise<Cached> {
    const key = cacheKey(merchantId, mode);
    const hit = this.cache.get(key);
    if (!fresh && hit !== undefined && this.clock() - hit.loadedAt < this.cacheMs) return hit;
    // Concurrent calls for one merchant share one read.
    const pending = this.loading.get(key);
    if (pending !== undefined) return pending;
    const loading = this.read(merchantId, mode)
      .catch((err: unknown) => {
        // Only a cache refresh may fall back on what was read before, never a read for a key the
        // entry lacks (that record would look foreign), and for MERCHANT_KEK_MAX_STALE_MS at most.
        const stale = !fresh && hit !== undefined && this.clock() - hit.confirmedAt < (this.opts.maxStaleMs ?? MERCHANT_KEK_MAX_STALE_MS);
        if (!stale || !(err instanceof TesseraError) || err.code !== 'service_unavailable') throw err;
        hit.loadedAt = this.clock();
        return hit;
      })
      .finally(() => this.loading.delete(key));
    this.loading.set(key, loading);
    return loading;
  }

  private async read(merchantId: string, mode: KeyMode): Promise<Cached> {
    const { stored, shredded } = await this.opts.store.getMerchantKek(merchantId, mode);
    const kek = stored === null ? undefined : this.open(merchantId, mode, stored);
    return this.remember(merchantId, mode, kek, shredded);
  }

  private async create(merchantId: string, mode: KeyMode): Promise<Cached> {
    const made = newMerchantKek(this.opts.root, merchantId, mode, this.now());
    const kept = await this.opts.store.createMerchantKek(merchantId, mode, made.stored);
    made.kek.key.fill(0);
    const { shredded } = await this.opts.store.getMerchantKek(merchantId, mode);
    return this.remember(merchantId, mode, this.open(merchantId, mode, kept), shredded);
  }

  private remember(merchantId: string, mode: KeyMode, kek: MerchantKek | undefined, shredded: Record<string, string>): Cached {
    const times = Object.values(shredded).sort();
    const state: MerchantKeyState = {
      kek,
      shredded: new Set(Object.keys(shredded).filter(isMerchantKekId)),
      shreddedAt: times[times.length - 1],
    };
    const now = this.clock();
    const cached = { state, loadedAt: now, confirmedAt: now };
    const key = cacheKey(merchantId, mode);
    // The replaced entry's key is not zeroed: a call in flight may still be sealing with it.
    this.cache.set(key, cached);
    return cached;
  }

  private open(merchantId: string, mode: KeyMode, stored: string): MerchantKek {
    try {
      return openMerchantKek(this.opts.root, merchantId, mode, stored);
    } catch (err) {
      if (err instanceof TesseraError) throw err;
      const reason = err instanceof EnvelopeOpenError ? err.reason : 'malformed';
      throw new TesseraError('internal_error', {
        message: `A merchant key cannot be opened with the configured keys (${reason}).`,
        cause: err,
      });
    }
  }
}

function cacheKey(merchantId: string, mode: KeyMode): string {
  return JSON.stringify([merchantId, mode]);
}
