import crypto from 'node:crypto';

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
  const mac = crypto.createHmac('sha256', signingSecret).update(`${timestampSeconds}.${rawBody}`).digest('hex');
  return `t=${timestampSeconds},v1=${mac}`;
}

export interface VerifyCompletionOptions {
  /** Oldest call accepted, in seconds (default 300): a recorded call replayed later is refused. */
  toleranceSeconds?: number;
  now?: Date;
}

function rawBodyText(rawBody: unknown): string {
  if (typeof rawBody === 'string') return rawBody;
  if (rawBody instanceof Uint8Array) return Buffer.from(rawBody).toString('utf8');
  throw new TypeError(
    'verifyCompletionSignature needs the raw request body (a string or Buffer, e.g. express.raw({ type: "application/json" })): ' +
      'a parsed and re-serialised object does not keep the signed bytes.',
  );
}

/**
 * Checks a completion call (constant time) and returns its parsed body. Throws
 * CompletionSignatureError when the call is not one Tessera signed with this secret, or is too old,
 * naming what did not match; TypeError when called wrongly (no secret, no raw body).
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
  const body = rawBodyText(rawBody);
  if (Array.isArray(header)) throw new CompletionSignatureError('the Tessera-Signature header is repeated');
  if (typeof header !== 'string' || header.trim() === '') throw new CompletionSignatureError('the Tessera-Signature header is missing');
  const parts = new Map<string, string[]>();
  for (const item of header.split(',')) {
    const at = item.indexOf('=');
    if (at <= 0) throw new CompletionSignatureError('the Tessera-Signature header is malformed (expected t=<unix>,v1=<hex>)');
    const name = item.slice(0, at).trim();
    parts.set(name, [...(parts.get(name) ?? []), item.slice(at + 1).trim()]);
  }
  const timestamps = parts.get('t') ?? [];
  if (timestamps.length !== 1 || !/^\d{1,12}$/.test(timestamps[0] as string)) {
    throw new CompletionSignatureError('the Tessera-Signature header has no single valid timestamp (t=<unix seconds>)');
  }
  const signatures = (parts.get('v1') ?? []).filter((s) => /^[0-9a-f]{64}$/.test(s));
  if (signatures.length === 0) throw new CompletionSignatureError('the Tessera-Signature header has no v1 signature');
  const timestamp = Number(timestamps[0]);
  const expected = Buffer.from(signCompletionCall(signingSecret, body, timestamp).slice(`t=${timestamp},v1=`.length), 'hex');
  // Several v1 values may come while a secret is being replaced; one matching is enough.
  const matches = signatures.some((s) => crypto.timingSafeEqual(expected, Buffer.from(s, 'hex')));
  if (!matches) throw new CompletionSignatureError('signature does not match (wrong signing secret or mode, or the body was changed)');
  const nowMs = (options.now ?? new Date()).getTime();
  const toleranceMs = (options.toleranceSeconds ?? 300) * 1000;
  if (nowMs - timestamp * 1000 > toleranceMs) throw new CompletionSignatureError('the call is too old');
  if (timestamp * 1000 - nowMs > 60_000) throw new CompletionSignatureError('the call is dated in the future');
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new CompletionSignatureError('the body is not JSON');
  }
  return parsed as FormSessionCompletion;
}
