import { checkSignature, rawBodyText, signatureHeaderOf, type CheckSignatureOptions } from './signatureHeader';

/**
 * The hosted payment page's completion call (docs/api.md, "The completion call"): when a form
 * session has a `completionUrl`, Tessera POSTs the shopper's token to it, server to server, before
 * the shopper is redirected, and the merchant charges. The call carries
 * `Tessera-Signature: t=<unix seconds>,v1=<hex>`, where v1 = HMAC-SHA256(signingSecret, `${t}.${rawBody}`)
 * with the merchant's form signing secret of the mode (the one verifyFormSessionReturn takes).
 */
export const COMPLETION_SIGNATURE_HEADER = 'tessera-signature';

/** What the completion call's JSON body holds. */
export interface FormSessionCompletion {
  /** The form session (`fs_…`). */
  formSession: string;
  /** 1 for the session's first card, n+1 after a decline: charge with Idempotency-Key `${formSession}:${attempt}`. */
  attempt: number;
  /** The shopper's provisional token: retain it (POST /v1/token/{token}/retain), then charge it through /v1/proxy. */
  token: string;
  card: { brand: string; last4: string; expiryMonth: number; expiryYear: number };
  /** In minor units, as the session was created. */
  amount: number;
  currency: string;
}

/** What the completion endpoint answers, with status 200 and a JSON body. */
export type FormSessionCompletionAnswer = { outcome: 'succeeded' } | { outcome: 'declined'; message?: string };

export class CompletionSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CompletionSignatureError';
  }
}

/** The header value Tessera sends: `t=<unix seconds>,v1=<hex HMAC-SHA256 over "<t>.<body>">`. */
export function signCompletionCall(signingSecret: string, rawBody: string, timestampSeconds: number): string {
  return signatureHeaderOf(signingSecret, rawBody, timestampSeconds);
}

export type VerifyCompletionOptions = CheckSignatureOptions;

/**
 * Checks a completion call (constant time; the same check as webhooks.constructEvent) and returns
 * its parsed body. Throws CompletionSignatureError when the call is not one Tessera signed with this
 * secret, or is too old, naming what did not match; TypeError when called wrongly (no secret, no raw body).
 */
export function verifyCompletionSignature(
  rawBody: string | Uint8Array,
  header: string | string[] | null | undefined,
  signingSecret: string,
  options: VerifyCompletionOptions = {},
): FormSessionCompletion {
  if (typeof signingSecret !== 'string' || signingSecret === '') {
    throw new TypeError(
      'verifyCompletionSignature: signingSecret is missing. Pass the form signing secret of the mode ' +
        '(fss_test_… or fss_live_…; npm run keys -- return-urls secret), e.g. from an environment variable that is set.',
    );
  }
  if (rawBodyText(rawBody) === undefined) {
    throw new TypeError(
      'verifyCompletionSignature needs the raw request body (a string or Buffer, e.g. express.raw({ type: "application/json" })): ' +
        'a parsed and re-serialised object does not keep the signed bytes.',
    );
  }
  const checked = checkSignature(rawBody, header, signingSecret, options);
  if (!checked.ok) throw new CompletionSignatureError(checked.message);
  let parsed: unknown;
  try {
    parsed = JSON.parse(checked.body);
  } catch {
    throw new CompletionSignatureError('the body is not JSON');
  }
  return parsed as FormSessionCompletion;
}
