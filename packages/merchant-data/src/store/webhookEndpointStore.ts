import type { Redis } from 'ioredis';
import type { KeyMode } from '@tessera/common';
import { MAX_WEBHOOK_ENDPOINTS, rotatedSecrets, type WebhookEndpointRecord, type WebhookEndpointStatus } from '../domain/webhookEndpoints';

export interface WebhookEndpointStore {
  /** Adds an endpoint, or answers `limit_reached` when the merchant's mode has MAX_WEBHOOK_ENDPOINTS. */
  create(record: WebhookEndpointRecord): Promise<'created' | 'limit_reached'>;
  get(merchantId: string, mode: KeyMode, id: string): Promise<WebhookEndpointRecord | undefined>;
  /** Oldest first (creation order), every endpoint of the merchant's mode (at most MAX_WEBHOOK_ENDPOINTS). */
  list(merchantId: string, mode: KeyMode): Promise<WebhookEndpointRecord[]>;
  /** Every endpoint of the merchant, both modes: what a delivery worker fans an event out to. */
  listForMerchant(merchantId: string): Promise<WebhookEndpointRecord[]>;
  delete(merchantId: string, mode: KeyMode, id: string): Promise<boolean>;
  /** A new current secret generation; the previous keeps signing for `overlapSeconds`. */
  rotateSecret(
    merchantId: string,
    mode: KeyMode,
    id: string,
    now: Date,
    overlapSeconds: number,
  ): Promise<WebhookEndpointRecord | undefined>;
  setStatus(
    merchantId: string,
    mode: KeyMode,
    id: string,
    status: WebhookEndpointStatus,
    reason?: string,
  ): Promise<WebhookEndpointRecord | undefined>;
  /** Merchants that have (or had) an endpoint: the streams a delivery worker reads. */
  merchantsWithEndpoints(): Promise<string[]>;
}

/**
 * Key layout (part of the contract: the delivery worker's queues share the slot):
 * - `tessera:webhooks:{m:<merchantId>}:endpoint:<we_id>`: the record as JSON;
 * - `tessera:webhooks:{m:<merchantId>}:endpoints:<mode>`: ZSET of ids scored by creation time;
 * - `tessera:webhooks:merchants`: SET of merchant ids that ever had an endpoint (a directory, so no
 *   SCAN is needed; a merchant with none left costs one empty read).
 * The `{m:<id>}` hash tag is the one the event store uses, so an endpoint's queue and the merchant's
 * event stream can change in one MULTI on a Redis Cluster.
 */
export class RedisWebhookEndpointStore implements WebhookEndpointStore {
  constructor(private readonly redis: Redis) {}

  static readonly DIRECTORY_KEY = 'tessera:webhooks:merchants';

  static base(merchantId: string): string {
    return `tessera:webhooks:{m:${merchantId}}:`;
  }

  private recordKey(merchantId: string, id: string): string {
    return `${RedisWebhookEndpointStore.base(merchantId)}endpoint:${id}`;
  }

  private indexKey(merchantId: string, mode: KeyMode): string {
    return `${RedisWebhookEndpointStore.base(merchantId)}endpoints:${mode}`;
  }

  async create(record: WebhookEndpointRecord): Promise<'created' | 'limit_reached'> {
    const index = this.indexKey(record.merchantId, record.mode);
    // Counted and added in one script so two concurrent creates cannot both take the last place.
    const added = (await this.redis.eval(
      `if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
       redis.call('SET', KEYS[2], ARGV[2])
       redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
       return 1`,
      2,
      index,
      this.recordKey(record.merchantId, record.id),
      MAX_WEBHOOK_ENDPOINTS,
      JSON.stringify(record),
      Date.parse(record.createdAt),
      record.id,
    )) as number;
    if (added !== 1) return 'limit_reached';
    await this.redis.sadd(RedisWebhookEndpointStore.DIRECTORY_KEY, record.merchantId);
    return 'created';
  }

  async get(merchantId: string, mode: KeyMode, id: string): Promise<WebhookEndpointRecord | undefined> {
    const json = await this.redis.get(this.recordKey(merchantId, id));
    if (!json) return undefined;
    const record = JSON.parse(json) as WebhookEndpointRecord;
    // Another mode's id answers like an unknown one.
    return record.mode === mode ? record : undefined;
  }

  async list(merchantId: string, mode: KeyMode): Promise<WebhookEndpointRecord[]> {
    const ids = await this.redis.zrange(this.indexKey(merchantId, mode), 0, -1);
    return this.records(merchantId, ids);
  }

  async listForMerchant(merchantId: string): Promise<WebhookEndpointRecord[]> {
    const [test, live] = await Promise.all([this.list(merchantId, 'test'), this.list(merchantId, 'live')]);
    return [...test, ...live];
  }

  async delete(merchantId: string, mode: KeyMode, id: string): Promise<boolean> {
    if (!(await this.get(merchantId, mode, id))) return false;
    await this.redis.multi().del(this.recordKey(merchantId, id)).zrem(this.indexKey(merchantId, mode), id).exec();
    return true;
  }

  async rotateSecret(
    merchantId: string,
    mode: KeyMode,
    id: string,
    now: Date,
    overlapSeconds: number,
  ): Promise<WebhookEndpointRecord | undefined> {
    return this.update(merchantId, mode, id, (record) => ({ ...record, secrets: rotatedSecrets(record.secrets, now, overlapSeconds) }));
  }

  async setStatus(
    merchantId: string,
    mode: KeyMode,
    id: string,
    status: WebhookEndpointStatus,
    reason?: string,
  ): Promise<WebhookEndpointRecord | undefined> {
    return this.update(merchantId, mode, id, ({ disabledReason: _dropped, ...record }) => ({
      ...record,
      status,
      ...(status === 'disabled' && reason !== undefined ? { disabledReason: reason } : {}),
    }));
  }

  async merchantsWithEndpoints(): Promise<string[]> {
    return this.redis.smembers(RedisWebhookEndpointStore.DIRECTORY_KEY);
  }

  private async records(merchantId: string, ids: string[]): Promise<WebhookEndpointRecord[]> {
    if (ids.length === 0) return [];
    const jsons = await this.redis.mget(ids.map((id) => this.recordKey(merchantId, id)));
    return jsons.filter((json): json is string => json !== null).map((json) => JSON.parse(json) as WebhookEndpointRecord);
  }

  /**
   * Read, change, then compare-and-set in one script: a rotation and a status change at once both
   * land (WATCH would not do on a connection other requests share).
   */
  private async update(
    merchantId: string,
    mode: KeyMode,
    id: string,
    change: (record: WebhookEndpointRecord) => WebhookEndpointRecord,
  ): Promise<WebhookEndpointRecord | undefined> {
    const key = this.recordKey(merchantId, id);
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const json = await this.redis.get(key);
      const record = json ? (JSON.parse(json) as WebhookEndpointRecord) : undefined;
      if (!json || !record || record.mode !== mode) return undefined;
      const next = change(record);
      const swapped = (await this.redis.eval(
        `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
         redis.call('SET', KEYS[1], ARGV[2])
         return 1`,
        1,
        key,
        json,
        JSON.stringify(next),
      )) as number;
      if (swapped === 1) return next;
    }
    throw new Error('webhook endpoint kept changing; try again');
  }
}
