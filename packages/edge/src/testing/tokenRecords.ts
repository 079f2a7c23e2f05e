import type { TokenizeRequest, TokenRecord__Output } from '@tessera/protos';

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
    aliases: overrides.aliases ?? {},
  };
}

/** A card body as POST /v1/token and POST /v1/browser/tokens take it: a test Visa, with `overrides`. */
export function aCardBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { number: '4242424242424242', expiryMonth: 12, expiryYear: 2040, cvv: '123', ...overrides };
}

/** The vault's Tokenize, recorded: every request it was sent, each answered with aTokenRecord(). */
export function recordingTokenize(): {
  tokenized: TokenizeRequest[];
  tokenize: (request: TokenizeRequest) => Promise<TokenRecord__Output>;
} {
  const tokenized: TokenizeRequest[] = [];
  return {
    tokenized,
    tokenize: async (request) => {
      tokenized.push(request);
      return aTokenRecord();
    },
  };
}
