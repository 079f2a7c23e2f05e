import type { CardEntryToSave, CardStore, SaveOutcome, StoreHealth, TakenCvv } from './cardStore';
import {
  CARD_KEY_PREFIX,
  CVV_KEY_PREFIX,
  cardKey,
  cvvKey,
  FINGERPRINT_KEY_KEY,
  fingerprintIndexKey,
  parseCard,
  parseCvv,
  recordKey,
  serializeCard,
  serializeCvv,
  tokenOfCardKey,
  usedCvvKey,
} from './records';
import type { RecordKind } from '../domain/envelope';
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
  private readonly checkpoints = new Map<string, string>();
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
    const { fingerprint, provisional } = entry.card;
    if (fingerprint !== undefined && provisional !== true && this.read(fingerprintIndexKey(fingerprint)) === undefined) {
      this.items.set(fingerprintIndexKey(fingerprint), { value: entry.token, expiresAtMs: now + entry.cardTtlMs });
    }
  }

  async saveMany(entries: readonly CardEntryToSave[]): Promise<SaveOutcome[]> {
    for (const entry of entries) await this.save(entry);
    return entries.map(() => ({ saved: true }));
  }

  async getCard(token: string): Promise<StoredCard | null> {
    const raw = this.read(cardKey(token));
    return raw === undefined ? null : parseCard(raw);
  }

  async getCvv(token: string): Promise<StoredCvv | null> {
    const raw = this.read(cvvKey(token));
    return raw === undefined ? null : parseCvv(raw);
  }

  async takeCvv(token: string, identify: (record: StoredCvv) => { id: string; rememberMs: number }): Promise<TakenCvv | null> {
    const raw = this.read(cvvKey(token));
    if (raw === undefined) return null;
    const record = parseCvv(raw);
    const { id, rememberMs } = identify(record);
    this.items.delete(cvvKey(token));
    // The same shape as in Redis: one item per token holding its used ids, expiring with the last.
    const usedKey = usedCvvKey(token);
    const used = new Set<string>(JSON.parse(this.read(usedKey) ?? '[]') as string[]);
    if (used.has(id)) return { outcome: 'replayed' };
    used.add(id);
    const expiresAtMs = Math.max(this.items.get(usedKey)?.expiresAtMs ?? 0, this.now() + rememberMs);
    this.items.set(usedKey, { value: JSON.stringify([...used]), expiresAtMs });
    return { outcome: 'taken', record };
  }

  async hasCvv(token: string): Promise<boolean> {
    return this.read(cvvKey(token)) !== undefined;
  }

  async retainCard(token: string, expected: string, next: StoredCard, ttl: { cardTtlMs: number; cvvTtlMs: number }): Promise<boolean> {
    if (this.read(cardKey(token)) !== expected) return false;
    const now = this.now();
    this.items.set(cardKey(token), { value: serializeCard(next), expiresAtMs: now + ttl.cardTtlMs });
    const cvv = this.read(cvvKey(token));
    if (ttl.cvvTtlMs > 0 && cvv !== undefined) this.items.set(cvvKey(token), { value: cvv, expiresAtMs: now + ttl.cvvTtlMs });
    return true;
  }

  async putCvv(token: string, record: StoredCvv, ttlMs: number): Promise<void> {
    this.items.set(cvvKey(token), { value: serializeCvv(record), expiresAtMs: this.now() + ttlMs });
  }

  async getFingerprintKey(): Promise<string | null> {
    return this.read(FINGERPRINT_KEY_KEY) ?? null;
  }

  async createFingerprintKey(stored: string): Promise<string> {
    const kept = this.read(FINGERPRINT_KEY_KEY);
    if (kept !== undefined) return kept;
    this.items.set(FINGERPRINT_KEY_KEY, { value: stored, expiresAtMs: Infinity });
    return stored;
  }

  async replaceFingerprintKey(expected: string, next: string): Promise<boolean> {
    if (this.read(FINGERPRINT_KEY_KEY) !== expected) return false;
    this.items.set(FINGERPRINT_KEY_KEY, { value: next, expiresAtMs: Infinity });
    return true;
  }

  async findByFingerprint(fingerprint: string): Promise<string | null> {
    return this.read(fingerprintIndexKey(fingerprint)) ?? null;
  }

  async claimFingerprint(fingerprint: string, token: string, replacing: string | null, ttlMs: number): Promise<string> {
    const key = fingerprintIndexKey(fingerprint);
    const current = this.read(key);
    if (current !== undefined && current !== token && current !== replacing) return current;
    this.items.set(key, { value: token, expiresAtMs: this.now() + ttlMs });
    return token;
  }

  async releaseFingerprint(fingerprint: string, token: string): Promise<void> {
    const key = fingerprintIndexKey(fingerprint);
    if (this.read(key) === token) this.items.delete(key);
  }

  async delete(token: string): Promise<boolean> {
    const existed = this.read(cardKey(token)) !== undefined;
    this.items.delete(cardKey(token));
    this.items.delete(cvvKey(token));
    return existed;
  }

  /**
   * The cursor is the last card key returned, so keys added or removed between steps never make
   * the scan skip a record that existed throughout (the guarantee Redis SCAN gives).
   */
  async scanTokens(cursor: string, count: number): Promise<{ cursor: string; tokens: string[] }> {
    const after = cursor === '0' ? '' : cursor;
    const keys = [...this.items.keys()]
      .filter((k) => k.startsWith(CARD_KEY_PREFIX) && k > after && this.read(k) !== undefined)
      .sort()
      .slice(0, Math.max(1, count));
    const last = keys[keys.length - 1];
    const tokens = keys.map(tokenOfCardKey).filter((t): t is string => t !== undefined);
    return { cursor: keys.length < Math.max(1, count) || last === undefined ? '0' : last, tokens };
  }

  async readRaw(kind: RecordKind, token: string): Promise<string | null> {
    return this.read(recordKey(kind, token)) ?? null;
  }

  async replaceRaw(kind: RecordKind, token: string, expected: string, next: string): Promise<boolean> {
    const key = recordKey(kind, token);
    const item = this.items.get(key);
    if (item === undefined || this.read(key) !== expected) return false;
    this.items.set(key, { value: next, expiresAtMs: item.expiresAtMs });
    return true;
  }

  async getCheckpoint(name: string): Promise<string | null> {
    return this.checkpoints.get(name) ?? null;
  }

  async setCheckpoint(name: string, value: string | null): Promise<void> {
    if (value === null) this.checkpoints.delete(name);
    else this.checkpoints.set(name, value);
  }

  async ping(): Promise<StoreHealth> {
    return { ok: true, detail: 'in-memory store (tokens are lost on restart)' };
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.items.clear();
  }

  /**
   * Number of live card and CVV entries (counted separately; a token's used-CVV marks included),
   * not the fingerprint key or index; for tests and diagnostics.
   */
  size(): number {
    this.sweep();
    return [...this.items.keys()].filter((key) => key.startsWith(CARD_KEY_PREFIX) || key.startsWith(CVV_KEY_PREFIX)).length;
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
