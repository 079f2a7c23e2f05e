import type { Redis } from 'ioredis';
import { z } from 'zod';
import { randomId } from '../domain/randomIds';
import { approvalOperatorSchema, RedisApprovalOrderStore } from './approvalOrderStore';

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

const shredOrderSchema = z.strictObject({
  id: z.string(),
  merchantId: z.string(),
  mode: z.enum(SHRED_MODES),
  reason: z.string(),
  requestedBy: approvalOperatorSchema,
  requestedAt: z.string(),
  /**
   * pending: waits for a second operator; approved: queued for the vault; shredding: the key is
   * destroyed, the sweep runs (keyDestroyedAt set); done: swept; cancelled: refused by an operator.
   */
  status: z.enum(['pending', 'approved', 'shredding', 'done', 'cancelled']),
  approvedBy: approvalOperatorSchema.optional(),
  approvedAt: z.string().optional(),
  cancelledBy: approvalOperatorSchema.optional(),
  keyDestroyedAt: z.string().optional(),
  completedAt: z.string().optional(),
  tokensSwept: z.number().int().min(0).optional(),
});
export type ShredOrder = z.output<typeof shredOrderSchema>;

export const SHRED_ORDER_ID_PATTERN = /^shred_[A-Za-z0-9_-]{16}$/;

export function parseShredOrder(raw: string): ShredOrder | undefined {
  try {
    const parsed = shredOrderSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export class RedisShredOrderStore extends RedisApprovalOrderStore<ShredOrder> {
  constructor(redis: Redis) {
    super(redis, { prefix: 'tessera:shred:{tessera-shred}', idPattern: SHRED_ORDER_ID_PATTERN, schema: shredOrderSchema });
  }

  async create(input: Pick<ShredOrder, 'merchantId' | 'mode' | 'reason' | 'requestedBy'>, now: Date): Promise<ShredOrder> {
    return this.insert({ id: randomId('shred_'), ...input, requestedAt: now.toISOString(), status: 'pending' }, now);
  }
}
