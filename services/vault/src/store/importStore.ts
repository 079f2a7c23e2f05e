import type { Redis } from 'ioredis';
import {
  CARD_IMPORT_ID_PATTERN,
  CARD_IMPORT_NEW_COUNTERS,
  CARD_IMPORT_QUEUE_KEY,
  cardImportKey,
  cardImportStatusOf,
  newCardImportId,
  type CardImportPart,
  type CardImportState,
} from '@tessera/merchant-data';
import type { ImportFormat } from '../domain/importFormats';

/**
 * Card imports in Redis (docs/adr/0015-card-import.md), under `tessera:import:` (the vault's Redis
 * user; the admin user only :meta, :upload, read-only :report and the queues). Everything of one import shares its {id} hash tag, so a checkpoint (the sealed
 * outcomes of a batch and the counts that cover them) is one MULTI, on a Cluster too:
 *   :meta      hash: merchant, mode, format, state, counts, the public keys
 *   :key       the import's private key wrapped under the KEK (apart, so a reader of the status never holds it)
 *   :upload    list: the uploaded file, OpenPGP ciphertext, in chunks
 *   :outcomes  list: one entry per checkpointed batch, its report rows sealed under the key ring
 *   :report    list: the finished report, OpenPGP ciphertext to the merchant's key, in chunks
 *   :lease     the worker that runs it
 * tessera:import:queue holds the ids a worker should pick up (queued, or running when its worker died).
 */
export type ImportState = CardImportState;

export interface ImportCounts {
  /** Records done (the checkpoint): imported + duplicates + failed. */
  processed: number;
  imported: number;
  duplicates: number;
  failed: number;
}

export interface ImportMeta extends ImportCounts {
  id: string;
  merchantId: string;
  mode: string;
  format: ImportFormat;
  state: ImportState;
  createdAt: string;
  publicKey: string;
  publicKeyFingerprint: string;
  reportRecipientKey: string;
  /** Absent once the import ended: its key is destroyed then. */
  sealedPrivateKey: string | undefined;
  uploadedBytes: number;
  uploadChunks: number;
  /** Records in the file, known once its integrity was checked. */
  records: number | undefined;
  /** Why it failed (a code such as file_not_decryptable), never card data. */
  failure: string | undefined;
  startedAt: string | undefined;
  finishedAt: string | undefined;
  reportChunks: number;
}

// The layout is shared with the admin service (packages/merchant-data, domain/cardImportLayout.ts).
export const IMPORT_QUEUE_KEY = CARD_IMPORT_QUEUE_KEY;
const keyOf = (id: string, part: CardImportPart): string => cardImportKey(id, part);
export const IMPORT_ID_PATTERN = CARD_IMPORT_ID_PATTERN;
export const newImportId = newCardImportId;

const RENEW_LEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;
const RELEASE_LEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

export class RedisImportStore {
  constructor(private readonly redis: Redis) {}

  async create(
    meta: Omit<
      ImportMeta,
      keyof ImportCounts | 'uploadedBytes' | 'uploadChunks' | 'records' | 'failure' | 'startedAt' | 'finishedAt' | 'reportChunks'
    >,
  ): Promise<void> {
    const fields: Record<string, string> = {
      merchantId: meta.merchantId,
      mode: meta.mode,
      format: meta.format,
      state: meta.state,
      createdAt: meta.createdAt,
      publicKey: meta.publicKey,
      publicKeyFingerprint: meta.publicKeyFingerprint,
      reportRecipientKey: meta.reportRecipientKey,
      ...CARD_IMPORT_NEW_COUNTERS,
    };
    const write = this.redis.multi().hset(keyOf(meta.id, 'meta'), fields);
    if (meta.sealedPrivateKey !== undefined) write.set(keyOf(meta.id, 'key'), meta.sealedPrivateKey);
    await write.exec();
  }

  async get(id: string): Promise<ImportMeta | null> {
    if (!IMPORT_ID_PATTERN.test(id)) return null;
    const [h, sealedPrivateKey] = await Promise.all([this.redis.hgetall(keyOf(id, 'meta')), this.redis.get(keyOf(id, 'key'))]);
    const status = cardImportStatusOf(id, h);
    if (status === null) return null;
    return {
      ...status,
      format: (status.format || 'jsonl') as ImportFormat,
      reportRecipientKey: h.reportRecipientKey ?? '',
      sealedPrivateKey: sealedPrivateKey ?? undefined,
    };
  }

