import { Redis } from 'ioredis';
import { useRedisServer } from '@tessera/test-support';
import { openpgp } from '../../domain/openpgp';
import { RedisImportStore, type ImportMeta } from '../../store/importStore';
import type { RedisCardStore } from '../../store/redisCardStore';
import { aVault, anEmptyRedisCardStore, keyRingEntry, keyRingOf } from '../../test/builders';
import type { Vault } from '../vault';
import { createImport, importReport, uploadImport } from './imports';
import { runImport, type RunImportDeps } from './runImport';

jest.setTimeout(60_000);

const db = useRedisServer((url) => new Redis(url));
const ring = keyRingOf(keyRingEntry('k1'));
const YEAR = new Date().getUTCFullYear() + 2;

let cards: RedisCardStore;
let vault: Vault;
let store: RedisImportStore;
let merchantKey: { publicKey: string; privateKey: string };

beforeAll(async () => {
  merchantKey = await openpgp.generateKey({ type: 'ecc', curve: 'curve25519Legacy', userIDs: [{ name: 'merchant' }] });
});

beforeEach(async () => {
  cards = await anEmptyRedisCardStore(db);
  vault = aVault({ store: cards, keyRing: ring });
  store = new RedisImportStore(db.client);
});

afterEach(async () => {
  await cards.close();
});

function deps(overrides: Partial<RunImportDeps> = {}): RunImportDeps {
  return {
    store,
    keyRing: ring,
    tokenizer: vault,
    batchSize: 2,
    keepMs: 60_000,
    now: () => new Date(),
    stillHolding: () => true,
    log: () => undefined,
    ...overrides,
  };
}

async function encryptTo(publicKey: string, text: string): Promise<Buffer> {
  const encrypted = await openpgp.encrypt({
    message: await openpgp.createMessage({ binary: Buffer.from(text) }),
    encryptionKeys: await openpgp.readKey({ armoredKey: publicKey }),
    format: 'binary',
  });
  return Buffer.from(encrypted as Uint8Array);
}

async function* once(buffer: Buffer): AsyncGenerator<Buffer> {
  yield buffer;
}

async function importFile(format: string, mode: string, text: string): Promise<ImportMeta> {
  const created = await createImport(
    { store, keyRing: ring, now: () => new Date() },
    { merchantId: 'shop', mode, format, reportRecipientKey: merchantKey.publicKey },
  );
  await uploadImport(store, created.id, once(await encryptTo(created.publicKey, text)));
  return (await store.get(created.id)) as ImportMeta;
}

async function reportOf(id: string): Promise<string[]> {
  const chunks: Buffer[] = [];
  for await (const chunk of importReport(store, id)) chunks.push(chunk);
  const { data } = await openpgp.decrypt({
    message: await openpgp.readMessage({ binaryMessage: Buffer.concat(chunks) }),
    decryptionKeys: await openpgp.readPrivateKey({ armoredKey: merchantKey.privateKey }),
    format: 'utf8',
  });
  return (data as string).trimEnd().split('\n');
}

test('a CSV import reports each record by line: imported, duplicate, or failed with a reason and no card data', async () => {
  const meta = await importFile(
    'csv',
    'live',
    [
      'id,number,expiry_month,expiry_year,holder_name',
      `old_1,4111111111111111,1,${YEAR},Ada`,
      `old_2,4111 1111 1111 1111,2,${YEAR},Ada`,
      `old_3,4111111111111112,1,${YEAR},Bad Luhn`,
      `old_4,4242424242424242,1,${YEAR},Test card`,
      `old_5,5105105105105100,1,2001,Expired`,
      '',
    ].join('\n'),
  );
  expect(await runImport(deps(), meta)).toBe('done');
  expect(await store.get(meta.id)).toMatchObject({ state: 'done', processed: 5, imported: 1, duplicates: 1, failed: 3 });
  const rows = await reportOf(meta.id);
  const token = rows[1]?.split(',')[3];
  expect(token).toMatch(/^tok\./);
  expect(rows).toEqual([
    'line,old_id,outcome,token,reason',
    `2,old_1,imported,${token},`,
    `3,old_2,duplicate,${token},`,
    '4,old_3,failed,,card_number_invalid',
    '5,old_4,failed,,test_card_in_live_mode',
    '6,old_5,failed,,card_expired',
  ]);
  // The import's key and file are gone; only the status and the encrypted report stay.
  expect((await store.get(meta.id))?.sealedPrivateKey).toBeUndefined();
  expect(await store.uploadChunk(meta.id, 0)).toBeNull();
});

test("Stripe's JSON export keeps the card id as the old id; a test-mode import takes only the published test cards", async () => {
  const meta = await importFile(
    'stripe',
    'test',
    [
      JSON.stringify({ id: 'cus_1', card: { id: 'card_1', number: '4242424242424242', exp_month: 9, exp_year: YEAR, name: 'A' } }),
      JSON.stringify({ id: 'cus_2', card: { id: 'card_2', number: '4111111111111111', exp_month: 9, exp_year: YEAR } }),
    ].join('\n'),
  );
  expect(await runImport(deps(), meta)).toBe('done');
  const rows = await reportOf(meta.id);
  expect(rows[1]).toMatch(/^1,card_1,imported,tok\./);
  expect(rows[2]).toBe('2,card_2,failed,,live_card_in_test_mode');
});

