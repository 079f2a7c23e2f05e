import { Redis } from 'ioredis';
import { RedisExportFileStore, RedisExportOrderStore, RedisExportRecipientStore, type ExportOrder } from '@tessera/merchant-data';
import { useRedisServer } from '@tessera/test-support';
import { createRecordParser } from '../../domain/importFormats';
import { openpgp } from '../../domain/openpgp';
import type { RedisCardStore } from '../../store/redisCardStore';
import { aVault, anEmptyRedisCardStore, keyRingEntry, keyRingOf } from '../../test/builders';
import type { Vault } from '../vault';
import { runExportOrders, type ExportDeps } from './runExports';

jest.setTimeout(60_000);

const db = useRedisServer((url) => new Redis(url));
const ring = keyRingOf(keyRingEntry('k1'));
const YEAR = new Date().getUTCFullYear() + 2;
const FIRST = { id: 'op_1', email: 'op1@example.com' };
const SECOND = { id: 'op_2', email: 'op2@example.com' };

let cards: RedisCardStore;
let vault: Vault;
let orders: RedisExportOrderStore;
let recipients: RedisExportRecipientStore;
let files: RedisExportFileStore;
let recipientKey: { publicKey: string; privateKey: string; fingerprint: string };
const logged: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  const key = await openpgp.generateKey({ type: 'ecc', curve: 'curve25519Legacy', userIDs: [{ name: 'recipient' }] });
  recipientKey = { ...key, fingerprint: (await openpgp.readKey({ armoredKey: key.publicKey })).getFingerprint().toUpperCase() };
});

beforeEach(async () => {
  cards = await anEmptyRedisCardStore(db);
  vault = aVault({ store: cards, keyRing: ring });
  orders = new RedisExportOrderStore(db.client);
  recipients = new RedisExportRecipientStore(db.client);
  files = new RedisExportFileStore(db.client);
  logged.length = 0;
  await recipients.register('shop', {
    fingerprint: recipientKey.fingerprint,
    label: 'next vault',
    publicKey: recipientKey.publicKey,
    algorithm: 'ecdh-curve25519Legacy',
    registeredBy: FIRST,
    registeredAt: new Date().toISOString(),
  });
});

afterEach(async () => {
  await cards.close();
});

function deps(): ExportDeps {
  const log = (fields: Record<string, unknown>) => void logged.push(fields);
  return {
    orders,
    recipients,
    files,
    cards: vault,
    store: cards,
    fileTtlMs: 60_000,
    now: () => new Date(),
    logger: { info: log, warn: log, error: log } as unknown as ExportDeps['logger'],
    scanBatch: 2,
  };
}

async function tokenize(merchantId: string, mode: 'live' | 'test', number: string, holderName = 'Ada'): Promise<string> {
  const view = await vault.tokenize({ merchantId, mode, number, expiryMonth: 4, expiryYear: YEAR, holderName, cvv: '123' });
  return view.token;
}

/** An order as the admin service leaves it once approved, on the queue. */
async function approvedOrder(fields: Partial<ExportOrder> = {}): Promise<ExportOrder> {
  const order = await orders.create(
    {
      merchantId: 'shop',
      mode: 'live',
      format: 'csv',
      recipient: { fingerprint: recipientKey.fingerprint, label: 'next vault' },
      reason: 'leaving',
      requestedBy: FIRST,
    },
    new Date(),
  );
  const approved: ExportOrder = { ...order, status: 'approved', approvedBy: SECOND, approvedAt: new Date().toISOString(), ...fields };
  await orders.replace(JSON.stringify(order), approved, true);
  return approved;
}

async function fileOf(orderId: string): Promise<string> {
  const count = await db.client.llen(`tessera:export-file:{${orderId}}`);
  const chunks: Buffer[] = [];
  for (let i = 0; i < count; i++) chunks.push((await files.chunk(orderId, i)) as Buffer);
  const { data } = await openpgp.decrypt({
    message: await openpgp.readMessage({ binaryMessage: Buffer.concat(chunks) }),
    decryptionKeys: await openpgp.readPrivateKey({ armoredKey: recipientKey.privateKey }),
    format: 'utf8',
  });
  return data as string;
}

const LIVE = ['4111111111111111', '5105105105105100', '371449635398431'];

