import type { Redis } from 'ioredis';
import { z } from 'zod';
import { defineScripts } from '@tessera/common/redis';
import { randomId } from '../domain/randomIds';
import { approvalOperatorSchema, RedisApprovalOrderStore } from './approvalOrderStore';

/**
 * Card exports (issue 29 item 2, docs/migration.md "Leaving Tessera (export)"): an operator requests
 * the export of a merchant's tokens (all, or a list) in one mode to a recipient registered for that
 * merchant, another approves; the vault carries the approved order out and leaves the file, OpenPGP-
 * encrypted to the recipient's key, in Redis for `EXPORT_FILE_TTL_SECONDS`. The admin service reads
 * that ciphertext back for download; it never sees a card.
 *
 * Orders, the queue, the recipients and the daily counts share the {tessera-export} hash tag
 * (`tessera:export:*`, both the admin and the vault Redis users); the files are `tessera:export-file:*`,
 * the vault's to write and the admin service's to read (deploy/redis/users.acl).
 */
export const EXPORT_FORMATS = ['jsonl', 'csv', 'stripe'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export const EXPORT_MODES = ['test', 'live'] as const;

/** The most tokens one order may list; larger exports take all of the merchant's tokens. */
export const EXPORT_MAX_SELECTED_TOKENS = 10_000;

const recipientRefSchema = z.strictObject({ fingerprint: z.string(), label: z.string() });

const exportOrderSchema = z.strictObject({
  id: z.string(),
  merchantId: z.string(),
  mode: z.enum(EXPORT_MODES),
  format: z.enum(EXPORT_FORMATS),
  /** Absent: every token of the merchant and mode. */
  tokens: z.array(z.string()).optional(),
  recipient: recipientRefSchema,
  reason: z.string(),
  requestedBy: approvalOperatorSchema,
  requestedAt: z.string(),
  /**
   * pending: waits for a second operator; approved: queued for the vault; running: being written;
   * done: the file is ready until expiresAt; failed: see `failure`; cancelled: refused by an operator.
   */
  status: z.enum(['pending', 'approved', 'running', 'done', 'failed', 'cancelled']),
  approvedBy: approvalOperatorSchema.optional(),
  approvedAt: z.string().optional(),
  cancelledBy: approvalOperatorSchema.optional(),
  startedAt: z.string().optional(),
  completedAt: z.string().optional(),
  /** Cards written to the file. */
  exported: z.number().int().min(0).optional(),
  /** Listed tokens that name no card of the merchant and mode (deleted, expired, or never its). */
  missing: z.number().int().min(0).optional(),
  /** Size of the encrypted file and of its chunks in Redis. */
  bytes: z.number().int().min(0).optional(),
  chunks: z.number().int().min(0).optional(),
  expiresAt: z.string().optional(),
  failure: z.string().optional(),
});
export type ExportOrder = z.output<typeof exportOrderSchema>;

export const EXPORT_ORDER_ID_PATTERN = /^exp_[A-Za-z0-9_-]{16}$/;

const PREFIX = 'tessera:export:{tessera-export}';
const runLeaseKey = (orderId: string): string => `${PREFIX}:lease:${orderId}`;
const dailyCountKey = (merchantId: string, day: string): string => `${PREFIX}:count:${merchantId}:${day}`;

/** Takes the lease if it is free or already the holder's, for `ttlMs` from now; 1 when held. */
const HOLD_RUN = `
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

interface ExportScripts {
  tesseraHoldExportRun(leaseKey: string, holder: string, ttlMs: number): Promise<number>;
}

export class RedisExportOrderStore extends RedisApprovalOrderStore<ExportOrder> {
  private readonly exportScripts: ExportScripts;

  constructor(redis: Redis) {
    super(redis, { prefix: PREFIX, idPattern: EXPORT_ORDER_ID_PATTERN, schema: exportOrderSchema });
    this.exportScripts = defineScripts<ExportScripts>(redis, { tesseraHoldExportRun: { numberOfKeys: 1, lua: HOLD_RUN } });
  }

  /**
   * The vault writing an order holds it under a lease it renews as it goes; a vault that stops lets
   * it lapse, and the next one starts the order again. False when another vault holds it.
   */
  async holdRun(orderId: string, holder: string, ttlMs: number): Promise<boolean> {
    return (await this.exportScripts.tesseraHoldExportRun(runLeaseKey(orderId), holder, ttlMs)) === 1;
  }

  async releaseRun(orderId: string, holder: string): Promise<void> {
    if ((await this.redis.get(runLeaseKey(orderId))) === holder) await this.redis.del(runLeaseKey(orderId));
  }

  async create(
    input: Pick<ExportOrder, 'merchantId' | 'mode' | 'format' | 'recipient' | 'reason' | 'requestedBy'> & { tokens?: string[] | undefined },
    now: Date,
  ): Promise<ExportOrder> {
    const { tokens, ...rest } = input;
    const order: ExportOrder = {
      id: randomId('exp_'),
      ...rest,
      ...(tokens === undefined ? {} : { tokens }),
      requestedAt: now.toISOString(),
      status: 'pending',
    };
    return this.insert(order, now);
  }

  /**
   * Counts one more export request of the merchant on the UTC day of `now`; answers the day's count
   * including this one. Kept two days, so a request just before midnight never finds a stale count.
   */
  async countRequest(merchantId: string, now: Date): Promise<number> {
    const key = dailyCountKey(merchantId, now.toISOString().slice(0, 10));
    const count = await this.redis.incr(key);
    await this.redis.expire(key, 2 * 86_400);
    return count;
  }
}

const exportRecipientSchema = z.strictObject({
  fingerprint: z.string(),
  label: z.string(),
  /** The armored OpenPGP public key the vault encrypts to. */
  publicKey: z.string(),
  algorithm: z.string(),
  registeredBy: approvalOperatorSchema,
  registeredAt: z.string(),
});
export type ExportRecipient = z.output<typeof exportRecipientSchema>;

const recipientsKey = (merchantId: string): string => `${PREFIX}:recipients:${merchantId}`;

/** The recipients' public keys an operator registered per merchant: an export goes to none other. */
export class RedisExportRecipientStore {
  constructor(private readonly redis: Redis) {}

  /** False when the merchant already has a recipient with this fingerprint (it is kept as it was). */
  async register(merchantId: string, recipient: ExportRecipient): Promise<boolean> {
    return (await this.redis.hsetnx(recipientsKey(merchantId), recipient.fingerprint, JSON.stringify(recipient))) === 1;
  }

  async get(merchantId: string, fingerprint: string): Promise<ExportRecipient | undefined> {
    const raw = await this.redis.hget(recipientsKey(merchantId), fingerprint);
    if (raw === null) return undefined;
    const parsed = exportRecipientSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  }

  async list(merchantId: string): Promise<ExportRecipient[]> {
    const all = await this.redis.hvals(recipientsKey(merchantId));
    return all
      .flatMap((raw) => {
        const parsed = exportRecipientSchema.safeParse(JSON.parse(raw));
        return parsed.success ? [parsed.data] : [];
      })
      .sort((a, b) => a.registeredAt.localeCompare(b.registeredAt));
  }

  async remove(merchantId: string, fingerprint: string): Promise<boolean> {
    return (await this.redis.hdel(recipientsKey(merchantId), fingerprint)) === 1;
  }
}

const fileKey = (orderId: string): string => `tessera:export-file:{${orderId}}`;
/** The tokens an export of every card has written, in the file's slot: SCAN may return a key twice. */
const writtenKey = (orderId: string): string => `tessera:export-file:{${orderId}}:written`;

/** An export's encrypted file, as a list of ciphertext chunks in Redis (written by the vault, read by the admin service). */
export class RedisExportFileStore {
  constructor(private readonly redis: Redis) {}

  async clear(orderId: string): Promise<void> {
    await this.redis.del(fileKey(orderId), writtenKey(orderId));
  }

  /**
   * Of `tokens`, which this export meets for the first time (true) rather than again (false): SCAN
   * returns a key twice when Redis resizes its table mid-walk, and a file must list each card once.
   * Kept in Redis, not in the vault's memory, so that memory stays flat whatever the number of cards.
   */
  async firstSeen(orderId: string, tokens: readonly string[], ttlMs: number): Promise<boolean[]> {
    if (tokens.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const token of tokens) pipeline.sadd(writtenKey(orderId), token);
    pipeline.pexpire(writtenKey(orderId), ttlMs);
    const results = (await pipeline.exec()) ?? [];
    return tokens.map((_, i) => {
      const [err, added] = results[i] ?? [new Error('no answer'), 0];
      if (err) throw err;
      return added === 1;
    });
  }

  /** The export is complete: the list of written tokens has served its purpose. */
  async forgetSeen(orderId: string): Promise<void> {
    await this.redis.del(writtenKey(orderId));
  }

  /** Appends a chunk; the whole file expires `ttlMs` after its last chunk was written. */
  async append(orderId: string, chunk: Buffer, ttlMs: number): Promise<void> {
    await this.redis.multi().rpush(fileKey(orderId), chunk).pexpire(fileKey(orderId), ttlMs).exec();
  }

  async chunkCount(orderId: string): Promise<number> {
    return this.redis.llen(fileKey(orderId));
  }

  async chunk(orderId: string, index: number): Promise<Buffer | null> {
    return this.redis.lindexBuffer(fileKey(orderId), index);
  }
}
