import type { StoredCard, StoredCvv } from '../domain/card';

export interface CardEntryToSave {
  token: string;
  card: StoredCard;
  cardTtlMs: number;
  /** Absent when no CVV was given. */
  cvv?: { record: StoredCvv; ttlMs: number } | undefined;
}

export interface StoreHealth {
  ok: boolean;
  detail: string;
}

/**
 * Where tokens live. Implementations keep the card and its CVV under separate TTLs and throw
 * TesseraError('service_unavailable') when the backing store cannot answer, never hang.
 */
export interface CardStore {
  /** Writes the card and its CVV together: either both exist afterwards or neither does. */
  save(entry: CardEntryToSave): Promise<void>;
  getCard(token: string): Promise<StoredCard | null>;
  getCvv(token: string): Promise<StoredCvv | null>;
  hasCvv(token: string): Promise<boolean>;
  /** Removes the card and its CVV; true when the card existed. */
  delete(token: string): Promise<boolean>;
  ping(): Promise<StoreHealth>;
  close(): Promise<void>;
}
