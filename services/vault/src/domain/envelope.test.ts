import { randomBytes } from 'node:crypto';
import {
  authenticateRecord,
  EnvelopeOpenError,
  isCurrent,
  isWrapped,
  openRecord,
  rebindRecord,
  rewrapRecord,
  sealRecord,
  type Envelope,
  type EnvelopeContext,
} from './envelope';
import { sealFormat1 } from '../test/legacyEnvelope';
import { keyRingEntry, keyRingOf } from '../test/builders';

const ctx: EnvelopeContext = { merchantId: 'merchant_a', token: 'tok.AAAAAAAAAAAAAAAAAAAAAAAA', kind: 'card', mode: 'live' };
/** A record written before tokens had a mode (format 1 always is one). */
const legacyCtx: EnvelopeContext = { ...ctx, mode: null };
const secret = Buffer.from('{"number":"4242424242424242","holderName":"Ada"}');

function flipByte(b64: string, index: number): string {
  const buf = Buffer.from(b64, 'base64');
  buf[index] = (buf[index] ?? 0) ^ 0x01;
  return buf.toString('base64');
}

function expectOpenFails(ring: ReturnType<typeof keyRingOf>, context: EnvelopeContext, envelope: Envelope): void {
  expect(() => openRecord(ring, context, envelope)).toThrow(EnvelopeOpenError);
}

describe('AES-256-GCM envelope', () => {
  const ring = keyRingOf(keyRingEntry('k1'));

  it('opens what it sealed', () => {
    const envelope = sealRecord(ring, ctx, secret);
    expect(openRecord(ring, ctx, envelope).equals(secret)).toBe(true);
  });

  it('names the current key and never stores the plaintext', () => {
    const envelope = sealRecord(ring, ctx, secret);
    expect(envelope.keyId).toBe('k1');
    expect(JSON.stringify(envelope)).not.toContain('4242');
    expect(Buffer.from(envelope.ciphertext, 'base64').includes(Buffer.from('4242424242424242'))).toBe(false);
  });

  it('uses a fresh IV for every record', () => {
    const ivs = new Set(Array.from({ length: 50 }, () => sealRecord(ring, ctx, secret).iv));
    expect(ivs.size).toBe(50);
  });

  it('seals every record under its own data key, wrapped by the current key-encryption key', () => {
    const a = sealRecord(ring, ctx, secret);
    const b = sealRecord(ring, ctx, secret);
    expect(isWrapped(a)).toBe(true);
    expect(a.wrappedKey).not.toBe(b.wrappedKey);
    expect(Buffer.from(a.wrappedKey, 'base64')).toHaveLength(32);
    expect(Buffer.from(a.wrappedKey, 'base64').equals(ring.key('k1') as Buffer)).toBe(false);
  });

  it.each(['iv', 'ciphertext', 'tag', 'wrappedKey', 'wrapIv', 'wrapTag'] as const)('fails when any byte of the %s is changed', (field) => {
    const envelope = sealRecord(ring, ctx, secret);
    const length = Buffer.from(envelope[field], 'base64').length;
    for (let i = 0; i < length; i++) {
      expectOpenFails(ring, ctx, { ...envelope, [field]: flipByte(envelope[field], i) });
    }
  });

  it('fails for a truncated tag or iv', () => {
    const envelope = sealRecord(ring, ctx, secret);
    expectOpenFails(ring, ctx, { ...envelope, tag: Buffer.from(envelope.tag, 'base64').subarray(0, 8).toString('base64') });
    expectOpenFails(ring, ctx, { ...envelope, iv: '' });
  });

  it('fails when the record is presented for another merchant, token or kind', () => {
    const envelope = sealRecord(ring, ctx, secret);
    expectOpenFails(ring, { ...ctx, merchantId: 'merchant_b' }, envelope);
    expectOpenFails(ring, { ...ctx, token: 'tok.BBBBBBBBBBBBBBBBBBBBBBBB' }, envelope);
    expectOpenFails(ring, { ...ctx, kind: 'cvv' }, envelope);
  });

  it('fails when the record is presented for the other mode, or as a record written without a mode', () => {
    const envelope = sealRecord(ring, ctx, secret);
    expectOpenFails(ring, { ...ctx, mode: 'test' }, envelope);
    expectOpenFails(ring, legacyCtx, envelope);
    const withoutMode = sealRecord(ring, legacyCtx, secret);
    expect(openRecord(ring, legacyCtx, withoutMode).equals(secret)).toBe(true);
    expectOpenFails(ring, ctx, withoutMode);
    expectOpenFails(ring, { ...ctx, mode: 'test' }, withoutMode);
  });

  it('binds a provisional record to its deadline: it opens neither as an ordinary record nor under another deadline', () => {
    const provisional: EnvelopeContext = { ...ctx, provisionalUntil: '2030-01-01T01:00:00.000Z' };
    const envelope = sealRecord(ring, provisional, secret);
    expect(openRecord(ring, provisional, envelope).equals(secret)).toBe(true);
    expectOpenFails(ring, ctx, envelope);
    expectOpenFails(ring, { ...provisional, provisionalUntil: '2099-01-01T01:00:00.000Z' }, envelope);
    expectOpenFails(ring, { ...provisional, mode: 'test' }, envelope);
    // And an ordinary record cannot be passed off as a provisional one either.
    expectOpenFails(ring, provisional, sealRecord(ring, ctx, secret));
    // Retaining re-seals it as an ordinary record, after authenticating it.
    const retained = rebindRecord(ring, provisional, ctx, envelope);
    expect(openRecord(ring, ctx, retained).equals(secret)).toBe(true);
    expect(() => rebindRecord(ring, { ...provisional, provisionalUntil: '2099-01-01T01:00:00.000Z' }, ctx, envelope)).toThrow(
      EnvelopeOpenError,
    );
  });

  it('fails when the stored key id is changed to another key of the ring', () => {
    const twoKeys = keyRingOf(keyRingEntry('k1'), keyRingEntry('k2'));
    const envelope = sealRecord(twoKeys, ctx, secret);
    expectOpenFails(twoKeys, ctx, { ...envelope, keyId: 'k1' });
  });

  it('reports an unknown key id without throwing anything else', () => {
    const envelope = sealRecord(ring, ctx, secret);
    const other = keyRingOf(keyRingEntry('k9'));
    expect(() => openRecord(other, ctx, envelope)).toThrow(new EnvelopeOpenError('unknown_key'));
  });

  it('keeps opening records of an older key while the newest key seals new ones', () => {
    const oldEntry = keyRingEntry('2024', randomBytes(32));
    const before = keyRingOf(oldEntry);
    const oldRecord = sealRecord(before, ctx, secret);

    const rotated = keyRingOf(oldEntry, keyRingEntry('2025'));
    const newRecord = sealRecord(rotated, ctx, secret);
    expect(newRecord.keyId).toBe('2025');
    expect(openRecord(rotated, ctx, oldRecord).equals(secret)).toBe(true);
    expect(openRecord(rotated, ctx, newRecord).equals(secret)).toBe(true);
    expectOpenFails(before, ctx, newRecord);
  });

  it('does not put key or plaintext material into its error', () => {
    const envelope = sealRecord(ring, ctx, secret);
    try {
      openRecord(ring, { ...ctx, merchantId: 'x' }, envelope);
      throw new Error('expected failure');
    } catch (err) {
      expect(err).toBeInstanceOf(EnvelopeOpenError);
      expect(String((err as Error).message)).toBe('could not open the sealed record: authentication_failed');
    }
  });
});

