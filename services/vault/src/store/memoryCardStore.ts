import type { CardEntryToSave, CardStore, StoreHealth } from './cardStore';
import { cardKey, cvvKey, parseCard, parseCvv, serializeCard, serializeCvv } from './records';
import type { StoredCard, StoredCvv } from '../domain/card';

interface Item {
  value: string;
  expiresAtMs: number;
}

const SWEEP_INTERVAL_MS = 60_000;

/**
 * For development without Redis: same keys, same serialized form and same TTL rules as the
 * Redis store, held in this process only — a restart loses every token.
 */
export class MemoryCardStore implements CardStore {
  private readonly items = new Map<string, Item>();
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(opts: { now?: () => number } = {}) {
    this.now = opts.now ?? Date.now;
    // Expired CVVs must actually leave memory, not just become unreadable.
    this.sweeper = setInterval(() => this.sweep(), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  async save(entry: CardEntryToSave): Promise<void> {
    const now = this.now();
    this.items.set(cardKey(entry.token), { value: serializeCard(entry.card), expiresAtMs: now + entry.cardTtlMs });
    if (entry.cvv !== undefined) {
      this.items.set(cvvKey(entry.token), { value: serializeCvv(entry.cvv.record), expiresAtMs: now + entry.cvv.ttlMs });
    } else {
      this.items.delete(cvvKey(entry.token));
    }
  }

  async getCard(token: string): Promise<StoredCard | null> {
    const raw = this.read(cardKey(token));
    return raw === undefined ? null : parseCard(raw);
  }

  async getCvv(token: string): Promise<StoredCvv | null> {
    const raw = this.read(cvvKey(token));
    return raw === undefined ? null : parseCvv(raw);
  }

  async hasCvv(token: string): Promise<boolean> {
    return this.read(cvvKey(token)) !== undefined;
  }

  async delete(token: string): Promise<boolean> {
    const existed = this.read(cardKey(token)) !== undefined;
    this.items.delete(cardKey(token));
    this.items.delete(cvvKey(token));
    return existed;
  }

  async ping(): Promise<StoreHealth> {
    return { ok: true, detail: 'in-memory store (tokens are lost on restart)' };
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.items.clear();
  }

  /** Number of live entries (card and CVV records counted separately); for tests and diagnostics. */
  size(): number {
    this.sweep();
    return this.items.size;
  }

  private read(key: string): string | undefined {
    const item = this.items.get(key);
    if (item === undefined) return undefined;
    if (item.expiresAtMs <= this.now()) {
      this.items.delete(key);
      return undefined;
    }
    return item.value;
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, item] of this.items) {
      if (item.expiresAtMs <= now) this.items.delete(key);
    }
  }
}
