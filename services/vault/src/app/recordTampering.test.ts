import { Redis } from 'ioredis';
import { describeCard, type TokenOwner } from '../domain/card';
import { sealRecord } from '../domain/envelope';
import { parseCompactCard } from '../domain/compactCard';
import { generateToken } from '../domain/token';
import { rewrapAll } from './keyRotation';
import { cardKey, cvvKey, usedCvvKey } from '../store/records';
import type { RedisCardStore } from '../store/redisCardStore';
import { aCard, aVault, anEmptyRedisCardStore, codeOf, editRecord, keyRingEntry, keyRingOf, readRecord } from '../test/builders';
import type { RecordAlarm, Vault } from './vault';
import { useRedisServer } from '@tessera/test-support';

/**
 * Issue 11, finding 5, against a real redis-server: an insider copies, restores and edits records
 * in the card store. Two Vault instances on one store stand for two replicas.
 */
jest.setTimeout(30_000);

const db = useRedisServer((url) => new Redis(url));
const ring = keyRingOf(keyRingEntry('k1'));
const OWNER: TokenOwner = { merchantId: 'merchant_a', mode: 'test' };
const RIVAL: TokenOwner = { merchantId: 'merchant_b', mode: 'test' };
const CVV_TTL_S = 600;

let store: RedisCardStore;
let now: number;
let alarms: RecordAlarm[];
let replicaA: Vault;
let replicaB: Vault;

beforeEach(async () => {
  store = await anEmptyRedisCardStore(db);
  now = Date.now();
  alarms = [];
  const replica = (): Vault =>
    aVault({ store, keyRing: ring, cvvTtlSeconds: CVV_TTL_S, now: () => new Date(now), onAlarm: (a) => alarms.push(a) });
  replicaA = replica();
  replicaB = replica();
});

afterEach(async () => {
  await store.close();
});

/** A card sealed the way version 3 did (number and holder name only), to store as an older record. */
function sealCardAsVersion3(card: ReturnType<typeof aCard>, token: string): ReturnType<typeof sealRecord> {
  return sealRecord(
    ring,
    { merchantId: card.merchantId, token, kind: 'card', mode: 'test' },
    Buffer.from(JSON.stringify({ number: card.number, holderName: card.holderName })),
  );
}

