import crypto from 'node:crypto';

const ID_BYTES = 12;
const IDS_PER_FILL = 128;
const pool = Buffer.alloc(ID_BYTES * IDS_PER_FILL);
let next = IDS_PER_FILL;

/**
 * `prefix` + 12 random bytes in base64url (16 characters), for ids made on every request (request
 * ids, audit entry ids). The bytes come from a pool filled 128 ids at a time: one randomBytes call
 * per id was a measurable share of the gateway's CPU. Every byte is used once.
 */
export function randomId(prefix: string): string {
  if (next === IDS_PER_FILL) {
    crypto.randomFillSync(pool);
    next = 0;
  }
  const start = next++ * ID_BYTES;
  return prefix + pool.toString('base64url', start, start + ID_BYTES);
}
