import { z } from 'zod';
import { TesseraError } from '@tessera/common';
import { SHRED_MODES, type AuditLog, type RedisShredOrderStore, type ShredOrder } from '@tessera/merchant-data';
import { auditAs, type Caller } from './caller';

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
export interface ShredCaller extends Caller {
  mfaEnabled: boolean;
}

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

/**
 * The operator as an order names them: id and email only. A session's actor is the whole operator
 * record (password hash, second-factor secret), which must never be copied into an order.
 */
function operatorRef(caller: ShredCaller): { id: string; email: string } {
  return { id: caller.actor.id, email: caller.actor.email };
}

function checkShredder(caller: ShredCaller): void {
  // Only platform operators: a merchant's own operator cannot destroy it, nor approve its destruction.
  if (caller.merchantId !== null) {
    throw new TesseraError('merchant_forbidden', { message: 'Only platform operators may shred a merchant.' });
  }
  if (!caller.mfaEnabled) {
    throw new TesseraError('second_operator_required', {
      message: 'Shredding a merchant needs an operator with a second factor set up (POST /admin/v1/mfa/enrolment).',
    });
  }
}

export async function requestShred(
  deps: ShredOrderDeps,
  caller: ShredCaller,
  merchantId: string,
  input: ShredRequestInput,
): Promise<ShredOrder> {
  checkShredder(caller);
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

async function pendingOrder(deps: ShredOrderDeps, orderId: string): Promise<{ order: ShredOrder; raw: string }> {
  const found = await deps.orders.get(orderId);
  if (found === undefined) throw new TesseraError('shred_order_not_found');
  if (found.order.status !== 'pending') throw new TesseraError('shred_order_not_pending');
  return found;
}

/** The second operator's approval: the order goes on the vault's queue in the same step. */
export async function approveShred(deps: ShredOrderDeps, caller: ShredCaller, orderId: string): Promise<ShredOrder> {
  checkShredder(caller);
  const { order, raw } = await pendingOrder(deps, orderId);
  if (order.requestedBy.id === caller.actor.id) throw new TesseraError('second_operator_required');
  const approved: ShredOrder = { ...order, status: 'approved', approvedBy: operatorRef(caller), approvedAt: deps.now().toISOString() };
  if (!(await deps.orders.replace(raw, approved, true))) throw new TesseraError('shred_order_not_pending');
  await auditAs(deps, caller, {
    action: 'merchant.shred_approved',
    merchantId: order.merchantId,
    details: { shredOrderId: order.id, mode: order.mode, requestedBy: order.requestedBy.email },
  });
  return approved;
}

/** Either operator (or any other platform operator) may cancel an order still waiting for approval. */
export async function cancelShred(deps: ShredOrderDeps, caller: ShredCaller, orderId: string): Promise<ShredOrder> {
  checkShredder(caller);
  const { order, raw } = await pendingOrder(deps, orderId);
  const cancelled: ShredOrder = { ...order, status: 'cancelled', cancelledBy: operatorRef(caller) };
  if (!(await deps.orders.replace(raw, cancelled))) throw new TesseraError('shred_order_not_pending');
  await auditAs(deps, caller, { action: 'merchant.shred_cancelled', merchantId: order.merchantId, details: { shredOrderId: order.id } });
  return cancelled;
}

export async function getShredOrder(deps: ShredOrderDeps, caller: ShredCaller, orderId: string): Promise<ShredOrder> {
  if (caller.merchantId !== null) throw new TesseraError('merchant_forbidden', { message: 'Only platform operators see shred orders.' });
  const found = await deps.orders.get(orderId);
  if (found === undefined) throw new TesseraError('shred_order_not_found');
  return found.order;
}

export async function listShredOrders(deps: ShredOrderDeps, caller: ShredCaller): Promise<ShredOrder[]> {
  if (caller.merchantId !== null) throw new TesseraError('merchant_forbidden', { message: 'Only platform operators see shred orders.' });
  return deps.orders.list(100);
}