describe('a used or expired CVV cannot be brought back', () => {
  it('refuses a CVV record copied before its use and restored after, on either replica, and deletes the copy', async () => {
    const { token } = await replicaA.tokenize(aCard());
    const copy = (await db.client.getBuffer(cvvKey(token))) as Buffer;
    expect((await replicaA.render(OWNER, token, '[CARD_CVV]', 'text/plain')).toString()).toBe('123');
    for (const replica of [replicaA, replicaB]) {
      await db.client.set(cvvKey(token), copy, 'PX', 60_000);
      expect(await codeOf(replica.render(OWNER, token, '[CARD_CVV]', 'text/plain'))).toBe('cvv_unavailable');
      expect(await db.client.exists(cvvKey(token))).toBe(0);
    }
    expect(alarms).toEqual([
      { alarm: 'cvv_replayed', record: 'cvv', token },
      { alarm: 'cvv_replayed', record: 'cvv', token },
    ]);
    // The used mark lives as long as the CVV could have: never shorter than CVV_TTL_SECONDS.
    expect(await db.client.pttl(usedCvvKey(token))).toBeGreaterThan(CVV_TTL_S * 1000);
  });

  it('refuses a CVV record restored after its sealed deadline, even with no TTL, and consumes it', async () => {
    const { token } = await replicaA.tokenize(aCard());
    const copy = (await db.client.getBuffer(cvvKey(token))) as Buffer;
    now += CVV_TTL_S * 1000;
    await db.client.set(cvvKey(token), copy);
    expect(await codeOf(replicaB.render(OWNER, token, '[CARD_CVV]', 'text/plain'))).toBe('cvv_unavailable');
    expect(alarms).toEqual([{ alarm: 'cvv_expired', record: 'cvv', token }]);
    expect(await db.client.exists(cvvKey(token))).toBe(0);
  });

  it.each([
    ['its deadline moved later', (r: Record<string, unknown>) => ({ ...r, expiresAt: '2099-01-01T00:00:00.000Z' })],
    ['its nonce changed (to dodge the used mark)', (r: Record<string, unknown>) => ({ ...r, nonce: 'AAAAAAAAAAAAAAAAAAAAAA' })],
    [
      'its nonce and deadline removed (passed off as version 3)',
      ({ nonce: _n, expiresAt: _e, ...r }: Record<string, unknown>) => ({ ...r, v: 3 }),
    ],
    ['its format 6 passed off as version 4 (JSON, the same fields)', (r: Record<string, unknown>) => ({ ...r, v: 4 })],
    ['its mode flipped', (r: Record<string, unknown>) => ({ ...r, mode: 'live' })],
  ])('never renders a CVV record with %s: cvv_unavailable and an authentication alarm', async (_what, edit) => {
    const { token } = await replicaA.tokenize(aCard());
    await editRecord(db.client, cvvKey(token), edit);
    expect(await codeOf(replicaA.render(OWNER, token, '[CARD_CVV]', 'text/plain'))).toBe('cvv_unavailable');
    expect(alarms).toEqual([{ alarm: 'authentication_failed', record: 'cvv', token }]);
  });

  it('marks an older CVV record (no nonce) used by its IV: a copy re-encoded differently is still refused', async () => {
    const card = aCard();
    const token = generateToken();
    const sealed = sealCardAsVersion3(card, token);
    const cvv = sealRecord(ring, { merchantId: card.merchantId, token, kind: 'cvv', mode: 'test' }, Buffer.from('123'));
    await store.save({
      token,
      card: describeCard(card, 'test', sealed, new Date(now + 86_400_000), new Date(now)),
      cardTtlMs: 86_400_000,
      cvv: { record: { mode: 'test', sealed: cvv }, ttlMs: 60_000 },
    });
    const copy = JSON.parse((await db.client.get(cvvKey(token))) as string) as { v: number; sealed: { iv: string } };
    expect(copy.v).toBe(3);
    expect((await replicaA.render(OWNER, token, '[CARD_CVV]', 'text/plain')).toString()).toBe('123');
    // The same IV bytes in base64url instead of base64: a different string, the same record.
    const reencoded = { ...copy, sealed: { ...copy.sealed, iv: Buffer.from(copy.sealed.iv, 'base64').toString('base64url') } };
    await db.client.set(cvvKey(token), JSON.stringify(reencoded), 'PX', 60_000);
    expect(await codeOf(replicaB.render(OWNER, token, '[CARD_CVV]', 'text/plain'))).toBe('cvv_unavailable');
    expect(alarms).toEqual([{ alarm: 'cvv_replayed', record: 'cvv', token }]);
  });
});