describe('format-1 records (sealed directly under a KEK, before envelope encryption)', () => {
  const entry = keyRingEntry('k1');
  const ring = keyRingOf(entry);

  it('still open with the same key ring', () => {
    const old = sealFormat1(ring, legacyCtx, secret);
    expect(isWrapped(old)).toBe(false);
    expect(openRecord(ring, legacyCtx, old).equals(secret)).toBe(true);
  });

  it.each(['iv', 'ciphertext', 'tag'] as const)('fail when any byte of the %s is changed', (field) => {
    const old = sealFormat1(ring, legacyCtx, secret);
    const length = Buffer.from(old[field], 'base64').length;
    for (let i = 0; i < length; i++) expectOpenFails(ring, legacyCtx, { ...old, [field]: flipByte(old[field], i) });
    expectOpenFails(ring, { ...legacyCtx, merchantId: 'merchant_b' }, old);
  });

  it('never open as a record of either mode (they predate modes)', () => {
    const old = sealFormat1(ring, legacyCtx, secret);
    expectOpenFails(ring, { ...ctx, mode: 'live' }, old);
    expectOpenFails(ring, { ...ctx, mode: 'test' }, old);
  });
});

describe('re-wrapping under a new key-encryption key', () => {
  const oldEntry = keyRingEntry('old');
  const newEntry = keyRingEntry('new');
  const before = keyRingOf(oldEntry);
  const rotated = keyRingOf(oldEntry, newEntry);
  /** The ring once the old key has been removed from VAULT_KEYS. */
  const retired = keyRingOf(newEntry);

  it('moves the data key to the new KEK and keeps the data ciphertext as it was', () => {
    const sealed = sealRecord(before, ctx, secret);
    const moved = rewrapRecord(rotated, ctx, sealed);
    expect(isWrapped(moved) && moved.keyId).toBe('new');
    expect(moved.ciphertext).toBe(sealed.ciphertext);
    expect(moved.iv).toBe(sealed.iv);
    expect(isWrapped(moved) && moved.wrappedKey).not.toBe(sealed.wrappedKey);
    expect(openRecord(retired, ctx, moved).equals(secret)).toBe(true);
    expectOpenFails(before, ctx, moved);
  });

  it('migrates a format-1 record to envelope encryption under the new KEK', () => {
    const old = sealFormat1(before, legacyCtx, secret);
    const moved = rewrapRecord(rotated, legacyCtx, old);
    expect(isCurrent(rotated, moved)).toBe(true);
    expect(openRecord(retired, legacyCtx, moved).equals(secret)).toBe(true);
  });

  it('binds a mode into a record written without one, under the new KEK, and only if it authenticates', () => {
    for (const old of [sealFormat1(before, legacyCtx, secret), sealRecord(before, legacyCtx, secret)]) {
      const bound = rebindRecord(rotated, legacyCtx, ctx, old);
      expect(isCurrent(rotated, bound)).toBe(true);
      expect(openRecord(retired, ctx, bound).equals(secret)).toBe(true);
      expectOpenFails(retired, legacyCtx, bound);
      expectOpenFails(retired, { ...ctx, mode: 'test' }, bound);
      expect(() => rebindRecord(rotated, { ...legacyCtx, merchantId: 'merchant_b' }, ctx, old)).toThrow(EnvelopeOpenError);
    }
  });

  it('returns a record already on the current KEK unchanged', () => {
    const sealed = sealRecord(rotated, ctx, secret);
    expect(rewrapRecord(rotated, ctx, sealed)).toBe(sealed);
  });

  it('refuses to re-wrap a tampered record or one presented for another merchant', () => {
    const sealed = sealRecord(before, ctx, secret);
    expect(() => rewrapRecord(rotated, ctx, { ...sealed, ciphertext: flipByte(sealed.ciphertext, 0) })).toThrow(EnvelopeOpenError);
    expect(() => rewrapRecord(rotated, ctx, { ...sealed, wrapTag: flipByte(sealed.wrapTag, 3) })).toThrow(EnvelopeOpenError);
    expect(() => rewrapRecord(rotated, { ...ctx, merchantId: 'merchant_b' }, sealed)).toThrow(EnvelopeOpenError);
  });

  it('does not let a wrapped data key be moved to another record', () => {
    const a = sealRecord(retired, ctx, secret);
    const otherCtx = { ...ctx, token: 'tok.BBBBBBBBBBBBBBBBBBBBBBBB' };
    const b = sealRecord(retired, otherCtx, Buffer.from('other'));
    expectOpenFails(retired, otherCtx, { ...b, wrappedKey: a.wrappedKey, wrapIv: a.wrapIv, wrapTag: a.wrapTag });
  });
});

