import type { TokenRecord__Output } from '@tessera/protos';

/** A token record as the vault answers it. */
export function aTokenRecord(overrides: Partial<TokenRecord__Output> = {}): TokenRecord__Output {
  return {
    token: 'tok.AAAABBBBCCCCDDDDEEEEFF',
    last4: '4242',
    brand: 'visa',
    expiryMonth: 12,
    expiryYear: 2035,
    createdAt: '2030-01-01T00:00:00.000Z',
    expiresAt: '2036-01-01T00:00:00.000Z',
    cvvAvailable: false,
    holderNameAvailable: false,
    provisional: false,
    bin: '424242',
    fingerprint: 'fp_unit_test_00000000',
    deduplicated: false,
    ...overrides,
  };
}
