import { secureRandomBytes } from '@tessera/common';

export const TOKEN_PREFIX = 'tok.';
const TOKEN_RANDOM_BYTES = 24;
const TOKEN_SHAPE = /^tok\.[A-Za-z0-9_-]{16,128}$/;

/** 192 bits from the CSPRNG; never derived from the card, so a token reveals nothing about it. */
export function generateToken(): string {
  return TOKEN_PREFIX + secureRandomBytes(TOKEN_RANDOM_BYTES).toString('base64url');
}

/** Whether a string could be a token at all; anything else is answered as token_not_found. */
export function isTokenShaped(value: string): boolean {
  return TOKEN_SHAPE.test(value);
}
