import { z } from 'zod';
import { isHttpToken, maskCardNumbers, TesseraError, type CardInput } from '@tessera/common';

/**
 * Shapes of the JSON bodies. Every message is written here so that none ever echoes a submitted
 * value (a card number in a 400 body or a log line is exactly what PCI DSS forbids).
 */
export const cardInputSchema = z.strictObject({
  number: z.string({ error: 'number must be a string.' }),
  holderName: z
    .string({ error: 'holderName must be a string.' })
    .min(1, { error: 'holderName must not be empty.' })
    .max(200, { error: 'holderName must be at most 200 characters.' })
    .optional(),
  expiryMonth: z.int({ error: 'expiryMonth must be an integer.' }),
  expiryYear: z.int({ error: 'expiryYear must be an integer.' }),
  cvv: z.union([z.int(), z.string()], { error: 'cvv must be an integer or a string of digits.' }).optional(),
}) satisfies z.ZodType<CardInput>;

/** POST /v1/token: a card, and whether to answer the merchant's existing token for it. */
export const tokenCreateSchema = z.strictObject({
  ...cardInputSchema.shape,
  dedupe: z.boolean({ error: 'dedupe must be true or false.' }).optional(),
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

/** POST /v1/token/{token}/cvc: a freshly collected CVV, typed as on create. */
export const cvcInputSchema = z.strictObject({ cvv: cardInputSchema.shape.cvv.unwrap() });

/**
 * POST /v1/browser/tokens/{token}/cvc: the same CVV, and the CVC session (the grant the merchant's
 * server opened). Optional in the schema so that a missing grant is refused as such
 * (cvc_session_required), not as an ordinary missing parameter.
 */
export const browserCvcInputSchema = z.strictObject({
  ...cvcInputSchema.shape,
  cvcSession: z.string({ error: 'cvcSession must be a string.' }).max(200, { error: 'cvcSession is not a CVC session.' }).optional(),
});

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

/**
 * Turns zod's issues into the one TesseraError the caller sees. Unknown fields are reported first:
 * a misspelt field (`cardNumber`) is better explained as unknown than as `number` missing.
 */
export function validationErrorFromIssues(issues: readonly z.core.$ZodIssue[], input: Record<string, unknown>): TesseraError {
  const unknown = issues.find((issue) => issue.code === 'unrecognized_keys');
  if (unknown && unknown.code === 'unrecognized_keys') {
    // The message stays generic: a key is caller-chosen text and could itself hold card data.
    return new TesseraError('parameter_unknown', { param: truncateParam(unknown.keys[0] ?? '') });
  }
  const issue = issues[0];
  if (!issue) return new TesseraError('invalid_request');
  const param = issue.path.length > 0 ? String(issue.path[0]) : undefined;
  if (param === undefined) return new TesseraError('invalid_request', { message: issue.message });
  if (issue.code === 'invalid_type' && issue.path.length === 1 && input[param] === undefined) {
    return new TesseraError('parameter_missing', { param, message: `${param} is required.` });
  }
  return new TesseraError('parameter_invalid', { param, message: issue.message });
}

const MAX_PARAM_LENGTH = 128;

/**
 * An unknown key is echoed as `param` so the caller can find it, but it is caller-chosen text:
 * a key that is itself a card number (found by the REST fuzz test) must not come back.
 */
function truncateParam(key: string): string {
  const masked = maskCardNumbers(key);
  return masked.length > MAX_PARAM_LENGTH ? masked.slice(0, MAX_PARAM_LENGTH) : masked;
}

/** A body checked against its schema, or the one TesseraError that explains the first problem. */
function parseBody<T>(schema: z.ZodType<T>, body: Record<string, unknown>): T {
  const result = schema.safeParse(body);
  if (!result.success) throw validationErrorFromIssues(result.error.issues, body);
  return result.data;
}

export function parseCardInput(body: Record<string, unknown>): CardInput {
  return parseBody(cardInputSchema, body);
}

export function parseTokenCreate(body: Record<string, unknown>): TokenCreateInput {
  return parseBody(tokenCreateSchema, body);
}

export function parseTokenUpdate(body: Record<string, unknown>): TokenUpdateInput {
  return parseBody(tokenUpdateSchema, body);
}

export function parseCvcInput(body: Record<string, unknown>): { cvv: number | string } {
  // zod reports a missing union as invalid_union, not invalid_type: said here as for any required field.
  if (Object.keys(body).length === 0) throw new TesseraError('parameter_missing', { param: 'cvv', message: 'cvv is required.' });
  return parseBody(cvcInputSchema, body);
}

export function parseBrowserCvcInput(body: Record<string, unknown>): { cvv: number | string; cvcSession: string | undefined } {
  // cvv's own rules and messages first, exactly as on the server route.
  const { cvcSession: _grant, ...cvc } = body;
  parseCvcInput(cvc);
  const { cvv, cvcSession } = parseBody(browserCvcInputSchema, body);
  return { cvv, cvcSession };
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