describe('card metadata is authenticated', () => {
  it('a card whose merchant was edited is token_not_found for that merchant (GET, DELETE, render) and for its owner, and is not deleted', async () => {
    const { token } = await replicaA.tokenize(aCard());
    await editRecord(db.client, cardKey(token), (r) => ({ ...r, merchantId: RIVAL.merchantId }));
    expect(await codeOf(replicaA.getToken(RIVAL, token))).toBe('token_not_found');
    expect(await codeOf(replicaA.deleteToken(RIVAL, token))).toBe('token_not_found');
    expect(await codeOf(replicaB.render(RIVAL, token, '[CARD_NUMBER]', 'text/plain'))).toBe('token_not_found');
    expect(await codeOf(replicaA.getToken(OWNER, token))).toBe('token_not_found');
    expect(await db.client.exists(cardKey(token))).toBe(1);
    expect(alarms).toEqual(Array.from({ length: 3 }, () => ({ alarm: 'authentication_failed', record: 'card', token })));
  });

  it.each([
    ['last4', { last4: '0000' }],
    ['brand', { brand: 'amex' }],
    ['expiry', { expiryMonth: 1, expiryYear: 2099 }],
    ['createdAt', { createdAt: '2020-01-01T00:00:00.000Z' }],
    ['expiresAt', { expiresAt: '2099-01-01T00:00:00.000Z' }],
    ['holder-name flag', { holderNameAvailable: false }],
    ['version (passed off as version 3)', { v: 3 }],
    ['version (passed off as version 5)', { v: 5 }],
    ['BIN', { bin: '555555' }],
    ['fingerprint', { fingerprint: Buffer.alloc(16, 1).toString('base64url') }],
    ['provisional flag', { provisional: true }],
  ])('a card whose %s was edited is token_not_found on GET and DELETE', async (_what, change) => {
    const { token } = await replicaA.tokenize(aCard());
    await editRecord(db.client, cardKey(token), (r) => ({ ...r, ...change }));
    expect(await codeOf(replicaA.getToken(OWNER, token))).toBe('token_not_found');
    expect(await codeOf(replicaA.deleteToken(OWNER, token))).toBe('token_not_found');
    expect(alarms[0]).toEqual({ alarm: 'authentication_failed', record: 'card', token });
  });

  it('a format-6 card with any byte of its header or wrap layer changed is never answered', async () => {
    const { token } = await replicaA.tokenize(aCard());
    const stored = (await db.client.getBuffer(cardKey(token))) as Buffer;
    const { sealed } = parseCompactCard(stored);
    // Everything before the data layer (IV, tag, ciphertext), which GET does not decrypt.
    const dataLayer = 12 + 16 + Buffer.from(sealed.ciphertext, 'base64').length;
    const answers = new Set<string>();
    for (let i = 0; i < stored.length - dataLayer; i++) {
      for (const bit of [0x01, 0x80]) {
        const edited = Buffer.from(stored);
        edited[i] = (edited[i] as number) ^ bit;
        await db.client.set(cardKey(token), edited, 'KEEPTTL');
        // Refused either as tampered (authentication fails) or as unreadable (not a canonical record).
        answers.add(await codeOf(replicaA.getToken(OWNER, token)));
      }
    }
    expect([...answers].sort()).toEqual(['internal_error', 'token_not_found']);
    await db.client.set(cardKey(token), stored, 'KEEPTTL');
    expect((await replicaA.getToken(OWNER, token)).token).toBe(token);
  });

  it('answers GET without decrypting the card number: only the data key is unwrapped', async () => {
    const { token } = await replicaA.tokenize(aCard());
    // An edited card ciphertext goes unnoticed by GET (the PAN is not decrypted) but not by render.
    await editRecord(db.client, cardKey(token), (r) => {
      const sealed = r.sealed as Record<string, string>;
      const flipped = Buffer.from(sealed.ciphertext as string, 'base64');
      flipped[0] = (flipped[0] as number) ^ 1;
      return { ...r, sealed: { ...sealed, ciphertext: flipped.toString('base64') } };
    });
    expect((await replicaA.getToken(OWNER, token)).last4).toBe('4242');
    expect(await codeOf(replicaA.render(OWNER, token, '[CARD_NUMBER]', 'text/plain'))).toBe('token_not_found');
  });

  it('rewrap moves a version-3 card to version 6, after which its metadata is authenticated too', async () => {
    const card = aCard();
    const token = generateToken();
    const sealed = sealCardAsVersion3(card, token);
    await store.save({ token, card: describeCard(card, 'test', sealed, new Date(now + 86_400_000), new Date(now)), cardTtlMs: 86_400_000 });
    // Version 3 binds merchant and mode but not last4: an edit there still shows (what rewrap fixes).
    await editRecord(db.client, cardKey(token), (r) => ({ ...r, last4: '0000' }));
    expect((await replicaA.getToken(OWNER, token)).last4).toBe('0000');
    await editRecord(db.client, cardKey(token), (r) => ({ ...r, last4: '4242' }));
    const { checkpoint } = await rewrapAll(store, ring, { batchSize: 10 });
    expect(checkpoint.stats).toMatchObject({ scanned: 1, migrated: 1, failed: 0 });
    expect(await readRecord(db.client, cardKey(token))).toMatchObject({ v: 6 });
    expect((await replicaA.getToken(OWNER, token)).last4).toBe('4242');
    await editRecord(db.client, cardKey(token), (r) => ({ ...r, last4: '0000' }));
    expect(await codeOf(replicaA.getToken(OWNER, token))).toBe('token_not_found');
  });
});
