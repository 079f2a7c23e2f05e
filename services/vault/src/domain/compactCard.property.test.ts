import fc from 'fast-check';
import { detectBrand, isLuhnValid, type KeyMode } from '@tessera/common';
import { decodeCardSecret, encodeCardSecret, type StoredCard, type StoredCvv } from './card';
import { isCompactRecord, parseCompactCard } from './compactCard';
import { openRecord, sealRecord, type EnvelopeContext } from './envelope';
import { keyRingOf, keyRingEntry } from '../test/builders';
import { merchantKeyRing, newMerchantKek } from './merchantKeys';
import { bindingOfCard, bindingOfCvv, cardBinding, cvvBinding } from './recordMetadata';
import { parseCard, parseCvv, serializeCard, serializeCvv } from '../store/records';

const ring = keyRingOf(keyRingEntry('k1'));
/** A merchant KEK's ring: its key id is `m.` + 16 bytes, which format 6 stores raw. */
const merchantRing = merchantKeyRing(ring, {
  kek: newMerchantKek(ring, 'merchant_a', 'test', new Date()).kek,
  shredded: new Set(),
  shreddedAt: undefined,
});

function withCheckDigit(body: string): string {
  for (let d = 0; d <= 9; d++) if (isLuhnValid(body + d)) return body + d;
  throw new Error('unreachable');
}

const digits = (n: number): fc.Arbitrary<string> => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: n, maxLength: n });
const cardNumber = fc
  .integer({ min: 12, max: 19 })
  .chain((length) => digits(length - 1))
  .map(withCheckDigit);
const timestamp = fc.integer({ min: 0, max: 253402300799999 }).map((ms) => new Date(ms).toISOString());

const aCardToStore = fc.record({
  merchantId: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 128 }),
  mode: fc.constantFrom<KeyMode>('test', 'live'),
  provisional: fc.boolean(),
  number: cardNumber,
  holderName: fc.string({ unit: 'grapheme', maxLength: 256 }),
  expiryMonth: fc.integer({ min: 1, max: 12 }),
  expiryYear: fc.integer({ min: 1000, max: 9999 }),
  createdAt: timestamp,
  expiresAt: timestamp,
  fingerprint: fc.option(fc.uint8Array({ minLength: 16, maxLength: 16 }), { nil: undefined }),
  merchantKek: fc.boolean(),
});

/** The clear fields a format-6 card of these values has. */
function clearFieldsOf(c: typeof aCardToStore extends fc.Arbitrary<infer T> ? T : never): Omit<StoredCard, 'sealed' | 'metadataBound'> {
  return {
    merchantId: c.merchantId,
    mode: c.mode,
    ...(c.provisional ? { provisional: true as const } : {}),
    last4: c.number.slice(-4),
    brand: detectBrand(c.number),
    expiryMonth: c.expiryMonth,
    expiryYear: c.expiryYear,
    createdAt: c.createdAt,
    expiresAt: c.expiresAt,
    holderNameAvailable: c.holderName.length > 0,
    ...(c.fingerprint === undefined ? {} : { bin: c.number.slice(0, 6), fingerprint: Buffer.from(c.fingerprint).toString('base64url') }),
    compact: true,
  };
}

describe('format-6 card records (properties)', () => {
  it('round-trip: what is sealed and stored reads back and opens as the same card', () => {
    fc.assert(
      fc.property(aCardToStore, (c) => {
        const token = 'tok_property';
        const fields = clearFieldsOf(c);
        const ctx = (card: Omit<StoredCard, 'sealed' | 'metadataBound'>): EnvelopeContext => ({
          merchantId: card.merchantId,
          token,
          kind: 'card',
          mode: card.mode ?? null,
          provisionalUntil: card.provisional === true ? card.expiresAt : undefined,
        });
        const sealingRing = c.merchantKek ? merchantRing : ring;
        const sealed = sealRecord(sealingRing, { ...ctx(fields), ...cardBinding(fields) }, encodeCardSecret(c));
        const stored: StoredCard = { ...fields, metadataBound: true, sealed };
        const raw = serializeCard(stored);
        expect(isCompactRecord(raw)).toBe(true);
        const read = parseCard(raw);
        expect(read).toEqual(stored);
        const opened = openRecord(sealingRing, { ...ctx(read), ...bindingOfCard(read) }, read.sealed);
        expect(decodeCardSecret(opened)).toEqual({ number: c.number, holderName: c.holderName });
      }),
      { numRuns: 300 },
    );
  });

  it('any other bytes are refused or decode to other fields: a record never reads back as the same card twice', () => {
    fc.assert(
      fc.property(aCardToStore, fc.nat(), fc.integer({ min: 1, max: 255 }), (c, at, mask) => {
        const fields: StoredCard = {
          ...clearFieldsOf(c),
          metadataBound: true,
          sealed: sealRecord(ring, { merchantId: c.merchantId, token: 't', kind: 'card', mode: c.mode }, Buffer.from('x')),
        };
        const raw = serializeCard(fields);
        const headerLength = Buffer.from(cardBinding(fields).metadata ?? '', 'base64').length;
        const edited = Buffer.from(raw);
        const i = at % headerLength;
        edited[i] = (edited[i] as number) ^ mask;
        let read: StoredCard | undefined;
        try {
          read = parseCompactCard(edited);
        } catch {
          return;
        }
        expect(cardBinding(read)).not.toEqual(cardBinding(fields));
      }),
      { numRuns: 300 },
    );
  });

  it('round-trip of a format-6 CVV: any mode, nonce and deadline read back as sealed, and open', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<KeyMode>('test', 'live'),
        fc.uint8Array({ minLength: 16, maxLength: 16 }),
        timestamp,
        fc.stringMatching(/^\d{3,4}$/),
        (mode, nonceBytes, expiresAt, cvv) => {
          const fields = { mode, nonce: Buffer.from(nonceBytes).toString('base64url'), expiresAt, compact: true as const };
          const ctx: EnvelopeContext = { merchantId: 'merchant_a', token: 'tok_property', kind: 'cvv', mode };
          const stored: StoredCvv = { ...fields, sealed: sealRecord(merchantRing, { ...ctx, ...cvvBinding(fields) }, Buffer.from(cvv)) };
          const read = parseCvv(serializeCvv(stored));
          expect(read).toEqual(stored);
          expect(openRecord(merchantRing, { ...ctx, ...bindingOfCvv(read) }, read.sealed).toString()).toBe(cvv);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('the packed plaintext holds any number of 1-255 digits and any holder name; JSON plaintexts still decode', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 255 }).chain(digits), fc.string({ unit: 'grapheme', maxLength: 300 }), (number, holderName) => {
        expect(decodeCardSecret(encodeCardSecret({ number, holderName }))).toEqual({ number, holderName });
        expect(decodeCardSecret(Buffer.from(JSON.stringify({ number, holderName })))).toEqual({ number, holderName });
      }),
    );
  });
});
