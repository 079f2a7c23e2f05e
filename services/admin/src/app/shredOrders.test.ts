import { TesseraError } from '@tessera/common';
import { RedisAuditLog, RedisShredOrderStore } from '@tessera/merchant-data';
import { useAdminRedis } from '../testing/redis';
import { approveShred, cancelShred, listShredOrders, requestShred, type ShredCaller, type ShredOrderDeps } from './shredOrders';

const db = useAdminRedis();
beforeEach(() => db.redis.flushall());

function setup() {
  const orders = new RedisShredOrderStore(db.redis);
  const audit = new RedisAuditLog(db.redis, 1000);
  const deps: ShredOrderDeps = { orders, audit, now: () => new Date() };
  return { orders, audit, deps };
}

const platform = (n: number, mfaEnabled = true): ShredCaller => ({
  actor: { id: `op_${n}`, email: `op${n}@example.com` },
  ip: '192.0.2.1',
  merchantId: null,
  mfaEnabled,
});

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof TesseraError)) throw new Error(`expected a TesseraError, got ${String(err)}`);
  return err.code;
}

describe('crypto-shredding orders', () => {
  it('take a second platform operator with a second factor: the approval queues the order for the vault, both steps audited', async () => {
    const { orders, audit, deps } = setup();
    const order = await requestShred(deps, platform(1), 'acme', { mode: 'all', reason: 'contract ended' });
    expect(order).toMatchObject({ status: 'pending', merchantId: 'acme', mode: 'all', requestedBy: { id: 'op_1' } });
    expect(await orders.nextQueued()).toBeNull();

    expect(await codeOf(approveShred(deps, platform(1), order.id))).toBe('second_operator_required');
    expect(await codeOf(approveShred(deps, platform(2, false), order.id))).toBe('second_operator_required');
    expect(await orders.nextQueued()).toBeNull();

    const approved = await approveShred(deps, platform(2), order.id);
    expect(approved).toMatchObject({ status: 'approved', approvedBy: { id: 'op_2' } });
    expect(await orders.nextQueued()).toBe(order.id);
    // Approved once: a second approval (or a cancel) is refused.
    expect(await codeOf(approveShred(deps, platform(3), order.id))).toBe('shred_order_not_pending');
    expect(await codeOf(cancelShred(deps, platform(3), order.id))).toBe('shred_order_not_pending');

    const entries = await audit.list({ merchantId: 'acme', limit: 10 });
    expect(entries.map((e) => [e.action, e.actor])).toEqual([
      ['merchant.shred_approved', 'op2@example.com'],
      ['merchant.shred_requested', 'op1@example.com'],
    ]);
    expect((await listShredOrders(deps, platform(3))).map((o) => o.status)).toEqual(['approved']);
  });

  it("name operators by id and email only, never copying the session's operator record", async () => {
    const { orders, deps } = setup();
    const withSecrets = { ...platform(1), actor: { ...platform(1).actor, passwordHash: 'scrypt$secret', mfa: { secret: 'sealed' } } };
    const order = await requestShred(deps, withSecrets, 'acme', { mode: 'test', reason: 'x' });
    const secondWithSecrets = { ...platform(2), actor: { ...platform(2).actor, passwordHash: 'h2' } };
    const approved = await approveShred(deps, secondWithSecrets, order.id);
    expect(approved.requestedBy).toEqual({ id: 'op_1', email: 'op1@example.com' });
    expect(approved.approvedBy).toEqual({ id: 'op_2', email: 'op2@example.com' });
    expect(JSON.stringify(await orders.list(10))).not.toMatch(/secret|passwordHash|h2/);
  });

  it('are refused to operators of one merchant and to operators without a second factor', async () => {
    const { deps } = setup();
    const merchantOperator: ShredCaller = { ...platform(1), merchantId: 'acme' };
    expect(await codeOf(requestShred(deps, merchantOperator, 'acme', { mode: 'test', reason: 'x' }))).toBe('merchant_forbidden');
    expect(await codeOf(requestShred(deps, platform(1, false), 'acme', { mode: 'test', reason: 'x' }))).toBe('second_operator_required');
    expect(await codeOf(listShredOrders(deps, merchantOperator))).toBe('merchant_forbidden');
  });

  it('can be cancelled while pending, and then never approved', async () => {
    const { orders, deps } = setup();
    const order = await requestShred(deps, platform(1), 'acme', { mode: 'live', reason: 'mistake' });
    expect((await cancelShred(deps, platform(1), order.id)).status).toBe('cancelled');
    expect(await codeOf(approveShred(deps, platform(2), order.id))).toBe('shred_order_not_pending');
    expect(await orders.nextQueued()).toBeNull();
    expect(await codeOf(approveShred(deps, platform(2), 'shred_AAAAAAAAAAAAAAAA'))).toBe('shred_order_not_found');
  });
});
