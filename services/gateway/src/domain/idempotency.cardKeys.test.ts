import { createHash } from 'node:crypto';
import { idempotencyKeys, idempotencyScope, storableIdempotencyKey } from './idempotency';

const { fingerprint } = idempotencyKeys('p'.repeat(32));

describe('an Idempotency-Key that could be a card number', () => {
  it.each(['4242424242424242', '4242_4242_4242_4242', '3782-822463-10005', '500000000009'])(
    'never reaches a store key, not even as a plain SHA-256: %s',
    (pan) => {
      for (const mode of ['test', 'live'] as const) {
        const scope = idempotencyScope('acme', mode, storableIdempotencyKey(fingerprint, pan));
        expect(scope).not.toContain(pan);
        expect(scope).not.toContain(createHash('sha256').update(pan).digest('base64url'));
        // Still one scope per key, so retries with it replay.
        expect(idempotencyScope('acme', mode, storableIdempotencyKey(fingerprint, pan))).toBe(scope);
      }
    },
  );

  it('leaves other keys as they were, so their stored answers keep their store keys', () => {
    expect(storableIdempotencyKey(fingerprint, 'order-1700000000001')).toBe('order-1700000000001');
  });
});
