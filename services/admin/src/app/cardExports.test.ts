import type * as OpenPgp from 'openpgp' with { 'resolution-mode': 'import' };
import { TesseraError } from '@tessera/common';
import { RedisAuditLog, RedisExportFileStore, RedisExportOrderStore, RedisExportRecipientStore } from '@tessera/merchant-data';
import { useAdminRedis } from '../testing/redis';
import {
  approveExport,
  cancelExport,
  exportRequestSchema,
  openExportFile,
  registerRecipient,
  removeRecipient,
  requestExport,
  type CardExportDeps,
} from './cardExports';
import type { TwoOperatorCaller } from './twoOperatorOrders';

const openpgp = require('openpgp') as typeof OpenPgp;

jest.setTimeout(60_000);

const db = useAdminRedis();
beforeEach(() => db.redis.flushall());

let recipientKey: { publicKey: string; privateKey: string; fingerprint: string };
beforeAll(async () => {
  const key = await openpgp.generateKey({ type: 'ecc', curve: 'curve25519Legacy', userIDs: [{ name: 'next vault' }] });
  recipientKey = { ...key, fingerprint: (await openpgp.readKey({ armoredKey: key.publicKey })).getFingerprint().toUpperCase() };
});

// After the test keys were made: a key is not valid before its creation time.
function setup(now = new Date('2030-06-01T12:00:00Z')) {
  const orders = new RedisExportOrderStore(db.redis);
  const files = new RedisExportFileStore(db.redis);
  const audit = new RedisAuditLog(db.redis, 1000);
  const deps: CardExportDeps = {
    orders,
    recipients: new RedisExportRecipientStore(db.redis),
    files,
    audit,
    maxPerMerchantPerDay: 2,
    now: () => now,
  };
  return { orders, files, audit, deps };
}

