import { z } from 'zod';
import { isHttpToken } from '@tessera/common';
import { cardInputSchema, parseBody } from '@tessera/edge';

// The card's own shapes are shared with the fields service (@tessera/edge domain/cardInput.ts).
export { cardInputSchema, cvcInputSchema, parseCardInput, parseCvcInput } from '@tessera/edge';

/**
 * Shapes of the JSON bodies. Every message is written here so that none ever echoes a submitted
 * value (a card number in a 400 body or a log line is exactly what PCI DSS forbids).
 */

/**
 * The alias formats POST /v1/token takes (the vault's domain/aliases.ts draws them; the vault checks
 * the names again).
 */
export const ALIAS_FORMATS = ['card_bin_last4', 'card_last4', 'uuid'] as const;

/** POST /v1/token: a card, whether to answer the merchant's existing token for it, and the aliases to give it. */
export const tokenCreateSchema = z.strictObject({
  ...cardInputSchema.shape,
  dedupe: z.boolean({ error: 'dedupe must be true or false.' }).optional(),
  aliasFormats: z
    .array(z.enum(ALIAS_FORMATS, { error: `aliasFormats may hold only ${ALIAS_FORMATS.map((f) => `"${f}"`).join(', ')}.` }), {
      error: 'aliasFormats must be an array of format names.',
    })
    .max(ALIAS_FORMATS.length, { error: 'aliasFormats names a format twice.' })
    .refine((formats) => new Set(formats).size === formats.length, { error: 'aliasFormats names a format twice.' })
    .optional()
    .meta({
      description:
        'Aliases to give the token, one per format: `card_bin_last4` (Luhn-valid, the card length, first 6 and last 4 kept), `card_last4` (Luhn-valid, the card length, last 4 kept), `uuid` (random v4 UUID). See docs/api.md, Aliases.',
    }),
});

export type TokenCreateInput = z.output<typeof tokenCreateSchema>;

/**
 * PATCH /v1/token/{token}: what a re-issued card with the same number changes. The number is not
 * accepted (a new number is a new token: parameter_unknown); the expiry is given whole.
 */
export const tokenUpdateSchema = z
  .strictObject({
    expiryMonth: cardInputSchema.shape.expiryMonth.optional(),
    expiryYear: cardInputSchema.shape.expiryYear.optional(),
    holderName: cardInputSchema.shape.holderName,
  })
  .superRefine((input, ctx) => {
    if (input.expiryMonth !== undefined && input.expiryYear === undefined) {
      ctx.addIssue({ code: 'invalid_type', expected: 'number', path: ['expiryYear'], message: 'expiryYear is required with expiryMonth.' });
    } else if (input.expiryYear !== undefined && input.expiryMonth === undefined) {
      ctx.addIssue({
        code: 'invalid_type',
        expected: 'number',
        path: ['expiryMonth'],
        message: 'expiryMonth is required with expiryYear.',
      });
    } else if (input.expiryMonth === undefined && input.holderName === undefined) {
      ctx.addIssue({ code: 'custom', message: 'Give expiryMonth and expiryYear, holderName, or both.' });
    }
  });

export type TokenUpdateInput = z.output<typeof tokenUpdateSchema>;

/** POST /v1/token/{token}/cvc-sessions: no parameters yet; `{}` or no body. */
export const cvcSessionCreateSchema = z.strictObject({});

export const PROXY_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
export type ProxyMethod = Uppercase<(typeof PROXY_METHODS)[number]>;

/** CR/LF would let a caller inject extra headers or a second request; NUL is never valid. */
const FORBIDDEN_IN_HEADER_VALUE = /[\r\n\0]/;

export const proxyRequestSchema = z.strictObject({
  method: z
    .string({ error: 'method must be a string.' })
    .refine((v) => (PROXY_METHODS as readonly string[]).includes(v.toLowerCase()), {
      error: `method must be one of ${PROXY_METHODS.join(', ')}.`,
    })
    .transform((v) => v.toUpperCase() as ProxyMethod),
  token: z
    .string({ error: 'token must be a string.' })
    .min(1, { error: 'token must not be empty.' })
    .max(256, { error: 'token is too long.' }),
  pspUrl: z
    .string({ error: 'pspUrl must be a string.' })
    .max(8192, { error: 'pspUrl is too long.' })
    .refine((v) => URL.canParse(v), { error: 'pspUrl must be an absolute URL.' }),
  pspHeaders: z
    .record(z.string(), z.string({ error: 'pspHeaders values must be strings.' }), {
      error: 'pspHeaders must be an object of header names to string values.',
    })
    .superRefine((headers, ctx) => {
      const seen = new Set<string>();
      for (const [name, value] of Object.entries(headers)) {
        if (!isHttpToken(name)) {
          ctx.addIssue({ code: 'custom', message: 'pspHeaders contains a header name that is not a valid HTTP token.' });
          return;
        }
        if (FORBIDDEN_IN_HEADER_VALUE.test(value)) {
          ctx.addIssue({ code: 'custom', message: 'pspHeaders values must not contain CR, LF or NUL characters.' });
          return;
        }
        // `content-type` and `Content-Type` are one header: which of them would the PSP read (and
        // the vault encode for)? The message does not name it: names are caller text.
        if (seen.has(name.toLowerCase())) {
          ctx.addIssue({ code: 'custom', message: 'pspHeaders names the same header twice (header names are case-insensitive).' });
          return;
        }
        seen.add(name.toLowerCase());
      }
    })
    .default({}),
  pspBody: z.string({ error: 'pspBody must be a string.' }).optional(),
});

export type ProxyRequestInput = z.output<typeof proxyRequestSchema>;

/** POST /v1/token/{token}/retain takes no parameters: no body, or `{}` (any field is parameter_unknown). */
export const retainRequestSchema = z.strictObject({});

export function parseTokenCreate(body: Record<string, unknown>): TokenCreateInput {
  return parseBody(tokenCreateSchema, body);
}

export function parseTokenUpdate(body: Record<string, unknown>): TokenUpdateInput {
  return parseBody(tokenUpdateSchema, body);
}

export function parseCvcSessionCreate(body: Record<string, unknown>): void {
  parseBody(cvcSessionCreateSchema, body);
}

export function parseRetainRequest(body: Record<string, unknown>): void {
  parseBody(retainRequestSchema, body);
}

export function parseProxyRequest(body: Record<string, unknown>): ProxyRequestInput {
  return parseBody(proxyRequestSchema, body);
}