test('an import stopped after a checkpoint resumes there, and records done twice keep one token', async () => {
  const lines = Array.from({ length: 7 }, (_, i) =>
    JSON.stringify({ id: `o${i}`, number: ['4242424242424242', '5555555555554444', '378282246310005'][i % 3], expiry: `12/${YEAR}` }),
  );
  const meta = await importFile('jsonl', 'test', lines.join('\n'));
  let checkpoints = 0;
  const counting = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'checkpoint')
        return (...args: Parameters<RedisImportStore['checkpoint']>) => ((checkpoints += 1), target.checkpoint(...args));
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
  // The lease is lost after the second checkpoint: the run stops without a third.
  expect(await runImport(deps({ store: counting, stillHolding: () => checkpoints < 2 }), meta)).toBe('lost');
  const stopped = (await store.get(meta.id)) as ImportMeta;
  expect(stopped).toMatchObject({ state: 'running', processed: 4 });
  expect(await runImport(deps(), stopped)).toBe('done');
  expect(await store.get(meta.id)).toMatchObject({ state: 'done', processed: 7, imported: 3, duplicates: 4, failed: 0 });
  const rows = await reportOf(meta.id);
  expect(rows).toHaveLength(8);
  expect(new Set(rows.slice(1).map((row) => row.split(',')[3])).size).toBe(3);
});

test('counts the lines of the file as it numbers them: CRLF, a blank line, an overlong line, no final newline', async () => {
  const card = (id: string, number: string): string => JSON.stringify({ id, number, expiry: `12/${YEAR}` });
  const text = `${card('a', '4242424242424242')}\r\n\n{"id":"long","x":"${'9'.repeat(20_000)}"}\n${card('b', '5555555555554444')}`;
  const meta = await importFile('jsonl', 'test', text);
  expect(await runImport(deps(), meta)).toBe('done');
  expect(await store.get(meta.id)).toMatchObject({ state: 'done', records: 4, processed: 3, imported: 2, failed: 1 });
  const rows = await reportOf(meta.id);
  expect(rows.slice(1).map((row) => row.split(',').slice(0, 3).join(','))).toEqual(['1,a,imported', '3,,failed', '4,b,imported']);
  expect(rows[2]).toMatch(/,record_too_long$/);
});

test('a file of several stored chunks, its lines across where the decryption splits them, is imported line by line', async () => {
  // 300 records of about 8 KB: 2.4 MB, three stored chunks of 1 MiB, each decrypted 64 KiB at a time.
  const lines = Array.from({ length: 300 }, (_, i) =>
    JSON.stringify({ id: `o${i}`, number: '4242424242424242', expiry: `12/${YEAR}`, note: String(i % 10).repeat(8_000) }),
  );
  const meta = await importFile('jsonl', 'test', lines.join('\n'));
  expect(meta.uploadChunks).toBe(3);
  expect(await runImport(deps({ batchSize: 50 }), meta)).toBe('done');
  expect(await store.get(meta.id)).toMatchObject({ state: 'done', records: 300, processed: 300, imported: 1, duplicates: 299, failed: 0 });
  const rows = await reportOf(meta.id);
  const token = rows[1]?.split(',')[3];
  expect(rows.slice(1)).toEqual(lines.map((_, i) => `${i + 1},o${i},${i === 0 ? 'imported' : 'duplicate'},${token},`));
});

test('a file not encrypted to the import key fails the import as a whole, naming why', async () => {
  const created = await createImport(
    { store, keyRing: ring, now: () => new Date() },
    { merchantId: 'shop', mode: 'test', format: 'jsonl', reportRecipientKey: merchantKey.publicKey },
  );
  await uploadImport(store, created.id, once(await encryptTo(merchantKey.publicKey, '{"number":"4242424242424242"}\n')));
  expect(await runImport(deps(), (await store.get(created.id)) as ImportMeta)).toBe('failed');
  expect(await store.get(created.id)).toMatchObject({ state: 'failed', failure: 'file_not_decryptable', processed: 0 });
});

test('creating refuses a report key that is not an OpenPGP public key, and an unknown format', async () => {
  const create = (request: Partial<{ format: string; reportRecipientKey: string }>) =>
    createImport(
      { store, keyRing: ring, now: () => new Date() },
      { merchantId: 'shop', mode: 'test', format: 'jsonl', reportRecipientKey: merchantKey.publicKey, ...request },
    );
  await expect(create({ reportRecipientKey: merchantKey.privateKey })).rejects.toThrow('report recipient key');
  await expect(create({ reportRecipientKey: 'not a key' })).rejects.toThrow('report recipient key');
  await expect(create({ format: 'xml' })).rejects.toThrow('format');
});