const platform = (n: number, mfaEnabled = true): TwoOperatorCaller => ({
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

const request = (recipient: string) => exportRequestSchema.parse({ mode: 'live', format: 'csv', recipient, reason: 'leaving' });

describe('export recipients', () => {
  it('are registered with the fingerprint the key has, once, and only public keys that can encrypt', async () => {
    const { deps, audit } = setup();
    const registered = await registerRecipient(deps, platform(1), 'acme', { label: 'Next vault', publicKey: recipientKey.publicKey });
    expect(registered).toMatchObject({ fingerprint: recipientKey.fingerprint, label: 'Next vault', algorithm: 'ecdh-curve25519Legacy' });
    expect(await codeOf(registerRecipient(deps, platform(2), 'acme', { label: 'again', publicKey: recipientKey.publicKey }))).toBe(
      'export_recipient_exists',
    );
    for (const publicKey of [
      recipientKey.privateKey,
      'not a key',
      '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n-----END PGP PUBLIC KEY BLOCK-----',
    ]) {
      expect(await codeOf(registerRecipient(deps, platform(1), 'acme', { label: 'x', publicKey }))).toBe('export_recipient_key_invalid');
    }
    await removeRecipient(deps, platform(2), 'acme', recipientKey.fingerprint);
    expect(await codeOf(removeRecipient(deps, platform(2), 'acme', recipientKey.fingerprint))).toBe('export_recipient_not_found');
    expect((await audit.list({ merchantId: 'acme', limit: 10 })).map((e) => e.action)).toEqual([
      'merchant.export_recipient_removed',
      'merchant.export_recipient_registered',
    ]);
  });

  it('refuse RSA keys under 3072 bits', async () => {
    const { deps } = setup();
    const weak = await openpgp.generateKey({ type: 'rsa', rsaBits: 2048, userIDs: [{ name: 'weak' }] });
    expect(await codeOf(registerRecipient(deps, platform(1), 'acme', { label: 'weak', publicKey: weak.publicKey }))).toBe(
      'export_recipient_key_invalid',
    );
  });

  it("are a platform operator's business, with a second factor", async () => {
    const { deps } = setup();
    const input = { label: 'x', publicKey: recipientKey.publicKey };
    expect(await codeOf(registerRecipient(deps, { ...platform(1), merchantId: 'acme' }, 'acme', input))).toBe('merchant_forbidden');
    expect(await codeOf(registerRecipient(deps, platform(1, false), 'acme', input))).toBe('second_operator_required');
  });
});

describe('export orders', () => {
  it('go only to a registered recipient, take a second operator, and are queued by the approval', async () => {
    const { deps, orders } = setup();
    expect(await codeOf(requestExport(deps, platform(1), 'acme', request(recipientKey.fingerprint)))).toBe(
      'export_recipient_not_registered',
    );
    await registerRecipient(deps, platform(1), 'acme', { label: 'Next vault', publicKey: recipientKey.publicKey });
    // Registered for acme, not for globex.
    expect(await codeOf(requestExport(deps, platform(1), 'globex', request(recipientKey.fingerprint)))).toBe(
      'export_recipient_not_registered',
    );
    const order = await requestExport(deps, platform(1), 'acme', request(recipientKey.fingerprint.toLowerCase()));
    expect(order).toMatchObject({ status: 'pending', recipient: { fingerprint: recipientKey.fingerprint, label: 'Next vault' } });
    expect(await codeOf(approveExport(deps, platform(1), order.id))).toBe('second_operator_required');
    expect(await codeOf(approveExport(deps, platform(2, false), order.id))).toBe('second_operator_required');
    expect(await orders.nextQueued()).toBeNull();
    expect((await approveExport(deps, platform(2), order.id)).status).toBe('approved');
    expect(await orders.nextQueued()).toBe(order.id);
    expect(await codeOf(cancelExport(deps, platform(3), order.id))).toBe('export_order_not_pending');
  });

  it('are limited per merchant and UTC day, cancelled ones included, with the seconds until midnight', async () => {
    const { deps } = setup(new Date('2030-06-01T23:59:00Z'));
    await registerRecipient(deps, platform(1), 'acme', { label: 'Next vault', publicKey: recipientKey.publicKey });
    const firstOrder = await requestExport(deps, platform(1), 'acme', request(recipientKey.fingerprint));
    await cancelExport(deps, platform(1), firstOrder.id);
    await requestExport(deps, platform(1), 'acme', request(recipientKey.fingerprint));
    const refused = await requestExport(deps, platform(1), 'acme', request(recipientKey.fingerprint)).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'export_rate_limited', retryAfterSeconds: 60 });
  });

  it('hand out their file only when done and complete, and audit each download', async () => {
    const { deps, orders, files, audit } = setup();
    await registerRecipient(deps, platform(1), 'acme', { label: 'Next vault', publicKey: recipientKey.publicKey });
    const order = await requestExport(deps, platform(1), 'acme', request(recipientKey.fingerprint));
    await approveExport(deps, platform(2), order.id);
    expect(await codeOf(openExportFile(deps, platform(2), order.id))).toBe('export_file_unavailable');
    await files.append(order.id, Buffer.from('chunk-1'), 60_000);
    await files.append(order.id, Buffer.from('chunk-2'), 60_000);
    const found = await orders.get(order.id);
    await orders.replace(found!.raw, { ...found!.order, status: 'done', chunks: 2, bytes: 14 });
    const { chunks } = await openExportFile(deps, platform(2), order.id);
    const read: Buffer[] = [];
    for await (const chunk of chunks) read.push(chunk);
    expect(Buffer.concat(read).toString()).toBe('chunk-1chunk-2');
    expect((await audit.list({ merchantId: 'acme', limit: 1 }))[0]).toMatchObject({
      action: 'merchant.export_downloaded',
      actor: 'op2@example.com',
    });
    // A file that lost a chunk (expired) is not handed out cut short.
    await db.redis.rpop(`tessera:export-file:{${order.id}}`);
    expect(await codeOf(openExportFile(deps, platform(2), order.id))).toBe('export_file_unavailable');
  });
});
