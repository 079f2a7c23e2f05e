import type { Redis } from 'ioredis';
import { z } from 'zod';
import { defineScripts } from '@tessera/common/redis';

/**
 * Orders that take two operators (issue 29: crypto-shredding, card exports): one operator requests,
 * another approves, both in the admin service; the vault, which alone holds keys and card data,
 * carries approved orders out and writes their progress back. The admin service never talks to the
 * vault (docs/adr/0014): an order record and a queue in Redis are the only channel, and they carry
 * ids, settings and operator names, never key material or card data.
 *
 * One store per kind of order, each under its own prefix whose keys share one hash tag, so the
 * approve script is single-slot in a Cluster.
 */
export const approvalOperatorSchema = z.strictObject({ id: z.string(), email: z.string() });
export type ApprovalOperator = z.output<typeof approvalOperatorSchema>;

/** What every kind of order has: who asked, who approved or cancelled, and its state (`pending` first). */
export interface ApprovalOrder {
  id: string;
  merchantId: string;
  requestedBy: ApprovalOperator;
  requestedAt: string;
  status: string;
  approvedBy?: ApprovalOperator | undefined;
  approvedAt?: string | undefined;
  cancelledBy?: ApprovalOperator | undefined;
}

/** Compare-and-set of an order; with ARGV[3] set, the id also joins the vault's queue in the same step. */
const REPLACE_ORDER = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2])
if ARGV[3] ~= '' then
  redis.call('LPUSH', KEYS[2], ARGV[3])
end
return 1`;

interface ApprovalScripts {
  tesseraReplaceApprovalOrder(orderKey: string, queueKey: string, expected: string, next: string, queueId: string): Promise<number>;
}

export interface ApprovalOrderStoreOptions<O extends ApprovalOrder> {
  /** Key prefix, hash tag included: `tessera:shred:{tessera-shred}`. */
  prefix: string;
  /** Order ids: this prefix and 16 base64url characters. */
  idPattern: RegExp;
  schema: z.ZodType<O>;
}

export class RedisApprovalOrderStore<O extends ApprovalOrder> {
  private readonly scripts: ApprovalScripts;

  constructor(
    protected readonly redis: Redis,
    private readonly options: ApprovalOrderStoreOptions<O>,
  ) {
    this.scripts = defineScripts<ApprovalScripts>(redis, { tesseraReplaceApprovalOrder: { numberOfKeys: 2, lua: REPLACE_ORDER } });
  }

  private orderKey(id: string): string {
    return `${this.options.prefix}:order:${id}`;
  }

  private get queueKey(): string {
    return `${this.options.prefix}:queue`;
  }

  private get indexKey(): string {
    return `${this.options.prefix}:index`;
  }

  parse(raw: string): O | undefined {
    try {
      const parsed = this.options.schema.safeParse(JSON.parse(raw));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  /** Stores a new order (its status `pending`) and indexes it by time. */
  async insert(order: O, now: Date): Promise<O> {
    await this.redis.multi().set(this.orderKey(order.id), JSON.stringify(order)).zadd(this.indexKey, now.getTime(), order.id).exec();
    return order;
  }

  async get(id: string): Promise<{ order: O; raw: string } | undefined> {
    if (!this.options.idPattern.test(id)) return undefined;
    const raw = await this.redis.get(this.orderKey(id));
    const order = raw === null ? undefined : this.parse(raw);
    return order === undefined || raw === null ? undefined : { order, raw };
  }

  /** Newest first. */
  async list(limit: number): Promise<O[]> {
    const ids = await this.redis.zrevrange(this.indexKey, 0, limit - 1);
    const orders = await Promise.all(ids.map((id) => this.get(id)));
    return orders.flatMap((found) => (found === undefined ? [] : [found.order]));
  }

  /** Replaces the order only if it is still `expected`; `enqueue` puts it on the vault's queue in the same step. */
  async replace(expected: string, next: O, enqueue = false): Promise<boolean> {
    const replaced = await this.scripts.tesseraReplaceApprovalOrder(
      this.orderKey(next.id),
      this.queueKey,
      expected,
      JSON.stringify(next),
      enqueue ? next.id : '',
    );
    return replaced === 1;
  }

  /** The oldest approved order not yet finished (the vault's next job), without taking it off the queue. */
  async nextQueued(): Promise<string | null> {
    const ids = await this.redis.lrange(this.queueKey, -1, -1);
    return ids[0] ?? null;
  }

  /** Takes a finished (or unreadable) order off the queue. */
  async dequeue(id: string): Promise<void> {
    await this.redis.lrem(this.queueKey, 0, id);
  }
}
