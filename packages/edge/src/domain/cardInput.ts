import { z } from 'zod';
import { maskCardNumbers, TesseraError, type CardInput } from '@tessera/common';

/**
 * The card and CVC bodies every entry point takes (POST /v1/token on the gateway, the browser
 * routes on the fields origin), with the one way a body's problem becomes a TesseraError. No
 * message ever echoes a submitted value (a card number in a 400 body or a log line is exactly what
 * PCI DSS forbids).
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
export function parseBody<T>(schema: z.ZodType<T>, body: Record<string, unknown>): T {
  const result = schema.safeParse(body);
  if (!result.success) throw validationErrorFromIssues(result.error.issues, body);
  return result.data;
}

export function parseCardInput(body: Record<string, unknown>): CardInput {
  return parseBody(cardInputSchema, body);
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
