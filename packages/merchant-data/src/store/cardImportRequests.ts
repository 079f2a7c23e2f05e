import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * Card imports' Redis layout (docs/adr/0015-card-import.md), shared by the vault (which alone holds
 * the import keys and reads the files) and the admin service (which takes an operator's import
 * through /admin/v1 and never sees a key or a card). Everything of one import shares its {id} hash
 * tag. The parts an admin may touch and the ones it may not are told apart by their suffix, so
 * that Redis ACL key patterns (deploy/redis/users.acl) can grant the first and refuse the second:
 *   admin and vault:  :meta (status, counts, public keys), :upload (ciphertext chunks),
 *                     :report (ciphertext to the merchant's key; read only for the admin),
 *                     tessera:import:queue and tessera:import:create-queue
 *   vault only:       :key (the sealed private key), :outcomes (the sealed checkpoint rows), :lease
 */
export type CardImportPart = 'meta' | 'key' | 'upload' | 'outcomes' | 'report' | 'lease';

export const cardImportKey = (id: string, part: CardImportPart): string => `tessera:import:{${id}}:${part}`;

/** Imports with a file uploaded, for a vault's import worker. */
export const CARD_IMPORT_QUEUE_KEY = 'tessera:import:queue';
/** Imports an operator asked for through the admin API, waiting for a vault to make their key pair. */
export const CARD_IMPORT_CREATE_QUEUE_KEY = 'tessera:import:create-queue';

export const CARD_IMPORT_ID_PATTERN = /^imp_[A-Za-z0-9_-]{22}$/;

export function newCardImportId(): string {
  return `imp_${randomBytes(16).toString('base64url')}`;
}

/**
 * creating: asked for through the admin API, no key yet; awaiting_upload: the public key is ready;
 * queued, running: a vault's worker has it; done, failed: ended (the key and the file are gone).
 */
export const CARD_IMPORT_STATES = ['creating', 'awaiting_upload', 'queued', 'running', 'done', 'failed'] as const;
export type CardImportState = (typeof CARD_IMPORT_STATES)[number];

export const CARD_IMPORT_FORMATS = ['jsonl', 'csv', 'stripe'] as const;
export const CARD_IMPORT_KEY_TYPES = ['curve25519', 'rsa4096'] as const;

/** An import as the admin service may see it: its status hash, never the key or the sealed rows. */
export interface CardImportStatus {
  id: string;
  merchantId: string;
  mode: string;
  format: string;
  state: CardImportState;
  createdAt: string;
  /** Armored; empty while creating. */
  publicKey: string;
  publicKeyFingerprint: string;
  processed: number;
  imported: number;
  duplicates: number;
  failed: number;
  uploadedBytes: number;
  uploadChunks: number;
  records: number | undefined;
  failure: string | undefined;
  startedAt: string | undefined;
  finishedAt: string | undefined;
  reportChunks: number;
}

function int(value: string | undefined): number {
  const n = Number(value ?? 0);
  return Number.isFinite(n) ? n : 0;
}

function stateOf(value: string | undefined): CardImportState {
  // 'uploading' is what the vault's CLI wrote before the admin API existed.
  if (value === 'uploading') return 'awaiting_upload';
  return (CARD_IMPORT_STATES as readonly string[]).includes(value ?? '') ? (value as CardImportState) : 'failed';
}

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
        processed: '0',
        imported: '0',
        duplicates: '0',
        failed: '0',
        uploadedBytes: '0',
        uploadChunks: '0',
        reportChunks: '0',
      })
      .sadd(CARD_IMPORT_CREATE_QUEUE_KEY, id)
      .exec();
    const created = await this.get(id);
    if (created === null) throw new Error('the import request was not stored');
    return created;
  }

  async get(id: string): Promise<CardImportStatus | null> {
    if (!CARD_IMPORT_ID_PATTERN.test(id)) return null;
    const h = await this.redis.hgetall(cardImportKey(id, 'meta'));
    if (h.merchantId === undefined) return null;
    return {
      id,
      merchantId: h.merchantId,
      mode: h.mode ?? '',
      format: h.format ?? '',
      state: stateOf(h.state),
      createdAt: h.createdAt ?? '',
      publicKey: h.publicKey ?? '',
      publicKeyFingerprint: h.publicKeyFingerprint ?? '',
      processed: int(h.processed),
      imported: int(h.imported),
      duplicates: int(h.duplicates),
      failed: int(h.failed),
      uploadedBytes: int(h.uploadedBytes),
      uploadChunks: int(h.uploadChunks),
      records: h.records === undefined ? undefined : int(h.records),
      failure: h.failure || undefined,
      startedAt: h.startedAt || undefined,
      finishedAt: h.finishedAt || undefined,
      reportChunks: int(h.reportChunks),
    };
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
