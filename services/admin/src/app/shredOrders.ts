import { z } from 'zod';
import { SHRED_MODES, type AuditLog, type RedisShredOrderStore, type ShredOrder } from '@tessera/merchant-data';
import { auditAs } from './caller';
import {
  approveOrder,
  cancelOrder,
  checkTwoOperatorCaller,
  getOrder,
  listOrders,
  operatorRef,
  type OrderKind,
  type TwoOperatorCaller,
} from './twoOperatorOrders';

/**
 * Crypto-shredding a merchant (issue 29, docs/adr/0014): irreversible, so it takes two platform
 * operators, each signed in with a second factor: one requests, another approves. The approval
 * puts the order on the queue the vault carries out (the vault destroys the merchant's keys, then
 * sweeps its records); this service never talks to the vault and never sees a key. Both steps are
 * audited; the vault records the `merchant.shredded` event once it is done.
 */
export interface ShredOrderDeps {
  orders: Pick<RedisShredOrderStore, 'create' | 'get' | 'list' | 'replace'>;
  audit: Pick<AuditLog, 'append'>;
  now: () => Date;
}

/** Who acts, and whether their session's operator has a second factor (ADR 0011). */
export type ShredCaller = TwoOperatorCaller;

const SHRED: OrderKind = { act: 'Shredding a merchant', notFound: 'shred_order_not_found', notPending: 'shred_order_not_pending' };

export const shredRequestSchema = z.strictObject({
  mode: z.enum(SHRED_MODES, { error: '"mode" must be "test", "live" or "all".' }).meta({
    description: 'Which of the merchant\'s modes to shred: "all" for the whole merchant.',
  }),
  reason: z
    .string({ error: '"reason" must be a string of 1-500 characters.' })
    .trim()
    .min(1, { error: '"reason" must be a string of 1-500 characters.' })
    .max(500, { error: '"reason" must be a string of 1-500 characters.' }),
});
export type ShredRequestInput = z.output<typeof shredRequestSchema>;

export const shredOrderPathSchema = z.object({
  orderId: z.string({ error: '"orderId" must be a string.' }).regex(/^shred_[A-Za-z0-9_-]{16}$/, { error: 'No such shred order.' }),
});

export async function requestShred(
  deps: ShredOrderDeps,
  caller: ShredCaller,
  merchantId: string,
  input: ShredRequestInput,
): Promise<ShredOrder> {
  checkTwoOperatorCaller(caller, SHRED);
  const order = await deps.orders.create(
    { merchantId, mode: input.mode, reason: input.reason, requestedBy: operatorRef(caller) },
    deps.now(),
  );
  await auditAs(deps, caller, {
    action: 'merchant.shred_requested',
    merchantId,
    details: { shredOrderId: order.id, mode: order.mode, reason: order.reason },
  });
  return order;
}

/** The second operator's approval: the order goes on the vault's queue in the same step. */
export async function approveShred(deps: ShredOrderDeps, caller: ShredCaller, orderId: string): Promise<ShredOrder> {
  const approved = await approveOrder(deps.orders, SHRED, caller, orderId, deps.now());
  await auditAs(deps, caller, {
    action: 'merchant.shred_approved',
    merchantId: approved.merchantId,
    details: { shredOrderId: approved.id, mode: approved.mode, requestedBy: approved.requestedBy.email },
  });
  return approved;
}

/** Either operator (or any other platform operator) may cancel an order still waiting for approval. */
export async function cancelShred(deps: ShredOrderDeps, caller: ShredCaller, orderId: string): Promise<ShredOrder> {
  const cancelled = await cancelOrder(deps.orders, SHRED, caller, orderId);
  await auditAs(deps, caller, {
    action: 'merchant.shred_cancelled',
    merchantId: cancelled.merchantId,
    details: { shredOrderId: cancelled.id },
  });
  return cancelled;
}

export async function getShredOrder(deps: ShredOrderDeps, caller: ShredCaller, orderId: string): Promise<ShredOrder> {
  return getOrder(deps.orders, SHRED, caller, orderId);
}

export async function listShredOrders(deps: ShredOrderDeps, caller: ShredCaller): Promise<ShredOrder[]> {
  return listOrders(deps.orders, caller);
}