describe('format 4: the record metadata bound into both layers', () => {
  const ring = keyRingOf(keyRingEntry('k1'));
  const bound: EnvelopeContext = { ...ctx, metadata: '["card","merchant_a","live",false,"4242"]' };

  it('opens and authenticates only under the exact metadata it was sealed with', () => {
    const sealed = sealRecord(ring, bound, secret);
    expect(openRecord(ring, bound, sealed).equals(secret)).toBe(true);
    expect(() => authenticateRecord(ring, bound, sealed)).not.toThrow();
    const edited = { ...bound, metadata: '["card","merchant_a","live",false,"0000"]' };
    expectOpenFails(ring, edited, sealed);
    expect(() => authenticateRecord(ring, edited, sealed)).toThrow(EnvelopeOpenError);
  });

  it('cannot be presented as a version-3 record (no metadata), nor a version-3 record as one of format 4', () => {
    const v4 = sealRecord(ring, bound, secret);
    const v3 = sealRecord(ring, ctx, secret);
    expectOpenFails(ring, ctx, v4);
    expect(() => authenticateRecord(ring, ctx, v4)).toThrow(EnvelopeOpenError);
    expectOpenFails(ring, bound, v3);
  });

  it('keeps free text unambiguous: a merchant id with separators does not collide with another field split', () => {
    const a: EnvelopeContext = { ...bound, merchantId: 'm|tok', token: 'x' };
    const b: EnvelopeContext = { ...bound, merchantId: 'm', token: 'tok|x' };
    expectOpenFails(ring, b, sealRecord(ring, a, secret));
  });

  it('authenticates without the data layer: an edited card ciphertext passes authenticateRecord but does not open', () => {
    const sealed = sealRecord(ring, bound, secret);
    const edited = { ...sealed, ciphertext: flipByte(sealed.ciphertext, 0) };
    expect(() => authenticateRecord(ring, bound, edited)).not.toThrow();
    expectOpenFails(ring, bound, edited);
  });

  it('re-wraps under a new KEK with the same metadata, and still refuses other metadata', () => {
    const [k1, k2] = [keyRingEntry('k1'), keyRingEntry('k2')];
    const sealed = sealRecord(keyRingOf(k1), bound, secret);
    const rotated = keyRingOf(k1, k2);
    const rewrapped = rewrapRecord(rotated, bound, sealed);
    expect(rewrapped.keyId).toBe('k2');
    expect(openRecord(rotated, bound, rewrapped).equals(secret)).toBe(true);
    expectOpenFails(rotated, { ...bound, metadata: '[]' }, rewrapped);
  });
});
