import { z } from 'zod';
import { ERROR_CATALOGUE, isErrorCode, maskCardNumbers } from '@tessera/common';
import type { DryRunReport, TokenRecord__Output } from '@tessera/protos';

/**
 * The public API's answers built from the services' replies: each shape is written once, as the
 * zod schema that documents it in OpenAPI (openapi.ts), and the routes' types are inferred from it.
 */

/** The token record. */
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
  aliases: z.record(z.string(), z.string()).meta({
    description:
      "The token's aliases by format (`card_bin_last4`, `card_last4`, `uuid`): other names of this token, accepted wherever the token is. `{}` when it has none. See docs/api.md, Aliases.",
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
    aliases: { ...record.aliases },
  };
}

/** POST /v1/token/{token}/cvc-sessions: the grant for tessera.cvcField, shown once. */
export const cvcSessionSchema = z.strictObject({
  object: z.literal('cvc_session'),
  token: tokenRecordSchema.shape.token,
  secret: z.string().meta({
    description:
      '`cvcs_` and 43 URL-safe characters: hand `{ token, secret }` to the page for `tessera.cvcField({ cvcSession })`. Single use; only its hash is stored, so it cannot be read back.',
  }),
  expiresAt: z.string().meta({ format: 'date-time', description: 'CVC_SESSION_TTL_SECONDS (10 min) after creation.' }),
});

export type CvcSessionJson = z.output<typeof cvcSessionSchema>;

export function cvcSessionJson(session: { record: { token: string; expiresAt: string }; secret: string }): CvcSessionJson {
  return { object: 'cvc_session', token: session.record.token, secret: session.secret, expiresAt: session.record.expiresAt };
}

/** POST /v1/proxy with `dryRun`: what would be sent, masked. */
export const dryRunSchema = z.object({
  object: z.literal('proxy_dry_run'),
  request: z.object({
    method: z.string().meta({ description: 'Upper case, as it would be sent.' }),
    url: z.string(),
    headers: z
      .record(z.string(), z.string())
      .meta({ description: 'Headers as they would be sent; credential values (Authorization, Cookie, API keys) masked.' }),
    body: z
      .string()
      .nullable()
      .meta({ description: 'pspBody with card values masked: PAN first 6 + last 4, CVV `***`, holder name initials.' }),
  }),
  placeholders: z.object({
    filled: z.array(z.string()),
    unfillable: z.array(z.object({ placeholder: z.string(), code: z.string(), message: z.string() })),
    unknown: z.array(z.string()).meta({ description: 'Upper-case `[...]` text that is not a placeholder; sent as it is.' }),
  }),
  destination: z.object({ allowed: z.boolean(), code: z.string().optional(), message: z.string().optional() }),
  wouldSend: z.boolean().meta({ description: 'True when the destination is allowed and every placeholder can be filled.' }),
});

export type DryRunJson = z.output<typeof dryRunSchema>;

export function dryRunJson(result: DryRunReport): DryRunJson {
  const preview = result.preview;
  const unfillable = (preview?.unfillable ?? []).map(({ placeholder, code }) => ({
    placeholder,
    code,
    message: isErrorCode(code) ? ERROR_CATALOGUE[code].message : 'This placeholder cannot be filled.',
  }));
  return {
    object: 'proxy_dry_run',
    request: {
      method: result.method,
      // The vault masks what it filled in; a card number the merchant typed into the template
      // itself is masked here, so a preview never shows one.
      url: maskCardNumbers(result.url),
      // Names too: a header name is as much the caller's text as its value.
      headers: Object.fromEntries(result.headers.map(({ name, value }) => [maskCardNumbers(name), maskCardNumbers(value)])),
      body: result.hasBody ? maskCardNumbers(preview?.body ?? '') : null,
    },
    placeholders: { filled: preview?.filled ?? [], unfillable, unknown: preview?.unknown ?? [] },
    destination: result.destinationAllowed
      ? { allowed: true }
      : { allowed: false, code: result.destinationErrorCode, message: result.destinationErrorMessage },
    wouldSend: result.destinationAllowed && unfillable.length === 0,
  };
}
