import { z } from 'zod';
import type { TokenRecord__Output } from '@tessera/protos';

/**
 * The token record as the public API answers it. The zod schema documents it in OpenAPI and is
 * the one place its shape is written: the routes' type is inferred from it.
 */
export const tokenRecordSchema = z.object({
  token: z.string().meta({ description: 'Opaque token: `tok.` followed by at least 128 random bits, URL-safe.' }),
  last4: z.string(),
  brand: z.string().meta({ description: 'visa, mastercard, amex, discover, diners, jcb, unionpay, maestro or unknown' }),
  expiryMonth: z.int(),
  expiryYear: z.int(),
  createdAt: z.string().meta({ format: 'date-time' }),
  expiresAt: z.string().nullable().meta({
    description:
      'When the card data is deleted: the expiry month end plus grace, or for a provisional token its deadline (BROWSER_TOKEN_TTL_SECONDS after creation).',
  }),
  cvvAvailable: z.boolean().meta({ description: 'False once the CVV has expired (CVV_TTL_SECONDS) or when none was given.' }),
  holderNameAvailable: z.boolean(),
  provisional: z.boolean().meta({
    description:
      'True for a token made in a browser (card fields, hosted page) that the merchant has not retained yet: it expires at expiresAt unless POST /v1/token/{token}/retain is called with a secret key.',
  }),
  bin: z.string().nullable().meta({
    description: 'The first six digits of the card number (PCI DSS 3.4.1). null for tokens made before Tessera recorded it.',
  }),
  fingerprint: z.string().nullable().meta({
    description:
      'Keyed hash (HMAC-SHA256 under a key held by the vault) of the card number, per merchant and mode: equal for the same card tokenized again by the same merchant in the same mode, unrelated otherwise. null for tokens made before Tessera recorded it.',
  }),
});

export type TokenRecordJson = z.output<typeof tokenRecordSchema>;

/** The vault's record as JSON: the proto's empty-string "absent" becomes null. */
export function tokenRecordJson(record: TokenRecord__Output): TokenRecordJson {
  return {
    token: record.token,
    last4: record.last4,
    brand: record.brand,
    expiryMonth: record.expiryMonth,
    expiryYear: record.expiryYear,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt === '' ? null : record.expiresAt,
    cvvAvailable: record.cvvAvailable,
    holderNameAvailable: record.holderNameAvailable,
    provisional: record.provisional,
    bin: record.bin === '' ? null : record.bin,
    fingerprint: record.fingerprint === '' ? null : record.fingerprint,
  };
}