describe('runExportOrders', () => {
  it("writes every card of the merchant and mode, and nobody else's, to the recipient; no card data in its logs", async () => {
    const mine = [];
    for (const number of LIVE) mine.push(await tokenize('shop', 'live', number));
    await tokenize('shop', 'test', '4242424242424242');
    await tokenize('other', 'live', '4000056655665556');
    const order = await approvedOrder();

    expect(await runExportOrders(deps())).toBe(1);
    const done = (await orders.get(order.id))?.order;
    expect(done).toMatchObject({ status: 'done', exported: 3, missing: 0, chunks: 1 });
    expect(await orders.nextQueued()).toBeNull();
    const parser = createRecordParser('csv');
    const read = (await fileOf(order.id))
      .split('\n')
      .map((line) => parser.parse(line))
      .flatMap((parsed) => (parsed?.ok === true ? [parsed.card] : []));
    expect(read.map((c) => [c.oldId, c.number, c.expiryMonth, c.expiryYear, c.holderName]).sort()).toEqual(
      mine.map((token, i) => [token, LIVE[i], 4, YEAR, 'Ada']).sort(),
    );
    expect(LIVE.filter((number) => JSON.stringify(logged).includes(number))).toEqual([]);
  });

  it('counts listed tokens that are not the merchant’s (or not of the mode) as missing', async () => {
    const mine = await tokenize('shop', 'live', LIVE[0] as string);
    const test = await tokenize('shop', 'test', '4242424242424242');
    const others = await tokenize('other', 'live', LIVE[1] as string);
    const order = await approvedOrder({ tokens: [mine, test, others, 'tok.nothing'] });
    await runExportOrders(deps());
    expect((await orders.get(order.id))?.order).toMatchObject({ status: 'done', exported: 1, missing: 3 });
    expect(await fileOf(order.id)).toContain(mine);
  });

  it('writes a card once when the SCAN returns its record twice (Redis resizing mid-walk), or the list names it twice', async () => {
    const view = await vault.tokenize({
      merchantId: 'shop',
      mode: 'live',
      number: LIVE[0] as string,
      expiryMonth: 4,
      expiryYear: YEAR,
      holderName: 'Ada',
      cvv: '123',
      aliasFormats: ['uuid'],
    });
    const second = await tokenize('shop', 'live', LIVE[1] as string);
    // Every step of the walk answers the tokens of the step before it again, as SCAN may.
    const seen: string[] = [];
    const repeating: ExportDeps['store'] = {
      readRaw: (kind, token) => cards.readRaw(kind, token),
      scanTokens: async (cursor, count) => {
        const step = await cards.scanTokens(cursor, count);
        const tokens = [...seen, ...step.tokens];
        seen.push(...step.tokens);
        return { ...step, tokens };
      },
    };
    const all = await approvedOrder();
    await runExportOrders({ ...deps(), store: repeating });
    expect((await orders.get(all.id))?.order).toMatchObject({ status: 'done', exported: 2 });
    const lines = (await fileOf(all.id)).split('\n');
    expect(lines.filter((line) => line.includes(view.token))).toHaveLength(1);
    expect(lines.filter((line) => line.includes(second))).toHaveLength(1);
    expect(await db.client.exists(`tessera:export-file:{${all.id}}:written`)).toBe(0);

    const listed = await approvedOrder({ tokens: [view.token, view.aliases!.uuid!, view.token] });
    await runExportOrders(deps());
    expect((await orders.get(listed.id))?.order).toMatchObject({ status: 'done', exported: 1, missing: 0 });
  });

  it('refuses an order whose recipient was removed since, or that the requester approved', async () => {
    await tokenize('shop', 'live', LIVE[0] as string);
    const selfApproved = await approvedOrder({ approvedBy: FIRST });
    await runExportOrders(deps());
    expect((await orders.get(selfApproved.id))?.order).toMatchObject({ status: 'failed', failure: 'order_not_approved' });

    const order = await approvedOrder();
    await recipients.remove('shop', recipientKey.fingerprint);
    await runExportOrders(deps());
    expect((await orders.get(order.id))?.order).toMatchObject({ status: 'failed', failure: 'export_recipient_not_registered' });
    expect(await db.client.exists(`tessera:export-file:{${order.id}}`)).toBe(0);
  });

  it('drops an order on the queue that is not approved, without writing anything', async () => {
    await tokenize('shop', 'live', LIVE[0] as string);
    const pending = await orders.create(
      {
        merchantId: 'shop',
        mode: 'live',
        format: 'jsonl',
        recipient: { fingerprint: recipientKey.fingerprint, label: 'x' },
        reason: 'forged',
        requestedBy: FIRST,
      },
      new Date(),
    );
    await db.client.lpush('tessera:export:{tessera-export}:queue', pending.id);
    expect(await runExportOrders(deps())).toBe(0);
    expect((await orders.get(pending.id))?.order.status).toBe('pending');
    expect(await db.client.exists(`tessera:export-file:{${pending.id}}`)).toBe(0);
  });

  it('leaves an order another vault is writing, and starts again one whose vault stopped (its lease lapsed)', async () => {
    await tokenize('shop', 'live', LIVE[0] as string);
    const order = await approvedOrder();
    const found = await orders.get(order.id);
    // As a vault that stopped mid-way left it: running, some ciphertext written.
    await orders.replace(found!.raw, { ...found!.order, status: 'running', startedAt: new Date().toISOString() });
    await files.append(order.id, Buffer.from('half a file'), 60_000);
    expect(await orders.holdRun(order.id, 'vault-elsewhere', 60_000)).toBe(true);
    expect(await runExportOrders(deps())).toBe(0);
    expect((await orders.get(order.id))?.order.status).toBe('running');

    await orders.releaseRun(order.id, 'vault-elsewhere');
    expect(await runExportOrders(deps())).toBe(1);
    expect((await orders.get(order.id))?.order).toMatchObject({ status: 'done', exported: 1 });
    expect(await fileOf(order.id)).toContain(LIVE[0]);
  });
});
