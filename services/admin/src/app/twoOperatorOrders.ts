import { TesseraError, type ErrorCode } from '@tessera/common';
import type { ApprovalOperator, ApprovalOrder, RedisApprovalOrderStore } from '@tessera/merchant-data';
import type { Caller } from './caller';

/**
 * The two-operator rule shared by crypto-shredding and card exports (issue 29): only platform
 * operators signed in with a second factor; one requests, another approves (never the requester),
 * and the approval puts the order on the vault's queue in the same compare-and-set. The order's
 * kind brings its own error codes and audit entries.
 */

/** Who acts, and whether their session's operator has a second factor (ADR 0011). */
export interface TwoOperatorCaller extends Caller {
  mfaEnabled: boolean;
}

export type OrderStorePort<O extends ApprovalOrder> = Pick<RedisApprovalOrderStore<O>, 'get' | 'list' | 'replace'>;

/** The refusals of one kind of order. */
export interface OrderKind {
  /** What the operator is doing, for the refusals' messages: "Shredding a merchant". */
  act: string;
  notFound: ErrorCode;
  notPending: ErrorCode;
}

/**
 * The operator as an order names them: id and email only. A session's actor is the whole operator
 * record (password hash, second-factor secret), which must never be copied into an order.
 */
export function operatorRef(caller: Caller): ApprovalOperator {
  return { id: caller.actor.id, email: caller.actor.email };
}

/** Only platform operators with a second factor: a merchant's own operator cannot act, nor approve, for it. */
export function checkTwoOperatorCaller(caller: TwoOperatorCaller, kind: OrderKind): void {
  if (caller.merchantId !== null) {
    throw new TesseraError('merchant_forbidden', { message: `Only platform operators may do this: ${kind.act}.` });
  }
  if (!caller.mfaEnabled) {
    throw new TesseraError('second_operator_required', {
      message: `${kind.act} needs an operator with a second factor set up (POST /admin/v1/mfa/enrolment).`,
    });
  }
}

async function pendingOrder<O extends ApprovalOrder>(
  orders: OrderStorePort<O>,
  kind: OrderKind,
  orderId: string,
): Promise<{ order: O; raw: string }> {
  const found = await orders.get(orderId);
  if (found === undefined) throw new TesseraError(kind.notFound);
  if (found.order.status !== 'pending') throw new TesseraError(kind.notPending);
  return found;
}

/** The second operator's approval: the order goes on the vault's queue in the same step. */
export async function approveOrder<O extends ApprovalOrder>(
  orders: OrderStorePort<O>,
  kind: OrderKind,
  caller: TwoOperatorCaller,
  orderId: string,
  now: Date,
): Promise<O> {
  checkTwoOperatorCaller(caller, kind);
  const { order, raw } = await pendingOrder(orders, kind, orderId);
  if (order.requestedBy.id === caller.actor.id) throw new TesseraError('second_operator_required');
  const approved: O = { ...order, status: 'approved', approvedBy: operatorRef(caller), approvedAt: now.toISOString() };
  if (!(await orders.replace(raw, approved, true))) throw new TesseraError(kind.notPending);
  return approved;
}

/** Either operator (or any other platform operator) may cancel an order still waiting for approval. */
export async function cancelOrder<O extends ApprovalOrder>(
  orders: OrderStorePort<O>,
  kind: OrderKind,
  caller: TwoOperatorCaller,
  orderId: string,
): Promise<O> {
  checkTwoOperatorCaller(caller, kind);
  const { order, raw } = await pendingOrder(orders, kind, orderId);
  const cancelled: O = { ...order, status: 'cancelled', cancelledBy: operatorRef(caller) };
  if (!(await orders.replace(raw, cancelled))) throw new TesseraError(kind.notPending);
  return cancelled;
}

/** One order, for platform operators only (an order names operators and a reason). */
export async function getOrder<O extends ApprovalOrder>(
  orders: OrderStorePort<O>,
  kind: OrderKind,
  caller: Caller,
  orderId: string,
): Promise<O> {
  if (caller.merchantId !== null) throw new TesseraError('merchant_forbidden', { message: 'Only platform operators see these orders.' });
  const found = await orders.get(orderId);
  if (found === undefined) throw new TesseraError(kind.notFound);
  return found.order;
}

export async function listOrders<O extends ApprovalOrder>(orders: OrderStorePort<O>, caller: Caller): Promise<O[]> {
  if (caller.merchantId !== null) throw new TesseraError('merchant_forbidden', { message: 'Only platform operators see these orders.' });
  return orders.list(100);
}
