import type { Redis } from 'ioredis';
import {
  CARD_IMPORT_CREATE_QUEUE_KEY,
  CARD_IMPORT_ID_PATTERN,
  CARD_IMPORT_NEW_COUNTERS,
  CARD_IMPORT_QUEUE_KEY,
  cardImportKey,
  cardImportStatusOf,
  newCardImportId,
  type CardImportStatus,
} from '@tessera/merchant-data';

/**
 * The admin service's side of card imports: it asks for one (a vault makes the key pair), stores
 * the operator's uploaded ciphertext in the very layout the vault's CLI uses, queues it, and reads
 * the status and the encrypted report. Every call here stays within the admin Redis user's patterns.
 */
export class RedisCardImportRequests {
  constructor(private readonly redis: Redis) {}

  /** The status hash and the creation request, in one step: a vault picks it up from the create queue. */
  async request(input: {
    merchantId: string;
    mode: string;
    format: string;
    keyType: string;
    reportRecipientKey: string;
    requestedBy: string;
    now: Date;
  }): Promise<CardImportStatus> {
    const id = newCardImportId();
    await this.redis
      .multi()
      .hset(cardImportKey(id, 'meta'), {
        merchantId: input.merchantId,
        mode: input.mode,
        format: input.format,
        keyType: input.keyType,
        state: 'creating',
        createdAt: input.now.toISOString(),
        requestedBy: input.requestedBy,
        publicKey: '',
        publicKeyFingerprint: '',
        reportRecipientKey: input.reportRecipientKey,
        ...CARD_IMPORT_NEW_COUNTERS,
      })
      .sadd(CARD_IMPORT_CREATE_QUEUE_KEY, id)
      .exec();
    const created = await this.get(id);
    if (created === null) throw new Error('the import request was not stored');
    return created;
  }

  async get(id: string): Promise<CardImportStatus | null> {
    if (!CARD_IMPORT_ID_PATTERN.test(id)) return null;
    return cardImportStatusOf(id, await this.redis.hgetall(cardImportKey(id, 'meta')));
  }

  /** Starts the upload over (a second upload, or one refused half-way, replaces the first). */
  async clearUpload(id: string): Promise<void> {
    await this.redis
      .multi()
      .del(cardImportKey(id, 'upload'))
      .hset(cardImportKey(id, 'meta'), { uploadedBytes: '0', uploadChunks: '0' })
      .exec();
  }

  async appendUpload(id: string, chunk: Buffer): Promise<void> {
    await this.redis
      .multi()
      .rpush(cardImportKey(id, 'upload'), chunk)
      .hincrby(cardImportKey(id, 'meta'), 'uploadedBytes', chunk.length)
      .hincrby(cardImportKey(id, 'meta'), 'uploadChunks', 1)
      .exec();
  }

  async queue(id: string): Promise<void> {
    await this.redis.multi().hset(cardImportKey(id, 'meta'), 'state', 'queued').sadd(CARD_IMPORT_QUEUE_KEY, id).exec();
  }

  async reportChunk(id: string, index: number): Promise<Buffer | null> {
    return this.redis.lindexBuffer(cardImportKey(id, 'report'), index);
  }
}
