import type { Redis } from 'ioredis';
import { z } from 'zod';
import { defineScripts } from '@tessera/common/redis';
import { randomId } from '../domain/randomIds';

/**
 * Crypto-shredding orders (issue 29, docs/adr/0014): one operator requests the shredding of a
 * merchant (or one mode of it), another approves it, both in the admin service; the vault, which
 * alone holds keys, carries approved orders out (it destroys the merchant's keys, then sweeps its
 * records) and writes the outcome back. The admin service never talks to the vault: this queue in
 * Redis is the only channel, and it carries ids and operator names, never key material.
 *
 * All keys share the {tessera-shred} hash tag, so the approve script is single-slot in a Cluster;
 * both the admin and the vault Redis users have `~tessera:shred:*` (deploy/redis/users.acl).
 */
export const SHRED_MODES = ['test', 'live', 'all'] as const;
export type ShredMode = (typeof SHRED_MODES)[number];

const operatorSchema = z.strictObject({ id: z.string(), email: z.string() });
const shredOrderSchema = z.strictObject({
  id: z.string(),
  merchantId: z.string(),
  mode: z.enum(SHRED_MODES),
  reason: z.string(),
  requestedBy: operatorSchema,
  requestedAt: z.string(),
  /**
   * pending: waits for a second operator; approved: queued for the vault; shredding: the key is
   * destroyed, the sweep runs (keyDestroyedAt set); done: swept; cancelled: refused by an operator.
   */
  status: z.enum(['pending', 'approved', 'shredding', 'done', 'cancelled']),
  approvedBy: operatorSchema.optional(),
  approvedAt: z.string().optional(),
  cancelledBy: operatorSchema.optional(),
  keyDestroyedAt: z.string().optional(),
  completedAt: z.string().optional(),
  tokensSwept: z.number().int().min(0).optional(),
});
export type ShredOrder = z.output<typeof shredOrderSchema>;

export const SHRED_ORDER_ID_PATTERN = /^shred_[A-Za-z0-9_-]{16}$/;

const orderKey = (id: string): string => `tessera:shred:{tessera-shred}:order:${id}`;
const QUEUE_KEY = 'tessera:shred:{tessera-shred}:queue';
const INDEX_KEY = 'tessera:shred:{tessera-shred}:index';

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

interface ShredScripts {
  tesseraReplaceShredOrder(orderKey: string, queueKey: string, expected: string, next: string, queueId: string): Promise<number>;
}

export function parseShredOrder(raw: string): ShredOrder | undefined {
  try {
    const parsed = shredOrderSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export class RedisShredOrderStore {
  private readonly scripts: ShredScripts;

  constructor(private readonly redis: Redis) {
    this.scripts = defineScripts<ShredScripts>(redis, { tesseraReplaceShredOrder: { numberOfKeys: 2, lua: REPLACE_ORDER } });
  }

  async create(input: Pick<ShredOrder, 'merchantId' | 'mode' | 'reason' | 'requestedBy'>, now: Date): Promise<ShredOrder> {
    const order: ShredOrder = { id: randomId('shred_'), ...input, requestedAt: now.toISOString(), status: 'pending' };
    await this.redis.multi().set(orderKey(order.id), JSON.stringify(order)).zadd(INDEX_KEY, now.getTime(), order.id).exec();
    return order;
  }

  async get(id: string): Promise<{ order: ShredOrder; raw: string } | undefined> {
    if (!SHRED_ORDER_ID_PATTERN.test(id)) return undefined;
    const raw = await this.redis.get(orderKey(id));
    const order = raw === null ? undefined : parseShredOrder(raw);
    return order === undefined || raw === null ? undefined : { order, raw };
  }

  /** Newest first. */
  async list(limit: number): Promise<ShredOrder[]> {
    const ids = await this.redis.zrevrange(INDEX_KEY, 0, limit - 1);
    const orders = await Promise.all(ids.map((id) => this.get(id)));
    return orders.flatMap((found) => (found === undefined ? [] : [found.order]));
  }

  /** Replaces the order only if it is still `expected`; `enqueue` puts it on the vault's queue in the same step. */
  async replace(expected: string, next: ShredOrder, enqueue = false): Promise<boolean> {
    const replaced = await this.scripts.tesseraReplaceShredOrder(
      orderKey(next.id),
      QUEUE_KEY,
      expected,
      JSON.stringify(next),
      enqueue ? next.id : '',
    );
    return replaced === 1;
  }

  /** The oldest approved order not yet finished (the vault's next job), without taking it off the queue. */
  async nextQueued(): Promise<string | null> {
    const ids = await this.redis.lrange(QUEUE_KEY, -1, -1);
    return ids[0] ?? null;
  }

  /** Takes a finished (or unreadable) order off the queue. */
  async dequeue(id: string): Promise<void> {
    await this.redis.lrem(QUEUE_KEY, 0, id);
  }
}