  /** Starts the upload over (a second upload replaces the first). */
  async clearUpload(id: string): Promise<void> {
    await this.redis.multi().del(keyOf(id, 'upload')).hset(keyOf(id, 'meta'), { uploadedBytes: '0', uploadChunks: '0' }).exec();
  }

  async appendUpload(id: string, chunk: Buffer): Promise<void> {
    await this.redis
      .multi()
      .rpush(keyOf(id, 'upload'), chunk)
      .hincrby(keyOf(id, 'meta'), 'uploadedBytes', chunk.length)
      .hincrby(keyOf(id, 'meta'), 'uploadChunks', 1)
      .exec();
  }

  async uploadChunk(id: string, index: number): Promise<Buffer | null> {
    return this.redis.lindexBuffer(keyOf(id, 'upload'), index);
  }

  async queue(id: string): Promise<void> {
    await this.redis.hset(keyOf(id, 'meta'), 'state', 'queued');
    await this.redis.sadd(IMPORT_QUEUE_KEY, id);
  }

  async queued(): Promise<string[]> {
    return this.redis.smembers(IMPORT_QUEUE_KEY);
  }

  async takeLease(id: string, holder: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(keyOf(id, 'lease'), holder, 'PX', ttlMs, 'NX')) === 'OK';
  }

  async renewLease(id: string, holder: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.eval(RENEW_LEASE, 1, keyOf(id, 'lease'), holder, String(ttlMs))) === 1;
  }

  async releaseLease(id: string, holder: string): Promise<void> {
    await this.redis.eval(RELEASE_LEASE, 1, keyOf(id, 'lease'), holder);
  }

  async markRunning(id: string, records: number, now: Date): Promise<void> {
    await this.redis.hset(keyOf(id, 'meta'), { state: 'running', records: String(records), startedAt: now.toISOString() });
  }

  /** The batch's sealed report rows and the counts that include it, together or not at all. */
  async checkpoint(id: string, sealedOutcomes: string, counts: ImportCounts): Promise<void> {
    const results = await this.redis
      .multi()
      .rpush(keyOf(id, 'outcomes'), sealedOutcomes)
      .hset(keyOf(id, 'meta'), {
        processed: String(counts.processed),
        imported: String(counts.imported),
        duplicates: String(counts.duplicates),
        failed: String(counts.failed),
      })
      .exec();
    const failed = results?.find(([err]) => err !== null);
    if (results === null || failed !== undefined) throw failed?.[0] ?? new Error('the checkpoint was not written');
  }

  async outcomeBatches(id: string): Promise<number> {
    return this.redis.llen(keyOf(id, 'outcomes'));
  }

  async outcomeBatch(id: string, index: number): Promise<string | null> {
    return this.redis.lindex(keyOf(id, 'outcomes'), index);
  }

  /** A report being written is started over (a worker died while writing it). */
  async clearReport(id: string): Promise<void> {
    await this.redis.multi().del(keyOf(id, 'report')).hset(keyOf(id, 'meta'), 'reportChunks', '0').exec();
  }

  async appendReport(id: string, chunk: Buffer): Promise<void> {
    await this.redis.multi().rpush(keyOf(id, 'report'), chunk).hincrby(keyOf(id, 'meta'), 'reportChunks', 1).exec();
  }

  async reportChunk(id: string, index: number): Promise<Buffer | null> {
    return this.redis.lindexBuffer(keyOf(id, 'report'), index);
  }

  /**
   * The end of an import, done or failed: the uploaded ciphertext, the sealed outcomes and the
   * private key go (nothing can decrypt the file any more), the status and report stay for `keepMs`.
   */
  async finish(id: string, state: 'done' | 'failed', now: Date, keepMs: number, failure?: string): Promise<void> {
    await this.redis
      .multi()
      .hset(keyOf(id, 'meta'), { state, finishedAt: now.toISOString(), ...(failure !== undefined && { failure }) })
      .del(keyOf(id, 'key'), keyOf(id, 'upload'), keyOf(id, 'outcomes'))
      .pexpire(keyOf(id, 'meta'), keepMs)
      .pexpire(keyOf(id, 'report'), keepMs)
      .exec();
    await this.redis.srem(IMPORT_QUEUE_KEY, id);
  }

  /** The queue names an import that is gone (expired): forget it. */
  async forget(id: string): Promise<void> {
    await this.redis.srem(IMPORT_QUEUE_KEY, id);
  }
}
