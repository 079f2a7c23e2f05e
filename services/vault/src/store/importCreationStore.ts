import type { Redis } from 'ioredis';
import { CARD_IMPORT_CREATE_QUEUE_KEY, cardImportKey } from '@tessera/merchant-data';

/**
 * The imports operators asked for through the admin API (tessera:import:create-queue): the admin
 * service wrote their status hash in state `creating`; a vault makes the key pair and answers here.
 * The sealed private key goes to `:key`, which the admin Redis user may not read (docs/adr/0015).
 */
export class RedisImportCreationStore {
  constructor(private readonly redis: Redis) {}

  async pending(): Promise<string[]> {
    return this.redis.smembers(CARD_IMPORT_CREATE_QUEUE_KEY);
  }

  /** The key type the operator chose (absent: the default). */
  async keyTypeOf(id: string): Promise<string | undefined> {
    return (await this.redis.hget(cardImportKey(id, 'meta'), 'keyType')) ?? undefined;
  }

  /** The key pair, the status `awaiting_upload` and the end of the request, together or not at all. */
  async complete(id: string, pair: { publicKey: string; fingerprint: string; sealedPrivateKey: string }): Promise<void> {
    const results = await this.redis
      .multi()
      .set(cardImportKey(id, 'key'), pair.sealedPrivateKey)
      .hset(cardImportKey(id, 'meta'), { publicKey: pair.publicKey, publicKeyFingerprint: pair.fingerprint, state: 'awaiting_upload' })
      .srem(CARD_IMPORT_CREATE_QUEUE_KEY, id)
      .exec();
    const failed = results?.find(([err]) => err !== null);
    if (results === null || failed !== undefined) throw failed?.[0] ?? new Error('the import key was not stored');
  }

  /** A request the vault refuses (a report key that cannot encrypt, …): failed, kept like an ended import. */
  async refuse(id: string, failure: string, now: Date, keepMs: number): Promise<void> {
    await this.redis
      .multi()
      .hset(cardImportKey(id, 'meta'), { state: 'failed', failure, finishedAt: now.toISOString() })
      .pexpire(cardImportKey(id, 'meta'), keepMs)
      .srem(CARD_IMPORT_CREATE_QUEUE_KEY, id)
      .exec();
  }

  /** The request names an import that is gone or already answered. */
  async forget(id: string): Promise<void> {
    await this.redis.srem(CARD_IMPORT_CREATE_QUEUE_KEY, id);
  }
}
