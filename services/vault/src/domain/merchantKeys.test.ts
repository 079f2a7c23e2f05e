import { EnvelopeOpenError, openRecord, sealRecord, type EnvelopeContext } from './envelope';
import {
  isMerchantKekId,
  merchantKekIdOf,
  merchantKeyRing,
  newMerchantKek,
  openMerchantKek,
  rewrapMerchantKek,
  type MerchantKeyState,
} from './merchantKeys';
import { keyRingEntry, keyRingOf } from '../test/builders';

const r1 = keyRingEntry('r1');
const r2 = keyRingEntry('r2');
const root = keyRingOf(r1);
const now = new Date('2026-11-26T12:00:00Z');
const ctx: EnvelopeContext = { merchantId: 'merchant_a', token: 'tok.abcdefghijklmnopqrstuv', kind: 'card', mode: 'test', metadata: '[]' };

function stateOf(kek: MerchantKeyState['kek'], shredded: string[] = [], shreddedAt?: string): MerchantKeyState {
  return { kek, shredded: new Set(shredded), shreddedAt };
}

function reasonOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof EnvelopeOpenError) return err.reason;
    throw err;
  }
  throw new Error('expected an EnvelopeOpenError');
}

describe('merchant key-encryption keys', () => {
  it('have ids no root key can have, so a record names which kind of key wrapped it', () => {
    const { kek } = newMerchantKek(root, 'merchant_a', 'test', now);
    expect(isMerchantKekId(kek.kekId)).toBe(true);
    expect(isMerchantKekId('r1')).toBe(false);
  });

  it('open only as the key of the merchant and mode they were made for', () => {
    const { kek, stored } = newMerchantKek(root, 'merchant_a', 'test', now);
    expect(openMerchantKek(root, 'merchant_a', 'test', stored).key.equals(kek.key)).toBe(true);
    expect(reasonOf(() => openMerchantKek(root, 'merchant_b', 'test', stored))).toBe('authentication_failed');
    expect(reasonOf(() => openMerchantKek(root, 'merchant_a', 'live', stored))).toBe('authentication_failed');
  });

  it('never hold the key in clear in their stored form', () => {
    const { kek, stored } = newMerchantKek(root, 'merchant_a', 'test', now);
    expect(stored).not.toContain(kek.key.toString('base64'));
    expect(merchantKekIdOf(stored)).toBe(kek.kekId);
  });

  it('move to a new root key with rewrap and keep their id and key', () => {
    const { kek, stored } = newMerchantKek(root, 'merchant_a', 'test', now);
    const rotated = keyRingOf(r1, r2);
    const moved = rewrapMerchantKek(rotated, 'merchant_a', 'test', stored) as string;
    expect(JSON.parse(moved)).toMatchObject({ keyId: 'r2', kekId: kek.kekId });
    // Once moved, the retired root key is not needed to open it.
    expect(openMerchantKek(keyRingOf(r2), 'merchant_a', 'test', moved).key.equals(kek.key)).toBe(true);
    expect(rewrapMerchantKek(rotated, 'merchant_a', 'test', moved)).toBeNull();
  });
});

describe('a merchant key ring', () => {
  it('wraps new data keys under the merchant key, and still opens records wrapped under a root key', () => {
    const { kek } = newMerchantKek(root, 'merchant_a', 'test', now);
    const ring = merchantKeyRing(root, stateOf(kek));
    const sealed = sealRecord(ring, ctx, Buffer.from('secret'));
    expect(sealed.keyId).toBe(kek.kekId);
    expect(openRecord(ring, ctx, sealed).toString()).toBe('secret');
    // A record of before merchant keys: the root ring alone seals it, the merchant ring opens it.
    const old = sealRecord(root, ctx, Buffer.from('older'));
    expect(openRecord(ring, ctx, old).toString()).toBe('older');
    // The root ring cannot open what the merchant key wrapped.
    expect(reasonOf(() => openRecord(root, ctx, sealed))).toBe('unknown_key');
  });

  it('refuses every record of the merchant once its key was shredded, root-wrapped ones included', () => {
    const { kek } = newMerchantKek(root, 'merchant_a', 'test', now);
    const sealed = sealRecord(merchantKeyRing(root, stateOf(kek)), ctx, Buffer.from('secret'));
    const old = sealRecord(root, ctx, Buffer.from('older'));
    const shredded = merchantKeyRing(root, stateOf(undefined, [kek.kekId], now.toISOString()));
    expect(reasonOf(() => openRecord(shredded, ctx, sealed))).toBe('key_destroyed');
    expect(reasonOf(() => openRecord(shredded, ctx, old))).toBe('key_destroyed');
    // A new key made after the shred opens only what it sealed.
    const { kek: next } = newMerchantKek(root, 'merchant_a', 'test', now);
    const reborn = merchantKeyRing(root, stateOf(next, [kek.kekId], now.toISOString()));
    expect(openRecord(reborn, ctx, sealRecord(reborn, ctx, Buffer.from('new life'))).toString()).toBe('new life');
    expect(reasonOf(() => openRecord(reborn, ctx, sealed))).toBe('key_destroyed');
  });

  it("refuses as not authentic a record under another merchant's key (its clear fields edited to name this one)", () => {
    const { kek: theirs } = newMerchantKek(root, 'merchant_b', 'test', now);
    const sealed = sealRecord(merchantKeyRing(root, stateOf(theirs)), ctx, Buffer.from('secret'));
    const { kek: ours } = newMerchantKek(root, 'merchant_a', 'test', now);
    expect(reasonOf(() => openRecord(merchantKeyRing(root, stateOf(ours)), ctx, sealed))).toBe('authentication_failed');
    expect(reasonOf(() => openRecord(merchantKeyRing(root, stateOf(undefined)), ctx, sealed))).toBe('authentication_failed');
  });
});
