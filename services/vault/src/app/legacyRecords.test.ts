import { Redis } from 'ioredis';
import type { TokenOwner } from '../domain/card';
import { generateToken } from '../domain/token';
import { rewrapAll } from './keyRotation';
import { cardKey, cvvKey } from '../store/records';
import type { RedisCardStore } from '../store/redisCardStore';
import { aVault, anEmptyRedisCardStore, codeOf, editRecord, keyRingEntry, keyRingOf, readRecord } from '../test/builders';
import { legacyCardRecord, legacyCvvRecord, type LegacyCardFields } from '../test/legacyEnvelope';
import type { RecordAlarm, Vault } from './vault';
import { useRedisServer } from '@tessera/test-support';

/**
 * Issue 30: card records written before format 6 (JSON) still read and render after it, and
 * `vault rewrap` moves them to format 6 with every clear field still authenticated.
 */
jest.setTimeout(30_000);

const db = useRedisServer((url) => new Redis(url));
const ring = keyRingOf(keyRingEntry('k1'));
const OWNER: TokenOwner = { merchantId: 'merchant_ä', mode: 'test' };
const NUMBER = '4000056655665556';
const DAY_MS = 86_400_000;

let store: RedisCardStore;
let alarms: RecordAlarm[];
let vault: Vault;

beforeEach(async () => {
  store = await anEmptyRedisCardStore(db);
  alarms = [];
  vault = aVault({ store, keyRing: ring, onAlarm: (a) => alarms.push(a) });
});

afterEach(async () => {
  await store.close();
});

function fieldsFor(version: 3 | 4 | 5): LegacyCardFields {
  return {
    merchantId: OWNER.merchantId,
    mode: 'test',
    last4: '5556',
    brand: 'visa',
    expiryMonth: 7,
    expiryYear: 2031,
    createdAt: '2026-01-02T03:04:05.678Z',
    expiresAt: '2031-08-30T23:59:59.999Z',
    holderNameAvailable: true,
    ...(version === 5 ? { bin: '400005', fingerprint: Buffer.alloc(16, 9).toString('base64url') } : {}),
  };
}

async function saveLegacy(version: 3 | 4 | 5): Promise<string> {
  const token = generateToken();
  const raw = legacyCardRecord(ring, token, version, fieldsFor(version), { number: NUMBER, holderName: 'Zoë Ångström' });
  await db.client.set(cardKey(token), raw, 'PX', DAY_MS);
  return token;
}

describe.each([3, 4, 5] as const)('a version-%i card record', (version) => {
  it('reads and renders as before, and rewrap moves it to format 6 with the same fields and card', async () => {
    const token = await saveLegacy(version);
    const before = await vault.getToken(OWNER, token);
    expect(before).toMatchObject({ last4: '5556', expiryMonth: 7, expiryYear: 2031, createdAt: '2026-01-02T03:04:05.678Z' });
    expect(before.fingerprint).toBe(version === 5 ? Buffer.alloc(16, 9).toString('base64url') : '');
    const rendered = '{"n":"[CARD_NUMBER]","h":"[CARD_HOLDER]"}';
    const expected = JSON.stringify({ n: NUMBER, h: 'Zoë Ångström' });
    expect((await vault.render(OWNER, token, rendered, 'application/json')).toString()).toBe(expected);

    const { checkpoint } = await rewrapAll(store, ring, { batchSize: 10 });
    expect(checkpoint.stats).toMatchObject({ scanned: 1, migrated: 1, failed: 0 });
    expect(await readRecord(db.client, cardKey(token))).toMatchObject({ v: 6, mode: 'test', merchantId: OWNER.merchantId });
    expect(await vault.getToken(OWNER, token)).toEqual(before);
    expect((await vault.render(OWNER, token, rendered, 'application/json')).toString()).toBe(expected);
    // A second run finds it current.
    expect((await rewrapAll(store, ring, { batchSize: 10, restart: true })).checkpoint.stats).toMatchObject({
      alreadyCurrent: 1,
      migrated: 0,
    });

    // Format 6 binds every clear field, those version 3 left unbound included.
    await editRecord(db.client, cardKey(token), (r) => ({ ...r, last4: '0000' }));
    expect(await codeOf(vault.getToken(OWNER, token))).toBe('token_not_found');
    expect(alarms).toEqual([{ alarm: 'authentication_failed', record: 'card', token }]);
  });
});

it('a format-6 record is a fraction of the JSON one', async () => {
  const legacy = await saveLegacy(5);
  const legacyBytes = ((await db.client.getBuffer(cardKey(legacy))) as Buffer).length;
  await rewrapAll(store, ring, { batchSize: 10 });
  const compactBytes = ((await db.client.getBuffer(cardKey(legacy))) as Buffer).length;
  expect(compactBytes).toBeLessThan(legacyBytes / 2);
});

it('a version-4 CVV record renders once, re-wrapped by rewrap in its own format (it expires within CVV_TTL_SECONDS)', async () => {
  const token = await saveLegacy(5);
  const nonce = Buffer.alloc(16, 4).toString('base64url');
  const expiresAt = new Date(Date.now() + 600_000).toISOString();
  const cvv = legacyCvvRecord(ring, token, { merchantId: OWNER.merchantId, mode: 'test', nonce, expiresAt }, '737');
  await db.client.set(cvvKey(token), cvv, 'PX', 600_000);
  await rewrapAll(store, ring, { batchSize: 10 });
  expect(await readRecord(db.client, cvvKey(token))).toMatchObject({ v: 4, nonce, expiresAt });
  expect((await vault.render(OWNER, token, '[CARD_CVV]', 'text/plain')).toString()).toBe('737');
  expect(await codeOf(vault.render(OWNER, token, '[CARD_CVV]', 'text/plain'))).toBe('cvv_unavailable');
});
