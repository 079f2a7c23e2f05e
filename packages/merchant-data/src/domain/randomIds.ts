import { secureRandomBytes } from '@tessera/common';

const ID_BYTES = 12;

/**
 * `prefix` + 12 random bytes in base64url (16 characters), for ids made on every request (request
 * ids, audit entry ids). The bytes come from the shared CSPRNG pool: one randomBytes call per id
 * was a measurable share of the gateway's CPU.
 */
export function randomId(prefix: string): string {
  return prefix + secureRandomBytes(ID_BYTES).toString('base64url');
}
